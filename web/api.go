package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/race"
)

// maxBodyBytes bounds an API request body: race options are a few hundred
// bytes.
const maxBodyBytes = 4 << 10

func handleHealthz() http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

// readyCheckTimeout bounds /readyz's check of the backing services: a
// Redis that takes longer than this is as good as down.
const readyCheckTimeout = time.Second

func handleReadyz(ready *atomic.Bool, check func(context.Context) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
			return
		}
		if check != nil {
			ctx, cancel := context.WithTimeout(r.Context(), readyCheckTimeout)
			defer cancel()
			if err := check(ctx); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": err.Error()})
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	}
}

// createRaceRequest is the body of POST /api/races.
type createRaceRequest struct {
	// The race's options: absent (nil) fields take the defaults; present,
	// they must be in range (race.Choice), 0 included.
	race.Choice
	// Deal names the deal (a decimal string or number); absent means a
	// secret random deal with a published commitment. It takes the place
	// of the Choice's in the body (a number is taken here too).
	Deal   dealField `json:"deal,omitempty"`
	Public bool      `json:"public,omitempty"`
	// The seats filled at once: computer players and ghosts (apiseats.go).
	seatsRequest
}

// dealField is a deal number as a JSON string or number, kept as its text
// for race.Choice to check.
type dealField string

// UnmarshalJSON takes a string's text, or a number's.
func (d *dealField) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*d = dealField(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("deal: %s is not a string or a number", b)
	}
	*d = dealField(n)
	return nil
}

// createRaceResponse is the reply to POST /api/races.
type createRaceResponse struct {
	Race       string `json:"race"`
	Invite     string `json:"invite"`    // the link to give the other player
	Websocket  string `json:"websocket"` // where to connect
	Deal       string `json:"deal,omitempty"`
	Commitment string `json:"commitment,omitempty"`
}

func handleCreateRace(log zerolog.Logger, deps Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req createRaceRequest
		body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
		dec := json.NewDecoder(body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, http.StatusRequestEntityTooLarge, CodeTooLarge, "the body is over %d bytes", maxBodyBytes)
				return
			}
			writeError(w, http.StatusBadRequest, CodeBadJSON, "the body is not race options: %v", err)
			return
		}
		choice := req.Choice
		choice.Deal, choice.Public = string(req.Deal), req.Public
		fill, err := req.fillers(r.Context(), deps, &choice)
		if err != nil {
			writeRaceError(w, err)
			return
		}
		opts, err := choice.Options()
		if err != nil {
			writeRaceError(w, err)
			return
		}
		if len(fill) >= opts.Seats {
			writeError(w, http.StatusBadRequest, race.CodeBadOptions, "computers and ghosts may take at most %d of the race's %d seats: one at least is for a person", opts.Seats-1, opts.Seats)
			return
		}
		opts.SpectatorDelay, opts.Grace = deps.SpectatorDelay, deps.Grace
		rc, err := deps.Races.Create(opts)
		if err != nil {
			if code := race.ErrorCode(err); code != race.CodeDraining && code != race.CodeBadOptions {
				log.Error().Err(err).Msg("race not created over http")
			}
			writeRaceError(w, err)
			return
		}
		for _, f := range fill {
			if err := f.seat(rc); err != nil {
				rc.Abort(race.ReasonLeft) // nobody was given it
				if !race.IsRefusal(err) || race.ErrorCode(err) == race.CodeInternal {
					log.Error().Err(err).Str("race", rc.ID()).Msg("race not created over http: a computer or ghost could not take its seat")
				}
				writeRaceError(w, err)
				return
			}
		}
		scheme := "ws"
		if r.TLS != nil {
			scheme = "wss"
		}
		resp := createRaceResponse{
			Race:       rc.ID(),
			Invite:     fmt.Sprintf("%s://%s/?race=%s", httpScheme(r), r.Host, rc.ID()),
			Websocket:  fmt.Sprintf("%s://%s/ws", scheme, r.Host),
			Commitment: rc.Commitment(),
		}
		if opts.DealNamed {
			resp.Deal = strconv.FormatUint(opts.Deal, 10)
		}
		log.Info().Str("race", rc.ID()).Msg("race created over http")
		writeJSON(w, http.StatusCreated, resp)
	}
}

func httpScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

func handleGetRace(log zerolog.Logger, races *race.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if info, ok := raceInfo(w, r, log, races); ok {
			writeJSON(w, http.StatusOK, info)
		}
	}
}

// raceInfo reads the record of the race named by the request's {id}; on
// failure it has written the error reply and reports false.
func raceInfo(w http.ResponseWriter, r *http.Request, log zerolog.Logger, races *race.Service) (race.Info, bool) {
	rc, err := races.Open(r.Context(), r.PathValue("id"))
	if err != nil {
		writeRaceError(w, err)
		return race.Info{}, false
	}
	info, err := rc.Info(r.Context())
	if err != nil {
		log.Error().Err(err).Str("race", rc.ID()).Msg("race info")
		writeRaceError(w, err)
		return race.Info{}, false
	}
	return info, true
}

// apiError is the body of every failed API request.
type apiError struct {
	Error struct {
		Code    race.Code `json:"code"`
		Message string    `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code race.Code, format string, args ...any) {
	var e apiError
	e.Error.Code, e.Error.Message = code, fmt.Sprintf(format, args...)
	writeJSON(w, status, e)
}

// writeRaceError maps a race error code to an HTTP status.
func writeRaceError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	code := race.ErrorCode(err)
	switch code {
	case race.CodeNoSuchRace, lobby.CodeNoSuchPlayer, lobby.CodeNoSuchGhost, lobby.CodeNoSuchArena:
		status = http.StatusNotFound
	case lobby.CodeGhostExpired:
		status = http.StatusGone
	case lobby.CodeNotRevealed:
		status = http.StatusForbidden
	case lobby.CodeNoDaily:
		status = http.StatusNotFound
	case race.CodeBadOptions, lobby.CodeBadCursor, race.CodeBadGhost, CodeNoComputer:
		status = http.StatusBadRequest
	case lobby.CodeNoGame:
		status = http.StatusConflict
	case race.CodeDraining, race.CodeUnavailable:
		status = http.StatusServiceUnavailable
	case race.CodeRaceFull, race.CodeRaceOver:
		status = http.StatusConflict
	}
	msg := "the server failed"
	var re *race.Error
	if errors.As(err, &re) {
		msg = re.Message
	}
	writeError(w, status, code, "%s", msg)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
