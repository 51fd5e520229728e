// Package web serves the race over HTTP and websockets: the JSON API that
// makes and describes races, and the websocket protocol (PROTOCOL.md) that
// players and spectators speak. Every route is listed in routes.go.
package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/account"
	"sirtommy/race"
	"sirtommy/web/coach"
)

// SeatAuthorizer decides whether a websocket client may take a seat in a
// race, and under what name. playerToken is the signed player token the
// connection said hello with ("" if it did not). A non-empty seatToken is
// a seat reserved for this player: the connection resumes it rather than
// taking a free one. The lobby (lobby.Lobby) checks player tokens and the
// seats it reserved; OpenSeats lets anyone holding the race id in. A
// refusal that is a *race.Error keeps its code; any other is "forbidden".
type SeatAuthorizer interface {
	AuthorizeSeat(playerToken, raceID, name string) (displayName, seatToken string, err error)
}

// OpenSeats lets anyone with the race id take a free seat, under the name
// they give.
type OpenSeats struct{}

// AuthorizeSeat allows every request.
func (OpenSeats) AuthorizeSeat(_, _, name string) (string, string, error) {
	return name, "", nil
}

// ComputerFactory makes a computer player of a level (the engine bot's
// level names) with a seed: the race package's.
type ComputerFactory = race.ComputerFactory

// Limits bound what one connection may cost the server.
type Limits struct {
	// MsgRate and MsgBurst are each connection's message budget (a token
	// bucket): fast play is about 5 moves a second.
	MsgRate  rate.Limit
	MsgBurst int
	// FloodStrikes is how many messages in a row may be over budget before
	// the connection is closed with 1008.
	FloodStrikes int
	// SendQueue is how many outgoing messages may wait for a slow client
	// before it is dropped.
	SendQueue int
	// RacesPerMinute is how many races one client address may make over
	// the API (POST /api/races) in a minute; 0 or less: no limit. Each race
	// holds memory until it is played or expires.
	RacesPerMinute int
	// CeremoniesPerMinute is how many passkey ceremonies (keep, sign in,
	// recover, add a passkey) one client address may begin in a minute;
	// 0 or less: no limit. Each begun one is stored until it expires.
	CeremoniesPerMinute int
	// PracticePerMinute is how many tries of "find the better move" (POST
	// /api/races/{id}/practice) one client address may send in a minute,
	// answered or not; 0 or less: no limit. Each may cost a solve.
	PracticePerMinute int
}

// DefaultLimits suit people playing by hand: 20 messages a second with
// bursts of 40 is four times the fastest play; 20 refused messages in a row
// is a flood, not a burst; 64 queued messages are several seconds of a busy
// race; 30 races a minute is one every two seconds, more than a person
// makes; 30 ceremonies a minute are more than anyone signing in needs;
// 30 tries a minute are one every two seconds, more than a player thinking
// over a position makes.
func DefaultLimits() Limits {
	return Limits{MsgRate: 20, MsgBurst: 40, FloodStrikes: 20, SendQueue: 64, RacesPerMinute: 30, CeremoniesPerMinute: 30, PracticePerMinute: 30}
}

// Deps are the server's dependencies.
type Deps struct {
	Log   zerolog.Logger
	Races *race.Service
	// Lobby is the lobby: player identities, quick play, invites,
	// challenges, the race list and ratings. Nil serves races alone.
	Lobby *lobby.Lobby
	// Seats authorizes joins; nil means the Lobby if there is one, else
	// OpenSeats.
	Seats SeatAuthorizer
	// Computer makes computer players; nil means races against the
	// computer are refused.
	Computer ComputerFactory
	// AllowedOrigins are the browser origins ("https://example.com") that
	// may open websockets besides the server's own host.
	AllowedOrigins []string
	// SpectatorDelay is the delay of public races' spectator feed; Grace the
	// reconnect grace period (zero: race's default).
	SpectatorDelay time.Duration
	Grace          time.Duration
	// Limits are per-connection limits; the zero value means DefaultLimits().
	Limits Limits
	// Check, when set, is asked by /readyz whether the server's backing
	// services answer (Redis mode: a PING); an error makes it unready.
	Check func(ctx context.Context) error
	// Observer is told about handled moves, for metrics; nil: none.
	Observer Observer
	// SolveBudget bounds the solver behind GET /api/races/{id}/solution;
	// zero fields take solutionMaxNodes and solutionMaxConflicts. Tests
	// under the race detector set a small one, so that their answer does
	// not depend on how busy the machine is.
	SolveBudget engine.SolveOptions
	// Analyses keeps the finished analyses of GET /api/races/{id}/analysis
	// and the claims that make a fleet compute each once (Redis mode:
	// rediscoach); nil keeps them in this process.
	Analyses coach.Store
	// AnalysisBudget bounds each game's analysis; zero fields take the
	// coach's defaults (coach.PositionMaxNodes, …). Tests set a small one.
	AnalysisBudget engine.AnalyzeOptions
	// Instance names this instance in the analyses' claims ("": random).
	Instance string
	// Accounts keeps accounts with passkeys (accounts.go); nil: none, and
	// every player is a guest.
	Accounts *account.Service
	// Mistakes keeps the players' "My mistakes" (mistakes.go): durable
	// where the server has a database; nil keeps none (the practice still
	// judges tries).
	Mistakes lobby.Mistakes
}

// Stats count what the server did to protect itself.
type Stats struct {
	Conns       atomic.Int64 // websocket connections open now
	SlowDropped atomic.Int64 // clients dropped for a full send queue
	Flooded     atomic.Int64 // clients closed for flooding
	RateLimited atomic.Int64 // messages refused as over budget
	Solves      atomic.Int64 // deals solved for GET /api/races/{id}/solution (cached answers not counted)
	// Analyses counts the games analysed here for GET
	// /api/races/{id}/analysis, and AnalysisSolves the positions they
	// solved (each deal's start is the solution's, counted in Solves).
	Analyses       atomic.Int64
	AnalysisSolves atomic.Int64
	// PracticeSolves counts the positions solved to judge tries of POST
	// /api/races/{id}/practice (tries judged before are not counted).
	PracticeSolves atomic.Int64
}

// Server is the HTTP handler of the service.
type Server struct {
	deps     Deps
	log      zerolog.Logger
	handler  http.Handler
	upgrader websocket.Upgrader
	ready    atomic.Bool
	// Stats are the server's counters.
	Stats Stats

	connCtx    context.Context
	cancelConn context.CancelCauseFunc
	mu         sync.Mutex // guards closing and conns.Add against CloseConns
	closing    bool
	conns      sync.WaitGroup
	nextConn   atomic.Uint64

	solutions *solutions
	coach     *coach.Coach
	practice  *practiceJudge
}

// errShutdown closes websockets with 1001 (going away).
var errShutdown = errors.New("server shutting down")

// NewServer makes the service's handler; it reports ready at once.
func NewServer(deps Deps) *Server {
	if deps.Seats == nil {
		if deps.Lobby != nil {
			deps.Seats = deps.Lobby
		} else {
			deps.Seats = OpenSeats{}
		}
	}
	if deps.Limits == (Limits{}) {
		deps.Limits = DefaultLimits()
	}
	s := &Server{deps: deps, log: deps.Log}
	s.solutions = newSolutions(&s.Stats.Solves, deps.SolveBudget)
	s.coach = coach.New(coach.Deps{
		Log: deps.Log.With().Str("component", "coach").Logger(), Store: deps.Analyses,
		Solver: coachSolver{c: s.solutions, solved: &s.Stats}, Budget: deps.AnalysisBudget,
		Holder: deps.Instance, Analyses: &s.Stats.Analyses,
	})
	s.practice = newPracticeJudge(s.practiceSolver(deps.AnalysisBudget.Solve))
	s.connCtx, s.cancelConn = context.WithCancelCause(context.Background())
	s.upgrader = websocket.Upgrader{
		HandshakeTimeout: handshakeTimeout,
		// Client messages are small (maxMessageSize), so a small read
		// buffer does; the write buffer is lent from a pool only while a
		// message is written, so an idle connection holds none.
		ReadBufferSize:  512,
		WriteBufferSize: 4096,
		WriteBufferPool: &sync.Pool{},
		CheckOrigin:     checkOrigin(deps.AllowedOrigins),
	}
	mux := http.NewServeMux()
	addRoutes(mux, s)
	s.handler = mux
	s.ready.Store(true)
	return s
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// SetReady sets what /readyz answers; the server turns it off on drain.
func (s *Server) SetReady(ok bool) { s.ready.Store(ok) }

// CloseConns closes every websocket with 1001 (going away), stops the
// analyses under way, and waits for their goroutines until ctx is done.
func (s *Server) CloseConns(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.cancelConn(errShutdown)
	done := make(chan struct{})
	go func() { s.conns.Wait(); s.coach.Close(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkOrigin allows requests without an Origin (not from a browser), from
// the server's own host, and from the allowlist; nothing else.
func checkOrigin(allowed []string) func(r *http.Request) bool {
	ok := make(map[string]bool, len(allowed))
	for _, o := range allowed {
		ok[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	return func(r *http.Request) bool {
		origin := r.Header.Get("Origin")
		if origin == "" {
			return true
		}
		u, err := url.Parse(origin)
		if err != nil {
			return false
		}
		if strings.EqualFold(u.Host, r.Host) {
			return true
		}
		return ok[strings.ToLower(origin)]
	}
}
