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
// games: the race is over once no place can change (at most one racer
// plays on, with more cards than every racer out); the first to win the
// deal wins; else the one playing on who passed everyone, or the most
// cards when all are out; a tie for the most is a draw.
func TestDecideManySeats(t *testing.T) {
	rg := newRefereeGames(t)
	p, o, w := rg.playing, rg.out, rg.won
	for _, tc := range []struct {
		name     string
		games    []engine.Game
		finished []int64
		winner   int
		reason   race.Reason
		done     bool
	}{
		{"one won, one playing behind one out", []engine.Game{p(3), w, o(9)}, []int64{-1, 500, 200}, 0, "", false},
		{"one won, the others out", []engine.Game{o(3), w, o(9)}, []int64{100, 500, 200}, 1, race.ReasonWonDeal, true},
		{"one won, the one playing ahead of those out", []engine.Game{p(10), w, o(9)}, []int64{-1, 500, 200}, 1, race.ReasonWonDeal, true},
		{"one won, two playing", []engine.Game{p(10), w, p(2)}, []int64{-1, 500, -1}, 0, "", false},
		{"two won: the first to win", []engine.Game{w, w, o(2)}, []int64{900, 400, 100}, 1, race.ReasonWonDeal, true},
		{"two won in the same millisecond", []engine.Game{w, w, o(2)}, []int64{400, 400, 100}, -1, race.ReasonEqualCards, true},
		{"two still playing", []engine.Game{p(3), o(9), p(1)}, []int64{-1, 1, -1}, 0, "", false},
		{"the last playing passed everyone", []engine.Game{o(3), p(5), o(4)}, []int64{1, -1, 2}, 1, race.ReasonPassed, true},
		{"the last playing level with the best out", []engine.Game{o(4), o(2), p(4)}, []int64{1, 2, -1}, 0, "", false},
		{"the last playing behind one out", []engine.Game{p(6), o(7), o(2)}, []int64{-1, 1, 2}, 0, "", false},
		{"all out, one has the most", []engine.Game{o(3), o(5), o(2)}, []int64{1, 2, 3}, 1, race.ReasonMoreCards, true},
		{"all out, two share the most", []engine.Game{o(5), o(2), o(5)}, []int64{1, 2, 3}, -1, race.ReasonEqualCards, true},
		{"two seats, one won", []engine.Game{p(8), w}, []int64{-1, 300}, 1, race.ReasonWonDeal, true},
		{"two seats, the other passed", []engine.Game{o(3), p(4)}, []int64{1, -1}, 1, race.ReasonPassed, true},
		{"two seats, both out level", []engine.Game{o(3), o(3)}, []int64{1, 2}, -1, race.ReasonEqualCards, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, reason, done := race.DecideForTest(pointers(tc.games), tc.finished)
			if w != tc.winner || reason != tc.reason || done != tc.done {
				t.Errorf("decide = %d, %q, %v; want %d, %q, %v", w, reason, done, tc.winner, tc.reason, tc.done)
			}
		})
	}
	for _, tc := range []struct {
		name     string
		games    []engine.Game
		finished []int64
		winner   int
		reason   race.Reason
	}{
		{"one has the most", []engine.Game{p(2), o(6), p(1)}, []int64{-1, 1, -1}, 1, race.ReasonTime},
		{"two share the most", []engine.Game{p(6), o(6), p(1)}, []int64{-1, 1, -1}, -1, race.ReasonEqualCards},
		{"one won before the time", []engine.Game{p(30), w, p(1)}, []int64{-1, 700, -1}, 1, race.ReasonWonDeal},
	} {
		t.Run("time: "+tc.name, func(t *testing.T) {
			if w, reason := race.DecideOnTimeForTest(pointers(tc.games), tc.finished); w != tc.winner || reason != tc.reason {
				t.Errorf("decideOnTime = %d, %q; want %d, %q", w, reason, tc.winner, tc.reason)
			}
		})
	}
}

// TestRankEveryRacer checks the ranking: those who won the deal first, in
// the order they won it; then by cards, most first, still playing or
// out; equal cards share a place and the next place counts them; a seat
// placed first (the one left when the other forfeits) is first alone.
func TestRankEveryRacer(t *testing.T) {
	rg := newRefereeGames(t)
	p, o, w := rg.playing, rg.out, rg.won
	type place struct {
		seat, place, cards int
		status             engine.Status
		finished           int64 // -1: absent
	}
	for _, tc := range []struct {
		name     string
		games    []engine.Game
		finished []int64
		first    int
		want     []place
	}{
		{"winners, then cards, ties shared", []engine.Game{o(5), w, p(7), o(5), w, o(1)}, []int64{100, 900, -1, 200, 400, 300}, -1, []place{
			{4, 1, 52, engine.Won, 400}, {1, 2, 52, engine.Won, 900}, {2, 3, 7, engine.Playing, -1},
			{0, 4, 5, engine.Resigned, 100}, {3, 4, 5, engine.Resigned, 200}, {5, 6, 1, engine.Resigned, 300},
		}},
		{"ten racers, all level", []engine.Game{o(2), o(2), o(2), o(2), o(2), o(2), o(2), o(2), o(2), o(2)}, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, -1, []place{
			{0, 1, 2, engine.Resigned, 1}, {1, 1, 2, engine.Resigned, 2}, {2, 1, 2, engine.Resigned, 3}, {3, 1, 2, engine.Resigned, 4}, {4, 1, 2, engine.Resigned, 5},
			{5, 1, 2, engine.Resigned, 6}, {6, 1, 2, engine.Resigned, 7}, {7, 1, 2, engine.Resigned, 8}, {8, 1, 2, engine.Resigned, 9}, {9, 1, 2, engine.Resigned, 10},
		}},
		{"the one left after a forfeit first", []engine.Game{o(9), p(2)}, []int64{50, -1}, 1, []place{
			{1, 1, 2, engine.Playing, -1}, {0, 2, 9, engine.Resigned, 50},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := race.RankForTest(pointers(tc.games), tc.finished, tc.first)
			if len(got) != len(tc.want) {
				t.Fatalf("%d places, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				fin := int64(-1)
				if g.FinishedMs != nil {
					fin = *g.FinishedMs
				}
				if g.Seat != w.seat || g.Place != w.place || g.Cards != w.cards || g.Status != w.status || fin != w.finished {
					t.Errorf("place %d: seat %d place %d, %d cards, %s, finished %d; want seat %d place %d, %d cards, %s, finished %d",
						i, g.Seat, g.Place, g.Cards, g.Status, fin, w.seat, w.place, w.cards, w.status, w.finished)
				}
			}
		})
	}
}
