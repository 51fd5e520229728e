package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// inSuitEndgame is an in-suit position with no redeal left: each suit's
// foundation at a random height (some not started), the other cards
// shuffled, up to maxStock of them in the stock and the rest on the waste
// piles; about left cards off the foundations.
func inSuitEndgame(r *Rules, rng *rand.Rand, left, maxStock int) Game {
	for {
		g := Game{rules: r, redeals: uint8(r.Redeals)}
		var rest []Card
		perm := rng.Perm(4) // which foundation each suit is on
		for suit := range 4 {
			n := rng.IntN(14)
			f := perm[suit]
			if n > 0 {
				g.found[f], g.foundN[f] = NewCard(Rank(n), Suit(suit)), uint8(n)
				g.score += uint8(n)
			}
			for k := n + 1; k <= 13; k++ {
				rest = append(rest, NewCard(Rank(k), Suit(suit)))
			}
		}
		if len(rest) == 0 || len(rest) > left {
			continue
		}
		rng.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		stock := rng.IntN(min(len(rest), maxStock) + 1)
		g.stockN = uint8(copy(g.stock[:], rest[:stock]))
		for _, c := range rest[stock:] {
			p := rng.IntN(4)
			g.waste[p][g.wasteN[p]] = c
			g.wasteN[p]++
		}
		g.turn()
		if g.status == Playing {
			return g
		}
	}
}

// TestSATInSuit checks the SAT encoding of in-suit positions with no
// redeal left (each card's foundation is its suit's) against the
// exhaustive search on small ones and the solver's full search on larger
// ones; every win is replayed.
func TestSATInSuit(t *testing.T) {
	r := mustVariant(t, "in-suit")
	rng := rand.New(rand.NewPCG(59, 61))
	count := map[Outcome]int{}
	cases := scaled(150)
	for i := range cases {
		g := inSuitEndgame(r, rng, 6+rng.IntN(3), 6)
		want := Lost
		if bruteBest(&g, map[Game]int{}) == r.Deck() {
			want = Winnable
		}
		count[expectSATDecides(t, fmt.Sprintf("small case %d", i), g, want, "brute force")]++
	}
	t.Logf("small: %v", count)
	if count[Lost] < cases/10 || count[Winnable] < cases/10 {
		t.Errorf("the small cases should hold many wins and losses: %v", count)
	}
	count = map[Outcome]int{}
	cases = scaled(100)
	for i := range cases {
		g := inSuitEndgame(r, rng, 15+rng.IntN(21), 20)
		want := SolveGame(&g, SolveOptions{MaxNodes: 2_000_000, SearchOnly: true, SkipBestScore: true})
		count[want.Outcome]++
		if want.Outcome == Unknown {
			continue
		}
		expectSATDecides(t, fmt.Sprintf("larger case %d", i), g, want.Outcome, "the search")
	}
	t.Logf("larger, by the search: %v", count)
	if count[Lost] < cases/10 || count[Winnable] < cases/10 {
		t.Errorf("the larger cases should hold many wins and losses the search settles: %v", count)
	}
}
