package loadtest

import "sirtommy/engine"

// legalFromView lists the moves a client can see to be legal from its View
// alone, for the variants whose foundations take any suit and whose waste
// piles take any card (classic, the load test's variant): a turned card to
// any waste pile or to a foundation that wants its rank; the top of a waste
// pile to a foundation that wants its rank, unless the waste is locked; T
// when nothing is turned and the stock is not empty (four-at-a-time
// between two turns; one card at a time that never shows); a redeal when
// the rules leave one and the stock and hand are empty. The server's engine
// remains the judge: a move it refuses is counted as an error by the load
// test.
func legalFromView(v *engine.View) []engine.Move {
	if v.Status != engine.Playing {
		return nil
	}
	out := make([]engine.Move, 0, 24)
	toFoundations := func(c engine.Card) {
		for f, fv := range v.Foundations {
			if fv.Wants != 0 && fv.Wants == c.Rank() {
				out = append(out, engine.PlaceMove(c, engine.F(f)))
			}
		}
	}
	for _, c := range v.Turned {
		toFoundations(c)
		for w := range v.Waste {
			out = append(out, engine.PlaceMove(c, engine.W(w)))
		}
	}
	if !v.WasteLocked {
		for _, w := range v.Waste {
			if n := len(w.Cards); n > 0 {
				toFoundations(w.Cards[n-1])
			}
		}
	}
	if len(v.Turned) == 0 && v.Stock > 0 {
		out = append(out, engine.TurnMove)
	}
	if len(out) == 0 && v.RedealsLeft > 0 && v.Stock == 0 && len(v.Turned) == 0 {
		out = append(out, engine.RedealMove)
	}
	return out
}
