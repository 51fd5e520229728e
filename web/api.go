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

	"github.com/go-chi/httprate"
	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/race"
)

// maxBodyBytes bounds an API request body: race options are a few hundred
// bytes.
const maxBodyBytes = 4 << 10

// Bounds on the options a client may ask for.
const (
	maxTimeLimit        = time.Hour              // longer races tie up memory for nothing
	minComputerPace     = 100 * time.Millisecond // faster is no game for a person
	defaultComputerPace = 2 * time.Second        // about a person's pace
)

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
	Variant string `json:"variant,omitempty"`
	// Deal names the deal (a decimal string or number); absent means a
	// secret random deal with a published commitment.
	Deal             json.Number `json:"deal,omitempty"`
	Public           bool        `json:"public,omitempty"`
	TimeLimitSeconds int         `json:"timeLimitSeconds,omitempty"`
	// BestOf makes a match of that many rounds (odd, 1 to 9).
	BestOf int `json:"bestOf,omitempty"`
	// Computer takes the second seat for a computer player.
	Computer *struct {
		Level  string `json:"level"`
		PaceMs int    `json:"paceMs,omitempty"`
		Seed   uint64 `json:"seed,omitempty"`
	} `json:"computer,omitempty"`
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
		opts := race.Options{
			Variant:        req.Variant,
			Public:         req.Public,
			SpectatorDelay: deps.SpectatorDelay,
			Grace:          deps.Grace,
			TimeLimit:      time.Duration(req.TimeLimitSeconds) * time.Second,
			BestOf:         req.BestOf,
		}
		if opts.TimeLimit < 0 || opts.TimeLimit > maxTimeLimit {
			writeError(w, http.StatusBadRequest, race.CodeBadOptions, "timeLimitSeconds must be from 1 to %d", int(maxTimeLimit.Seconds()))
			return
		}
		if req.Deal != "" {
			if req.Public {
				writeError(w, http.StatusBadRequest, race.CodeBadOptions, "a public race's deal is secret: only private races name one")
				return
			}
			n, err := strconv.ParseUint(req.Deal.String(), 10, 64)
			if err != nil {
				writeError(w, http.StatusBadRequest, race.CodeBadOptions, "deal %q is not a number from 0 to 18446744073709551615", req.Deal)
				return
			}
			opts.Deal, opts.DealNamed = n, true
		}
		var bot race.Computer
		pace := defaultComputerPace
		if c := req.Computer; c != nil {
			if deps.Computer == nil {
				writeError(w, http.StatusBadRequest, CodeNoComputer, "this server has no computer players")
				return
			}
			p, err := deps.Computer(c.Level, c.Seed)
			if err != nil {
				writeError(w, http.StatusBadRequest, race.CodeBadOptions, "computer: %v", err)
				return
			}
			if c.PaceMs > 0 {
				pace = max(time.Duration(c.PaceMs)*time.Millisecond, minComputerPace)
			}
			bot = race.Computer{Player: p, Level: c.Level, Seed: c.Seed, Pace: pace}
		}
		rc, err := deps.Races.Create(opts)
		if err != nil {
			writeRaceError(w, err)
			return
		}
		if bot.Player != nil {
			if _, err := rc.SeatComputer("computer", bot); err != nil {
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

// limitPerClient lets each client address (the connection's, not a
// forwarded header, which anyone can write) make n requests a minute to h;
// the rest get 429 rate-limited. n <= 0: no limit.
func limitPerClient(n int, h http.HandlerFunc) http.Handler {
	if n <= 0 {
		return h
	}
	return httprate.Limit(n, time.Minute,
		httprate.WithKeyFuncs(httprate.KeyByIP),
		httprate.WithLimitHandler(func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, http.StatusTooManyRequests, CodeRateLimited, "too many races made from your address; try again in a minute")
		}),
	)(h)
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
	case race.CodeNoSuchRace, lobby.CodeNoSuchPlayer:
		status = http.StatusNotFound
	case race.CodeBadOptions:
		status = http.StatusBadRequest
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
