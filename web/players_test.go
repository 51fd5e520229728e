package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/glicko2"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
)

// historyStart is when the first race of a saved history was played.
var historyStart = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// savedRace is a race to save into a player's history: its id, and, for
// a race really played, the player's seat and its result.
type savedRace struct {
	id   string
	seat int
	res  *race.Result
}

// saveHistory saves races for player (named ann; bob is the other) into
// the lobby's store, oldest first, one a minute from historyStart, as the
// lobby records them. A race without a result is made up: every third of
// those against the computer, unrated; the others rated, in classic but
// every fourth in aces-out, ann's rating in each variant rising by 10 a
// race from 1500. It returns the races' ids, oldest first.
func (e *lobbyEnv) saveHistory(player string, races []savedRace) []string {
	e.t.Helper()
	rated := map[string]int{} // variant -> ann's rated races in it so far
	ids := make([]string, len(races))
	for i, sr := range races {
		ids[i] = sr.id
		me := sr.seat
		g := lobby.GameRecord{Race: sr.id, Variant: "classic", At: historyStart.Add(time.Duration(i) * time.Minute),
			Outcome: race.OutcomeWin, Winner: new(me), Reason: race.ReasonMoreCards,
			Players: make([]lobby.PlayerRef, 2), Scores: make([]int, 2), Before: make([]glicko2.Rating, 2), After: make([]glicko2.Rating, 2)}
		g.Players[me] = lobby.PlayerRef{ID: player, Name: "ann"}
		g.Players[1-me] = lobby.PlayerRef{ID: "p-bob", Name: "bob"}
		g.Scores[me], g.Scores[1-me] = 20+i%10, 10
		var after []lobby.Standing
		switch {
		case sr.res != nil:
			g.Outcome, g.Winner, g.Reason, g.Scores = sr.res.Outcome, sr.res.Winner, sr.res.Reason, sr.res.Scores
		case i%3 == 2:
			g.Players[1-me] = lobby.PlayerRef{Name: "computer", Computer: true}
		default:
			if i%4 == 3 {
				g.Variant = "aces-out"
			}
			g.Rated = true
			rated[g.Variant]++
			k := float64(rated[g.Variant])
			g.Before[me] = glicko2.Rating{Rating: 1490 + 10*k, Deviation: 300 - k, Volatility: 0.06}
			g.After[me] = glicko2.Rating{Rating: 1500 + 10*k, Deviation: 299 - k, Volatility: 0.06}
			g.Before[1-me], g.After[1-me] = glicko2.New(), glicko2.New()
			s := lobby.NewStanding(player, "ann", g.Variant)
			s.Rating, s.Games, s.Wins = g.After[me], rated[g.Variant], rated[g.Variant]
			after = append(after, s)
		}
		if err := e.ratings.Save(context.Background(), g, after); err != nil {
			e.t.Fatal(err)
		}
	}
	return ids
}

// madeUp is n races that were never played (their records are not kept),
// ann in seat 0.
func madeUp(prefix string, n int) []savedRace {
	out := make([]savedRace, n)
	for i := range out {
		out[i] = savedRace{id: fmt.Sprintf("%s%03d", prefix, i)}
	}
	return out
}

// getRaw is a GET's status, Content-Type and Content-Disposition, and body.
func (e *lobbyEnv) getRaw(path string) (status int, header http.Header, body string) {
	e.t.Helper()
	res, err := http.Get(e.ts.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return res.StatusCode, res.Header, string(b)
}

type gamesPage struct {
	Games []lobby.GameRecord `json:"games"`
	Next  *string            `json:"next"`
}

func TestPlayerGamesPages(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	ids := e.saveHistory("p-ann", madeUp("r", 45))

	// The profile is the first page, with the cursor of the next.
	var prof lobby.Profile
	if st := e.get("/api/players/p-ann?n=20", &prof); st != http.StatusOK {
		t.Fatalf("profile: %d", st)
	}
	if len(prof.History) != 20 || prof.Next == "" || len(prof.Standings) != 2 || prof.Player != "p-ann" {
		t.Fatalf("profile: %d races, next %q, %d standings", len(prof.History), prof.Next, len(prof.Standings))
	}
	var fields map[string]json.RawMessage
	e.get("/api/players/p-ann", &fields)
	for _, f := range []string{"player", "standings", "history", "next"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("the profile has no %q: %v", f, fields)
		}
	}

	tests := []struct {
		name  string
		first string // the first page's address
	}{
		{"from the profile", ""},
		{"from the games route", "/api/players/p-ann/games?n=20"},
		{"with the default n", "/api/players/p-ann/games"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			var sizes []int
			next := prof.Next
			for _, g := range prof.History {
				got = append(got, g.Race)
			}
			sizes = append(sizes, len(prof.History))
			if tc.first != "" {
				var p gamesPage
				if st := e.get(tc.first, &p); st != http.StatusOK || p.Next == nil {
					t.Fatalf("first page: %d %+v", st, p)
				}
				if *p.Next != next {
					t.Errorf("first page's next %q, the profile's %q", *p.Next, next)
				}
			}
			for next != "" {
				var p gamesPage
				if st := e.get("/api/players/p-ann/games?n=20&cursor="+next, &p); st != http.StatusOK {
					t.Fatalf("page after %q: %d", next, st)
				}
				sizes = append(sizes, len(p.Games))
				for _, g := range p.Games {
					got = append(got, g.Race)
				}
				next = ""
				if p.Next != nil {
					next = *p.Next
				}
			}
			if fmt.Sprint(sizes) != "[20 20 5]" {
				t.Errorf("pages of %v races, want [20 20 5]", sizes)
			}
			// Every race once, newest first.
			if len(got) != len(ids) {
				t.Fatalf("%d races, want %d", len(got), len(ids))
			}
			for i, id := range got {
				if want := ids[len(ids)-1-i]; id != want {
					t.Fatalf("race %d is %s, want %s (all: %v)", i, id, want, got)
				}
			}
		})
	}
}

func TestPlayerRoutesRefuseBadInput(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	e.saveHistory("p-ann", madeUp("r", 5))
	_, _, before := e.getRaw("/api/players/p-ann")
	tests := []struct {
		path   string
		status int
		code   race.Code
		says   string
	}{
		{"/api/players/p-ann/games?n=0", http.StatusBadRequest, race.CodeBadOptions, "from 1 to 100"},
		{"/api/players/p-ann/games?n=101", http.StatusBadRequest, race.CodeBadOptions, "from 1 to 100"},
		{"/api/players/p-ann/games?n=ten", http.StatusBadRequest, race.CodeBadOptions, "from 1 to 100"},
		{"/api/players/p-ann/games?n=", http.StatusBadRequest, race.CodeBadOptions, "from 1 to 100"},
		{"/api/players/p-ann/games?cursor=forged", http.StatusBadRequest, lobby.CodeBadCursor, "forged"},
		{"/api/players/p-ann/games?cursor=-3", http.StatusBadRequest, lobby.CodeBadCursor, "-3"},
		{"/api/players/nobody/games", http.StatusNotFound, lobby.CodeNoSuchPlayer, "nobody"},
		{"/api/players/nobody/games.txt", http.StatusNotFound, lobby.CodeNoSuchPlayer, "nobody"},
		{"/api/players/nobody/ratings/classic", http.StatusNotFound, lobby.CodeNoSuchPlayer, "nobody"},
		{"/api/players/p-ann/ratings/chess", http.StatusBadRequest, race.CodeBadOptions, "chess"},
		{"/api/leaderboard/chess", http.StatusBadRequest, race.CodeBadOptions, "chess"}, // the same refusal
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			var body struct {
				Error struct {
					Code    race.Code
					Message string
				}
			}
			if st := e.get(tc.path, &body); st != tc.status || body.Error.Code != tc.code || !strings.Contains(body.Error.Message, tc.says) {
				t.Errorf("%d %+v, want %d %s saying %q", st, body.Error, tc.status, tc.code, tc.says)
			}
		})
	}
	if _, _, after := e.getRaw("/api/players/p-ann"); after != before {
		t.Errorf("the profile changed:\n%s\nwas\n%s", after, before)
	}
}

func TestPlayerRatingChart(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	ids := e.saveHistory("p-ann", madeUp("r", 12))
	// Rated: 0 1 4 6 9 10 in classic, 3 7 in aces-out (every third is
	// against the computer, every fourth in aces-out).
	tests := []struct {
		variant string
		races   []int
	}{
		{"classic", []int{0, 1, 4, 6, 9, 10}},
		{"Aces-Out", []int{3, 7}},
		{"strict", nil}, // raced, never in strict: no points
	}
	for _, tc := range tests {
		t.Run(tc.variant, func(t *testing.T) {
			var chart struct {
				Player, Variant string
				Changes         []lobby.RatingChange
			}
			_, _, raw := e.getRaw("/api/players/p-ann/ratings/" + tc.variant)
			if st := e.get("/api/players/p-ann/ratings/"+tc.variant, &chart); st != http.StatusOK {
				t.Fatalf("%d %s", st, raw)
			}
			if chart.Player != "p-ann" || chart.Variant != strings.ToLower(tc.variant) || !strings.Contains(raw, `"changes":[`) {
				t.Errorf("chart %s", raw)
			}
			if len(chart.Changes) != len(tc.races) {
				t.Fatalf("%d points, want %d: %s", len(chart.Changes), len(tc.races), raw)
			}
			for i, c := range chart.Changes {
				want := 1500 + 10*float64(i+1)
				if c.Race != ids[tc.races[i]] || c.After.Rating != want || c.Before.Rating != want-10 || c.After.Deviation != 299-float64(i+1) ||
					!c.At.Equal(historyStart.Add(time.Duration(tc.races[i])*time.Minute)) {
					t.Errorf("point %d: %+v, want race %s from %v to %v", i, c, ids[tc.races[i]], want-10, want)
				}
			}
		})
	}
}

// playedRace makes a private race on deal between ann and bob (their
// players, by their tokens), where ann plays a few moves and both resign.
func (e *lobbyEnv) playedRace(deal uint64, ann, bob welcome) savedRace {
	e.t.Helper()
	id := e.create(`{"deal":"` + strconv.FormatUint(deal, 10) + `"}`)
	a, b := e.dial(), e.dial()
	for _, c := range []struct {
		c *client
		w welcome
	}{{a, ann}, {b, bob}} {
		c.c.send(map[string]any{"type": "hello", "token": c.w.Token, "id": "h"})
		c.c.untilType("welcome")
		c.c.join(id, c.w.Name)
	}
	a.untilState(race.Countdown)
	b.untilState(race.Countdown)
	e.clock.Advance(race.DefaultCountdown)
	a.untilState(race.Running)
	b.untilState(race.Running)
	botMoves(a, deal, 3+int(deal)%4)
	a.send(map[string]any{"type": "resign", "id": "r"})
	b.send(map[string]any{"type": "resign", "id": "r"})
	return savedRace{id: id, seat: a.seat, res: a.result()}
}

func TestPlayerGamesText(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	ann, bob := e.dial().hello("ann"), e.dial().hello("bob")
	// 56 races, more than a page of the file's reads (50): the oldest and
	// the newest three really played, the 50 between never kept.
	var races []savedRace
	for d := range uint64(3) {
		races = append(races, e.playedRace(d+1, ann, bob))
	}
	races = append(races, madeUp("gone", 50)...)
	for d := range uint64(3) {
		races = append(races, e.playedRace(d+11, ann, bob))
	}
	ids := e.saveHistory(ann.Player, races)

	status, h, body := e.getRaw("/api/players/" + ann.Player + "/games.txt")
	if status != http.StatusOK || h.Get("Content-Type") != "text/plain; charset=utf-8" ||
		h.Get("Content-Disposition") != `attachment; filename="sirtommy-games-`+ann.Player+`.txt"` {
		t.Fatalf("%d %v\n%s", status, h, body)
	}
	blocks := strings.Split(strings.TrimSuffix(body, "\n"), "\n\n")
	if len(blocks) != len(races)+2 {
		t.Fatalf("%d blocks, want a head, %d races and an end:\n%s", len(blocks), len(races), body)
	}
	if head := blocks[0]; !strings.HasPrefix(head, "; Sir Tommy: every race of ann (player "+ann.Player+"), newest first.") {
		t.Errorf("head %q", head)
	}
	if end := blocks[len(blocks)-1]; end != "; The end: 56 games, 50 of them without their moves (each says why)." {
		t.Errorf("end %q", end)
	}
	for i, block := range blocks[1 : len(blocks)-1] {
		k := len(races) - 1 - i // newest first
		sr := races[k]
		wantTags := []string{
			fmt.Sprintf("[Race %q]", ids[k]),
			fmt.Sprintf("[Date %q]", historyStart.Add(time.Duration(k)*time.Minute).Format(time.RFC3339)),
			`[Player "ann"]`,
			fmt.Sprintf("[Replay %q]", e.ts.URL+"/?replay="+ids[k]),
		}
		for _, tag := range wantTags {
			if !strings.Contains(block, tag+"\n") {
				t.Fatalf("game %d lacks %s:\n%s", i, tag, block)
			}
		}
		if sr.res == nil {
			if !strings.Contains(block, "[Variant ") || !strings.HasSuffix(block, "; The moves of this game cannot be read: this server no longer keeps the race.") {
				t.Errorf("game %d, never kept:\n%s", i, block)
			}
			continue
		}
		// A race played: its tags, then ann's game as the race recorded it,
		// and the whole block reads back as one game text.
		game := sr.res.Games[sr.seat]
		if !strings.HasSuffix(block+"\n", "\n"+game) {
			t.Errorf("game %d does not end with ann's game text %q:\n%s", i, game, block)
		}
		rec, err := engine.ParseRecord(block)
		if err != nil {
			t.Fatalf("game %d: %v\n%s", i, err, block)
		}
		if _, err := rec.Replay(); err != nil {
			t.Errorf("game %d does not replay: %v", i, err)
		}
		wantOutcome := map[bool]string{true: "won", false: "lost"}[sr.res.Winner != nil && *sr.res.Winner == sr.seat]
		if sr.res.Winner == nil {
			wantOutcome = string(sr.res.Outcome)
		}
		tags := map[string]string{}
		for _, tv := range rec.Tags {
			tags[tv[0]] = tv[1]
		}
		if tags["Opponent"] != "bob" || tags["Outcome"] != wantOutcome || tags["Rating"] != "not rated" ||
			tags["Cards"] != fmt.Sprintf("%d-%d", sr.res.Scores[sr.seat], sr.res.Scores[1-sr.seat]) {
			t.Errorf("game %d's tags %v (result %+v)", i, tags, sr.res)
		}
	}
}

// pagedRatings is a store that records the n of every page of games it is
// asked for, and fails the failOn-th such request (1 the first; 0 none).
type pagedRatings struct {
	*memlobby.Ratings
	failOn int

	mu    sync.Mutex
	pages []int
}

// Games records n and answers, or fails the failOn-th time.
func (p *pagedRatings) Games(ctx context.Context, player, cursor string, n int) (lobby.GamesPage, error) {
	p.mu.Lock()
	p.pages = append(p.pages, n)
	fail := len(p.pages) == p.failOn
	p.mu.Unlock()
	if fail {
		return lobby.GamesPage{}, fmt.Errorf("pagedRatings: the page after %q: %w", cursor, race.ErrUnavailable)
	}
	return p.Ratings.Games(ctx, player, cursor, n)
}

// TestPlayerGamesTextPageByPage: games.txt reads the store a bounded page
// at a time, never a player's every race at once; a store that fails
// between two pages ends the file with a line saying so, after the games
// it wrote whole; one that fails at once gets 503 unavailable, no file.
func TestPlayerGamesTextPageByPage(t *testing.T) {
	tests := []struct {
		name   string
		failOn int    // the page read that fails (0: none)
		pages  int    // pages read
		games  int    // games written
		end    string // the file's last line, or the error's code
	}{
		{"the store fails at once", 1, 1, 0, string(race.CodeUnavailable)},
		{"whole", 0, 3, 120, "; The end: 120 games, 120 of them without their moves (each says why)."},
		{"the store fails", 2, 2, 50, "; The file stops here: the player's races cannot be read now; try again shortly. The 50 games above are whole; download it again later for the rest."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var store *pagedRatings
			e := newLobbyEnvOver(t, lobby.Config{}, func(r *memlobby.Ratings) lobby.Ratings {
				store = &pagedRatings{Ratings: r, failOn: tc.failOn}
				return store
			})
			ids := e.saveHistory("p-ann", madeUp("r", 120))
			status, h, body := e.getRaw("/api/players/p-ann/games.txt")
			if tc.games == 0 {
				if status != http.StatusServiceUnavailable || h.Get("Content-Disposition") != "" || !strings.Contains(body, `"code":"`+tc.end+`"`) {
					t.Errorf("%d %v %s, want 503 %s and no file", status, h, body, tc.end)
				}
				return
			}
			if status != http.StatusOK {
				t.Fatalf("status %d", status)
			}
			lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
			if end := lines[len(lines)-1]; end != tc.end {
				t.Errorf("last line %q, want %q", end, tc.end)
			}
			var races []string
			for _, l := range lines {
				if id, ok := strings.CutPrefix(l, `[Race "`); ok {
					races = append(races, strings.TrimSuffix(id, `"]`))
				}
			}
			if len(races) != tc.games {
				t.Fatalf("%d games written, want %d", len(races), tc.games)
			}
			for i, id := range races {
				if want := ids[len(ids)-1-i]; id != want {
					t.Fatalf("game %d is %s, want %s", i, id, want)
				}
			}
			store.mu.Lock()
			defer store.mu.Unlock()
			if len(store.pages) != tc.pages || slices.Max(store.pages) > 50 {
				t.Errorf("pages of %v read, want %d of at most 50", store.pages, tc.pages)
			}
		})
	}
}
