package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Helpers shared by the tests of this package.

// scaled is n cases, or a quarter of them (at least one) under -short or
// -race, where the slow tests run smaller.
func scaled(n int) int {
	if testing.Short() || raceEnabled {
		return max(1, n/4)
	}
	return n
}

func mustVariant(t testing.TB, name string) *Rules {
	t.Helper()
	r, err := Variant(name)
	if err != nil {
		t.Fatalf("Variant(%q): %v", name, err)
	}
	return r
}

func mustMove(t testing.TB, s string) Move {
	t.Helper()
	m, err := ParseMove(s)
	if err != nil {
		t.Fatalf("ParseMove(%q): %v", s, err)
	}
	return m
}

// play applies moves in notation, each of which must be legal.
func play(t testing.TB, g *Game, moves ...string) {
	t.Helper()
	for _, s := range moves {
		m := mustMove(t, s)
		if err := g.Apply(m); err != nil {
			t.Fatalf("Apply(%s): %v", s, err)
		}
	}
}

// refuse applies m, which must be refused for reason r and leave the game
// exactly as it was.
func refuse(t testing.TB, g *Game, m Move, r Reason) *IllegalMoveError {
	t.Helper()
	before := *g
	err := g.Apply(m)
	if err == nil {
		t.Fatalf("Apply(%v) was accepted; want %v", m, r)
	}
	var ie *IllegalMoveError
	if !errors.As(err, &ie) {
		t.Fatalf("Apply(%v) = %T %v; want *IllegalMoveError", m, err, err)
	}
	if ie.Reason != r {
		t.Fatalf("Apply(%v) refused for %v (%v); want %v", m, ie.Reason, err, r)
	}
	if ie.Move != m {
		t.Errorf("IllegalMoveError.Move = %v, want %v", ie.Move, m)
	}
	if ie.Detail == "" || !strings.Contains(err.Error(), ie.Detail) {
		t.Errorf("error %q does not carry its detail %q", err, ie.Detail)
	}
	if *g != before {
		t.Fatalf("Apply(%v) changed the game although it was refused", m)
	}
	if slices.Contains(g.Moves(), m) {
		t.Errorf("refused move %v is listed by Moves", m)
	}
	return ie
}

// refuseText is refuse for a move in notation.
func refuseText(t testing.TB, g *Game, s string, r Reason) {
	t.Helper()
	refuse(t, g, mustMove(t, s), r)
}

// hasMove reports whether the move in notation is among the legal moves.
func hasMove(t testing.TB, g *Game, s string) bool {
	t.Helper()
	return slices.Contains(g.Moves(), mustMove(t, s))
}

// turned is the game's turned cards, in slot order.
func turned(g *Game) []Card { return g.View().Turned }

// wasteTop is the top card of waste pile p, or NoCard.
func wasteTop(g *Game, p int) Card {
	if n := g.wasteN[p]; n > 0 {
		return g.waste[p][n-1]
	}
	return NoCard
}

// stockOrder is the face-down stock, next card first.
func stockOrder(g *Game) []Card { return append([]Card{}, g.stock[g.next:g.stockN]...) }

// position builds a game of the named variant from text: the top card of
// each foundation ("" or "--" for an empty one; the count is worked out from
// the variant's start and step), each waste pile bottom to top, and the
// stock, next card first (its first card, or first four, are turned). The
// position need not hold every card.
func position(t testing.TB, variant string, found [4]string, waste [4]string, stock string) Game {
	t.Helper()
	r := mustVariant(t, variant)
	g := Game{rules: r}
	for f, s := range found {
		if s == "" || s == "--" {
			continue
		}
		top := mustCard(t, s)
		n, k := 1, r.Start[f]
		for k != top.Rank() {
			if n >= r.Length {
				t.Fatalf("position: %v cannot be the top of F%d in %s", top, f+1, variant)
			}
			k = rankAfter(k, r.Step[f])
			n++
		}
		g.found[f], g.foundN[f] = top, uint8(n)
		g.score += uint8(n)
	}
	for p, s := range waste {
		for _, c := range mustCards(t, s) {
			g.waste[p][g.wasteN[p]] = c
			g.wasteN[p]++
		}
	}
	for _, c := range mustCards(t, stock) {
		g.stock[g.stockN] = c
		g.stockN++
	}
	g.turn()
	return g
}

// foundationTops is the top card of each foundation, "--" for an empty one.
func foundationTops(g *Game) string { return FormatCards(g.found[:]) }

// findDeal returns the first deal number below limit for which ok holds.
func findDeal(t testing.TB, limit uint64, ok func(n uint64) bool) uint64 {
	t.Helper()
	for n := range limit {
		if ok(n) {
			return n
		}
	}
	t.Fatalf("no deal below %d has the property sought", limit)
	return 0
}
