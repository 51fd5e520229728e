package engine

import (
	"slices"
	"testing"
)

// wasteSourceMoves lists the legal moves that take a card from a waste pile.
func wasteSourceMoves(g *Game) []Move {
	var out []Move
	for _, m := range g.Moves() {
		if m.Kind == Place && !slices.Contains(turned(g), m.Card) {
			out = append(out, m)
		}
	}
	return out
}

func TestVariantFourAtATime(t *testing.T) {
	r := mustVariant(t, "four-at-a-time")
	// A deal whose first four cards hold an Ace and a Two.
	n := findDeal(t, 1000, func(n uint64) bool {
		d := Deal(n)
		return slices.ContainsFunc(d[:4], func(c Card) bool { return c.Rank() == Ace }) &&
			slices.ContainsFunc(d[:4], func(c Card) bool { return c.Rank() == 2 })
	})
	d := Deal(n)
	g := New(r, n)
	if got := turned(&g); !slices.Equal(got, d[:4]) || g.StockLeft() != 48 {
		t.Fatalf("deal %d starts with %v turned and %d in the stock; want %v and 48", n, got, g.StockLeft(), d[:4])
	}
	var ace, two Card
	var others []Card
	for _, c := range d[:4] {
		switch {
		case c.Rank() == Ace && ace == NoCard:
			ace = c
		case c.Rank() == 2 && two == NoCard:
			two = c
		default:
			others = append(others, c)
		}
	}
	// A turned card may go to a foundation at once; the Two waits on W1.
	play(t, &g, ace.String()+">F1", two.String()+">W1")
	twoUp := PlaceMove(two, F(0))
	refuse(t, &g, twoUp, ReasonPlaceTurned)
	if ws := wasteSourceMoves(&g); len(ws) != 0 {
		t.Fatalf("with turned cards to place, Moves offers waste moves %v", ws)
	}
	play(t, &g, others[0].String()+">W2")
	refuse(t, &g, twoUp, ReasonPlaceTurned)
	play(t, &g, others[1].String()+">W3")

	// All four are placed: the next four are turned, and before any of
	// them is placed a waste card may go to a foundation.
	if got := turned(&g); !slices.Equal(got, d[4:8]) || g.StockLeft() != 44 {
		t.Fatalf("after the first four: %v turned, %d in the stock; want %v and 44", got, g.StockLeft(), d[4:8])
	}
	if !slices.Contains(g.Moves(), twoUp) {
		t.Fatalf("once all four are placed, %v is not offered (moves %v)", twoUp, g.Moves())
	}
	// Placing one of the new four locks the waste piles again until the
	// other three are placed too.
	next := turned(&g)
	play(t, &g, next[0].String()+">W4")
	refuse(t, &g, twoUp, ReasonPlaceTurned)
	play(t, &g, next[1].String()+">W2", next[2].String()+">W3", next[3].String()+">W4")
	if err := g.Apply(twoUp); err != nil {
		t.Fatalf("after the second four are placed, %v: %v", twoUp, err)
	}
	if g.foundN[0] != 2 || g.found[0] != two {
		t.Fatalf("F1 holds %d cards, top %v; want 2, top %v", g.foundN[0], g.found[0], two)
	}
}
