package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestSATAgainstSearch checks the SAT encoding against the search on end
// positions too big for a search with no pruning but small enough for the
// solver's full search to settle: from 15 to 35 cards left (30 in the
// variants that group cards or climb by other steps), up to 20 of them in
// the stock. Every won line is replayed.
func TestSATAgainstSearch(t *testing.T) {
	for seed, variant := range []string{"classic", "four-at-a-time", "calculation"} {
		r := mustVariant(t, variant)
		rng := rand.New(rand.NewPCG(23, 29+uint64(seed)))
		count := map[Outcome]int{}
		cases, left := 200, 21
		if seed > 0 {
			cases, left = 60, 16 // the search settles fewer of the larger ones
		}
		cases = scaled(cases)
		for i := range cases {
			g := endgame(t, r, rng, 15+rng.IntN(left), 20)
			want := SolveGame(&g, SolveOptions{MaxNodes: 2_000_000, SearchOnly: true, SkipBestScore: true})
			count[want.Outcome]++
			if want.Outcome == Unknown {
				continue
			}
			expectSATDecides(t, fmt.Sprintf("%s case %d", variant, i), g, want.Outcome, "the search")
		}
		t.Logf("%s: %v", variant, count)
		if count[Lost] < cases/10 || count[Winnable] < cases/10 || count[Unknown] > cases/5 {
			t.Errorf("%s: the cases should hold many wins and losses that the search settles: %v", variant, count)
		}
	}
}

// checkWin fails t unless line wins from g.
func checkWin(t *testing.T, g Game, line []Move) {
	t.Helper()
	for _, m := range line {
		if err := g.Apply(m); err != nil {
			t.Fatalf("the line does not replay: %v", err)
		}
	}
	if g.status != Won {
		t.Fatalf("the line ends %v", g.status)
	}
}

// TestSATAgainstBruteForce checks the SAT encoding's answers from end
// positions (cards on the waste piles and foundations at any height, a few
// cards left in the stock, and in four-at-a-time some turned cards placed
// already) against a search with no pruning: many of them are lost.
func TestSATAgainstBruteForce(t *testing.T) {
	for seed, variant := range []string{"classic", "numerica", "four-at-a-time", "calculation", "puss-in-the-corner"} {
		r := mustVariant(t, variant)
		rng := rand.New(rand.NewPCG(17, uint64(seed)))
		count := map[Outcome]int{}
		var tBrute, tSAT time.Duration
		cases := scaled(150)
		for i := range cases {
			g := endgame(t, r, rng, 6+rng.IntN(3), 6)
			want := Lost
			t0 := time.Now()
			if bruteBest(&g, map[Game]int{}) == r.Deck() {
				want = Winnable
			}
			t1 := time.Now()
			got, line, _, err := satDecide(&g, 0)
			tBrute += t1.Sub(t0)
			tSAT += time.Since(t1)
			if err != nil {
				t.Fatalf("%s case %d: %v\n%s", variant, i, err, g.String())
			}
			if got != want {
				t.Fatalf("%s case %d: SAT says %v, brute force %v\n%s", variant, i, got, want, g.String())
			}
			count[got]++
			if got == Winnable {
				checkWin(t, g, line)
			}
		}
		t.Logf("%s: %v brute %v sat %v", variant, count, tBrute, tSAT)
		if count[Lost] < cases/10 || count[Winnable] < cases/10 {
			t.Errorf("%s: the cases should hold many wins and losses: %v", variant, count)
		}
	}
}

// TestSATBestScore checks the SAT encoding's best score, found by asking
// for one card more at a time, against the brute-force search on end
// positions, most of them lost, alone and as Solve's last resort; every
// line reaches the score it claims.
func TestSATBestScore(t *testing.T) {
	for seed, variant := range []string{"classic", "four-at-a-time", "calculation", "puss-in-the-corner"} {
		r := mustVariant(t, variant)
		rng := rand.New(rand.NewPCG(53, uint64(seed)))
		improved := 0
		for i := range scaled(60) {
			g := endgame(t, r, rng, 6+rng.IntN(3), 6)
			want := bruteBest(&g, map[Game]int{})
			best, line, exact, _ := satBestScore(&g, int(g.score), 0)
			if best != want || !exact {
				t.Fatalf("%s case %d: SAT's best %d (exact %v), brute force's %d\n%s", variant, i, best, exact, want, g.String())
			}
			// Solve with almost no search: the SAT encoding decides, and
			// for a loss finds the best score too.
			sol := SolveGame(&g, SolveOptions{MaxNodes: 2})
			if sol.BestScore != want || !sol.ScoreExact || (sol.Outcome == Winnable) != (want == r.Deck()) {
				t.Fatalf("%s case %d: Solve says %v, best %d (exact %v); brute force %d\n%s", variant, i, sol.Outcome, sol.BestScore, sol.ScoreExact, want, g.String())
			}
			if best == int(g.score) {
				continue
			}
			improved++
			end := g
			for _, m := range line {
				if err := end.Apply(m); err != nil {
					t.Fatalf("%s case %d: the line does not replay: %v", variant, i, err)
				}
			}
			if int(end.score) != best {
				t.Fatalf("%s case %d: the line reaches %d, not %d", variant, i, end.score, best)
			}
		}
		if improved < scaled(60)/2 {
			t.Errorf("%s: only %d positions had cards to play", variant, improved)
		}
	}
}

// TestSATWithoutWasteToWaste: in strategy the SAT encoding decides the
// game without waste-to-waste moves. Its wins must replay under the
// strategy rules, and where that restricted game is lost (by a brute-force
// search under the classic rules) it must answer unknown, not lost: a
// waste-to-waste move can still win, as in the position at the end.
func TestSATWithoutWasteToWaste(t *testing.T) {
	r, classic := mustVariant(t, "strategy"), mustVariant(t, "classic")
	rng := rand.New(rand.NewPCG(41, 43))
	cases := scaled(150)
	count := map[Outcome]int{}
	for i := range cases {
		g := endgame(t, r, rng, 6+rng.IntN(3), 6)
		restricted := g
		restricted.rules = classic
		want := Unknown
		if bruteBest(&restricted, map[Game]int{}) == r.Deck() {
			want = Winnable
		}
		count[expectSATDecides(t, fmt.Sprintf("case %d", i), g, want, "want")]++
	}
	t.Logf("%v", count)
	if count[Winnable] < cases/10 || count[Unknown] < cases/10 {
		t.Errorf("the cases should hold many games won and lost without waste-to-waste moves: %v", count)
	}

	// Lost without waste-to-waste moves (9C lies on the 8C that F1 wants),
	// won with one.
	g := position(t, "strategy", [4]string{"7S", "KS", "KH", "KD"}, [4]string{"8C 9C", "KC QC JC TC"}, "")
	if got, _, _, err := satDecide(&g, 0); got != Unknown || err != nil {
		t.Fatalf("SAT says %v, %v; want unknown", got, err)
	}
	play(t, &g, "9C>W2", "8C>F1", "9C>F1", "TC>F1", "JC>F1", "QC>F1", "KC>F1")
	if g.status != Won {
		t.Fatalf("the waste-to-waste line ends %v", g.status)
	}
}

// TestSolveFallsBackOnSAT: where the search runs out of budget, Solve
// hands the deal to the SAT encoding in the variants it covers, and its
// win replays; with SearchOnly, or in a variant it does not cover, the
// answer stays unknown.
func TestSolveFallsBackOnSAT(t *testing.T) {
	// Deals the search does not settle within 5,000 positions.
	cases := []struct {
		variant string
		deal    uint64
	}{{"classic", 317}, {"classic", 143}, {"aces-out", 4}, {"puss-in-the-corner", 4}, {"numerica", 2}, {"strict", 2},
		{"four-at-a-time", 3}, {"calculation", 2}, {"strategy", 3}}
	if raceEnabled {
		cases = cases[:1]
	}
	for _, tc := range cases {
		r := mustVariant(t, tc.variant)
		opt := SolveOptions{MaxNodes: 5_000, SkipBestScore: true}
		sol := Solve(r, tc.deal, opt)
		if !sol.SAT || sol.Outcome != Winnable || sol.BestScore != r.Deck() {
			t.Fatalf("%s deal %d: %+v, want won by the SAT encoding", tc.variant, tc.deal, sol)
		}
		checkWin(t, New(r, tc.deal), sol.Line)
		opt.SearchOnly = true
		if sol := Solve(r, tc.deal, opt); sol.SAT || sol.Outcome != Unknown {
			t.Fatalf("%s deal %d, search only: %+v, want unknown", tc.variant, tc.deal, sol)
		}
	}
	for _, variant := range []string{"in-suit", "redeal"} {
		r := mustVariant(t, variant)
		g := New(r, 1)
		if _, ok := satCovers(&g); ok {
			t.Errorf("%s: the SAT encoding claims to cover it", variant)
		}
	}
}

// TestSATBudget: the SAT stage stops at its budget of conflicts and answers
// unknown. Deal 7450, the one lost classic deal of 1-10,000, needs far more
// than 2,000.
func TestSATBudget(t *testing.T) {
	r := mustVariant(t, "classic")
	sol := Solve(r, 7450, SolveOptions{MaxNodes: 5_000, MaxConflicts: 2_000, SkipBestScore: true})
	if sol.Outcome != Unknown || sol.SAT || sol.Conflicts != 2_000 {
		t.Fatalf("%+v, want unknown after 2,000 conflicts", sol)
	}
}

// TestSATLabellings checks the clauses that label interchangeable piles and
// foundations one way only: from positions where they apply (every waste
// pile empty, every foundation at one height, the rest in the stock in
// rising runs), the answer is the same without them, and the same as the
// search's where it settles the position. Such positions are nearly always
// won, which is where a labelling rule that dropped a win would show: as a
// loss with the rule and a win without it. (For a loss, deal 7450 was
// solved both ways by hand: see docs/solver.md.)
func TestSATLabellings(t *testing.T) {
	r := mustVariant(t, "classic")
	rng := rand.New(rand.NewPCG(31, 37))
	cases := scaled(60)
	count := map[Outcome]int{}
	for i := range cases {
		h := 2 + rng.IntN(4)
		g := Game{rules: r}
		for f := range 4 {
			g.found[f], g.foundN[f] = NewCard(Rank(h), Suit(f)), uint8(h)
		}
		g.score = uint8(4 * h)
		var rest []Card
		for k := Rank(h + 1); k <= King; k++ {
			for suit := range Suit(4) {
				rest = append(rest, NewCard(k, suit))
			}
		}
		// Each suit in increasing rank, one suit after another, then
		// shuffled a little: runs of rising cards are what four stacks
		// hold worst.
		slices.SortFunc(rest, func(a, b Card) int {
			return int(a.Suit())*16 + int(a.Rank()) - int(b.Suit())*16 - int(b.Rank())
		})
		for range 20 * (i % 4) {
			a := rng.IntN(len(rest) - 1)
			rest[a], rest[a+1] = rest[a+1], rest[a]
		}
		g.stockN = uint8(copy(g.stock[:], rest))
		g.turn()
		p, ok := satCovers(&g)
		if !ok {
			t.Fatalf("case %d: not covered", i)
		}
		with, _, _, err := satDecidePosition(&g, p, 0)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		p.allLabellings = true
		without, line, _, err := satDecidePosition(&g, p, 0)
		if err != nil {
			t.Fatalf("case %d, every labelling: %v", i, err)
		}
		if with != without {
			t.Fatalf("case %d: %v with one labelling, %v with every one\n%s", i, with, without, g.String())
		}
		if with == Winnable {
			checkWin(t, g, line)
		}
		if want := SolveGame(&g, SolveOptions{MaxNodes: 1_000_000, SearchOnly: true, SkipBestScore: true}); want.Outcome != Unknown && want.Outcome != with {
			t.Fatalf("case %d: SAT says %v, the search %v\n%s", i, with, want.Outcome, g.String())
		}
		count[with]++
	}
	t.Logf("%v", count)
}

// expectSATDecides runs the SAT stage on g (what names the case) and fails
// the test unless it answers want, as by (the brute force, the search)
// says, with a line that wins when it says won; it returns the answer.
func expectSATDecides(t *testing.T, what string, g Game, want Outcome, by string) Outcome {
	t.Helper()
	got, line, _, err := satDecide(&g, 0)
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, g.String())
	}
	if got != want {
		t.Fatalf("%s: SAT says %v, %s %v\n%s", what, got, by, want, g.String())
	}
	if got == Winnable {
		checkWin(t, g, line)
	}
	return got
}
