package engine

import (
	"errors"
	"testing"
)

// wasteTopFits returns a waste top that fits a foundation, as a move.
func wasteTopFits(g *Game) (Move, bool) {
	for p := range 4 {
		n := g.wasteN[p]
		if n == 0 {
			continue
		}
		c := g.waste[p][n-1]
		for f := range 4 {
			if g.fits(f, c) {
				return PlaceMove(c, F(f)), true
			}
		}
	}
	return Move{}, false
}

// In four-at-a-time the rule text says to place all four turned cards
// "before you move anything from the waste piles to the foundations": so
// between two turns waste cards may go up. The engine turns the next four
// as soon as the last is placed, so waste cards may move until the first card
// of the new turn is placed, and not while a turn is partly placed. (The
// waste piles used to stay locked until the stock ran out.)
func TestFourAtATimeWasteMovesBetweenTurns(t *testing.T) {
	rules, err := Variant("four-at-a-time")
	if err != nil {
		t.Fatal(err)
	}
	freed, locked := 0, 0
	for deal := range uint64(60) {
		g := New(rules, deal)
		for g.Status() == Playing {
			if g.StockLeft() > 0 && g.handN > 0 {
				if m, ok := wasteTopFits(&g); ok {
					legal := false
					for _, x := range g.Moves() {
						legal = legal || x == m
					}
					c := g
					err := c.Apply(m)
					if g.handN == g.batch {
						freed++
						if !legal || err != nil {
							t.Fatalf("deal %d: %s refused between turns (listed %v): %v", deal, m, legal, err)
						}
					} else {
						locked++
						var ie *IllegalMoveError
						if legal || !errors.As(err, &ie) || ie.Reason != ReasonPlaceTurned {
							t.Fatalf("deal %d: %s with a turn partly placed: listed %v, error %v", deal, m, legal, err)
						}
					}
				}
			}
			// Play a turned card: to a foundation if it fits, else spread
			// over the waste piles; waste cards go up between turns.
			ms := g.Moves()
			pick := ms[0]
			for _, x := range ms {
				if x.To.Kind == Foundation {
					pick = x
					break
				}
				if x.To.Kind == Waste && int(x.To.Index) == g.Plies()%4 {
					pick = x
				}
			}
			if err := g.Apply(pick); err != nil {
				t.Fatalf("deal %d: %v", deal, err)
			}
		}
	}
	if freed == 0 || locked == 0 {
		t.Fatalf("the deals never tested both cases: %d between turns, %d within a turn", freed, locked)
	}
	t.Logf("%d waste moves between turns, %d refused within a turn", freed, locked)
}
