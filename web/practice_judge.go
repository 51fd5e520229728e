package web

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"

	"sirtommy/engine"
	"sirtommy/web/coach"
)

// PracticeVerdict is the judgement of one try of "find the better move".
type PracticeVerdict string

// The verdicts of a try.
const (
	// PracticeWinnable: the move is legal and the position after it can
	// still be won; the reply has a winning line from there.
	PracticeWinnable PracticeVerdict = "winnable"
	// PracticeLost: the move is legal, and the solver proved (or the rules
	// say: stuck) that no play wins from the position after it.
	PracticeLost PracticeVerdict = "lost"
	// PracticeIllegal: the engine refuses the move; the reason says why.
	PracticeIllegal PracticeVerdict = "illegal"
	// PracticeUnknown: the solver ran out of its budget before it was sure
	// either way. Never called lost.
	PracticeUnknown PracticeVerdict = "unknown"
)

// practiceCacheSize bounds the judgements kept: each is a verdict and a
// line of at most a few hundred moves, a few kilobytes.
const practiceCacheSize = 1024

// practiceJudgement is what a try is judged to be.
type practiceJudgement struct {
	Verdict PracticeVerdict
	// Reason is the engine's code of an illegal move ("does-not-fit"),
	// "solver" when the solver proved the position lost, "stuck" when the
	// rules end the game there, "" otherwise.
	Reason string
	// Detail is a sentence for the player.
	Detail string
	// Line is a winning line from the position after the move (winnable).
	Line []engine.Move
	// Nodes and Conflicts are the solver's work (0 where it did not run).
	Nodes, Conflicts int64
}

// practiceJudge judges tries, each position and move once: the answer
// depends only on the position and the move, so it is kept (the oldest
// dropped past practiceCacheSize) and asking again costs nothing.
type practiceJudge struct {
	// solve solves a position within the budget, waiting for its turn
	// among the server's solves; an error is the asker's leaving.
	solve func(ctx context.Context, g *engine.Game) (engine.Solution, error)

	mu    sync.Mutex
	m     map[string]practiceJudgement
	order []string
}

func newPracticeJudge(solve func(ctx context.Context, g *engine.Game) (engine.Solution, error)) *practiceJudge {
	return &practiceJudge{solve: solve, m: make(map[string]practiceJudgement)}
}

// practiceKey names a position of a game and a move from it: variant,
// deal, a hash of the moves to the position, and the move.
func practiceKey(rec engine.Record, position int, m engine.Move) string {
	h := sha256.New()
	for _, pm := range rec.Moves[:position] {
		h.Write([]byte(pm.String()))
		h.Write([]byte{' '})
	}
	return fmt.Sprintf("%s/%d/%x/%s", rec.Variant, rec.Deal, h.Sum(nil)[:16], m)
}

// judge plays move m at position (the board after the game's first
// position moves) of the game rec and judges it.
func (j *practiceJudge) judge(ctx context.Context, rec engine.Record, position int, m engine.Move) (practiceJudgement, error) {
	key := practiceKey(rec, position, m)
	j.mu.Lock()
	res, ok := j.m[key]
	j.mu.Unlock()
	if ok {
		return res, nil
	}
	res, err := j.judgeAfresh(ctx, rec, position, m)
	if err != nil {
		return res, err
	}
	j.mu.Lock()
	if _, ok := j.m[key]; !ok {
		j.m[key] = res
		j.order = append(j.order, key)
		if len(j.order) > practiceCacheSize {
			delete(j.m, j.order[0])
			j.order = j.order[1:]
		}
	}
	j.mu.Unlock()
	return res, nil
}

// judgeAfresh is judge without the cache.
func (j *practiceJudge) judgeAfresh(ctx context.Context, rec engine.Record, position int, m engine.Move) (practiceJudgement, error) {
	rules, err := engine.Variant(rec.Variant)
	if err != nil {
		return practiceJudgement{}, err
	}
	g := engine.New(rules, rec.Deal)
	for i, pm := range rec.Moves[:position] {
		if err := g.ApplyRecorded(pm); err != nil {
			return practiceJudgement{}, fmt.Errorf("the race's game does not replay at move %d (%s): %w", i+1, pm, err)
		}
	}
	// A try is a move made by hand: Apply, never ApplyRecorded, which
	// would turn the next four by itself.
	if err := g.Apply(m); err != nil {
		var ill *engine.IllegalMoveError
		if errors.As(err, &ill) {
			return practiceJudgement{Verdict: PracticeIllegal, Reason: ill.Reason.String(), Detail: ill.Detail}, nil
		}
		return practiceJudgement{}, err
	}
	switch g.Status() {
	case engine.Won:
		return practiceJudgement{Verdict: PracticeWinnable, Detail: "that move wins the game"}, nil
	case engine.Stuck:
		return practiceJudgement{Verdict: PracticeLost, Reason: "stuck", Detail: "this loses too: no move is left after it"}, nil
	}
	sol, err := j.solve(ctx, &g)
	if err != nil {
		return practiceJudgement{}, err
	}
	res := practiceJudgement{Nodes: sol.Nodes, Conflicts: sol.Conflicts}
	switch {
	case sol.Outcome == engine.Winnable && winsFrom(g, sol.Line):
		res.Verdict, res.Line, res.Detail = PracticeWinnable, sol.Line, "this keeps the game winnable"
	case sol.Outcome == engine.Lost:
		res.Verdict, res.Reason = PracticeLost, "solver"
		res.Detail = "this loses too: the solver proved that no order of moves wins from there"
	default:
		// A winning line that does not replay is not believed (as the
		// analysis does): unknown, never lost.
		res.Verdict = PracticeUnknown
		res.Detail = "the solver ran out of its budget before it was sure either way"
	}
	return res, nil
}

// winsFrom reports whether line wins the game from g (a copy).
func winsFrom(g engine.Game, line []engine.Move) bool {
	for _, m := range line {
		if g.Apply(m) != nil {
			return false
		}
	}
	return g.Status() == engine.Won
}

// practiceSolver solves a try's position within budget (zero fields take
// the coach's budget for one position: an analysis's), one solve at a
// time with the solution endpoint's and the analyses'.
func (s *Server) practiceSolver(budget engine.SolveOptions) func(ctx context.Context, g *engine.Game) (engine.Solution, error) {
	if budget.MaxNodes <= 0 {
		budget.MaxNodes = coach.PositionMaxNodes
	}
	if budget.MaxConflicts <= 0 {
		budget.MaxConflicts = coach.PositionMaxConflicts
	}
	budget.SkipBestScore = true // a verdict needs no best score
	return func(ctx context.Context, g *engine.Game) (engine.Solution, error) {
		select {
		case s.solutions.sem <- struct{}{}:
		case <-ctx.Done():
			return engine.Solution{}, ctx.Err()
		}
		defer func() { <-s.solutions.sem }()
		s.Stats.PracticeSolves.Add(1)
		return engine.SolveGame(g, budget), nil
	}
}
