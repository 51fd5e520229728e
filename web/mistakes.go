package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/lobby/account"
	"sirtommy/race"
	"sirtommy/web/coach"
)

// Codes of "My mistakes".
const (
	// CodeNoMistake refuses to add a game that was not lost by one known
	// move (409): there is no better move to find in it.
	CodeNoMistake race.Code = "no-mistake"
	// CodeNoMistakes answers on a server that keeps no mistakes (404).
	CodeNoMistakes race.Code = "no-mistakes"
)

// mistakesListMax bounds GET /api/players/me/mistakes?n=.
const mistakesListMax = 200

// mistakeRoutes serve "My mistakes": the positions a player opened to
// find the better move in their own games, kept in Deps.Mistakes.
type mistakeRoutes struct {
	log   zerolog.Logger
	races *race.Service
	lobby *lobby.Lobby
	store lobby.Mistakes
	coach *coach.Coach
	// accounts, when the server keeps them, guard an account's player as
	// the websocket does (conn.admit): its token counts only with its
	// session, and an API token names its account's player.
	accounts *account.Service
}

// newMistakeRoutes are the server's routes of "My mistakes".
func newMistakeRoutes(s *Server) *mistakeRoutes {
	return &mistakeRoutes{log: s.log, races: s.deps.Races, lobby: s.deps.Lobby, store: s.deps.Mistakes, coach: s.coach, accounts: s.deps.Accounts}
}

// addMistakeRoutes lists the routes of "My mistakes" on mux.
func addMistakeRoutes(mux *http.ServeMux, m *mistakeRoutes) {
	mux.HandleFunc("POST /api/players/me/mistakes", m.ready(m.add))
	mux.Handle("GET /api/players/me/mistakes", compressed(m.ready(m.list)))
}

// kept reports whether this server keeps players' mistakes.
func (m *mistakeRoutes) kept() bool { return m.lobby != nil && m.store != nil }

// solve marks player's mistake solved, if it is in their list; a store
// that fails is logged, and the try's verdict stands.
func (m *mistakeRoutes) solve(ctx context.Context, player, raceID string, seat, position int) bool {
	ok, err := m.store.Solve(ctx, player, raceID, seat, position, time.Now().UTC())
	if err != nil {
		m.log.Warn().Err(err).Str("race", raceID).Str("player", player).Msg("mistakes: solve")
	}
	return ok
}

// ready refuses the routes on a server without a lobby (no players) or
// without a store.
func (m *mistakeRoutes) ready(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !m.kept() {
			writeError(w, http.StatusNotFound, CodeNoMistakes, "this server keeps no players' mistakes")
			return
		}
		h(w, r)
	}
}

// who is the player whose token tok is: a signed player token (an
// account's only with that account's session cookie) or an account's API
// token. On failure it has written the refusal.
func (m *mistakeRoutes) who(w http.ResponseWriter, r *http.Request, tok string) (lobby.Identity, bool) {
	if m.accounts != nil && strings.HasPrefix(tok, account.APITokenPrefix) {
		acc, err := m.accounts.ByAPIToken(r.Context(), tok)
		if err != nil {
			code := race.ErrorCode(err)
			writeError(w, accountStatus(code), code, "the API token is not one of this server's")
			return lobby.Identity{}, false
		}
		return lobby.Identity{ID: acc.Player, Name: acc.Username}, true
	}
	id, err := m.lobby.VerifyToken(tok)
	if err != nil {
		code := race.ErrorCode(err)
		if code != lobby.CodeExpiredToken {
			code = lobby.CodeInvalidToken
		}
		writeError(w, http.StatusBadRequest, code, "the player token is not one of this server's: open the lobby to get one")
		return lobby.Identity{}, false
	}
	if m.accounts == nil {
		return id, true
	}
	acc, kept, err := m.accounts.Of(r.Context(), id.ID)
	if err != nil {
		m.log.Error().Err(err).Str("player", id.ID).Msg("mistakes: whose account")
		writeError(w, http.StatusServiceUnavailable, race.CodeUnavailable, "the accounts cannot be read now; try again shortly")
		return lobby.Identity{}, false
	}
	if kept {
		if s, err := m.accounts.SignedIn(r.Context(), sessionToken(r)); err != nil || s.Player != acc.Player {
			writeError(w, http.StatusUnauthorized, account.CodeSignInRequired, "player %s is the account %q: sign in with its passkey in this browser", acc.Player, acc.Username)
			return lobby.Identity{}, false
		}
	}
	return id, true
}

// addMistakeRequest is the body of POST /api/players/me/mistakes.
type addMistakeRequest struct {
	Token string `json:"token"`
	Race  string `json:"race"`
	Seat  *int   `json:"seat"`
}

// add is POST /api/players/me/mistakes: the player opened the practice
// of their own seat's game; its last winnable position joins their list
// (201), once (200 the second time, unchanged).
func (m *mistakeRoutes) add(w http.ResponseWriter, r *http.Request) {
	var req addMistakeRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, CodeBadJSON, `the body is not {"token":…,"race":…,"seat":0}: %v`, err)
		return
	}
	if req.Seat == nil || req.Race == "" {
		writeError(w, http.StatusBadRequest, CodeBadPractice, "race and seat are both needed")
		return
	}
	id, ok := m.who(w, r, req.Token)
	if !ok {
		return
	}
	r.SetPathValue("id", req.Race) // raceInfo reads the race's id there
	info, ok := raceInfo(w, r, m.log, m.races)
	if !ok {
		return
	}
	rec, ok := practiceGame(w, info, *req.Seat, 0)
	if !ok {
		return
	}
	if info.Players[*req.Seat].Player != id.ID {
		writeError(w, http.StatusForbidden, race.CodeNotYourSeat, "seat %d of race %s is not yours: only your own games go to your mistakes", *req.Seat, info.Race)
		return
	}
	p, err := m.coach.Analyze(info.Result.Games)
	switch {
	case errors.Is(err, coach.ErrBusy):
		writeError(w, http.StatusServiceUnavailable, race.CodeUnavailable, "%v", err)
		return
	case err != nil:
		m.log.Error().Err(err).Str("race", info.Race).Msg("mistakes: the analysis")
		writeError(w, http.StatusInternalServerError, race.CodeInternal, "the analysis failed")
		return
	case !p.Done:
		writeError(w, http.StatusServiceUnavailable, race.CodeUnavailable, "the race's analysis is under way (%d%%): ask again shortly", p.Percent)
		return
	}
	g := p.Games[*req.Seat]
	if g.Verdict != "lost-at" {
		writeError(w, http.StatusConflict, CodeNoMistake, "seat %d's game was not lost by one known move (%s): there is no better move to find", *req.Seat, g.Verdict)
		return
	}
	mk := lobby.Mistake{Player: id.ID, Race: info.Race, Seat: *req.Seat, Position: g.LastWinnable, Variant: rec.Variant,
		Move: g.LosingMove, RacedAt: info.CreatedAt.UTC(), AddedAt: time.Now().UTC()}
	added, err := m.store.Add(r.Context(), mk)
	if err != nil {
		m.log.Error().Err(err).Str("race", info.Race).Msg("mistakes: add")
		writeError(w, http.StatusServiceUnavailable, race.CodeUnavailable, "your mistakes cannot be written now; try again shortly")
		return
	}
	if added {
		writeJSON(w, http.StatusCreated, mk)
		return
	}
	// Kept before: answer it as it is kept (solved or not).
	list, err := m.store.List(r.Context(), id.ID, -1)
	if err != nil {
		m.log.Error().Err(err).Str("race", info.Race).Msg("mistakes: list")
		writeError(w, http.StatusServiceUnavailable, race.CodeUnavailable, "your mistakes cannot be read now; try again shortly")
		return
	}
	for _, k := range list {
		if k.Race == mk.Race && k.Seat == mk.Seat {
			mk = k
		}
	}
	writeJSON(w, http.StatusOK, mk)
}

// mistakesResponse is the reply to GET /api/players/me/mistakes.
type mistakesResponse struct {
	Player   string          `json:"player"`
	Mistakes []lobby.Mistake `json:"mistakes"`
}

// list is GET /api/players/me/mistakes, the player named by the token
// in "Authorization: Bearer TOKEN": their mistakes, the latest first.
func (m *mistakeRoutes) list(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		writeError(w, http.StatusBadRequest, lobby.CodeInvalidToken, "send your player token as Authorization: Bearer TOKEN")
		return
	}
	id, ok := m.who(w, r, strings.TrimSpace(tok))
	if !ok {
		return
	}
	n := 50
	if q := r.URL.Query().Get("n"); q != "" {
		v, err := strconv.Atoi(q)
		if err != nil || v < 1 || v > mistakesListMax {
			writeError(w, http.StatusBadRequest, CodeBadPractice, "n must be from 1 to %d, not %q", mistakesListMax, q)
			return
		}
		n = v
	}
	list, err := m.store.List(r.Context(), id.ID, n)
	if err != nil {
		m.log.Error().Err(err).Str("player", id.ID).Msg("mistakes: list")
		writeError(w, http.StatusServiceUnavailable, race.CodeUnavailable, "your mistakes cannot be read now; try again shortly")
		return
	}
	writeJSON(w, http.StatusOK, mistakesResponse{Player: id.ID, Mistakes: list})
}
