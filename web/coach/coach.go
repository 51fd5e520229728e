// Package coach says where a racer lost their game ("Where you lost it"):
// for every position of a finished game, whether it could still be won
// with perfect information, found by engine.AnalyzeGame within a budget,
// in the background, once per game (variant, deal and game text) for
// everyone who asks, and in a fleet once for all instances through a
// Store (see docs/coach.md).
package coach

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
)

// Budgets and timings of an analysis.
const (
	// PositionMaxNodes and PositionMaxConflicts are the solver's budget for
	// one position: the solution endpoint's (a fraction of a second of
	// search, then about a second of SAT at most).
	PositionMaxNodes     = 300_000
	PositionMaxConflicts = 20_000
	// claimTTL is how long a claim outlives its holder's last sign of
	// life: a position takes a second or two at most, and the holder
	// refreshes the claim after each, so a claim that lapses means its
	// holder is gone and another instance takes the work over.
	claimTTL = 30 * time.Second
	// pollEvery is how often an instance that waits for another's analysis
	// looks for it: a whole analysis takes seconds.
	pollEvery = 500 * time.Millisecond
	// keepFor is how long a finished analysis is stored where the store
	// keeps values for a while (the memory twin); the durable store keeps
	// them for good.
	keepFor = 7 * 24 * time.Hour
	// lookupWait bounds how long Analyze waits for a new job's first read
	// of the store, so that an analysis stored already (by another
	// instance, or before a restart) is answered at once; a store slower
	// than this is answered as in progress.
	lookupWait = 250 * time.Millisecond
	// cacheSize bounds the finished analyses kept in this process.
	cacheSize = 1024
	// maxJobs bounds the analyses running or waiting here at once: a crowd
	// opening many different races queues at most this many behind the
	// solver; more are refused with ErrBusy until some finish.
	maxJobs = 32
)

// ErrBusy is returned when maxJobs analyses are under way.
var ErrBusy = errors.New("coach: too many analyses under way; try again shortly")

// Solver solves positions for the coach: the web server's, which bounds
// how many solves run at once and caches whole deals.
type Solver interface {
	// SolveDeal is the solver's answer for the start of deal.
	SolveDeal(ctx context.Context, rules *engine.Rules, deal uint64) (engine.Solution, error)
	// SolvePosition solves g within opt, waiting for its turn.
	SolvePosition(ctx context.Context, g *engine.Game, opt engine.SolveOptions) (engine.Solution, error)
}

// Deps are the coach's dependencies.
type Deps struct {
	Log    zerolog.Logger
	Store  Store // nil: a MemoryStore
	Solver Solver
	// Budget bounds each game's analysis; zero fields take
	// PositionMaxNodes, PositionMaxConflicts and engine.DefaultMaxProbes.
	Budget engine.AnalyzeOptions
	// Holder names this instance in claims ("" : a random name).
	Holder string
	// Analyses counts the games analysed here (nil: not counted).
	Analyses *atomic.Int64
}

// Coach runs analyses in the background, each game once.
type Coach struct {
	deps   Deps
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	jobs  map[string]*job
	order []string // finished keys, oldest first
	busy  int      // jobs not finished
}

// job is one game's analysis, running or finished.
type job struct {
	done    chan struct{} // closed when res or err is set
	looked  chan struct{} // closed once the store was first read
	lookOne sync.Once
	percent atomic.Int32
	res     *Game
	err     error
}

// New makes a coach; Close stops its work.
func New(deps Deps) *Coach {
	if deps.Store == nil {
		deps.Store = NewMemoryStore(nil)
	}
	if deps.Budget.Solve.MaxNodes <= 0 {
		deps.Budget.Solve.MaxNodes = PositionMaxNodes
	}
	if deps.Budget.Solve.MaxConflicts <= 0 {
		deps.Budget.Solve.MaxConflicts = PositionMaxConflicts
	}
	if deps.Budget.MaxProbes <= 0 {
		deps.Budget.MaxProbes = engine.DefaultMaxProbes
	}
	deps.Budget.Chances = true // every analysis has the expert's view too
	if deps.Budget.CurvePoints <= 0 {
		deps.Budget.CurvePoints = engine.DefaultCurvePoints
	}
	if deps.Holder == "" {
		deps.Holder = rand.Text()
	}
	c := &Coach{deps: deps, jobs: make(map[string]*job)}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// Close stops the analyses under way (each after the position it is
// solving) and waits for them.
func (c *Coach) Close() {
	c.cancel()
	c.wg.Wait()
}

// Game is the analysis of one game, as GET /api/races/{id}/analysis
// sends it (web/PROTOCOL.md).
type Game struct {
	engine.GameAnalysis
	// Status is how the game ended ("won", "stuck", "resigned", or
	// "playing" when the race ended first).
	Status string `json:"status"`
	// Verdict sums it up: "won" (the game was won), "winnable-throughout"
	// (still winnable at its end: time ran out, or the player resigned or
	// the race was decided), "lost-from-start" (the deal could not be
	// won), "lost-at" (LosingMove, played at LastWinnable, lost it) or
	// "unknown" (the solver could not settle the positions between
	// LastWinnable and FirstLost, or after LastWinnable).
	Verdict string `json:"verdict"`
	// Positions has one letter per position 0 to Plies: "w" winnable,
	// "l" lost, "?" unknown.
	Positions string `json:"positions"`
	// LosingMove is the move played at LastWinnable when it lost the game;
	// WinningMove the first move of Line, a move that kept it winnable.
	LosingMove  string `json:"losingMove,omitempty"`
	WinningMove string `json:"winningMove,omitempty"`
}

// Progress is where an analysis stands.
type Progress struct {
	Done    bool
	Percent int // 0 to 100; 100 when Done
	Games   []*Game
}

// Analyze returns the analyses of games (game texts, engine.Record) if
// they are finished, and otherwise starts those not under way and reports
// how far they are. It never waits for a solve.
func (c *Coach) Analyze(games []string) (Progress, error) {
	jobs := make([]*job, len(games))
	for i, text := range games {
		j, err := c.start(text)
		if err != nil {
			return Progress{}, err
		}
		jobs[i] = j
	}
	wait := time.NewTimer(lookupWait)
	defer wait.Stop()
	for _, j := range jobs {
		select {
		case <-j.looked:
		case <-wait.C:
		}
	}
	p := Progress{Done: true}
	sum := 0
	for _, j := range jobs {
		select {
		case <-j.done:
			if j.err != nil {
				return Progress{}, j.err
			}
			sum += 100
			p.Games = append(p.Games, j.res)
		default:
			p.Done = false
			sum += int(j.percent.Load())
		}
	}
	if !p.Done {
		p.Games = nil
	}
	if len(jobs) > 0 {
		p.Percent = sum / len(jobs)
	}
	if !p.Done && p.Percent >= 100 {
		p.Percent = 99
	}
	return p, nil
}

// analysisVersion is the form of the analyses stored: a change to what an
// analysis holds changes it, so that no instance reads an older form
// (version 2 added the expert's chances). The curve (engine.GameAnalysis.
// Curve) did not change it: an analysis stored before it still loads,
// without a curve, and the pages then show none.
const analysisVersion = 2

// Key is the store's key of a game: the analysis's version, variant, deal
// and a hash of its moves (and of its resignation, which the analysis
// reports as its end).
func Key(rec engine.Record) string {
	h := sha256.New()
	for _, m := range rec.Moves {
		h.Write([]byte(m.String()))
		h.Write([]byte{' '})
	}
	if rec.Resigned {
		h.Write([]byte("resign"))
	}
	return fmt.Sprintf("v%d/%s/%d/%x", analysisVersion, rec.Variant, rec.Deal, h.Sum(nil)[:16])
}

// start returns the job of the game text, starting it if there is none.
func (c *Coach) start(text string) (*job, error) {
	rec, err := engine.ParseRecord(text)
	if err != nil {
		return nil, fmt.Errorf("coach: the game text: %w", err)
	}
	key := Key(rec)
	c.mu.Lock()
	defer c.mu.Unlock()
	if j, ok := c.jobs[key]; ok {
		return j, nil
	}
	if c.busy >= maxJobs {
		return nil, ErrBusy
	}
	if c.ctx.Err() != nil {
		return nil, c.ctx.Err()
	}
	j := &job{done: make(chan struct{}), looked: make(chan struct{})}
	c.jobs[key] = j
	c.busy++
	c.wg.Add(1)
	go c.run(key, rec, j)
	return j, nil
}

// finish records j's end: a result is kept (the oldest dropped past
// cacheSize); a failure is forgotten so that the next asker tries again.
func (c *Coach) finish(key string, j *job, res *Game, err error) {
	c.mu.Lock()
	j.res, j.err = res, err
	c.busy--
	if err != nil {
		delete(c.jobs, key)
	} else {
		c.order = append(c.order, key)
		if len(c.order) > cacheSize {
			delete(c.jobs, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.mu.Unlock()
	close(j.done)
}

// run finds the game's analysis in the store, or computes it under a
// claim, or waits for the instance that holds the claim.
func (c *Coach) run(key string, rec engine.Record, j *job) {
	defer c.wg.Done()
	ctx, store, holder := c.ctx, c.deps.Store, c.deps.Holder
	log := c.deps.Log.With().Str("analysis", key).Logger()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			c.finish(key, j, nil, ctx.Err())
			return
		case <-timer.C:
		}
		b, ok, err := store.Get(ctx, key)
		if err != nil {
			log.Warn().Err(err).Msg("analysis store: get")
		} else if ok {
			var g Game
			if err := json.Unmarshal(b, &g); err == nil {
				c.finish(key, j, &g, nil)
				j.lookOne.Do(func() { close(j.looked) })
				return
			}
			log.Warn().Msg("analysis store: an unreadable analysis; computing it again")
		}
		j.lookOne.Do(func() { close(j.looked) })
		held, pct, err := store.Claim(ctx, key, holder, claimTTL)
		if err != nil {
			// The store is down: work alone rather than not at all.
			log.Warn().Err(err).Msg("analysis store: claim; analysing without it")
			held = true
		}
		if !held {
			if pct >= 100 { // put since the Get: read it at once
				timer.Reset(0)
				continue
			}
			j.percent.Store(int32(pct))
			timer.Reset(pollEvery)
			continue
		}
		g, err := c.compute(ctx, key, rec, j)
		if err != nil {
			_ = store.Release(context.WithoutCancel(ctx), key, holder)
			c.finish(key, j, nil, err)
			return
		}
		if b, err := json.Marshal(g); err == nil {
			if err := store.Put(context.WithoutCancel(ctx), key, holder, b, keepFor); err != nil {
				log.Warn().Err(err).Msg("analysis store: put")
			}
		}
		c.finish(key, j, g, nil)
		return
	}
}

// compute analyses the game here, refreshing the claim after each solve.
func (c *Coach) compute(ctx context.Context, key string, rec engine.Record, j *job) (*Game, error) {
	rules, err := engine.Variant(rec.Variant)
	if err != nil {
		return nil, err
	}
	if c.deps.Analyses != nil {
		c.deps.Analyses.Add(1)
	}
	start := engine.New(rules, rec.Deal)
	var solveErr error
	opt := c.deps.Budget
	opt.Solver = func(ply int, g *engine.Game, o engine.SolveOptions) (engine.Solution, bool) {
		var sol engine.Solution
		if ply == 0 {
			sol, solveErr = c.deps.Solver.SolveDeal(ctx, rules, rec.Deal)
		} else {
			sol, solveErr = c.deps.Solver.SolvePosition(ctx, g, o)
		}
		return sol, solveErr == nil
	}
	// The solves are the first half of the percentage, the curve the
	// second; each step refreshes the claim.
	report := func(pct int) {
		j.percent.Store(int32(pct))
		if _, err := c.deps.Store.Refresh(ctx, key, c.deps.Holder, pct, claimTTL); err != nil {
			c.deps.Log.Warn().Err(err).Str("analysis", key).Msg("analysis store: refresh")
		}
	}
	opt.Progress = func(done, total int) { report(min(50, done*50/max(total, 1))) }
	opt.CurveStep = func(done, total int) bool {
		if err := ctx.Err(); err != nil {
			solveErr = err
			return false
		}
		report(min(99, 50+done*50/max(total, 1)))
		return true
	}
	a, err := engine.AnalyzeGame(&start, rec.Moves, opt)
	if err != nil {
		return nil, err
	}
	if a.Stopped {
		return nil, fmt.Errorf("coach: analysis stopped: %w", solveErr)
	}
	final := start
	for _, m := range rec.Moves {
		_ = final.ApplyRecorded(m) // AnalyzeGame replayed them
	}
	status := final.Status()
	if rec.Resigned {
		status = engine.Resigned
	}
	return describe(a, rec.Moves, status), nil
}

// describe adds the verdict, the positions' letters and the moves in words.
func describe(a engine.GameAnalysis, moves []engine.Move, status engine.Status) *Game {
	g := &Game{GameAnalysis: a, Status: status.String()}
	var b strings.Builder
	for p := 0; p <= a.Plies; p++ {
		switch {
		case p <= a.LastWinnable:
			b.WriteByte('w')
		case a.FirstLost >= 0 && p >= a.FirstLost:
			b.WriteByte('l')
		default:
			b.WriteByte('?')
		}
	}
	g.Positions = b.String()
	if len(a.Line) > 0 {
		g.WinningMove = a.Line[0].String()
	}
	switch {
	case status == engine.Won:
		g.Verdict = "won"
	case a.LastWinnable == a.Plies:
		g.Verdict = "winnable-throughout"
	case a.FirstLost == 0:
		g.Verdict = "lost-from-start"
	case a.FirstLost >= 0 && a.FirstLost == a.LastWinnable+1:
		g.Verdict = "lost-at"
		g.LosingMove = moves[a.LastWinnable].String()
	default:
		g.Verdict = "unknown"
	}
	return g
}
