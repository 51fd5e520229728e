package web

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/race"
)

// solutionMaxNodes is the solver's budget for GET /api/races/{id}/solution:
// about a fraction of a second of one core. Most deals are settled well
// within it; the rest are answered "unknown", honestly, rather than letting
// one request hold a core for seconds. A deal the search leaves unknown
// goes to the SAT encoding with solutionMaxConflicts, which settles most of
// them in about a second. (Of classic deals 1-1,000 that leaves 16
// unknown; at the engine's default 200,000 positions, 20.)
const solutionMaxNodes = 300_000

// solutionMaxConflicts is the SAT stage's budget for the same request:
// about a second of one core.
const solutionMaxConflicts = 20_000

// solutionCacheSize bounds the solved deals kept: an answer is a few
// hundred bytes, so this is well under a megabyte.
const solutionCacheSize = 1024

// maxConcurrentSolves bounds the solves running at once, so that a crowd
// asking about many races cannot pin the CPU that runs the races.
const maxConcurrentSolves = 1

// solutionResponse is the reply to GET /api/races/{id}/solution.
type solutionResponse struct {
	engine.Solution
	// Game is the solver's line as a game text: the win, or a game reaching
	// BestScore.
	Game string `json:"game"`
}

// solutions caches the solver's answers by variant and deal (the answer
// depends on nothing else) and runs at most maxConcurrentSolves at once.
// A deal being solved is solved once: later askers wait for the answer.
type solutions struct {
	mu    sync.Mutex
	m     map[string]*solveEntry
	order []string // keys oldest first, to evict when full
	sem   chan struct{}
	// budget is the solver's budget for each deal.
	budget engine.SolveOptions
	// solved counts the solves run (Stats.Solves).
	solved *atomic.Int64
}

type solveEntry struct {
	done chan struct{} // closed when resp or err is set
	resp solutionResponse
	err  error
}

func newSolutions(solved *atomic.Int64, budget engine.SolveOptions) *solutions {
	if budget.MaxNodes <= 0 {
		budget.MaxNodes = solutionMaxNodes
	}
	if budget.MaxConflicts <= 0 {
		budget.MaxConflicts = solutionMaxConflicts
	}
	return &solutions{m: make(map[string]*solveEntry), sem: make(chan struct{}, maxConcurrentSolves), budget: budget, solved: solved}
}

// get returns the answer for rules and deal, solving it if no one has. A
// solve abandoned by its asker (who left while waiting for a turn) is not
// cached, and whoever was waiting on it tries again.
func (c *solutions) get(ctx context.Context, rules *engine.Rules, deal uint64) (solutionResponse, error) {
	key := rules.Name + "/" + strconv.FormatUint(deal, 10)
	for {
		c.mu.Lock()
		e, ok := c.m[key]
		if !ok {
			e = &solveEntry{done: make(chan struct{})}
			c.m[key] = e
			c.order = append(c.order, key)
			if len(c.order) > solutionCacheSize {
				old := c.order[0]
				c.order = c.order[1:]
				delete(c.m, old)
			}
		}
		c.mu.Unlock()
		if !ok {
			e.resp, e.err = c.solve(ctx, rules, deal)
			if e.err != nil {
				c.mu.Lock()
				if c.m[key] == e {
					delete(c.m, key)
				}
				c.mu.Unlock()
			}
			close(e.done)
			return e.resp, e.err
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			return solutionResponse{}, ctx.Err()
		}
		if e.err == nil || ctx.Err() != nil {
			return e.resp, e.err
		}
		// The solver of this entry gave up or failed: try again.
	}
}

func (c *solutions) solve(ctx context.Context, rules *engine.Rules, deal uint64) (solutionResponse, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return solutionResponse{}, ctx.Err()
	}
	defer func() { <-c.sem }()
	c.solved.Add(1)
	sol := engine.Solve(rules, deal, c.budget)
	rec, err := engine.LineRecord(rules, deal, sol.Line)
	if err != nil {
		return solutionResponse{}, err
	}
	return solutionResponse{Solution: sol, Game: rec.String()}, nil
}

func handleSolution(log zerolog.Logger, races *race.Service, cache *solutions) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		info, ok := raceInfo(w, r, log, races)
		if !ok {
			return
		}
		if !info.State.Over() || info.Result == nil {
			// The solver's line would show a player the whole deal.
			writeError(w, http.StatusConflict, race.CodeNotOver, "the race is %s: the solution is given once it is over", info.State)
			return
		}
		rules, err := engine.Variant(info.Variant)
		if err != nil {
			log.Error().Err(err).Str("race", info.Race).Msg("solution: variant")
			writeError(w, http.StatusInternalServerError, race.CodeInternal, "the race's variant is unknown")
			return
		}
		if info.Result.Deal == "" {
			// The day's deal, sealed until the day ends: the solver's line
			// would show the cards to those who have not played it.
			writeError(w, http.StatusForbidden, lobby.CodeNotRevealed, "the race's deal is sealed until the day ends; ask again then")
			return
		}
		deal, err := strconv.ParseUint(info.Result.Deal, 10, 64)
		if err != nil {
			log.Error().Err(err).Str("race", info.Race).Msg("solution: deal")
			writeError(w, http.StatusInternalServerError, race.CodeInternal, "the race's deal could not be read")
			return
		}
		resp, err := cache.get(r.Context(), rules, deal)
		if err != nil {
			if r.Context().Err() != nil {
				return // the client left
			}
			log.Error().Err(err).Str("race", info.Race).Msg("solution: the solver's line does not replay")
			writeError(w, http.StatusInternalServerError, race.CodeInternal, "the solver failed")
			return
		}
		writeJSON(w, http.StatusOK, resp)
	}
}
