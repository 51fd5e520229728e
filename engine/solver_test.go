package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// endgame builds a position of the given variant near the end of a game:
// the foundations at random heights along their chains, and the few cards
// left shuffled into the stock (at most maxStock of them) and the waste
// piles; with several cards turned at once, some of the turned cards may
// be placed already. It sets unexported fields directly, so that a search
// without any pruning can settle it.
func endgame(t testing.TB, r *Rules, rng *rand.Rand, left, maxStock int) Game {
	t.Helper()
	deck := r.Deck()
	for {
		g := Game{rules: r}
		var used [14]int // per rank: suits taken
		total := 0
		for f := range 4 {
			n := rng.IntN(r.Length + 1)
			if rng.IntN(4) == 0 {
				n = r.Length
			}
			if r.Preset {
				n = max(n, 1)
			}
			rank := r.Start[f]
			for range n {
				g.found[f] = NewCard(rank, Suit(used[rank]))
				used[rank]++
				rank = rankAfter(rank, r.Step[f])
			}
			g.foundN[f] = uint8(n)
			total += n
		}
		if deck-total > left || deck-total == 0 {
			continue
		}
		g.score = uint8(total)
		var rest []Card
		for k := Ace; k <= King; k++ {
			for s := used[k]; s < 4 && !r.removed(k); s++ {
				rest = append(rest, NewCard(k, Suit(s)))
			}
		}
		rng.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		stock := rng.IntN(min(len(rest), maxStock) + 1)
		for _, c := range rest[:stock] {
			g.stock[g.stockN] = c
			g.stockN++
		}
		for _, c := range rest[stock:] {
			p := rng.IntN(4)
			g.waste[p][g.wasteN[p]] = c
			g.wasteN[p]++
		}
		g.turn()
		partly := false
		if r.Turn > 1 && g.handN > 1 && rng.IntN(2) == 0 {
			partly = true
			for k := rng.IntN(int(g.handN) - 1); k >= 0; k-- {
				for slot, c := range g.hand {
					if c != NoCard {
						g.hand[slot] = NoCard
						g.handN--
						p := rng.IntN(4)
						g.waste[p][g.wasteN[p]] = c
						g.wasteN[p]++
						break
					}
				}
			}
		}
		if r.Turn > 1 && !partly && g.stockN%2 == 0 {
			// Between two turns: the next cards not turned yet (T). Decided
			// without the generator, so that the other positions stay the
			// ones they were before the move T.
			g.next, g.hand, g.handN = g.next-g.handN, [4]Card{}, 0
		}
		g.settle()
		if g.status != Playing {
			continue
		}
		return g
	}
}

// bruteBest is the best final score from g, by trying every legal move
// with no pruning at all: only a memo of positions (by memoKey) and a stop
// once a line wins, as nothing scores more than a win.
func bruteBest(g *Game, memo map[Game]int) int {
	k := memoKey(g)
	if v, ok := memo[k]; ok {
		return v
	}
	best, deck := int(g.score), g.rules.Deck()
	for _, m := range g.Moves() {
		if best == deck {
			break
		}
		c := *g
		if err := c.Apply(m); err != nil {
			panic(err)
		}
		best = max(best, bruteBest(&c, memo))
	}
	memo[k] = best
	return best
}

// memoKey is g as bruteBest's memo keys it: the move count and the waste
// slots that no longer hold a card cleared, and the four waste piles in a
// canonical order, since swapping two waste piles changes nothing that can
// happen (every variant treats the four alike). The key is itself a
// position of the game, with the same best score.
func memoKey(g *Game) Game {
	k := *g
	k.plies = 0 // the move count changes nothing that can happen
	for i := range k.waste {
		clear(k.waste[i][k.wasteN[i]:])
	}
	for i := 1; i < len(k.waste); i++ {
		for j := i; j > 0 && pileBefore(&k, j, j-1); j-- {
			k.waste[j], k.waste[j-1] = k.waste[j-1], k.waste[j]
			k.wasteN[j], k.wasteN[j-1] = k.wasteN[j-1], k.wasteN[j]
		}
	}
	return k
}

// pileBefore orders waste piles a and b of k by height, then by cards.
func pileBefore(k *Game, a, b int) bool {
	if k.wasteN[a] != k.wasteN[b] {
		return k.wasteN[a] < k.wasteN[b]
	}
	return slices.Compare(k.waste[a][:k.wasteN[a]], k.waste[b][:k.wasteN[b]]) < 0
}

// TestSolverAgainstBruteForce checks the solver's answers, and the bound it
// prunes with at every position reached, against a search with no pruning
// on small end positions: a pruning rule that cut a winning or better line
// would show up here as a wrong result or a bound below the true best.
func TestSolverAgainstBruteForce(t *testing.T) {
	t.Run("narrow searches first", testAgainstBruteForce)
	t.Run("full search only", func(t *testing.T) {
		saved := discrepancies
		discrepancies = nil
		defer func() { discrepancies = saved }()
		testAgainstBruteForce(t)
	})
}

func testAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		variant string
		cases   int
		left    int // at most this many cards off the foundations
	}{{"classic", 120, 11}, {"four-at-a-time", 20, 9}} {
		variant, cases := tc.variant, tc.cases
		if testing.Short() {
			cases /= 4
		}
		r := mustVariant(t, variant)
		s := newSolver(r, 1)
		outcomes := map[Outcome]int{}
		t0 := time.Now()
		for i := range cases {
			g := endgame(t, r, rng, 6+rng.IntN(tc.left-5), 5)
			memo := map[Game]int{}
			want := bruteBest(&g, memo)
			for pos, best := range memo {
				if pos.status != Playing {
					continue
				}
				if b := s.upperBound(&pos); b < best {
					t.Fatalf("%s case %d: bound %d below the best %d reachable from %s", variant, i, b, best, pos.String())
				}
			}
			sol := SolveGame(&g, SolveOptions{MaxNodes: 1_000_000})
			outcomes[sol.Outcome]++
			wantOutcome := Lost
			if want == r.Deck() {
				wantOutcome = Winnable
			}
			if sol.Outcome != wantOutcome || sol.BestScore != want || !sol.ScoreExact {
				t.Fatalf("%s case %d: solver says %v, best %d (exact %v); brute force says %v, best %d\n%s",
					variant, i, sol.Outcome, sol.BestScore, sol.ScoreExact, wantOutcome, want, g.String())
			}
			// The line reaches the score it claims, and plays the game
			// to its end.
			c := g
			for _, m := range sol.Line {
				if err := c.Apply(m); err != nil {
					t.Fatalf("%s case %d: line does not replay: %v", variant, i, err)
				}
			}
			if int(c.score) != want || !c.status.Over() {
				t.Fatalf("%s case %d: line reaches %d, %v; want %d, the game over", variant, i, c.score, c.status, want)
			}
		}
		t.Logf("%s: %v in %v", variant, outcomes, time.Since(t0))
		if outcomes[Winnable] == 0 || outcomes[Lost] == 0 {
			t.Errorf("%s: the cases should hold both wins and losses: %v", variant, outcomes)
		}
	}
}

// TestSolverWinsReplay: on classic deals the solver wins, its line replays
// to a win; and a small budget is answered honestly as unknown.
func TestSolverWinsReplay(t *testing.T) {
	r := mustVariant(t, "classic")
	wins := 0
	for n := uint64(1); n <= 20; n++ {
		sol := Solve(r, n, SolveOptions{MaxNodes: 20_000, SkipBestScore: true})
		if sol.Outcome != Winnable {
			continue
		}
		wins++
		g := New(r, n)
		for _, m := range sol.Line {
			if err := g.Apply(m); err != nil {
				t.Fatalf("deal %d: %v", n, err)
			}
		}
		if g.Status() != Won {
			t.Fatalf("deal %d: the winning line ends %v", n, g.Status())
		}
	}
	if wins == 0 {
		t.Fatal("no classic deal among the first 20 won")
	}
}

// TestSolverLostAgainstBruteForce checks Lost answers where they are hardest
// to get right: end positions whose cards left are mostly still in the
// stock, so that every card must be put somewhere when it is turned and the
// bound must reason about cards not yet seen. Every answer is compared with
// a search with no pruning, every won line is replayed, and the bound is
// checked at every position that search reached.
func TestSolverLostAgainstBruteForce(t *testing.T) {
	r := mustVariant(t, "classic")
	rng := rand.New(rand.NewPCG(7, 11))
	cases := 150
	if testing.Short() {
		cases = 40
	}
	s := newSolver(r, 1)
	outcomes := map[Outcome]int{}
	for i := range cases {
		g := endgame(t, r, rng, 6+rng.IntN(3), 6)
		memo := map[Game]int{}
		want := bruteBest(&g, memo)
		for pos, best := range memo {
			if pos.status == Playing {
				if b := s.upperBound(&pos); b < best {
					t.Fatalf("case %d: bound %d below the best %d reachable from %s", i, b, best, pos.String())
				}
			}
		}
		sol := SolveGame(&g, SolveOptions{MaxNodes: 1_000_000})
		outcomes[sol.Outcome]++
		switch sol.Outcome {
		case Lost:
			if want == r.Deck() {
				t.Fatalf("case %d: solver says lost, but a search with no pruning wins\n%s", i, g.String())
			}
			if sol.BestScore != want || !sol.ScoreExact {
				t.Fatalf("case %d: lost with best %d (exact %v), brute force best %d\n%s", i, sol.BestScore, sol.ScoreExact, want, g.String())
			}
		case Winnable:
			if want != r.Deck() {
				t.Fatalf("case %d: solver says won, brute force best %d\n%s", i, want, g.String())
			}
		default:
			t.Fatalf("case %d: a position this small should be settled, got %v\n%s", i, sol.Outcome, g.String())
		}
		c := g
		for _, m := range sol.Line {
			if err := c.Apply(m); err != nil {
				t.Fatalf("case %d: line does not replay: %v", i, err)
			}
		}
		if int(c.score) != sol.BestScore {
			t.Fatalf("case %d: line reaches %d, not %d", i, c.score, sol.BestScore)
		}
	}
	t.Logf("%v", outcomes)
	if outcomes[Lost] < cases/10 || outcomes[Winnable] == 0 {
		t.Errorf("the cases should hold many losses and some wins: %v", outcomes)
	}
}

// TestBuried checks the count behind the second move ordering: the cards
// of a pile whose run of cards of their rank or higher above them grows.
func TestBuried(t *testing.T) {
	g := Game{rules: mustVariant(t, "classic")}
	for _, k := range []Rank{3, 9} { // bottom to top
		g.waste[0][g.wasteN[0]] = NewCard(k, Spades)
		g.wasteN[0]++
	}
	for _, tc := range []struct {
		r    Rank
		want int
	}{
		{2, 0},    // below every card
		{8, 0},    // the 3 already needs a foundation past it for the 9; 8 then 9 can share one
		{9, 2},    // two 9s above the 3 need two foundations, and the old 9 now has one above
		{King, 2}, // K then 9 above the 3 need two foundations; the 9 now has one above
	} {
		if got := buried(&g, 0, tc.r); got != tc.want {
			t.Errorf("a %v onto 3 9: buried %d, want %d", tc.r, got, tc.want)
		}
	}
}
