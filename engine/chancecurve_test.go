package engine

import (
	"reflect"
	"testing"
)

// curveEvery keeps every curve within its bound, with positions 0 and the
// last, evenly spaced, and no coarser than needed (every-1 would not fit).
func TestCurvePliesBound(t *testing.T) {
	for max := 2; max <= 40; max++ {
		for plies := 0; plies <= 300; plies++ {
			every := curveEvery(plies, max)
			at := curvePlies(plies, every)
			if len(at) > max || at[0] != 0 || at[len(at)-1] != plies {
				t.Fatalf("plies %d, max %d: every %d gives %v", plies, max, every, at)
			}
			for i := 1; i < len(at)-1; i++ {
				if at[i]-at[i-1] != every {
					t.Fatalf("plies %d, max %d: uneven %v", plies, max, at)
				}
			}
			if every > 1 && len(curvePlies(plies, every-1)) <= max {
				t.Fatalf("plies %d, max %d: every %d where %d fits", plies, max, every, every-1)
			}
		}
	}
}

// The curve of a won game (the solver's line of deal 1) has every point
// in [0,100], 100 after the winning move, within its bound, each the
// same as ExpertChance there, and the same again when computed again.
func TestAnalyzeCurveWonGame(t *testing.T) {
	r := mustVariant(t, "classic")
	sol := Solve(r, 1, SolveOptions{})
	if sol.Outcome != Winnable {
		t.Fatalf("deal 1: %v", sol.Outcome)
	}
	start := New(r, 1)
	const bound = 12
	opt := AnalyzeOptions{CurvePoints: bound}
	a, err := AnalyzeGame(&start, sol.Line, opt)
	if err != nil {
		t.Fatal(err)
	}
	pos := checkAnalysis(t, start, sol.Line, a)
	checkCurve(t, pos, a, bound)
	if last := a.Curve[len(a.Curve)-1]; last.Ply != len(sol.Line) || last.Percent != 100 {
		t.Errorf("after the winning move: %+v", last)
	}
	again, err := AnalyzeGame(&start, sol.Line, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Curve, a.Curve) || again.CurveEvery != a.CurveEvery {
		t.Errorf("curve %v, then %v", a.Curve, again.Curve)
	}
	t.Logf("%d moves, every %d: %v", len(sol.Line), a.CurveEvery, a.Curve)
}

// The curve of a lost game (the medium bot's, stuck at its end) ends at
// 0; without CurvePoints there is none; a CurveStep saying no stops the
// analysis.
func TestAnalyzeCurveLostGame(t *testing.T) {
	r := mustVariant(t, "classic")
	end, moves := mediumGame(r, 2)
	if end.Status() != Stuck {
		t.Fatalf("deal 2's medium game: %v", end.Status())
	}
	start := New(r, 2)
	opt := AnalyzeOptions{Solve: SolveOptions{MaxNodes: 20_000, MaxConflicts: 1_000}}
	plain, err := AnalyzeGame(&start, moves, opt)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Curve != nil || plain.CurveEvery != 0 {
		t.Fatalf("a curve without asking: %v", plain.Curve)
	}
	const bound = 8
	opt.CurvePoints = bound
	calls := 0
	opt.CurveStep = func(done, total int) bool {
		if done != calls || total > bound {
			t.Errorf("step %d of %d, call %d", done, total, calls)
		}
		calls++
		return true
	}
	a, err := AnalyzeGame(&start, moves, opt)
	if err != nil {
		t.Fatal(err)
	}
	pos := checkAnalysis(t, start, moves, a)
	checkCurve(t, pos, a, bound)
	if calls != len(a.Curve) {
		t.Errorf("%d steps for %d points", calls, len(a.Curve))
	}
	if last := a.Curve[len(a.Curve)-1]; last.Percent != 0 {
		t.Errorf("at the stuck end: %+v", last)
	}
	opt.CurveStep = func(done, _ int) bool { return done < 2 }
	stopped, err := AnalyzeGame(&start, moves, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !stopped.Stopped || stopped.Curve != nil {
		t.Errorf("stopped at the curve's third point: stopped %v, curve %v", stopped.Stopped, stopped.Curve)
	}
}

// checkCurve checks a's curve against the game's positions pos: within
// bound, at 0, CurveEvery, … and the last position, each point the
// ExpertChance there.
func checkCurve(t *testing.T, pos []Game, a GameAnalysis, bound int) {
	t.Helper()
	want := curvePlies(a.Plies, a.CurveEvery)
	if len(a.Curve) != len(want) || len(a.Curve) > bound || a.CurveEvery < 1 {
		t.Fatalf("curve %v (every %d), want points at %v, at most %d", a.Curve, a.CurveEvery, want, bound)
	}
	for i, c := range a.Curve {
		g := pos[want[i]]
		v := g.Memory()
		share, _ := ExpertChance(&v, g.Moves())
		if c.Ply != want[i] || c.Percent < 0 || c.Percent > 100 || c.Percent != percentOf(share) {
			t.Errorf("point %+v, want ply %d at %.2f", c, want[i], share)
		}
	}
}
