package engine

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// issuePosition is classic deal 51561 after the 17 moves of the game in
// the issue "Where you lost it" for every game, a position the analysis
// once left unknown at 300,000 positions and 20,000 conflicts, and that
// an independent solver wins from in 194 positions.
func issuePosition(t testing.TB) Game {
	t.Helper()
	g := New(mustVariant(t, "classic"), 51561)
	play(t, &g, strings.Fields("9H>W1 3S>W2 7C>W3 9C>W1 6S>W2 JD>W2 AD>W4 8C>W2 AD>F1 5H>W2 TD>W1 2D>W4 4H>W2 JC>W3 AS>W3 AS>F4 TC>W4")...)
	return g
}

// TestMidGameIssuePosition: the issue's position is settled as won within
// the coach's budget per position, and the line found replays to a win.
func TestMidGameIssuePosition(t *testing.T) {
	g := issuePosition(t)
	sol := SolveGame(&g, SolveOptions{MaxNodes: 300_000, MaxConflicts: 20_000, SkipBestScore: true})
	t.Logf("%s: %d positions, %d conflicts, SAT %v", sol.Outcome, sol.Nodes, sol.Conflicts, sol.SAT)
	if sol.Outcome != Winnable {
		t.Fatalf("the issue's position: %s after %d positions and %d conflicts, want won", sol.Outcome, sol.Nodes, sol.Conflicts)
	}
	if !winsFrom(g, sol.Line) {
		t.Fatalf("the line %v does not win from the issue's position", sol.Line)
	}
}

// TestSATMidGameLabellings checks the clauses that label interchangeable
// piles and foundations one way only in mid-game positions, and the
// implied clauses of passClauses, where some
// piles hold cards (the empty ones are interchangeable) and some
// foundations stand at one height but not all (those are): from end
// positions where such a rule applies, the SAT answer is the same without
// the rules, the same without the implied clauses, and the same as the
// search's where that settles. Many are
// lost and many won, so a rule that dropped a win would show as a loss
// with it and a win without.
func TestSATMidGameLabellings(t *testing.T) {
	for seed, variant := range []string{"classic", "four-at-a-time", "calculation"} {
		r := mustVariant(t, variant)
		rng := rand.New(rand.NewPCG(41, 43+uint64(seed)))
		count := map[Outcome]int{}
		cases := scaled(60)
		for i := 0; i < cases; {
			g := endgame(t, r, rng, 12+rng.IntN(9), 14)
			p, ok := satCovers(&g)
			if !ok || !midGameLabelled(p) {
				continue
			}
			i++
			with, line, _, err := satDecidePosition(&g, p, 0)
			if err != nil {
				t.Fatalf("%s case %d: %v", variant, i, err)
			}
			p.allLabellings = true
			without, _, _, err := satDecidePosition(&g, p, 0)
			if err != nil {
				t.Fatalf("%s case %d, every labelling: %v", variant, i, err)
			}
			if with != without {
				t.Fatalf("%s case %d: %v with one labelling, %v with every one\n%s", variant, i, with, without, g.String())
			}
			p.allLabellings, p.noPass = false, true
			noPass, _, _, err := satDecidePosition(&g, p, 0)
			if err != nil {
				t.Fatalf("%s case %d, without the pass clauses: %v", variant, i, err)
			}
			if with != noPass {
				t.Fatalf("%s case %d: %v with the pass clauses, %v without\n%s", variant, i, with, noPass, g.String())
			}
			if with == Winnable {
				checkWin(t, g, line)
			}
			if want := SolveGame(&g, SolveOptions{MaxNodes: 1_000_000, SearchOnly: true, SkipBestScore: true}); want.Outcome != Unknown && want.Outcome != with {
				t.Fatalf("%s case %d: SAT says %v, the search %v\n%s", variant, i, with, want.Outcome, g.String())
			}
			count[with]++
		}
		t.Logf("%s: %v", variant, count)
		if count[Lost] < cases/10 || count[Winnable] < cases/10 {
			t.Errorf("%s: the cases should hold many wins and losses: %v", variant, count)
		}
	}
}

// midGameLabelled reports whether a mid-game labelling rule applies to p:
// cards on some pile and two piles empty, or two foundations with one
// chain at one height while not all four are.
func midGameLabelled(p *satPosition) bool {
	if p.placed > 0 && len(emptyPiles(p)) >= 2 {
		return true
	}
	if p.heights == [4]int{p.heights[0], p.heights[0], p.heights[0], p.heights[0]} {
		return false
	}
	for a := range 4 {
		for b := range a {
			if p.heights[a] == p.heights[b] && p.heights[a] < p.length && p.rankAt[a] == p.rankAt[b] {
				return true
			}
		}
	}
	return false
}

// TestMidGameSettledAsOftenAsFresh: over mid-game positions of won deals
// (the solver's winning line followed for a while, then 2 to 9 random
// moves, so that some positions are lost), the solver settles a position
// within a small budget at least as often as it settles the fresh deals
// themselves within it.
func TestMidGameSettledAsOftenAsFresh(t *testing.T) {
	r := mustVariant(t, "classic")
	budget := SolveOptions{MaxNodes: 20_000, MaxConflicts: 3_000, SkipBestScore: true}
	rng := rand.New(rand.NewPCG(47, 53))
	deals := scaled(40)
	fresh, mid := 0, 0
	count := map[Outcome]int{}
	for d := range deals {
		deal := uint64(1000 + d)
		g := New(r, deal)
		sol := SolveGame(&g, budget)
		if sol.Outcome != Unknown {
			fresh++
		}
		won := SolveGame(&g, SolveOptions{SkipBestScore: true})
		if won.Outcome != Winnable {
			t.Fatalf("deal %d: %s; the test wants won deals", deal, won.Outcome)
		}
		k := 8 + rng.IntN(min(30, len(won.Line)-8))
		for _, m := range won.Line[:k] {
			if err := g.Apply(m); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 + rng.IntN(8) {
			ms := g.Moves()
			if len(ms) == 0 {
				break
			}
			if err := g.Apply(ms[rng.IntN(len(ms))]); err != nil {
				t.Fatal(err)
			}
		}
		got := SolveGame(&g, budget)
		count[got.Outcome]++
		if got.Outcome != Unknown {
			mid++
		}
		if got.Outcome == Winnable && !winsFrom(g, got.Line) {
			t.Fatalf("deal %d: the line from the mid-game position does not win", deal)
		}
	}
	t.Logf("settled: %d of %d fresh deals, %d of %d mid-game positions %v", fresh, deals, mid, deals, count)
	if mid < fresh {
		t.Errorf("mid-game positions settled %d times, fresh deals %d: want at least as often", mid, fresh)
	}
}
