// Package lobby is where players meet before a race: identities without
// sign-up (signed tokens), quick play with a rating-aware matchmaker,
// private invites, open challenges, the live list of races to watch,
// presence counts, and Glicko-2 ratings with a leaderboard and histories.
// It makes races with package race; the web package speaks for it.
//
// What instances share (the queue, challenges, invites, who is racing,
// the race list) lives behind the interfaces of shared.go: in memory for
// one server, in Redis (redislobby) for several. The Lobby itself keeps
// only its own connections' bookkeeping: which of its sessions queued or
// opened a challenge, so that a matched event, made here or carried by
// the Courier from another instance, reaches the right one.
//
// Locking: the Lobby's mutex guards its own maps. It is never held while
// calling into a race or a shared store, so that a race's end (which runs
// with the race's lock held) may take it. The live race list is read on
// the heartbeat, outside the lock, and cached.
package lobby

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby/glicko2"
	"sirtommy/race"
)

// Defaults for Config fields left zero.
const (
	// DefaultComputerOfferAfter is how long a queued player waits before
	// being offered a race against the computer: a little less than the
	// matchmaker's 30 s to "any opponent", which a quiet server will not
	// fill either.
	DefaultComputerOfferAfter = 20 * time.Second
	// DefaultComputerPace is the computer's time per move: about a person's.
	DefaultComputerPace = 2 * time.Second
	// DefaultComputerLevel is the computer's level (the engine bot's names).
	DefaultComputerLevel = "easy"
	// DefaultInviteTTL is how long an invite code works: time to send it to
	// a friend and for them to open it, not long enough to guess one.
	DefaultInviteTTL = 30 * time.Minute
	// DefaultTick is the lobby's heartbeat: matchmaking passes (the gap
	// widens with time), computer offers, expired invites, and the lobby
	// message with presence and the live races. Presence changes wait for
	// it, so that a thousand players arriving make one message each, not a
	// thousand; challenges are published at once.
	DefaultTick = time.Second
	// DefaultMaxListed bounds the races listed in a lobby message: a
	// screenful; most recent first.
	DefaultMaxListed = 50
	// DefaultFlushTimeout is how long Close waits for ended races'
	// ratings to be recorded while the stores fail: a short outage's
	// worth, within an orchestrator's grace after a drain.
	DefaultFlushTimeout = 10 * time.Second
)

// Config tunes the lobby; zero fields take the defaults.
type Config struct {
	// Match tunes the in-memory queue; a shared queue (Deps.Shared) is
	// made with its own.
	Match              MatchConfig
	ComputerOfferAfter time.Duration
	ComputerPace       time.Duration
	ComputerLevel      string
	InviteTTL          time.Duration
	Tick               time.Duration
	MaxListed          int
	// Tau is Glicko-2's system constant (default glicko2.DefaultTau).
	Tau float64
	// SpectatorDelay and Grace are passed to the races the lobby makes
	// (zero: race's defaults; public races delay spectators).
	SpectatorDelay time.Duration
	Grace          time.Duration
	// GhostTTL is how long a ghost challenge can be raced (default
	// DefaultGhostTTL).
	GhostTTL time.Duration
	// FlushTimeout bounds how long Close waits for the work of races that
	// ended to reach failing stores (default DefaultFlushTimeout).
	FlushTimeout time.Duration
}

func (c *Config) fill() {
	c.Match.fill()
	if c.ComputerOfferAfter <= 0 {
		c.ComputerOfferAfter = DefaultComputerOfferAfter
	}
	if c.ComputerPace <= 0 {
		c.ComputerPace = DefaultComputerPace
	}
	if c.ComputerLevel == "" {
		c.ComputerLevel = DefaultComputerLevel
	}
	if c.InviteTTL <= 0 {
		c.InviteTTL = DefaultInviteTTL
	}
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.MaxListed <= 0 {
		c.MaxListed = DefaultMaxListed
	}
	if c.Tau <= 0 {
		c.Tau = glicko2.DefaultTau
	}
	if c.FlushTimeout <= 0 {
		c.FlushTimeout = DefaultFlushTimeout
	}
}

// ComputerFactory makes a computer player of a level (the engine bot's
// level names) with a seed: the race package's.
type ComputerFactory = race.ComputerFactory

// Deps are what the lobby needs from the outside.
type Deps struct {
	Clock   race.Clock
	Log     zerolog.Logger
	Races   *race.Service
	Tokens  *Tokens
	Ratings Ratings
	// Computer makes computer players; nil means no races against the
	// computer (and no offers).
	Computer ComputerFactory
	// Presence shares presence counts with the other instances on the same
	// store; nil (memory mode) counts this instance's players only.
	Presence PresenceShare
	// Shared is where the queue, challenges, invites, seats and race list
	// live; zero fields are this instance's own, in memory.
	Shared Shared
	// DailySecret derives the day's deals (the server's --secret: every
	// instance with the same one deals the same); nil: no day's deal.
	DailySecret []byte
}

// PresenceShare shares presence counts between instances.
type PresenceShare interface {
	// Share stores this instance's counts, to be seen until a few
	// heartbeats have passed without a new Share, and returns the sum of
	// the other live instances' counts.
	Share(ctx context.Context, own Presence) (others Presence, err error)
}

// RaceOptions are what a player chooses for a private race or a challenge.
type RaceOptions struct {
	Variant string `json:"variant,omitempty"`
	// TimeLimitSeconds and BestOf are absent (nil) for the defaults; a
	// present value must be in range (race.Choice), 0 included.
	TimeLimitSeconds *int `json:"timeLimitSeconds,omitempty"`
	BestOf           *int `json:"bestOf,omitempty"`
	// Deal names the deal (private races only; decimal); empty means a
	// secret deal.
	Deal string `json:"deal,omitempty"`
	// Rated asks for a rated race (private races are unrated unless asked).
	Rated bool `json:"rated,omitempty"`
	// Grade draws the secret deal among deals of a grade ("easy",
	// "medium", "hard"; race.Choice); empty is any deal.
	Grade string `json:"grade,omitempty"`
}

// check validates the options (race.Choice: the one check of every
// client's options), writes the defaults of absent ones out, and returns
// the race options. allowDeal is false for public races (challenges),
// which may not name their deal.
func (o *RaceOptions) check(allowDeal bool) (race.Options, error) {
	c := race.Choice{Variant: o.Variant, TimeLimitSeconds: o.TimeLimitSeconds, BestOf: o.BestOf, Deal: o.Deal, Public: !allowDeal, Grade: o.Grade}
	opts, err := c.Options()
	if err != nil {
		return race.Options{}, err
	}
	opts.Public = false // the lobby decides who sees it
	opts.Unrated = !o.Rated
	limit, bestOf := int(opts.TimeLimit/time.Second), opts.BestOf
	o.Variant, o.TimeLimitSeconds, o.BestOf, o.Grade = opts.Variant, &limit, &bestOf, opts.Grade
	return opts, nil
}

// Invite is a private race waiting for the friend who has its code.
type Invite struct {
	Code    string      `json:"code"`
	Player  string      `json:"player"`
	Name    string      `json:"name"`
	Options RaceOptions `json:"options"`
	Expires time.Time   `json:"expiresAt"`
}

// storeTimeout bounds one call to the shared stores: they answer in well
// under a millisecond when they are up.
const storeTimeout = 2 * time.Second

// claimKeep is how long a pairing's claim on its players lasts if the
// instance making the race dies before it is made.
const claimKeep = time.Minute

// queued is a player in a quick-play queue through one of this
// instance's sessions.
type queued struct {
	s       *Session
	variant string
	grade   string // the deal's grade asked for, or ""
	since   time.Time
	offered bool // offered the computer already
}

// Lobby is the meeting place. Its methods are safe for concurrent use.
type Lobby struct {
	deps Deps
	cfg  Config
	log  zerolog.Logger
	sh   Shared
	// ghosts is sh.Ghosts, dailies sh.Dailies; dailyKey derives the
	// day's deals (nil: none).
	ghosts   Ghosts
	dailies  Dailies
	dailyKey []byte

	mu         sync.Mutex
	closed     bool
	tick       race.Timer
	sessions   map[*Session]struct{}
	online     map[string]int      // player -> open sessions
	queuedBy   map[string]*queued  // player -> this instance's session that queued
	challenges map[string]*Session // this instance's open challenges: id -> session that opened it
	last       []byte              // the last lobby message sent, to skip repeats
	listed     []RaceSummary       // live public races, as of the last heartbeat
	racing     int                 // players seated in live races here, as of the last heartbeat
	others     Presence            // the other instances' counts, as of the last heartbeat (Deps.Presence)

	listenMu  sync.Mutex      // orders Courier.Listen and Unlisten per player
	listening map[string]bool // players the courier listens for (under listenMu)

	rateMu sync.Mutex // serializes rating updates (read, compute, save)
	ends   *endQueue  // what follows the races' ends, in order
}

// New makes a lobby and starts its heartbeat on the clock; Close stops it.
func New(cfg Config, deps Deps) *Lobby {
	cfg.fill()
	sh, mem := deps.Shared, NewMemoryShared(cfg.Match, deps.Clock)
	if sh.Queue == nil {
		sh.Queue = mem.Queue
	}
	if sh.Seats == nil {
		sh.Seats = mem.Seats // tied to mem.Queue, as the interfaces ask
	}
	if sh.Challenges == nil {
		sh.Challenges = mem.Challenges
	}
	if sh.Invites == nil {
		sh.Invites = mem.Invites
	}
	if sh.Ghosts == nil {
		sh.Ghosts = NewMemoryGhosts()
	}
	if sh.Dailies == nil {
		sh.Dailies = NewMemoryDailies()
	}
	l := &Lobby{
		deps: deps, cfg: cfg, log: deps.Log.With().Str("component", "lobby").Logger(), sh: sh,
		sessions:   make(map[*Session]struct{}),
		online:     make(map[string]int),
		queuedBy:   make(map[string]*queued),
		challenges: make(map[string]*Session),
		listening:  make(map[string]bool),
		listed:     []RaceSummary{},
		ghosts:     sh.Ghosts,
		dailies:    sh.Dailies,
		dailyKey:   dailyKeyOf(deps.DailySecret),
	}
	if sh.Courier != nil {
		sh.Courier.Start(func(n Notice) { l.receive(n, false) }, l.Publish)
	}
	// Under the lock: a short tick may fire, and reschedule itself, before
	// AfterFunc returns.
	l.mu.Lock()
	l.tick = deps.Clock.AfterFunc(cfg.Tick, l.heartbeat)
	l.mu.Unlock()
	l.ends = newEndQueue()
	go l.runEnds()
	deps.Races.OnEnd(l.ended)
	return l
}

// Config is the lobby's configuration, defaults filled in.
func (l *Lobby) Config() Config { return l.cfg }

// Close stops the heartbeat and finishes the work of the races that
// ended (frees their players, records their ratings), waiting up to
// Config.FlushTimeout for the stores to take it.
func (l *Lobby) Close() {
	l.mu.Lock()
	l.closed = true
	if l.tick != nil {
		l.tick.Stop()
	}
	l.mu.Unlock()
	l.flushEnds(l.cfg.FlushTimeout)
}

// opCtx bounds a call to the shared stores.
func opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), storeTimeout)
}

// storeFailed is the refusal for a read of the ratings store (what) that
// failed: unavailable, as every storage failure is, unless the store
// refused with a code of its own.
func storeFailed(what string, err error) error {
	if race.IsRefusal(err) {
		return err
	}
	return &race.Error{Code: race.CodeUnavailable, Message: what + " cannot be read now; try again shortly", Err: err}
}

// unavailable is the refusal for a failure of the shared stores: the
// request changed nothing and may be sent again.
func unavailable(err error) error {
	return &race.Error{Code: race.CodeUnavailable, Message: "the lobby is unavailable; try again shortly", Err: fmt.Errorf("lobby: %w", err)}
}

func (l *Lobby) heartbeat() {
	l.matchNow()
	l.offerComputer()
	l.keepChallenges()
	l.refreshRaces()
	l.sharePresence()
	l.Publish()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.tick = l.deps.Clock.AfterFunc(l.cfg.Tick, l.heartbeat)
	}
}

// keepChallenges tells the shared store that this instance's challenges
// are still open (their sessions are here).
func (l *Lobby) keepChallenges() {
	l.mu.Lock()
	ids := make([]string, 0, len(l.challenges))
	for id := range l.challenges {
		ids = append(ids, id)
	}
	l.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := opCtx()
	defer cancel()
	if err := l.sh.Challenges.Keep(ctx, ids); err != nil {
		l.log.Warn().Err(err).Msg("challenges not kept")
	}
}

// Session is one connection in the lobby: a player (one player may have
// several sessions, one per tab) and where its events go.
type Session struct {
	l   *Lobby
	sub race.Subscriber
	who Identity // guarded by l.mu
}

// Welcome is the reply to Enter and Rename: the player's identity and a
// fresh token for it.
type Welcome struct {
	Identity
	Token string `json:"token"`
}

// Enter lets a connection into the lobby. With a token, it is that
// player's (refused with CodeInvalidToken or CodeExpiredToken); without,
// a new player is made, named name (checked) or a guest name. A name with
// a token renames the player. The session receives lobby events on sub
// until Leave (Refresh sends it the lobby as it is); the returned Welcome
// carries a renewed token.
func (l *Lobby) Enter(token, name string, sub race.Subscriber) (*Session, Welcome, error) {
	var who Identity
	if token != "" {
		w, err := l.deps.Tokens.Verify(token)
		if err != nil {
			return nil, Welcome{}, err
		}
		who = w
	} else {
		who.ID = NewPlayerID()
		who.Name = "guest-" + who.ID[len(who.ID)-4:]
	}
	if name != "" {
		n, err := CheckName(name)
		if err != nil {
			return nil, Welcome{}, err
		}
		who.Name = n
	}
	tok, who := l.deps.Tokens.Issue(who.ID, who.Name)
	s := &Session{l: l, sub: sub, who: who}
	l.mu.Lock()
	l.sessions[s] = struct{}{}
	l.online[who.ID]++
	l.mu.Unlock()
	l.syncListen(who.ID)
	l.log.Debug().Str("player", who.ID).Msg("entered the lobby")
	return s, Welcome{Identity: who, Token: tok}, nil
}

// VerifyToken checks a player token as Enter does, without entering: the
// web layer asks whose it is before admitting it (an account's player is
// admitted only with its session).
func (l *Lobby) VerifyToken(token string) (Identity, error) { return l.deps.Tokens.Verify(token) }

// IssueToken signs a fresh token for player id named name, for a player
// who proved who they are otherwise (an account's passkey or API token).
func (l *Lobby) IssueToken(id, name string) Welcome {
	tok, who := l.deps.Tokens.Issue(id, name)
	return Welcome{Identity: who, Token: tok}
}

// syncListen makes the courier listen for player exactly while this
// instance has a session of theirs, so that other instances reach them.
func (l *Lobby) syncListen(player string) {
	c := l.sh.Courier
	if c == nil {
		return
	}
	l.listenMu.Lock()
	defer l.listenMu.Unlock()
	l.mu.Lock()
	want := l.online[player] > 0
	l.mu.Unlock()
	if want == l.listening[player] {
		return
	}
	ctx, cancel := opCtx()
	defer cancel()
	var err error
	if want {
		err = c.Listen(ctx, player)
	} else {
		err = c.Unlisten(ctx, player)
	}
	if err != nil {
		l.log.Warn().Err(err).Str("player", player).Bool("listen", want).Msg("courier")
		return
	}
	if want {
		l.listening[player] = true
	} else {
		delete(l.listening, player)
	}
}

// Snapshot is the lobby as it is now, for a connection that asked for it
// (hello, the lobby message): unlike the updates Publish sends, it is the
// reply to a request, so it is sent even while the connection holds the
// updates back.
func (s *Session) Snapshot() *LobbyEvent { return s.l.snapshot() }

// Player is the session's identity.
func (s *Session) Player() Identity {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	return s.who
}

// Rename changes the player's display name (checked) and returns a new
// token carrying it; nothing changes on a refusal.
func (s *Session) Rename(name string) (Welcome, error) {
	n, err := CheckName(name)
	if err != nil {
		return Welcome{}, err
	}
	s.l.mu.Lock()
	tok, who := s.l.deps.Tokens.Issue(s.who.ID, n)
	s.who = who
	s.l.mu.Unlock()
	return Welcome{Identity: who, Token: tok}, nil
}

// Leave takes the session out: out of its queue and its open challenge at
// once. Its player's invites stay until they expire.
func (s *Session) Leave() {
	l := s.l
	l.mu.Lock()
	if _, ok := l.sessions[s]; !ok {
		l.mu.Unlock()
		return
	}
	delete(l.sessions, s)
	if l.online[s.who.ID]--; l.online[s.who.ID] <= 0 {
		delete(l.online, s.who.ID)
	}
	l.mu.Unlock()
	l.syncListen(s.who.ID)
	if l.dropWaiting(s) {
		l.challengesChanged()
	}
}

// dropWaiting takes s out of the queue and withdraws its challenge; it
// reports whether it withdrew one.
func (l *Lobby) dropWaiting(s *Session) (withdrew bool) {
	id := s.Player().ID
	l.mu.Lock()
	q := l.queuedBy[id]
	if q != nil && q.s == s {
		delete(l.queuedBy, id)
	} else {
		q = nil
	}
	var open []string
	for cid, cs := range l.challenges {
		if cs == s {
			delete(l.challenges, cid)
			open = append(open, cid)
		}
	}
	l.mu.Unlock()
	ctx, cancel := opCtx()
	defer cancel()
	if q != nil {
		if _, err := l.sh.Queue.Leave(ctx, id); err != nil {
			l.log.Warn().Err(err).Str("player", id).Msg("not unqueued")
		}
	}
	for _, cid := range open {
		_, ok, err := l.sh.Challenges.Take(ctx, cid)
		if err != nil {
			l.log.Warn().Err(err).Str("challenge", cid).Msg("not withdrawn")
		}
		withdrew = withdrew || ok
	}
	return withdrew
}

// waiting refuses a player who is queued, has a challenge open, or is in
// a lobby race not over.
func (l *Lobby) waiting(ctx context.Context, player string) error {
	if err := l.checkRacing(ctx, player); err != nil {
		return err
	}
	v, ok, err := l.sh.Queue.Queued(ctx, player)
	if err != nil {
		return unavailable(err)
	}
	if ok {
		return race.Errorf(CodeAlreadyQueued, "you are already in the %s queue", v)
	}
	id, ok, err := l.sh.Challenges.Of(ctx, player)
	if err != nil {
		return unavailable(err)
	}
	if ok {
		return race.Errorf(CodeAlreadyQueued, "you already have challenge %s open", id)
	}
	return nil
}

// checkRacing refuses a player who is in a lobby race not over: nobody plays
// two at once.
func (l *Lobby) checkRacing(ctx context.Context, player string) error {
	id, racing, err := l.settle(ctx, player)
	if err != nil {
		return unavailable(err)
	}
	if racing {
		return inRace(id)
	}
	return nil
}

// over reports whether race id is over, wherever it runs.
func (l *Lobby) over(ctx context.Context, id string) bool {
	h, err := l.deps.Races.Open(ctx, id)
	if err != nil {
		return race.ErrorCode(err) == race.CodeNoSuchRace
	}
	return h.State().Over()
}

// inRace is the refusal for a player in race id ("" while it is made).
func inRace(id string) error {
	if id == "" {
		return race.Errorf(CodeInRace, "you were just paired: your race is being made")
	}
	return race.Errorf(CodeInRace, "you are in race %s until it is over", id)
}

func (l *Lobby) rating(variant, player string) float64 {
	st, err := l.deps.Ratings.Standing(context.Background(), variant, player)
	if err != nil {
		l.log.Warn().Err(err).Str("player", player).Msg("rating unavailable; matching as a new player")
		return glicko2.DefaultRating
	}
	return st.Rating.Rating
}

// Queue puts the player in a variant's quick-play queue (empty: the
// default variant) and pairs at once if it can. A player may wait in one
// queue or with one challenge at a time (CodeAlreadyQueued).
func (s *Session) Queue(variant string) (string, error) { return s.QueueGrade(variant, "") }

// QueueGrade is Queue for races on a secret deal of a grade ("easy",
// "medium", "hard"; "" is any deal, as Queue): players are paired only
// with players who asked for the same variant and grade.
func (s *Session) QueueGrade(variant, grade string) (string, error) {
	if err := (race.Choice{Variant: variant, Grade: grade}).Validate(); err != nil {
		return "", err
	}
	rules, _ := engine.Variant(variant) // validated
	if grade != "" {
		g, _ := engine.ParseGrade(grade) // validated
		grade = g.String()
	}
	key := queueKey(rules.Name, grade)
	l := s.l
	who := s.Player()
	rating := l.rating(rules.Name, who.ID)
	ctx, cancel := opCtx()
	defer cancel()
	if err := l.waiting(ctx, who.ID); err != nil {
		return "", err
	}
	// This session is recorded before the shared queue has the player, so
	// that a pairing made at once by another instance finds it. The shared
	// queue does not have them (waiting checked): an entry left here is
	// stale, and replaced.
	q := &queued{s: s, variant: rules.Name, grade: grade, since: l.deps.Clock.Now()}
	l.mu.Lock()
	prev := l.queuedBy[who.ID]
	l.queuedBy[who.ID] = q
	l.mu.Unlock()
	// undo puts the entry back as it was, unless a matched event took it
	// meanwhile (or another tab queued): prev may be the entry a pairing
	// in flight is meant for.
	undo := func() {
		l.mu.Lock()
		if l.queuedBy[who.ID] == q {
			if prev != nil {
				l.queuedBy[who.ID] = prev
			} else {
				delete(l.queuedBy, who.ID)
			}
		}
		l.mu.Unlock()
	}
	if err := l.sh.Queue.Join(ctx, Seeker{Player: who.ID, Name: who.Name, Variant: key, Rating: rating}); err != nil {
		undo()
		if !race.IsRefusal(err) { // a failure of the shared stores
			err = unavailable(err)
		}
		return "", err
	}
	l.log.Debug().Str("player", who.ID).Str("variant", rules.Name).Float64("rating", rating).Msg("queued")
	l.matchNow()
	return rules.Name, nil
}

// Unqueue takes the player out of their queue (CodeNotQueued if not in
// one, or if they were just paired: their matched event is on its way).
func (s *Session) Unqueue() error {
	l := s.l
	id := s.Player().ID
	l.mu.Lock()
	q := l.queuedBy[id]
	l.mu.Unlock()
	if q == nil {
		return race.Errorf(CodeNotQueued, "you are not in a queue")
	}
	ctx, cancel := opCtx()
	defer cancel()
	left, err := l.sh.Queue.Leave(ctx, id)
	if err != nil {
		return unavailable(err)
	}
	if !left {
		// Paired: the entry stays, for the matched event to find.
		return race.Errorf(CodeNotQueued, "you are not in a queue: you were just paired")
	}
	l.mu.Lock()
	if l.queuedBy[id] == q {
		delete(l.queuedBy, id)
	}
	l.mu.Unlock()
	return nil
}

// dest is where a player's matched event goes: a session here, or a
// notice to whichever instance holds the session meant.
type dest struct {
	s   *Session
	to  string // ToQueued, ToChallenger or ToAll
	ref string
}

type pairing struct {
	opts    race.Options
	via     string
	code    string
	players [2]PlayerRef
	dests   [2]dest
	ratings [2]float64
	bot     race.Computer
	ghost   *race.Ghost // the recording a Ghost player plays
	claimed bool        // the players are claimed in Seats already
}

// humans are the ids of the pairing's players who are not the computer.
func (p *pairing) humans() []string {
	var out []string
	for _, pl := range p.players {
		if pl.ID != "" && !pl.Computer {
			out = append(out, pl.ID)
		}
	}
	return out
}

// matchNow runs a matchmaking pass and starts the races it pairs.
func (l *Lobby) matchNow() {
	ctx, cancel := opCtx()
	pairs, err := l.sh.Queue.Pair(ctx)
	cancel()
	if err != nil {
		l.log.Warn().Err(err).Msg("matchmaking pass failed")
	}
	for _, p := range pairs {
		variant, grade := splitQueueKey(p.Variant)
		err := l.start(pairing{
			opts:    race.Options{Variant: variant, Grade: grade, Public: true},
			via:     "quick",
			players: [2]PlayerRef{{ID: p.A.Player, Name: p.A.Name}, {ID: p.B.Player, Name: p.B.Name}},
			dests:   [2]dest{{to: ToQueued}, {to: ToQueued}},
			ratings: [2]float64{p.A.Rating, p.B.Rating},
		})
		if err == nil {
			continue
		}
		// Nobody was told: back to the queue, but for a player racing
		// already (paired elsewhere meanwhile).
		var busy *busyError
		if !errors.As(err, &busy) {
			busy = &busyError{} // logged by start
			l.log.Info().Str("p0", p.A.Player).Str("p1", p.B.Player).Msg("their race not made: they queue again")
		}
		for _, sk := range [2]Seeker{p.A, p.B} {
			if sk.Player != busy.player {
				sk.Variant = p.Variant
				rctx, rcancel := opCtx()
				if err := l.sh.Queue.Join(rctx, sk); err != nil {
					l.log.Warn().Err(err).Str("player", sk.Player).Msg("not queued again")
				}
				rcancel()
			}
		}
	}
}

// busyError is a pairing refused because a player is racing already.
type busyError struct{ player, race string }

func (e *busyError) Error() string { return fmt.Sprintf("lobby: %s is in race %q", e.player, e.race) }

// keepFor is how long a race's seats and its players' marks are kept
// when its end is never seen (its instance died): longer than any race
// with these options lasts.
func (l *Lobby) keepFor(o race.Options) time.Duration {
	limit, bestOf, grace := o.TimeLimit, o.BestOf, l.cfg.Grace
	if limit <= 0 {
		limit = race.DefaultTimeLimit
	}
	if bestOf <= 0 {
		bestOf = 1
	}
	if grace <= 0 {
		grace = race.DefaultGrace
	}
	return time.Duration(bestOf)*(limit+time.Minute) + 2*grace + 10*time.Minute
}

// start claims the pairing's players (unless claimed already), makes its
// race, reserves both seats and tells both players, one right after the
// other. On an error nothing is left claimed.
func (l *Lobby) start(p pairing) (err error) {
	ctx, cancel := opCtx()
	defer cancel()
	ids := p.humans()
	defer func() {
		// A failure is logged as one on every path that makes a race
		// (quick play, the computer, invites, challenges, ghosts, the
		// day's deal); a refusal of the request (a recording that does
		// not replay, a player racing already) is not.
		var busy *busyError
		if err != nil && !errors.As(err, &busy) && (storeFailure(err) || race.ErrorCode(err) == race.CodeInternal) {
			l.log.Error().Err(err).Str("via", p.via).Strs("players", ids).Msg("race not made")
		}
	}()
	if !p.claimed {
		busy, err := l.sh.Seats.Claim(ctx, ids, claimKeep)
		if err != nil {
			return unavailable(err)
		}
		if busy != "" {
			id, _, _ := l.sh.Seats.Racing(ctx, busy)
			return &busyError{player: busy, race: id}
		}
	}
	err = l.startRace(ctx, p)
	if err != nil {
		if ferr := l.sh.Seats.Free(ctx, "", ids); ferr != nil {
			l.log.Warn().Err(ferr).Msg("claim not freed; it lapses")
		}
	}
	if p.via == "challenge" {
		l.challengesChanged() // the challenge is no longer open
	}
	return err
}

func (l *Lobby) startRace(ctx context.Context, p pairing) error {
	p.opts.SpectatorDelay, p.opts.Grace = l.cfg.SpectatorDelay, l.cfg.Grace
	variant := p.opts.Variant
	rc, err := l.deps.Races.Create(p.opts)
	if err != nil {
		return fmt.Errorf("lobby: create race: %w", err)
	}
	for s := range 2 {
		if p.players[s].Computer {
			if _, err := rc.SeatComputer(p.players[s].Name, p.bot); err != nil {
				rc.Abort(race.ReasonLeft)
				return fmt.Errorf("lobby: seat computer: %w", err)
			}
			continue
		}
		if p.players[s].Solo {
			continue // the race's empty seat
		}
		if p.players[s].Ghost {
			if _, err := rc.SeatGhost(p.players[s].Name, *p.ghost); err != nil {
				rc.Abort(race.ReasonLeft)
				if race.IsRefusal(err) {
					return err // a recording that does not replay: bad-ghost
				}
				return fmt.Errorf("lobby: seat ghost: %w", err)
			}
			continue
		}
		if _, err := rc.Reserve(race.Reservation{Name: p.players[s].Name, Player: p.players[s].ID, Rating: p.ratings[s]}); err != nil {
			rc.Abort(race.ReasonLeft)
			return fmt.Errorf("lobby: reserve seat: %w", err)
		}
	}
	// The players' marks name the race before anyone is told of it.
	if err := l.sh.Seats.Assign(ctx, rc.ID(), p.humans(), l.keepFor(p.opts)); err != nil {
		rc.Abort(race.ReasonLeft)
		return unavailable(err)
	}
	now := l.deps.Clock.Now()
	rated := !p.opts.Unrated && !p.players[0].Computer && !p.players[1].Computer
	for s := range 2 {
		if p.players[s].Computer || p.players[s].Ghost || p.players[s].Solo {
			continue
		}
		ev := &MatchedEvent{Race: rc.ID(), Seat: s, Variant: variant, Via: p.via, Rated: rated,
			Opponent: p.players[1-s], At: now}
		if p.via == "invite" {
			ev.Invite = p.code
		} else if p.via == "challenge" {
			ev.Challenge = p.code
		} else if p.via == "ghost" {
			ev.Ghost = p.code
		}
		if !p.players[1-s].Computer && !p.players[1-s].Ghost && p.ratings[1-s] != 0 {
			r := p.ratings[1-s]
			ev.Rating = &r
		}
		d := p.dests[s]
		if d.s != nil {
			d.s.sub.Deliver(ev)
			continue
		}
		l.tell(Notice{Player: p.players[s].ID, To: d.to, Ref: d.ref, Matched: ev})
	}
	l.log.Info().Str("race", rc.ID()).Str("via", p.via).Str("p0", p.players[0].ID).Str("p1", p.players[1].ID).Msg("paired")
	return nil
}

// tell delivers a notice to the player's sessions here, and through the
// courier to the instance that holds them when they are not here (to
// every instance, for ToAll).
func (l *Lobby) tell(n Notice) {
	if l.receive(n, l.sh.Courier == nil) && n.To != ToAll {
		return
	}
	c := l.sh.Courier
	if c == nil {
		return
	}
	ctx, cancel := opCtx()
	defer cancel()
	reached, err := c.Send(ctx, n)
	if err != nil || !reached {
		l.log.Warn().Err(err).Str("player", n.Player).Str("to", n.To).Msg("matched event reached nobody")
	}
}

// receive delivers a notice to the sessions here it is meant for and
// reports whether there were any. The player is racing now: this
// instance's record of their queuing goes. When every session is here
// (alone: no courier) and the one that queued is not (it queued again in
// the moment its pairing was made), all their sessions get it.
func (l *Lobby) receive(n Notice, alone bool) bool {
	if n.Ghost != nil {
		l.mu.Lock()
		subs := l.subsOfLocked(n.Player)
		l.mu.Unlock()
		for _, sub := range subs {
			sub.Deliver(n.Ghost)
		}
		return len(subs) > 0
	}
	if n.Matched == nil {
		return false
	}
	var subs []race.Subscriber
	l.mu.Lock()
	q := l.queuedBy[n.Player]
	delete(l.queuedBy, n.Player)
	switch n.To {
	case ToQueued:
		if q != nil {
			subs = append(subs, q.s.sub)
		} else if alone {
			subs = l.subsOfLocked(n.Player)
		}
	case ToChallenger:
		if s := l.challenges[n.Ref]; s != nil {
			delete(l.challenges, n.Ref)
			subs = append(subs, s.sub)
		}
	case ToAll:
		subs = l.subsOfLocked(n.Player)
	}
	l.mu.Unlock()
	for _, sub := range subs {
		sub.Deliver(n.Matched)
	}
	l.log.Debug().Str("player", n.Player).Str("to", n.To).Str("race", n.Matched.Race).Int("sessions", len(subs)).Msg("matched event delivered")
	return len(subs) > 0
}

// offerComputer offers the computer to this instance's players who
// waited long enough.
func (l *Lobby) offerComputer() {
	if l.deps.Computer == nil {
		return
	}
	l.mu.Lock()
	now := l.deps.Clock.Now()
	type offer struct {
		sub race.Subscriber
		ev  *OfferEvent
		at  time.Time
	}
	var offers []offer
	for _, q := range l.queuedBy {
		if !q.offered && now.Sub(q.since) >= l.cfg.ComputerOfferAfter {
			q.offered = true
			offers = append(offers, offer{q.s.sub, &OfferEvent{Variant: q.variant, WaitedMs: now.Sub(q.since).Milliseconds()}, q.since})
		}
	}
	l.mu.Unlock()
	sort.Slice(offers, func(i, j int) bool { return offers[i].at.Before(offers[j].at) })
	for _, o := range offers {
		o.sub.Deliver(o.ev)
	}
}

// PlayComputer takes the player out of their queue into a race against the
// computer, in the queue's variant (CodeNotQueued if not queued, or if
// they were paired with someone meanwhile: leaving the shared queue is
// the claim). The race is unrated.
func (s *Session) PlayComputer() error {
	l := s.l
	if l.deps.Computer == nil {
		return race.Errorf(CodeNoComputer, "this server has no computer players")
	}
	seed := randomSeed()
	bot, err := l.deps.Computer(l.cfg.ComputerLevel, seed)
	if err != nil {
		return &race.Error{Code: race.CodeInternal, Message: "the computer player could not be made", Err: fmt.Errorf("lobby: computer: %w", err)}
	}
	who := s.Player()
	l.mu.Lock()
	q := l.queuedBy[who.ID]
	l.mu.Unlock()
	if q == nil || q.s != s {
		return race.Errorf(CodeNotQueued, "you are not in a queue")
	}
	ctx, cancel := opCtx()
	left, err := l.sh.Queue.Leave(ctx, who.ID)
	cancel()
	if err != nil {
		return unavailable(err)
	}
	if !left {
		return race.Errorf(CodeNotQueued, "you are not in a queue: you were just paired")
	}
	l.mu.Lock()
	if l.queuedBy[who.ID] == q {
		delete(l.queuedBy, who.ID)
	}
	l.mu.Unlock()
	return l.start(pairing{
		opts:    race.Options{Variant: q.variant, Grade: q.grade, Unrated: true},
		via:     "computer",
		players: [2]PlayerRef{{ID: who.ID, Name: who.Name}, {Name: "computer", Computer: true}},
		dests:   [2]dest{{s: s}, {}},
		bot:     race.Computer{Player: bot, Level: l.cfg.ComputerLevel, Seed: seed, Pace: l.cfg.ComputerPace},
	})
}

func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// Invite makes a private race's invite: a code for a friend, valid for
// the lobby's InviteTTL. The race is made when the friend accepts.
func (s *Session) Invite(o RaceOptions) (Invite, error) {
	if _, err := o.check(true); err != nil {
		return Invite{}, err
	}
	l := s.l
	who := s.Player()
	inv := Invite{Code: newCode(), Player: who.ID, Name: who.Name, Options: o, Expires: l.deps.Clock.Now().Add(l.cfg.InviteTTL)}
	ctx, cancel := opCtx()
	defer cancel()
	// Kept twice as long as it works, to say that it expired.
	if err := l.sh.Invites.Put(ctx, inv, 2*l.cfg.InviteTTL); err != nil {
		return Invite{}, unavailable(err)
	}
	return inv, nil
}

// NormalizeCode makes a typed code comparable: upper case, without spaces
// or dashes, and the letters people confuse with digits read as those.
func NormalizeCode(code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	return strings.NewReplacer("-", "", " ", "", "O", "0", "I", "1", "L", "1").Replace(code)
}

// AcceptInvite starts the private race of an invite: CodeNoSuchInvite
// (also once used), CodeInviteExpired, CodeOwnInvite, CodeInRace or
// CodeInviterAway (the author has no connection on any instance)
// otherwise. Accepting takes the player out of any queue and withdraws
// their own challenge.
func (s *Session) AcceptInvite(code string) error {
	l := s.l
	code = NormalizeCode(code)
	who := s.Player()
	ctx, cancel := opCtx()
	defer cancel()
	inv, ok, err := l.sh.Invites.Get(ctx, code)
	switch {
	case err != nil:
		return unavailable(err)
	case !ok:
		return race.Errorf(CodeNoSuchInvite, "no invite has code %q", code)
	case !l.deps.Clock.Now().Before(inv.Expires):
		return race.Errorf(CodeInviteExpired, "invite %s expired at %s", code, inv.Expires.Format(time.RFC3339))
	case inv.Player == who.ID:
		return race.Errorf(CodeOwnInvite, "that is your own invite: send it to a friend")
	}
	if err := l.checkRacing(ctx, who.ID); err != nil {
		return err
	}
	if err := l.checkRacing(ctx, inv.Player); err != nil {
		if race.ErrorCode(err) == CodeInRace {
			return race.Errorf(CodeInRace, "%s is racing; try again when they are done", inv.Name)
		}
		return err
	}
	away, err := l.away(ctx, inv.Player)
	if err != nil {
		return unavailable(err)
	}
	if away {
		return race.Errorf(CodeInviterAway, "%s is not connected now; the invite stays valid until %s", inv.Name, inv.Expires.Format(time.RFC3339))
	}
	ids := []string{inv.Player, who.ID}
	busy, err := l.sh.Seats.Claim(ctx, ids, claimKeep)
	if err != nil {
		return unavailable(err)
	}
	if busy == who.ID {
		return race.Errorf(CodeInRace, "you were just paired: your race is being made")
	} else if busy != "" {
		return race.Errorf(CodeInRace, "%s is racing; try again when they are done", inv.Name)
	}
	took, err := l.sh.Invites.Take(ctx, code)
	if err != nil || !took {
		_ = l.sh.Seats.Free(ctx, "", ids)
		if err != nil {
			return unavailable(err)
		}
		return race.Errorf(CodeNoSuchInvite, "no invite has code %q: it was just used", code)
	}
	if l.dropWaiting(s) {
		l.challengesChanged()
	}
	opts, _ := inv.Options.check(true) // checked when made
	err = l.start(pairing{
		opts:    opts,
		via:     "invite",
		code:    code,
		players: [2]PlayerRef{{ID: inv.Player, Name: inv.Name}, {ID: who.ID, Name: who.Name}},
		dests:   [2]dest{{to: ToAll}, {s: s}},
		ratings: [2]float64{l.rating(opts.Variant, inv.Player), l.rating(opts.Variant, who.ID)},
		claimed: true,
	})
	if err != nil { // no race: the invite works again
		keep := inv.Expires.Add(l.cfg.InviteTTL).Sub(l.deps.Clock.Now())
		if perr := l.sh.Invites.Put(ctx, inv, keep); perr != nil {
			l.log.Warn().Err(perr).Str("invite", code).Msg("invite not restored")
		}
	}
	return err
}

// away reports whether player has no session on any instance.
func (l *Lobby) away(ctx context.Context, player string) (bool, error) {
	l.mu.Lock()
	here := l.online[player] > 0
	l.mu.Unlock()
	if here || l.sh.Courier == nil {
		return !here, nil
	}
	there, err := l.sh.Courier.Listening(ctx, player)
	return !there, err
}

// subsOfLocked are where a player's sessions receive events.
func (l *Lobby) subsOfLocked(player string) []race.Subscriber {
	var out []race.Subscriber
	for s := range l.sessions {
		if s.who.ID == player {
			out = append(out, s.sub)
		}
	}
	return out
}

// Challenge opens a challenge that anyone in the lobby may accept; it is
// listed until accepted, withdrawn, or its session leaves. Its race is
// public, and rated when the options ask for it.
func (s *Session) Challenge(o RaceOptions) (ChallengeInfo, error) {
	if _, err := o.check(false); err != nil {
		return ChallengeInfo{}, err
	}
	l := s.l
	who := s.Player()
	rating := l.rating(o.Variant, who.ID)
	ctx, cancel := opCtx()
	defer cancel()
	if err := l.waiting(ctx, who.ID); err != nil {
		return ChallengeInfo{}, err
	}
	c := ChallengeInfo{ID: newCode(), Player: who.ID, Name: who.Name, Rating: rating, Variant: o.Variant,
		TimeLimitSeconds: *o.TimeLimitSeconds, BestOf: *o.BestOf, Rated: o.Rated, Grade: o.Grade, Since: l.deps.Clock.Now()}
	// Recorded here first, so that an acceptance on another instance at
	// once finds the session to tell.
	l.mu.Lock()
	l.challenges[c.ID] = s
	l.mu.Unlock()
	if err := l.sh.Challenges.Open(ctx, c); err != nil {
		l.mu.Lock()
		delete(l.challenges, c.ID)
		l.mu.Unlock()
		if !race.IsRefusal(err) { // a failure of the shared stores
			err = unavailable(err)
		}
		return ChallengeInfo{}, err
	}
	l.challengesChanged()
	return c, nil
}

// CancelChallenge withdraws the session's open challenge.
func (s *Session) CancelChallenge() error {
	l := s.l
	l.mu.Lock()
	var ids []string
	for id, cs := range l.challenges {
		if cs == s {
			delete(l.challenges, id)
			ids = append(ids, id)
		}
	}
	l.mu.Unlock()
	ctx, cancel := opCtx()
	defer cancel()
	found := false
	for _, id := range ids {
		_, ok, err := l.sh.Challenges.Take(ctx, id)
		if err != nil {
			l.mu.Lock()
			l.challenges[id] = s
			l.mu.Unlock()
			return unavailable(err)
		}
		found = found || ok
	}
	if !found {
		return race.Errorf(CodeNoSuchChallenge, "you have no open challenge")
	}
	l.challengesChanged()
	return nil
}

// AcceptChallenge starts the race of an open challenge against its
// author: CodeNoSuchChallenge or CodeOwnChallenge otherwise. Accepting
// takes the player out of any queue and withdraws their own challenge.
func (s *Session) AcceptChallenge(id string) error {
	l := s.l
	who := s.Player()
	id = NormalizeCode(id)
	ctx, cancel := opCtx()
	defer cancel()
	switch c, ok, err := l.sh.Challenges.Get(ctx, id); {
	case err != nil:
		return unavailable(err)
	case !ok:
		return race.Errorf(CodeNoSuchChallenge, "no open challenge has id %q", id)
	case c.Player == who.ID:
		return race.Errorf(CodeOwnChallenge, "you cannot accept your own challenge")
	}
	if err := l.checkRacing(ctx, who.ID); err != nil {
		return err
	}
	c, ok, err := l.sh.Challenges.Take(ctx, id)
	if err != nil {
		return unavailable(err)
	}
	if !ok {
		return race.Errorf(CodeNoSuchChallenge, "no open challenge has id %q: it was just taken", id)
	}
	busy, err := l.sh.Seats.Claim(ctx, []string{c.Player, who.ID}, claimKeep)
	if err == nil && busy == who.ID {
		err = inRace("")
	}
	if err != nil {
		// Back on the list: the author is still waiting.
		if oerr := l.sh.Challenges.Open(ctx, c); oerr != nil {
			l.log.Warn().Err(oerr).Str("challenge", c.ID).Msg("challenge not reopened")
		}
		if !race.IsRefusal(err) { // a failure of the shared stores
			err = unavailable(err)
		}
		return err
	}
	if busy != "" { // the author went racing: the challenge is gone
		l.challengesChanged()
		return race.Errorf(CodeNoSuchChallenge, "no open challenge has id %q: %s is racing", id, c.Name)
	}
	l.dropWaiting(s)
	o := RaceOptions{Variant: c.Variant, TimeLimitSeconds: &c.TimeLimitSeconds, BestOf: &c.BestOf, Rated: c.Rated, Grade: c.Grade}
	opts, _ := o.check(false) // checked when opened
	opts.Public = true
	return l.start(pairing{
		opts:    opts,
		via:     "challenge",
		code:    c.ID,
		players: [2]PlayerRef{{ID: c.Player, Name: c.Name}, {ID: who.ID, Name: who.Name}},
		dests:   [2]dest{{to: ToChallenger, ref: c.ID}, {s: s}},
		ratings: [2]float64{c.Rating, l.rating(c.Variant, who.ID)},
		claimed: true,
	})
}

// AuthorizeSeat decides who takes a seat in a race: the holder of a valid
// player token (CodeNotIdentified without one). In races the lobby made
// (their record keeps each seat's player, so any instance knows), only
// the players it paired, each in their own seat: it
// returns that seat's resume token (CodeNotYourSeat for anyone else). In
// other races (made over the API), any free seat under the player's
// display name.
func (l *Lobby) AuthorizeSeat(playerToken, raceID, name string) (displayName, seatToken string, err error) {
	if playerToken == "" {
		ctx, cancel := opCtx()
		defer cancel()
		if _, reserved, err := l.deps.Races.SeatOf(ctx, raceID, ""); err == nil && reserved {
			return "", "", race.Errorf(CodeNotYourSeat, "the seats of race %s are reserved for players of the lobby; say hello as one of them, or watch it", raceID)
		}
		return "", "", race.Errorf(CodeNotIdentified, "say hello with your player token first")
	}
	who, err := l.deps.Tokens.Verify(playerToken)
	if err != nil {
		return "", "", err
	}
	ctx, cancel := opCtx()
	defer cancel()
	token, reserved, err := l.deps.Races.SeatOf(ctx, raceID, who.ID)
	switch {
	case err != nil:
		return "", "", err
	case reserved && token == "":
		return "", "", race.Errorf(CodeNotYourSeat, "the seats of race %s are reserved for other players; watch it instead", raceID)
	}
	return who.Name, token, nil
}

// maxRecordTries bounds the reads and saves of one race's result when
// other instances keep saving the same players' standings (ErrStale):
// each try loses only to a save that succeeded, so a few are plenty.
const maxRecordTries = 5

// record updates both players' ratings and records after a finished race,
// reading the standings anew when another instance saved one in between.
func (l *Lobby) record(raceID, variant string, players [2]PlayerRef, res race.Result, at time.Time) error {
	l.rateMu.Lock()
	defer l.rateMu.Unlock()
	var err error
	for range maxRecordTries {
		if err = l.recordOnce(raceID, variant, players, res, at); !errors.Is(err, ErrStale) {
			return err
		}
	}
	return err
}

// recordOnce reads, rates and saves once.
func (l *Lobby) recordOnce(raceID, variant string, players [2]PlayerRef, res race.Result, at time.Time) error {
	ctx, cancel := opCtx()
	defer cancel()
	g := GameRecord{Race: raceID, Variant: variant, At: at, Players: players, Outcome: res.Outcome,
		Winner: res.Winner, Reason: res.Reason, Scores: res.Scores}
	var st [2]Standing
	for s := range 2 {
		if players[s].Computer || players[s].Ghost || players[s].Solo {
			st[s] = NewStanding("", players[s].Name, variant)
			continue
		}
		cur, err := l.deps.Ratings.Standing(ctx, variant, players[s].ID)
		if err != nil {
			return fmt.Errorf("lobby: standing of %s: %w", players[s].ID, err)
		}
		cur.Name = players[s].Name
		st[s] = cur
	}
	g.Rated = res.Rated && !players[0].Computer && !players[1].Computer && !players[0].Ghost && !players[1].Ghost && !players[0].Solo
	var after []Standing
	for s := range 2 {
		g.Before[s], g.After[s] = st[s].Rating, st[s].Rating
	}
	if g.Rated {
		score := glicko2.Draw
		if res.Winner != nil {
			score = glicko2.Loss
			if *res.Winner == 0 {
				score = glicko2.Win
			}
		}
		scores := [2]float64{score, 1 - score}
		for s := range 2 {
			g.After[s] = glicko2.Update(st[s].Rating, []glicko2.Result{{Opponent: st[1-s].Rating, Score: scores[s]}}, l.cfg.Tau)
		}
		for s := range 2 {
			after = append(after, ApplyResult(st[s], scores[s], g.After[s]))
		}
	}
	if err := l.deps.Ratings.Save(ctx, g, after); err != nil {
		return fmt.Errorf("lobby: save race %s: %w", raceID, err)
	}
	return nil
}

// Presence counts the players now.
func (l *Lobby) Presence() Presence {
	return l.snapshot().Presence
}

// Snapshot is the lobby as a whole now, as the "lobby" message shows it.
func (l *Lobby) Snapshot() *LobbyEvent { return l.snapshot() }

// snapshot is the lobby as a whole: presence and challenges as they are,
// the races as the last heartbeat saw them.
func (l *Lobby) snapshot() *LobbyEvent {
	ev := &LobbyEvent{Challenges: []ChallengeInfo{}}
	ctx, cancel := opCtx()
	open, err := l.sh.Challenges.List(ctx)
	cancel()
	if err != nil {
		l.log.Warn().Err(err).Msg("challenges not listed")
	}
	ev.Challenges = append(ev.Challenges, open...)
	l.mu.Lock()
	ev.Presence = l.ownPresenceLocked()
	ev.Presence.add(l.others)
	ev.Races = l.listed // replaced, never changed in place
	l.mu.Unlock()
	ev.Daily = l.dailyBriefs()
	sort.Slice(ev.Challenges, func(i, j int) bool {
		a, b := ev.Challenges[i], ev.Challenges[j]
		if !a.Since.Equal(b.Since) {
			return a.Since.Before(b.Since)
		}
		return a.ID < b.ID
	})
	return ev
}

// ownPresenceLocked counts this instance's players.
func (l *Lobby) ownPresenceLocked() Presence {
	p := Presence{Online: len(l.online), Queued: len(l.queuedBy), Queues: make(map[string]int), Racing: l.racing}
	for _, q := range l.queuedBy {
		p.Queues[q.variant]++
	}
	return p
}

// sharePresence stores this instance's counts for the others and reads
// theirs (outside the lobby's lock: it waits for the store). On an error
// the last counts read stay.
func (l *Lobby) sharePresence() {
	if l.deps.Presence == nil {
		return
	}
	l.mu.Lock()
	own := l.ownPresenceLocked()
	l.mu.Unlock()
	ctx, cancel := opCtx()
	defer cancel()
	others, err := l.deps.Presence.Share(ctx, own)
	if err != nil {
		l.log.Warn().Err(err).Msg("presence not shared")
		return
	}
	l.mu.Lock()
	l.others = others
	l.mu.Unlock()
}

// refreshRaces reads the live races (outside the lobby's lock: each read
// takes the race's) for the list and the count of players racing, and
// adds the other instances' lists (Shared.Races). It runs on the
// heartbeat, so that the lobby's own changes never wait for it.
func (l *Lobby) refreshRaces() {
	var live []ListedRace
	racing := 0
	for _, rc := range l.deps.Races.Races() {
		if rc.State().Over() {
			continue
		}
		in, err := rc.Info(context.Background())
		if err != nil {
			continue
		}
		for s := range 2 {
			if in.Players[s].Taken && !in.Players[s].Computer {
				racing++
			}
		}
		if !in.Public || in.State == race.Waiting {
			continue
		}
		sum := RaceSummary{Race: in.Race, Variant: in.Variant, State: in.State, Spectators: in.Spectators, StartAt: in.StartAt}
		for s := range 2 {
			sum.Players[s] = PlayerRef{Name: in.Players[s].Name, Computer: in.Players[s].Computer}
			sum.Scores[s] = in.Counts[s].Score
		}
		live = append(live, ListedRace{sum, in.CreatedAt})
	}
	newestFirst := func(live []ListedRace) {
		sort.Slice(live, func(i, j int) bool {
			if !live[i].Created.Equal(live[j].Created) {
				return live[i].Created.After(live[j].Created)
			}
			return live[i].Race < live[j].Race
		})
	}
	if sh := l.sh.Races; sh != nil {
		// Only this instance's newest are shared: the list shows the
		// newest of all, which are among them.
		newestFirst(live)
		ctx, cancel := opCtx()
		others, err := sh.ShareRaces(ctx, live[:min(len(live), l.cfg.MaxListed)])
		cancel()
		if err != nil {
			l.log.Warn().Err(err).Msg("race list not shared")
		}
		seen := make(map[string]bool, len(live))
		for _, r := range live {
			seen[r.Race] = true
		}
		for _, r := range others { // a race taken over may be listed twice for a beat
			if !seen[r.Race] {
				seen[r.Race] = true
				live = append(live, r)
			}
		}
	}
	newestFirst(live)
	races := make([]RaceSummary, 0, min(len(live), l.cfg.MaxListed))
	for i := 0; i < len(live) && i < l.cfg.MaxListed; i++ {
		races = append(races, live[i].RaceSummary)
	}
	l.mu.Lock()
	l.listed, l.racing = races, racing
	l.mu.Unlock()
}

// challengesChanged shows a change of the open challenges at once: here,
// and on the other instances (through the courier).
func (l *Lobby) challengesChanged() {
	l.Publish()
	if c := l.sh.Courier; c != nil {
		ctx, cancel := opCtx()
		defer cancel()
		if err := c.Changed(ctx); err != nil {
			l.log.Warn().Err(err).Msg("challenge change not announced; the others see it on their heartbeat")
		}
	}
}

// Publish sends every session the lobby as it is now, unless it is the
// same as last sent.
func (l *Lobby) Publish() {
	ev := l.snapshot()
	b, err := json.Marshal(ev)
	if err != nil {
		l.log.Error().Err(err).Msg("lobby snapshot")
		return
	}
	l.mu.Lock()
	if bytes.Equal(b, l.last) {
		l.mu.Unlock()
		return
	}
	l.last = b
	ev.encoded = b // every connection sends these bytes
	subs := make([]race.Subscriber, 0, len(l.sessions))
	for s := range l.sessions {
		subs = append(subs, s.sub)
	}
	l.mu.Unlock()
	for _, sub := range subs {
		sub.Deliver(ev)
	}
}

// Leaderboard is the n best rated players of a variant.
func (l *Lobby) Leaderboard(ctx context.Context, variant string, n int) ([]Standing, error) {
	rules, err := engine.Variant(variant)
	if err != nil {
		return nil, &race.Error{Code: race.CodeBadOptions, Message: err.Error(), Err: err}
	}
	out, err := l.deps.Ratings.Leaderboard(ctx, rules.Name, n)
	if err != nil {
		return nil, storeFailed("the leaderboard", fmt.Errorf("lobby: leaderboard %s: %w", rules.Name, err))
	}
	return out, nil
}

// Profile is a player's standings in every variant and their last races.
type Profile struct {
	Player    string       `json:"player"`
	Standings []Standing   `json:"standings"`
	History   []GameRecord `json:"history"`
	// Next is the cursor of the races older than History's (for Games);
	// absent when History holds every race of the player's.
	Next string `json:"next,omitempty"`
	// Ghosts are the player's ghost challenges and races against ghosts;
	// absent when they have none.
	Ghosts *GhostProfile `json:"ghosts,omitempty"`
	// Daily is the player's days at the day's deal; absent when none.
	Daily *DailyStats `json:"daily,omitempty"`
}

// Profile returns a player's standings and last n races: the first page
// of Games, whose Next it carries.
func (l *Lobby) Profile(ctx context.Context, player string, n int) (Profile, error) {
	l.settleRead(ctx, player)
	st, err := l.deps.Ratings.Standings(ctx, player)
	if err != nil {
		return Profile{}, storeFailed("the player's standings", fmt.Errorf("lobby: standings of %s: %w", player, err))
	}
	page, err := l.deps.Ratings.Games(ctx, player, "", n)
	if err != nil {
		return Profile{}, storeFailed("the player's history", fmt.Errorf("lobby: history of %s: %w", player, err))
	}
	gp, err := l.ghostProfile(ctx, player, n)
	if err != nil {
		return Profile{}, storeFailed("the player's ghost races", errGhostStore("profile of "+player, err))
	}
	ds, err := l.dailyStats(ctx, player, n)
	if err != nil {
		return Profile{}, storeFailed("the player's days", err)
	}
	if len(st) == 0 && len(page.Games) == 0 && gp == nil && ds == nil {
		return Profile{}, race.Errorf(CodeNoSuchPlayer, "no player %q has raced", player)
	}
	if page.Games == nil {
		page.Games = []GameRecord{} // a JSON list, never null
	}
	return Profile{Player: player, Standings: st, History: page.Games, Next: page.Next, Ghosts: gp, Daily: ds}, nil
}

// MaxGamesPage bounds the n of one page of Games: what a page shows at
// once, and a bounded read of the store per request.
const MaxGamesPage = 100

// Games is a page of at most n of a player's races, newest first: those
// older than cursor (the Next of the page before, or of the profile; ""
// for the newest). n must be from 1 to MaxGamesPage (CodeBadOptions); a
// cursor the store did not make is refused with CodeBadCursor. A player
// whose profile does not exist is CodeNoSuchPlayer here too (asked on the
// first page; a later page past the last race is merely empty).
func (l *Lobby) Games(ctx context.Context, player, cursor string, n int) (GamesPage, error) {
	if n < 1 || n > MaxGamesPage {
		return GamesPage{}, race.Errorf(race.CodeBadOptions, "n: %d is not from 1 to %d", n, MaxGamesPage)
	}
	if cursor == "" {
		l.settleRead(ctx, player)
	}
	page, err := l.deps.Ratings.Games(ctx, player, cursor, n)
	if err != nil {
		return GamesPage{}, storeFailed("the player's races", fmt.Errorf("lobby: games of %s: %w", player, err))
	}
	if cursor == "" && len(page.Games) == 0 {
		if _, err := l.Profile(ctx, player, 1); err != nil {
			return GamesPage{}, err
		}
	}
	if page.Games == nil {
		page.Games = []GameRecord{} // a JSON list, never null
	}
	return page, nil
}

// RatingChanges is every change of a player's rating in a variant, oldest
// first: the points of their rating chart. An unknown variant is refused
// with CodeBadOptions, as the leaderboard does; a player whose profile does
// not exist with CodeNoSuchPlayer; a player who has raced but never rated
// in the variant has none.
func (l *Lobby) RatingChanges(ctx context.Context, player, variant string) ([]RatingChange, error) {
	rules, err := engine.Variant(variant)
	if err != nil {
		return nil, &race.Error{Code: race.CodeBadOptions, Message: err.Error(), Err: err}
	}
	l.settleRead(ctx, player)
	ch, err := l.deps.Ratings.Changes(ctx, player, rules.Name)
	if err != nil {
		return nil, storeFailed("the player's ratings", fmt.Errorf("lobby: rating changes of %s in %s: %w", player, rules.Name, err))
	}
	if len(ch) == 0 {
		if _, err := l.Profile(ctx, player, 1); err != nil {
			return nil, err
		}
		ch = []RatingChange{} // a JSON list, never null
	}
	return ch, nil
}

// queueKey is the quick-play queue of a variant and a deal's grade: the
// variant's name, then "/" and the grade when there is one. Seekers are
// paired within one queue, so only with the same variant and grade.
func queueKey(variant, grade string) string {
	if grade == "" {
		return variant
	}
	return variant + "/" + grade
}

// splitQueueKey is queueKey's inverse.
func splitQueueKey(key string) (variant, grade string) {
	variant, grade, _ = strings.Cut(key, "/")
	return variant, grade
}
