package web

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/race"
)

// CodeBadPractice refuses a practice request whose seat, position or move
// is out of range or malformed (400); nothing is judged or stored.
const CodeBadPractice race.Code = "bad-practice"

// practiceRequest is the body of POST /api/races/{id}/practice.
type practiceRequest struct {
	Seat     *int   `json:"seat"`
	Position *int   `json:"position"`
	Move     string `json:"move"`
	// Token, the player's, is optional: with it, a winning try at their
	// own seat marks the mistake in their list solved.
	Token string `json:"token,omitempty"`
}

// practiceResponse is its reply (web/PROTOCOL.md).
type practiceResponse struct {
	Race     string          `json:"race"`
	Seat     int             `json:"seat"`
	Position int             `json:"position"`
	Move     string          `json:"move"`
	Verdict  PracticeVerdict `json:"verdict"`
	Reason   string          `json:"reason,omitempty"`
	Message  string          `json:"message"`
	// Line is a winning line from the position after the move.
	Line      []engine.Move `json:"line,omitempty"`
	Nodes     int64         `json:"nodes,omitempty"`
	Conflicts int64         `json:"conflicts,omitempty"`
	// Solved tells that this try marked the player's mistake solved.
	Solved bool `json:"solved,omitempty"`
}

// handlePractice is POST /api/races/{id}/practice: "find the better
// move". It plays a try at a position of a racer's game of a finished
// race and judges it with the solver, which knows the stock (the race is
// over: nothing is hidden any more).
func handlePractice(log zerolog.Logger, races *race.Service, judge *practiceJudge, mistakes *mistakeRoutes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req practiceRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, http.StatusRequestEntityTooLarge, CodeTooLarge, "the body is over %d bytes", maxBodyBytes)
				return
			}
			writeError(w, http.StatusBadRequest, CodeBadJSON, `the body is not a try ({"seat":0,"position":12,"move":"9H>W1"}): %v`, err)
			return
		}
		if req.Seat == nil || req.Position == nil || req.Move == "" {
			writeError(w, http.StatusBadRequest, CodeBadPractice, "seat, position and move are all needed")
			return
		}
		m, err := engine.ParseMove(req.Move)
		if err != nil {
			writeError(w, http.StatusBadRequest, CodeBadPractice, "move %q is not a move: CARD>PILE as in 9H>W1, R to redeal or T to turn", req.Move)
			return
		}
		var player lobby.Identity
		if req.Token != "" && mistakes.kept() {
			id, ok := mistakes.who(w, r, req.Token)
			if !ok {
				return
			}
			player = id
		}
		info, ok := raceInfo(w, r, log, races)
		if !ok {
			return
		}
		rec, ok := practiceGame(w, info, *req.Seat, *req.Position)
		if !ok {
			return
		}
		res, err := judge.judge(r.Context(), rec, *req.Position, m)
		if err != nil {
			if r.Context().Err() != nil {
				return // the client left
			}
			log.Error().Err(err).Str("race", info.Race).Msg("practice")
			writeError(w, http.StatusInternalServerError, race.CodeInternal, "the try could not be judged")
			return
		}
		resp := practiceResponse{
			Race: info.Race, Seat: *req.Seat, Position: *req.Position, Move: m.String(),
			Verdict: res.Verdict, Reason: res.Reason, Message: res.Detail, Line: res.Line,
			Nodes: res.Nodes, Conflicts: res.Conflicts,
		}
		if res.Verdict == PracticeWinnable && player.ID != "" && info.Players[*req.Seat].Player == player.ID {
			resp.Solved = mistakes.solve(r.Context(), player.ID, info.Race, *req.Seat, *req.Position)
		}
		writeJSON(w, http.StatusOK, resp)
	}
}

// practiceGame is seat's game of the race info, checked to be practised
// at position; on refusal it has written the error reply.
func practiceGame(w http.ResponseWriter, info race.Info, seat, position int) (engine.Record, bool) {
	res := info.Result
	if !info.State.Over() || res == nil {
		// The solver's verdicts would tell a racer about the cards to come.
		writeError(w, http.StatusConflict, race.CodeNotOver, "the race is %s: its positions are practised once it is over", info.State)
		return engine.Record{}, false
	}
	if res.Deal == "" {
		if res.Outcome == race.OutcomeAborted {
			writeError(w, http.StatusConflict, lobby.CodeNoGame, "the race was aborted before it was dealt: there is no game to practise")
		} else {
			writeError(w, http.StatusForbidden, lobby.CodeNotRevealed, "the race's deal is sealed until the day ends; practise it then")
		}
		return engine.Record{}, false
	}
	if seat < 0 || seat >= len(res.Games) {
		writeError(w, http.StatusBadRequest, CodeBadPractice, "seat must be from 0 to %d, not %d", len(res.Games)-1, seat)
		return engine.Record{}, false
	}
	rec, err := engine.ParseRecord(res.Games[seat])
	if err != nil {
		writeError(w, http.StatusInternalServerError, race.CodeInternal, "seat %d's game could not be read", seat)
		return engine.Record{}, false
	}
	if position < 0 || position > len(rec.Moves) {
		writeError(w, http.StatusBadRequest, CodeBadPractice, "position must be from 0 to %d (seat %d's game has %d moves), not %d", len(rec.Moves), seat, len(rec.Moves), position)
		return engine.Record{}, false
	}
	return rec, true
}
