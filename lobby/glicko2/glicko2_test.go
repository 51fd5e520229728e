package glicko2_test

import (
	"math"
	"testing"

	"sirtommy/lobby/glicko2"
)

// TestPaperExample is the worked example of Glickman's "Example of the
// Glicko-2 system": a 1500/200/0.06 player beats a 1400/30 player and loses
// to 1550/100 and 1700/300 ones, with tau 0.5.
func TestPaperExample(t *testing.T) {
	p := glicko2.Rating{Rating: 1500, Deviation: 200, Volatility: 0.06}
	got := glicko2.Update(p, []glicko2.Result{
		{Opponent: glicko2.Rating{Rating: 1400, Deviation: 30}, Score: glicko2.Win},
		{Opponent: glicko2.Rating{Rating: 1550, Deviation: 100}, Score: glicko2.Loss},
		{Opponent: glicko2.Rating{Rating: 1700, Deviation: 300}, Score: glicko2.Loss},
	}, 0.5)
	for _, c := range []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"rating", got.Rating, 1464.06, 0.01},
		{"deviation", got.Deviation, 151.52, 0.01},
		{"volatility", got.Volatility, 0.05999, 0.00001},
	} {
		if math.Abs(c.got-c.want) > c.tol {
			t.Errorf("%s = %.5f, want %.5f ± %g", c.name, c.got, c.want, c.tol)
		}
	}
}

func TestDrawsAndIdlePeriods(t *testing.T) {
	a, b := glicko2.New(), glicko2.New()
	a2 := glicko2.Update(a, []glicko2.Result{{Opponent: b, Score: glicko2.Draw}}, glicko2.DefaultTau)
	if math.Abs(a2.Rating-a.Rating) > 1e-9 || a2.Deviation >= a.Deviation {
		t.Errorf("a draw between equals: %+v", a2)
	}
	idle := glicko2.Update(glicko2.Rating{Rating: 1500, Deviation: 50, Volatility: 0.06}, nil, glicko2.DefaultTau)
	if idle.Rating != 1500 || idle.Deviation <= 50 {
		t.Errorf("an idle period: %+v", idle)
	}
	if capped := glicko2.Update(glicko2.New(), nil, glicko2.DefaultTau); capped.Deviation != glicko2.DefaultDeviation {
		t.Errorf("deviation %v grew past the maximum", capped.Deviation)
	}
	w := glicko2.Update(a, []glicko2.Result{{Opponent: b, Score: glicko2.Win}}, glicko2.DefaultTau)
	l := glicko2.Update(b, []glicko2.Result{{Opponent: a, Score: glicko2.Loss}}, glicko2.DefaultTau)
	if w.Rating <= 1500 || l.Rating >= 1500 || math.Abs((w.Rating-1500)+(l.Rating-1500)) > 1e-6 {
		t.Errorf("win %+v, loss %+v", w, l)
	}
}
