package race_test

import (
	"testing"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// refereeGames makes the referee's games from a classic deal that
// racetest.Greedy wins: playing(n) is a game still playing with n
// foundation cards, out(n) one resigned with n, won one that won it.
type refereeGames struct {
	t   *testing.T
	won engine.Game
}

func newRefereeGames(t *testing.T) *refereeGames {
	t.Helper()
	rules, _ := engine.Variant("classic")
	for d := uint64(1); d < 5000; d++ {
		g := engine.New(rules, d)
		for g.Status() == engine.Playing {
			if err := g.Apply(racetest.Greedy(&g)); err != nil {
				t.Fatal(err)
			}
		}
		if g.Status() == engine.Won {
			return &refereeGames{t: t, won: g}
		}
	}
	t.Fatal("no classic deal of the first 5,000 is won by racetest.Greedy")
	return nil
}

func (rg *refereeGames) playing(score int) engine.Game {
	rg.t.Helper()
	g := engine.New(rg.won.Rules(), rg.won.DealNumber())
	for g.Score() < score {
		if err := g.Apply(racetest.Greedy(&g)); err != nil {
			rg.t.Fatal(err)
		}
	}
	if g.Score() != score || g.Status() != engine.Playing {
		rg.t.Fatalf("game at %d cards, %s: want %d, playing", g.Score(), g.Status(), score)
	}
	return g
}

func (rg *refereeGames) out(score int) engine.Game {
	g := rg.playing(score)
	g.Resign()
	return g
}

func pointers(games []engine.Game) []*engine.Game {
	ps := make([]*engine.Game, len(games))
	for i := range games {
		ps[i] = &games[i]
	}
	return ps
}

// TestDecideManySeats checks the referee's rules over more than two
// games: the first to win the deal wins; once all but one are out, the
// one playing wins when it has more cards than every other; all out, the
// most cards wins, and a tie for the most is a draw.
func TestDecideManySeats(t *testing.T) {
	rg := newRefereeGames(t)
	p, o := rg.playing, rg.out
	for _, tc := range []struct {
		name   string
		games  []engine.Game
		winner int
		reason race.Reason
		done   bool
	}{
		{"one won the deal", []engine.Game{p(3), rg.won, o(9)}, 1, race.ReasonWonDeal, true},
		{"two still playing", []engine.Game{p(3), o(9), p(1)}, 0, "", false},
		{"the last playing passed everyone", []engine.Game{o(3), p(5), o(4)}, 1, race.ReasonPassed, true},
		{"the last playing level with the best out", []engine.Game{o(4), o(2), p(4)}, 0, "", false},
		{"the last playing behind one out", []engine.Game{p(6), o(7), o(2)}, 0, "", false},
		{"all out, one has the most", []engine.Game{o(3), o(5), o(2)}, 1, race.ReasonMoreCards, true},
		{"all out, two share the most", []engine.Game{o(5), o(2), o(5)}, -1, race.ReasonEqualCards, true},
		{"two seats, the other passed", []engine.Game{o(3), p(4)}, 1, race.ReasonPassed, true},
		{"two seats, both out level", []engine.Game{o(3), o(3)}, -1, race.ReasonEqualCards, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, reason, done := race.DecideForTest(pointers(tc.games))
			if w != tc.winner || reason != tc.reason || done != tc.done {
				t.Errorf("decide = %d, %q, %v; want %d, %q, %v", w, reason, done, tc.winner, tc.reason, tc.done)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		games  []engine.Game
		winner int
		reason race.Reason
	}{
		{"one has the most", []engine.Game{p(2), o(6), p(1)}, 1, race.ReasonTime},
		{"two share the most", []engine.Game{p(6), o(6), p(1)}, -1, race.ReasonEqualCards},
	} {
		t.Run("time: "+tc.name, func(t *testing.T) {
			if w, reason := race.DecideOnTimeForTest(pointers(tc.games)); w != tc.winner || reason != tc.reason {
				t.Errorf("decideOnTime = %d, %q; want %d, %q", w, reason, tc.winner, tc.reason)
			}
		})
	}
}
