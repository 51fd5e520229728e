package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/race"
)

// A player's durable data as they see it (PROTOCOL.md, section 7,
// ratings): their races page by page, their rating chart, every game as
// one text file.

// defaultGamesPage is a page of GET /api/players/{id}/games without n: the
// profile's own first page.
const defaultGamesPage = 20

// gamesFilePage is how many races games.txt reads from the store at a
// time: the file is written page by page, so that a player's 10,000 races
// are never in memory at once.
const gamesFilePage = 50

// gamesPageLen is a games page's n: defaultGamesPage when absent, else a
// number from 1 to lobby.MaxGamesPage (bad-options naming the range).
func gamesPageLen(r *http.Request) (int, error) {
	q := r.URL.Query()
	if !q.Has("n") {
		return defaultGamesPage, nil
	}
	n, err := strconv.Atoi(q.Get("n"))
	if err != nil || n < 1 || n > lobby.MaxGamesPage {
		return 0, race.Errorf(race.CodeBadOptions, "n: %q is not a number from 1 to %d", q.Get("n"), lobby.MaxGamesPage)
	}
	return n, nil
}

// handleGames is GET /api/players/{id}/games?cursor=…&n=…: a page of the
// player's races, newest first, and the cursor of the next.
func handleGames(log zerolog.Logger, l *lobby.Lobby) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if l == nil {
			writeError(w, http.StatusNotFound, CodeNoLobby, "this server has no lobby")
			return
		}
		n, err := gamesPageLen(r)
		if err != nil {
			writeRaceError(w, err)
			return
		}
		page, err := l.Games(r.Context(), r.PathValue("id"), r.URL.Query().Get("cursor"), n)
		if err != nil {
			logInternal(log, err, "player games")
			writeRaceError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, page)
	}
}

// ratingChart is the body of GET /api/players/{id}/ratings/{variant}.
type ratingChart struct {
	Player  string               `json:"player"`
	Variant string               `json:"variant"`
	Changes []lobby.RatingChange `json:"changes"`
}

// handleRatingChart is GET /api/players/{id}/ratings/{variant}: every
// change of the player's rating in the variant, oldest first.
func handleRatingChart(log zerolog.Logger, l *lobby.Lobby) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if l == nil {
			writeError(w, http.StatusNotFound, CodeNoLobby, "this server has no lobby")
			return
		}
		ch, err := l.RatingChanges(r.Context(), r.PathValue("id"), r.PathValue("variant"))
		if err != nil {
			logInternal(log, err, "rating chart")
			writeRaceError(w, err)
			return
		}
		rules, _ := engine.Variant(r.PathValue("variant")) // RatingChanges took it
		writeJSON(w, http.StatusOK, ratingChart{Player: r.PathValue("id"), Variant: rules.Name, Changes: ch})
	}
}

// handleGamesText is GET /api/players/{id}/games.txt: every game of the
// player, newest first, as one text file to keep. The reply's status is
// decided by the first page; a store failing later cuts the file short
// with a line saying so.
func handleGamesText(log zerolog.Logger, l *lobby.Lobby, races *race.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if l == nil {
			writeError(w, http.StatusNotFound, CodeNoLobby, "this server has no lobby")
			return
		}
		ctx, player := r.Context(), r.PathValue("id")
		page, err := l.Games(ctx, player, "", gamesFilePage)
		if err != nil {
			logInternal(log, err, "games file")
			writeRaceError(w, err)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="sirtommy-games-%s.txt"`, fileSafe(player)))
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		gw := &gamesFile{w: bufio.NewWriter(w), races: races, player: player,
			site: fmt.Sprintf("%s://%s", httpScheme(r), r.Host)}
		gw.head(page)
		for {
			for _, g := range page.Games {
				gw.game(ctx, g)
			}
			if err := gw.w.Flush(); err != nil {
				return // the client went away
			}
			_ = http.NewResponseController(w).Flush()
			if page.Next == "" || ctx.Err() != nil {
				break
			}
			if page, err = l.Games(ctx, player, page.Next, gamesFilePage); err != nil {
				log.Warn().Err(err).Str("player", player).Msg("games file cut short")
				fmt.Fprintf(gw.w, "; The file stops here: %s. The %d games above are whole; download it again later for the rest.\n", refusalText(err), gw.games)
				_ = gw.w.Flush()
				return
			}
		}
		fmt.Fprintf(gw.w, "; The end: %d games", gw.games)
		if gw.unread > 0 {
			fmt.Fprintf(gw.w, ", %d of them without their moves (each says why)", gw.unread)
		}
		fmt.Fprintf(gw.w, ".\n")
		_ = gw.w.Flush()
	}
}

// gamesFile writes games.txt: a comment on top, then each race as tags
// (Race, Date, Player, Opponent, Outcome, Reason, Cards, Rating, Replay)
// followed by the player's game text (its own tags, Variant, Deal and
// Result, then the moves), so that each block, the text between two blank
// lines, reads back with engine.ParseRecord.
type gamesFile struct {
	w      *bufio.Writer
	races  *race.Service
	player string
	site   string // scheme and host, for the replay links
	games  int    // written so far
	unread int    // written without their moves
}

// head writes the file's opening comment.
func (f *gamesFile) head(first lobby.GamesPage) {
	name := f.player
	if len(first.Games) > 0 {
		name = first.Games[0].Players[seatIn(first.Games[0], f.player)].Name
	}
	fmt.Fprintf(f.w, "; Sir Tommy: every race of %s (player %s), newest first.\n", oneLine(name), f.player)
	fmt.Fprintf(f.w, "; Each race: its tags (date in UTC, cards as yours-theirs), then your game in the game notation.\n\n")
}

// game writes one race: its tags, then the player's game, or a comment
// saying why the game cannot be had.
func (f *gamesFile) game(ctx context.Context, g lobby.GameRecord) {
	me := seatIn(g, f.player)
	tag := func(name, value string) { fmt.Fprintf(f.w, "[%s %s]\n", name, quoteTag(value)) }
	tag("Race", g.Race)
	tag("Date", g.At.UTC().Format(time.RFC3339))
	tag("Player", g.Players[me].Name)
	if len(g.Players) == 2 {
		opp := 1 - me
		tag("Opponent", opponentName(g.Players[opp]))
		tag("Outcome", outcomeOf(g, me))
		tag("Reason", string(g.Reason))
		tag("Cards", fmt.Sprintf("%d-%d", g.Scores[me], g.Scores[opp]))
	} else {
		// A room's race: the place among the field, and the cards.
		tag("Place", placeOf(g, me))
		tag("Reason", string(g.Reason))
		tag("Cards", strconv.Itoa(g.Scores[me]))
	}
	if g.Rated {
		tag("Rating", fmt.Sprintf("%.0f -> %.0f", g.Before[me].Rating, g.After[me].Rating))
	} else {
		tag("Rating", "not rated")
	}
	tag("Replay", fmt.Sprintf("%s/?replay=%s", f.site, g.Race))
	f.games++
	text, why := f.gameText(ctx, g.Race, me)
	if why != "" {
		f.unread++
		tag("Variant", g.Variant)
		fmt.Fprintf(f.w, "; The moves of this game cannot be read: %s.\n\n", why)
		return
	}
	fmt.Fprintf(f.w, "%s\n", strings.TrimRight(text, "\n"))
	fmt.Fprintf(f.w, "\n")
}

// gameText is seat's game in race id, or why it cannot be had.
func (f *gamesFile) gameText(ctx context.Context, id string, seat int) (text, why string) {
	rc, err := f.races.Open(ctx, id)
	if err != nil {
		if race.ErrorCode(err) == race.CodeNoSuchRace {
			return "", "this server no longer keeps the race"
		}
		return "", refusalText(err)
	}
	info, err := rc.Info(ctx)
	switch {
	case err != nil:
		return "", refusalText(err)
	case info.Result == nil:
		return "", "the race is not over"
	case info.Result.Games[seat] == "" && info.Result.Deal == "" && info.Result.Commitment != "":
		return "", "the deal is sealed until its day ends"
	case info.Result.Games[seat] == "":
		return "", "the race's record holds no game for this seat"
	}
	return info.Result.Games[seat], ""
}

// seatIn is player's seat in a race record (0 if they hold none: a
// record from a store that lists races by every player).
func seatIn(g lobby.GameRecord, player string) int {
	for s, p := range g.Players {
		if p.ID == player {
			return s
		}
	}
	return 0
}

// placeOf is seat's place in a race of more than two, as "2 of 5" (with
// "shared" when another racer has it too).
func placeOf(g lobby.GameRecord, seat int) string {
	place, shared := 0, false
	for _, p := range g.Ranking {
		if p.Seat == seat {
			place = p.Place
		}
	}
	for _, p := range g.Ranking {
		shared = shared || p.Seat != seat && p.Place == place
	}
	out := fmt.Sprintf("%d of %d", place, len(g.Players))
	if shared {
		out += ", shared"
	}
	return out
}

// opponentName is the other seat as games.txt names it.
func opponentName(p lobby.PlayerRef) string {
	switch {
	case p.Solo:
		return "nobody (the day's deal, alone)"
	case p.Ghost:
		return p.Name + " (ghost)"
	case p.Name == "" && p.Computer:
		return "computer"
	}
	return p.Name
}

// outcomeOf is the race's outcome from seat me's side: won, lost, draw or
// aborted.
func outcomeOf(g lobby.GameRecord, me int) string {
	switch {
	case g.Outcome == race.OutcomeWin && g.Winner != nil && *g.Winner == me:
		return "won"
	case g.Outcome == race.OutcomeWin:
		return "lost"
	}
	return string(g.Outcome)
}

// quoteTag writes a tag's value as engine.Record does: a quoted Go string
// with ";" (which starts a comment) escaped, so that it reads back.
func quoteTag(s string) string { return strings.ReplaceAll(strconv.Quote(s), ";", `\x3b`) }

// oneLine keeps a text to one line, for a comment.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// refusalText is an error as a player may read it: a refusal's message;
// any other failure in general words (the log has the rest).
func refusalText(err error) string {
	var re *race.Error
	if errors.As(err, &re) {
		return strings.TrimSuffix(re.Message, ".")
	}
	return "the server failed"
}

// fileSafe keeps the letters and digits of s, for a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return r
		}
		return -1
	}, s)
}

// logInternal logs err when it is a bug (CodeInternal), as every handler
// of the lobby's routes does.
func logInternal(log zerolog.Logger, err error, what string) {
	if race.ErrorCode(err) == race.CodeInternal {
		log.Error().Err(err).Msg(what)
	}
}
