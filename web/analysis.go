package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/web/coach"
)

// analysisResponse is the reply to GET /api/races/{id}/analysis.
type analysisResponse struct {
	Race string `json:"race"`
	// State is "done" (with Games) or "in-progress" (202, with Percent).
	State   string `json:"state"`
	Percent int    `json:"percent"`
	// Games are every racer's analysis, by seat.
	Games []*coach.Game `json:"games,omitempty"`
}

// coachSolver lets the coach solve through the solution endpoint's cache
// (the start of a deal) and its bound on solves at once (every position).
type coachSolver struct {
	c      *solutions
	solved *Stats
}

func (s coachSolver) SolveDeal(ctx context.Context, rules *engine.Rules, deal uint64) (engine.Solution, error) {
	resp, err := s.c.get(ctx, rules, deal)
	return resp.Solution, err
}

func (s coachSolver) SolvePosition(ctx context.Context, g *engine.Game, opt engine.SolveOptions) (engine.Solution, error) {
	select {
	case s.c.sem <- struct{}{}:
	case <-ctx.Done():
		return engine.Solution{}, ctx.Err()
	}
	defer func() { <-s.c.sem }()
	s.solved.AnalysisSolves.Add(1)
	return engine.SolveGame(g, opt), nil
}

func handleAnalysis(log zerolog.Logger, races *race.Service, c *coach.Coach) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		info, ok := raceInfo(w, r, log, races)
		if !ok {
			return
		}
		if !info.State.Over() || info.Result == nil {
			// Every winning line would show a player the cards to come.
			writeError(w, http.StatusConflict, race.CodeNotOver, "the race is %s: the analysis is given once it is over", info.State)
			return
		}
		resp := analysisResponse{Race: info.Race, State: "done", Percent: 100}
		if info.Result.Deal == "" { // aborted before it was dealt: no game to analyse
			resp.Games = []*coach.Game{}
			writeJSON(w, http.StatusOK, resp)
			return
		}
		p, err := c.Analyze(info.Result.Games[:])
		switch {
		case errors.Is(err, coach.ErrBusy):
			writeError(w, http.StatusServiceUnavailable, race.CodeUnavailable, "%v", err)
			return
		case err != nil:
			log.Error().Err(err).Str("race", info.Race).Msg("analysis")
			writeError(w, http.StatusInternalServerError, race.CodeInternal, "the analysis failed")
			return
		case !p.Done:
			resp.State, resp.Percent = "in-progress", p.Percent
			writeJSON(w, http.StatusAccepted, resp)
			return
		}
		resp.Games = p.Games
		writeJSON(w, http.StatusOK, resp)
	}
}
