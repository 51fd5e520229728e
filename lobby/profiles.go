package lobby

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"sirtommy/engine"
	"sirtommy/lobby/glicko2"
	"sirtommy/race"
)

func (l *Lobby) rating(variant, player string) float64 {
	st, err := l.deps.Stores.Ratings.Standing(context.Background(), variant, player)
	if err != nil {
		l.log.Warn().Err(err).Str("player", player).Msg("rating unavailable; matching as a new player")
		return glicko2.DefaultRating
	}
	return st.Rating.Rating
}

// maxRecordTries bounds the reads and saves of one race's result when
// other instances keep saving the same players' standings (ErrStale):
// each try loses only to a save that succeeded, so a few are plenty.
const maxRecordTries = 5

// record keeps a finished race in its players' histories and, in a race
// of two, updates both players' ratings and records, reading the
// standings anew when another instance saved one in between.
func (l *Lobby) record(raceID, variant string, players []PlayerRef, res race.Result, at time.Time) error {
	l.rateMu.Lock()
	defer l.rateMu.Unlock()
	var err error
	for range maxRecordTries {
		if err = l.recordOnce(raceID, variant, players, res, at); !errors.Is(err, ErrStale) {
			return err
		}
	}
	return err
}

// recordOnce reads, rates and saves once.
func (l *Lobby) recordOnce(raceID, variant string, players []PlayerRef, res race.Result, at time.Time) error {
	ctx, cancel := opCtx()
	defer cancel()
	g := GameRecord{Race: raceID, Variant: variant, At: at, Players: slices.Clone(players), Outcome: res.Outcome,
		Winner: res.Winner, Reason: res.Reason, Scores: slices.Clone(res.Scores)}
	if len(players) != race.MinSeats {
		// A room's race: in every racer's history with their place,
		// rating nobody.
		g.Ranking = slices.Clone(res.Ranking)
		if err := l.deps.Stores.Ratings.Save(ctx, g, nil); err != nil {
			return fmt.Errorf("lobby: save race %s: %w", raceID, err)
		}
		return nil
	}
	var st [2]Standing
	for s := range 2 {
		if players[s].Computer || players[s].Ghost || players[s].Solo {
			st[s] = NewStanding("", players[s].Name, variant)
			continue
		}
		cur, err := l.deps.Stores.Ratings.Standing(ctx, variant, players[s].ID)
		if err != nil {
			return fmt.Errorf("lobby: standing of %s: %w", players[s].ID, err)
		}
		cur.Name = players[s].Name
		st[s] = cur
	}
	g.Rated = res.Rated && !players[0].Computer && !players[1].Computer && !players[0].Ghost && !players[1].Ghost && !players[0].Solo
	var after []Standing
	g.Before, g.After = make([]glicko2.Rating, 2), make([]glicko2.Rating, 2)
	for s := range 2 {
		g.Before[s], g.After[s] = st[s].Rating, st[s].Rating
	}
	if g.Rated {
		score := glicko2.Draw
		if res.Winner != nil {
			score = glicko2.Loss
			if *res.Winner == 0 {
				score = glicko2.Win
			}
		}
		scores := [2]float64{score, 1 - score}
		for s := range 2 {
			g.After[s] = glicko2.Update(st[s].Rating, []glicko2.Result{{Opponent: st[1-s].Rating, Score: scores[s]}}, l.cfg.Tau)
		}
		for s := range 2 {
			after = append(after, ApplyResult(st[s], scores[s], g.After[s]))
		}
	}
	if err := l.deps.Stores.Ratings.Save(ctx, g, after); err != nil {
		return fmt.Errorf("lobby: save race %s: %w", raceID, err)
	}
	return nil
}

// Leaderboard is the n best rated players of a variant.
func (l *Lobby) Leaderboard(ctx context.Context, variant string, n int) ([]Standing, error) {
	rules, err := engine.Variant(variant)
	if err != nil {
		return nil, &race.Error{Code: race.CodeBadOptions, Message: err.Error(), Err: err}
	}
	out, err := l.deps.Stores.Ratings.Leaderboard(ctx, rules.Name, n)
	if err != nil {
		return nil, storeFailed("the leaderboard", fmt.Errorf("lobby: leaderboard %s: %w", rules.Name, err))
	}
	return out, nil
}

// Profile is a player's standings in every variant and their last races.
type Profile struct {
	Player    string       `json:"player"`
	Standings []Standing   `json:"standings"`
	History   []GameRecord `json:"history"`
	// Next is the cursor of the races older than History's (for Games);
	// absent when History holds every race of the player's.
	Next string `json:"next,omitempty"`
	// Ghosts are the player's ghost challenges and races against ghosts;
	// absent when they have none.
	Ghosts *GhostProfile `json:"ghosts,omitempty"`
	// Daily is the player's days at the day's deal; absent when none.
	Daily *DailyStats `json:"daily,omitempty"`
}

// Profile returns a player's standings and last n races: the first page
// of Games, whose Next it carries.
func (l *Lobby) Profile(ctx context.Context, player string, n int) (Profile, error) {
	l.settleRead(ctx, player)
	st, err := l.deps.Stores.Ratings.Standings(ctx, player)
	if err != nil {
		return Profile{}, storeFailed("the player's standings", fmt.Errorf("lobby: standings of %s: %w", player, err))
	}
	page, err := l.deps.Stores.Ratings.Games(ctx, player, "", n)
	if err != nil {
		return Profile{}, storeFailed("the player's history", fmt.Errorf("lobby: history of %s: %w", player, err))
	}
	gp, err := l.ghostProfile(ctx, player, n)
	if err != nil {
		return Profile{}, storeFailed("the player's ghost races", errGhostStore("profile of "+player, err))
	}
	ds, err := l.dailyStats(ctx, player, n)
	if err != nil {
		return Profile{}, storeFailed("the player's days", err)
	}
	if len(st) == 0 && len(page.Games) == 0 && gp == nil && ds == nil {
		return Profile{}, race.Errorf(CodeNoSuchPlayer, "no player %q has raced", player)
	}
	if page.Games == nil {
		page.Games = []GameRecord{} // a JSON list, never null
	}
	return Profile{Player: player, Standings: st, History: page.Games, Next: page.Next, Ghosts: gp, Daily: ds}, nil
}

// MaxGamesPage bounds the n of one page of Games: what a page shows at
// once, and a bounded read of the store per request.
const MaxGamesPage = 100

// Games is a page of at most n of a player's races, newest first: those
// older than cursor (the Next of the page before, or of the profile; ""
// for the newest). n must be from 1 to MaxGamesPage (CodeBadOptions); a
// cursor the store did not make is refused with CodeBadCursor. A player
// whose profile does not exist is CodeNoSuchPlayer here too (asked on the
// first page; a later page past the last race is merely empty).
func (l *Lobby) Games(ctx context.Context, player, cursor string, n int) (GamesPage, error) {
	if n < 1 || n > MaxGamesPage {
		return GamesPage{}, race.Errorf(race.CodeBadOptions, "n: %d is not from 1 to %d", n, MaxGamesPage)
	}
	if cursor == "" {
		l.settleRead(ctx, player)
	}
	page, err := l.deps.Stores.Ratings.Games(ctx, player, cursor, n)
	if err != nil {
		return GamesPage{}, storeFailed("the player's races", fmt.Errorf("lobby: games of %s: %w", player, err))
	}
	if cursor == "" && len(page.Games) == 0 {
		if _, err := l.Profile(ctx, player, 1); err != nil {
			return GamesPage{}, err
		}
	}
	if page.Games == nil {
		page.Games = []GameRecord{} // a JSON list, never null
	}
	return page, nil
}

// RatingChanges is every change of a player's rating in a variant, oldest
// first: the points of their rating chart. An unknown variant is refused
// with CodeBadOptions, as the leaderboard does; a player whose profile does
// not exist with CodeNoSuchPlayer; a player who has raced but never rated
// in the variant has none.
func (l *Lobby) RatingChanges(ctx context.Context, player, variant string) ([]RatingChange, error) {
	rules, err := engine.Variant(variant)
	if err != nil {
		return nil, &race.Error{Code: race.CodeBadOptions, Message: err.Error(), Err: err}
	}
	l.settleRead(ctx, player)
	ch, err := l.deps.Stores.Ratings.Changes(ctx, player, rules.Name)
	if err != nil {
		return nil, storeFailed("the player's ratings", fmt.Errorf("lobby: rating changes of %s in %s: %w", player, rules.Name, err))
	}
	if len(ch) == 0 {
		if _, err := l.Profile(ctx, player, 1); err != nil {
			return nil, err
		}
		ch = []RatingChange{} // a JSON list, never null
	}
	return ch, nil
}
