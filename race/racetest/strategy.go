package racetest

import "sirtommy/engine"

// Strategy picks a move for a game: a test's scripted player.
type Strategy func(g *engine.Game) engine.Move

// Greedy plays any card that fits a foundation, else puts the turned card
// on the waste pile whose top is highest (or an empty one), which keeps low
// cards reachable.
func Greedy(g *engine.Game) engine.Move {
	ms := g.Moves()
	for _, m := range ms {
		if m.To.Kind == engine.Foundation {
			return m
		}
	}
	v := g.View()
	best, bestRank := ms[0], -1
	for _, m := range ms {
		if m.To.Kind != engine.Waste {
			continue
		}
		w := v.Waste[m.To.Index]
		r := 14
		if len(w.Cards) > 0 {
			r = int(w.Cards[len(w.Cards)-1].Rank())
		}
		if r > bestRank {
			best, bestRank = m, r
		}
	}
	return best
}

// Dumb plays a card that fits a foundation and puts every other turned card
// on W1, so it gets stuck early.
func Dumb(g *engine.Game) engine.Move {
	for _, m := range g.Moves() {
		if m.To.Kind == engine.Foundation {
			return m
		}
	}
	return engine.PlaceMove(g.View().Turned[0], engine.W(0))
}

// FromView picks a move from what a player sees (the deal is secret):
// a card that fits a foundation, else the turned card on W1; false when
// there is neither.
func FromView(v *engine.View) (engine.Move, bool) {
	fits := func(c engine.Card) (int, bool) {
		for i, f := range v.Foundations {
			if f.Wants != 0 && c.Rank() == f.Wants {
				return i, true
			}
		}
		return 0, false
	}
	if len(v.Turned) > 0 {
		c := v.Turned[0]
		if i, ok := fits(c); ok {
			return engine.PlaceMove(c, engine.F(i)), true
		}
		return engine.PlaceMove(c, engine.W(0)), true
	}
	for _, w := range v.Waste {
		if n := len(w.Cards); n > 0 {
			if i, ok := fits(w.Cards[n-1]); ok {
				return engine.PlaceMove(w.Cards[n-1], engine.F(i)), true
			}
		}
	}
	return engine.Move{}, false
}
