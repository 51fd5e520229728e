package coach_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/web/coach"
)

// blockingSolver answers nothing until its context ends.
type blockingSolver struct{}

func (blockingSolver) SolveDeal(ctx context.Context, _ *engine.Rules, _ uint64) (engine.Solution, error) {
	<-ctx.Done()
	return engine.Solution{}, ctx.Err()
}

func (blockingSolver) SolvePosition(ctx context.Context, _ *engine.Game, _ engine.SolveOptions) (engine.Solution, error) {
	<-ctx.Done()
	return engine.Solution{}, ctx.Err()
}

// TestBusy: a crowd asking about many different games queues a bounded
// number of analyses; the next is refused with ErrBusy, and asking again
// about one under way is not refused. A won game is analysed without a
// solve.
func TestBusy(t *testing.T) {
	rules, _ := engine.Variant("classic")
	g := engine.New(rules, 1)
	var moves []engine.Move
	var texts []string
	for g.Status() == engine.Playing && len(texts) < 40 {
		m := g.Moves()[0]
		_ = g.Apply(m)
		moves = append(moves, m)
		texts = append(texts, engine.RecordOf(&g, moves).String())
	}
	if len(texts) < 40 {
		t.Fatalf("only %d positions", len(texts))
	}
	c := coach.New(coach.Deps{Log: zerolog.Nop(), Solver: blockingSolver{}})
	defer c.Close()
	busy := -1
	for i, text := range texts {
		_, err := c.Analyze([]string{text})
		if errors.Is(err, coach.ErrBusy) {
			busy = i
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if busy <= 0 {
		t.Fatalf("%d analyses under way and none refused", len(texts))
	}
	if p, err := c.Analyze(texts[:1]); err != nil || p.Done {
		t.Fatalf("asked again about the first: %+v %v", p, err)
	}
	t.Logf("refused the analysis after %d under way", busy)

	// The deal's solver line is a won game: nothing to solve.
	won := engine.Solve(rules, 3, engine.SolveOptions{})
	rec, err := engine.LineRecord(rules, 3, won.Line)
	if err != nil || won.Outcome != engine.Winnable {
		t.Fatalf("deal 3: %v %v", won.Outcome, err)
	}
	c2 := coach.New(coach.Deps{Log: zerolog.Nop(), Solver: blockingSolver{}})
	defer c2.Close()
	for {
		p, err := c2.Analyze([]string{rec.String()})
		if err != nil {
			t.Fatal(err)
		}
		if p.Done {
			if v := p.Games[0].Verdict; v != "won" || p.Games[0].Positions[0] != 'w' {
				t.Fatalf("a won game: %s %s", v, p.Games[0].Positions)
			}
			break
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStoredAnalysisAnsweredAtOnce: an analysis in the store (put by
// another instance, or before a restart) is answered by the first
// request of a coach that never computed it, not as "in progress".
func TestStoredAnalysisAnsweredAtOnce(t *testing.T) {
	rules, _ := engine.Variant("classic")
	won := engine.Solve(rules, 3, engine.SolveOptions{})
	rec, err := engine.LineRecord(rules, 3, won.Line)
	if err != nil || won.Outcome != engine.Winnable {
		t.Fatalf("deal 3: %v %v", won.Outcome, err)
	}
	store := coach.NewMemoryStore(nil)
	first := coach.New(coach.Deps{Log: zerolog.Nop(), Solver: blockingSolver{}, Store: store})
	for {
		p, err := first.Analyze([]string{rec.String()})
		if err != nil {
			t.Fatal(err)
		}
		if p.Done {
			break
		}
		time.Sleep(time.Millisecond) // a poll: the analysis runs in the background
	}
	first.Close()
	again := coach.New(coach.Deps{Log: zerolog.Nop(), Solver: blockingSolver{}, Store: store})
	defer again.Close()
	p, err := again.Analyze([]string{rec.String()})
	if err != nil || !p.Done || len(p.Games) != 1 || p.Games[0].Verdict != "won" {
		t.Fatalf("the first request for a stored analysis: %+v %v, want it done", p, err)
	}
}

// TestStoredBeforeTheCurve: an analysis stored before the curve existed
// (the same key's version, no curve or curveEvery) still loads, answered
// at once as it was, without a curve; one computed now has its curve.
func TestStoredBeforeTheCurve(t *testing.T) {
	rules, _ := engine.Variant("classic")
	won := engine.Solve(rules, 3, engine.SolveOptions{})
	rec, err := engine.LineRecord(rules, 3, won.Line)
	if err != nil || won.Outcome != engine.Winnable {
		t.Fatalf("deal 3: %v %v", won.Outcome, err)
	}
	old := fmt.Sprintf(`{"plies":%d,"lastWinnable":%d,"firstLost":-1,"probes":[{"ply":%d,"result":"won","by":"rules"}],`+
		`"chances":[{"ply":0,"percent":58,"draws":12,"move":"%s"}],"status":"won","verdict":"won","positions":"%s"}`,
		len(won.Line), len(won.Line), len(won.Line), won.Line[0], strings.Repeat("w", len(won.Line)+1))
	store := coach.NewMemoryStore(nil)
	if err := store.Put(context.Background(), coach.Key(rec), "an older instance", []byte(old), time.Hour); err != nil {
		t.Fatal(err)
	}
	c := coach.New(coach.Deps{Log: zerolog.Nop(), Solver: blockingSolver{}, Store: store})
	defer c.Close()
	p, err := c.Analyze([]string{rec.String()})
	if err != nil || !p.Done || len(p.Games) != 1 {
		t.Fatalf("the stored analysis: %+v %v, want it done", p, err)
	}
	if g := p.Games[0]; g.Verdict != "won" || g.Curve != nil || g.CurveEvery != 0 || len(g.Chances) != 1 || g.Chances[0].Percent != 58 {
		t.Fatalf("the stored analysis read as %+v", g)
	}
	fresh := coach.New(coach.Deps{Log: zerolog.Nop(), Solver: blockingSolver{}})
	defer fresh.Close()
	for {
		p, err = fresh.Analyze([]string{rec.String()})
		if err != nil {
			t.Fatal(err)
		}
		if p.Done {
			break
		}
		time.Sleep(time.Millisecond) // a poll: the analysis runs in the background
	}
	if g := p.Games[0]; len(g.Curve) == 0 || g.Curve[len(g.Curve)-1].Percent != 100 || len(g.Curve) > engine.DefaultCurvePoints {
		t.Fatalf("a won game's curve computed now: %+v (every %d)", g.Curve, g.CurveEvery)
	}
}
