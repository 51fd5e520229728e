package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// ExpertChance reads only what the player sees: two games that look the
// same but whose stocks differ get the same chance and the same move. A
// player that solves the true game (what the expert does on its draws)
// is caught by the same check.
func TestExpertChanceDoesNotPeek(t *testing.T) {
	pairs, differ := 0, 0
	rng := rand.New(rand.NewPCG(3, 4))
	// The default configuration on a few positions, a quick one on more.
	// (Under -short and -race, the quick one only.)
	full, every, min := 8, 6, 10
	if testing.Short() || raceEnabled {
		full, every, min = 0, 12, 4
	}
	n := 0
	positionsOf(t, []string{"classic", "four-at-a-time", "strict"}, scaled(2), every, func(g *Game) {
		var c *expertConfig
		if n++; n > full {
			c = &quickExpert
		}
		chance := func(v *View, legal []Move) (float64, Move) { return expertChance(v, legal, c) }
		h, ok := hideStock(g, rng)
		if !ok {
			return
		}
		vg, vh := g.Memory(), h.Memory()
		pg, mg := chance(&vg, g.Moves())
		ph, mh := chance(&vh, h.Moves())
		if pg < 0 || pg > 1 {
			t.Fatalf("chance %v", pg)
		}
		pairs++
		if pg != ph || mg != mh {
			differ++
		}
		// ExpertChance repeats itself.
		if again, m := chance(&vg, g.Moves()); again != pg || m != mg {
			t.Fatalf("ExpertChance gave %v %v, then %v %v", pg, mg, again, m)
		}
	})
	if pairs < min || differ != 0 {
		t.Errorf("%d of %d pairs of identical-looking positions got different chances", differ, pairs)
	}
	cheats, cheatPairs := countPeeksEvery(t, 1, 10, func(g *Game) Move {
		// A cheat: the first legal move after which the true game is won.
		s := newSolver(g.rules, 200)
		for _, m := range g.Moves() {
			h := *g
			if h.Apply(m) == nil && (h.status == Won || s.quickWin(&h, 200)) {
				return m
			}
		}
		return g.Moves()[0]
	})
	if cheats == 0 {
		t.Errorf("the check did not catch a player who solves the true game (%d pairs)", cheatPairs)
	}
	t.Logf("%d pairs; a player solving the true game chose differently in %d of %d", pairs, cheats, cheatPairs)
}

// positionsOf is positions for the named variants, every every-th choice.
func positionsOf(t *testing.T, names []string, deals, every int, visit func(g *Game)) {
	t.Helper()
	n := 0
	for _, name := range names {
		rules := mustVariant(t, name)
		for deal := range uint64(deals) {
			g := New(rules, deal)
			b := NewBot(Medium, deal)
			for g.Status() == Playing {
				legal := g.Moves()
				if len(legal) > 1 {
					if n%every == 0 {
						visit(&g)
					}
					n++
				}
				v := g.Memory()
				m, _ := b.Choose(&v, legal)
				if err := g.Apply(m); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// ExpertChance at the ends: a won game is 1, a game with no legal move 0,
// and on the last steps of a winning line, where every draw is the one
// true order of the few cards left (or none is unseen), the expert wins
// every draw.
func TestExpertChanceEnds(t *testing.T) {
	rules := mustVariant(t, "classic")
	sol := Solve(rules, 1, SolveOptions{})
	if sol.Outcome != Winnable {
		t.Fatalf("deal 1: %v", sol.Outcome)
	}
	g := New(rules, 1)
	for i, m := range sol.Line {
		if g.stockN-g.next <= 1 && g.Status() == Playing {
			v := g.Memory()
			if p, move := ExpertChance(&v, g.Moves()); p != 1 || !contains(g.Moves(), move) {
				t.Fatalf("move %d of a won line with %d cards unseen: chance %v, move %v", i, g.stockN-g.next, p, move)
			}
		}
		if err := g.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	v := g.Memory()
	if p, _ := ExpertChance(&v, g.Moves()); g.Status() != Won || p != 1 {
		t.Errorf("won game: status %v, chance %v", g.Status(), p)
	}
	h := New(rules, 2)
	w := h.Memory()
	if p, m := ExpertChance(&w, nil); p != 0 || m != (Move{}) {
		t.Errorf("no legal moves: %v %v", p, m)
	}
}

// In strategy a game can loop only through moves between waste piles: the
// expert never comes back to a position it has left. Its quick
// configuration, whose draws tell moves apart least, looped on the code
// before on deal 4, as the default one did on deals 4 and 5 (2,000 moves,
// then resigned).
func TestExpertDoesNotLoop(t *testing.T) {
	rules := mustVariant(t, "strategy")
	deals := uint64(12)
	if testing.Short() || raceEnabled {
		deals = 4
	}
	for deal := uint64(1); deal <= deals; deal++ {
		b := testBot(Expert, deal, true)
		g := New(rules, deal)
		type position struct {
			progress
			layout uint64
		}
		seen := map[position]int{}
		for ply := 0; g.Status() == Playing; ply++ {
			here := position{progressOf(&g), g.wasteLayout()}
			if at, ok := seen[here]; ok {
				t.Fatalf("deal %d: the position of move %d came back at move %d", deal, at, ply)
			}
			seen[here] = ply
			v := g.Memory()
			m, _ := b.Choose(&v, g.Moves())
			if err := g.Apply(m); err != nil {
				t.Fatalf("deal %d: %v", deal, err)
			}
		}
	}
}

// withoutReturns leaves out the move back to the layout just left, and
// only that, until the position progresses.
func TestWithoutReturns(t *testing.T) {
	rules := mustVariant(t, "strategy")
	g := New(rules, 1)
	// Two turned cards on W1, one on W2 and one on W3.
	for _, p := range []int{0, 0, 1, 2} {
		if err := g.Apply(PlaceMove(g.hand[0], W(p))); err != nil {
			t.Fatal(err)
		}
	}
	var w wasteShuffles
	top := g.wasteTop(0)
	there, back := PlaceMove(top, W(1)), PlaceMove(top, W(0))
	if got := w.withoutReturns(&g, []Move{there}, g.Moves()); !slices.Equal(got, []Move{there}) {
		t.Fatalf("first move: kept %v", got)
	}
	h := g
	if err := h.Apply(there); err != nil {
		t.Fatal(err)
	}
	legal := h.Moves()
	if got := w.withoutReturns(&h, []Move{back, PlaceMove(top, W(2))}, legal); len(got) != 1 || got[0] == back {
		t.Fatalf("after %v: kept %v, want the move to W3 alone", there, got)
	}
	// Only the move back is left: another legal move that does not go back
	// is played instead.
	if got := w.withoutReturns(&h, []Move{back}, legal); len(got) != 1 || got[0] == back {
		t.Fatalf("only the move back: kept %v", got)
	}
	// Once the position progresses, the layouts are forgotten.
	h.hand[0], h.hand[1] = NoCard, h.hand[0]
	if got := w.withoutReturns(&h, []Move{back}, legal); !slices.Equal(got, []Move{back}) {
		t.Fatalf("after progress: kept %v", got)
	}
}
