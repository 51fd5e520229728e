// Package coachtest checks implementations of coach.Store, and that
// coaches sharing one analyse a game once.
package coachtest

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/web/coach"
)

// safetyTimeout keeps a broken store from hanging a test; nothing asserts
// on time.
const safetyTimeout = 30 * time.Second

// TestStore checks a store's claims and values: one holder at a time, the
// holder's percent seen by others, a put that ends the claim and makes
// later claims report the analysis there, a release, and a lapsed claim
// taken over. s must be empty.
func TestStore(t *testing.T, s coach.Store) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := s.Get(ctx, "k"); err != nil || ok {
		t.Fatalf("get of nothing: %v %v", ok, err)
	}
	held, _, err := s.Claim(ctx, "k", "a", time.Minute)
	must(err)
	if !held {
		t.Fatal("a free claim was refused")
	}
	if held, pct, err := s.Claim(ctx, "k", "b", time.Minute); err != nil || held || pct != 0 {
		t.Fatalf("b claimed a's claim: %v %d %v", held, pct, err)
	}
	if ok, err := s.Refresh(ctx, "k", "a", 40, time.Minute); err != nil || !ok {
		t.Fatalf("a's refresh: %v %v", ok, err)
	}
	if ok, err := s.Refresh(ctx, "k", "b", 50, time.Minute); err != nil || ok {
		t.Fatalf("b refreshed a's claim: %v %v", ok, err)
	}
	if held, pct, err := s.Claim(ctx, "k", "b", time.Minute); err != nil || held || pct != 40 {
		t.Fatalf("b sees %v %d %v, want a's 40%%", held, pct, err)
	}
	must(s.Release(ctx, "k", "b")) // not b's: changes nothing
	if held, _, _ := s.Claim(ctx, "k", "b", time.Minute); held {
		t.Fatal("b's release dropped a's claim")
	}
	must(s.Put(ctx, "k", "a", []byte(`{"x":1}`), time.Hour))
	if v, ok, err := s.Get(ctx, "k"); err != nil || !ok || string(v) != `{"x":1}` {
		t.Fatalf("get after put: %q %v %v", v, ok, err)
	}
	if held, pct, err := s.Claim(ctx, "k", "b", time.Minute); err != nil || held || pct != 100 {
		t.Fatalf("claim of a stored analysis: %v %d %v, want false 100", held, pct, err)
	}

	must2 := func(held bool, _ int, err error) bool {
		t.Helper()
		must(err)
		return held
	}
	if !must2(s.Claim(ctx, "r", "a", time.Minute)) {
		t.Fatal("claim r")
	}
	must(s.Release(ctx, "r", "a"))
	if !must2(s.Claim(ctx, "r", "b", time.Minute)) {
		t.Fatal("a released claim was not free")
	}

	// A holder that dies: its claim lapses and another takes it.
	if !must2(s.Claim(ctx, "d", "a", 20*time.Millisecond)) {
		t.Fatal("claim d")
	}
	deadline := time.Now().Add(safetyTimeout)
	for !must2(s.Claim(ctx, "d", "b", time.Minute)) {
		if time.Now().After(deadline) {
			t.Fatal("a lapsed claim was never free")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ok, err := s.Refresh(ctx, "d", "a", 10, time.Minute); err != nil || ok {
		t.Fatalf("the dead holder refreshed the claim taken over: %v %v", ok, err)
	}
}

// countingSolver solves with the engine, counting, and blocks its first
// solve until release is closed.
type countingSolver struct {
	solves  atomic.Int64
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	budget  engine.SolveOptions
}

func (s *countingSolver) wait(ctx context.Context) error {
	s.once.Do(func() { close(s.entered) })
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *countingSolver) SolveDeal(ctx context.Context, rules *engine.Rules, deal uint64) (engine.Solution, error) {
	if err := s.wait(ctx); err != nil {
		return engine.Solution{}, err
	}
	s.solves.Add(1)
	return engine.Solve(rules, deal, s.budget), nil
}

func (s *countingSolver) SolvePosition(ctx context.Context, g *engine.Game, opt engine.SolveOptions) (engine.Solution, error) {
	if err := s.wait(ctx); err != nil {
		return engine.Solution{}, err
	}
	s.solves.Add(1)
	return engine.SolveGame(g, opt), nil
}

// TestFleet runs two coaches on one store (two instances of a fleet): while
// the first analyses a game, the second, asked for it, waits and then
// reuses the first's analysis, solving nothing itself.
func TestFleet(t *testing.T, s coach.Store) {
	t.Helper()
	budget := engine.AnalyzeOptions{Solve: engine.SolveOptions{MaxNodes: 20_000, MaxConflicts: 1_000}, MaxProbes: 6}
	rules, _ := engine.Variant("classic")
	g := engine.New(rules, 3)
	bot := engine.NewBot(engine.Medium, 3)
	var moves []engine.Move
	for g.Status() == engine.Playing {
		v := g.Memory()
		m, ok := bot.Choose(&v, g.Moves())
		if !ok {
			break
		}
		_ = g.Apply(m)
		moves = append(moves, m)
	}
	text := engine.RecordOf(&g, moves).String()

	mk := func(name string) (*coach.Coach, *countingSolver, *atomic.Int64) {
		sv := &countingSolver{entered: make(chan struct{}), release: make(chan struct{}), budget: budget.Solve}
		var n atomic.Int64
		c := coach.New(coach.Deps{Log: zerolog.Nop(), Store: s, Solver: sv, Budget: budget, Holder: name, Analyses: &n})
		t.Cleanup(c.Close)
		return c, sv, &n
	}
	a, sa, na := mk("a")
	b, sb, nb := mk("b")
	close(sb.release) // b would not wait, if it ever solved
	if p, err := a.Analyze([]string{text}); err != nil || p.Done {
		t.Fatalf("a: %+v %v", p, err)
	}
	select {
	case <-sa.entered: // a holds the claim and solves
	case <-time.After(safetyTimeout):
		t.Fatal("a never solved")
	}
	if p, err := b.Analyze([]string{text}); err != nil || p.Done {
		t.Fatalf("b while a works: %+v %v", p, err)
	}
	close(sa.release)
	done := func(c *coach.Coach) *coach.Game {
		t.Helper()
		deadline := time.Now().Add(safetyTimeout)
		for {
			p, err := c.Analyze([]string{text})
			if err != nil {
				t.Fatal(err)
			}
			if p.Done {
				return p.Games[0]
			}
			if time.Now().After(deadline) {
				t.Fatal("the analysis did not finish")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	ga, gb := done(a), done(b)
	ja, _ := json.Marshal(ga)
	jb, _ := json.Marshal(gb)
	if string(ja) != string(jb) {
		t.Fatalf("the instances' analyses differ:\n%s\n%s", ja, jb)
	}
	if na.Load() != 1 || nb.Load() != 0 || sb.solves.Load() != 0 || sa.solves.Load() == 0 {
		t.Fatalf("analyses: a %d (%d solves), b %d (%d solves); want a 1, b 0", na.Load(), sa.solves.Load(), nb.Load(), sb.solves.Load())
	}
	t.Logf("%s after %d moves: %s, %d solves", ga.Status, ga.Plies, ga.Verdict, sa.solves.Load())
}
