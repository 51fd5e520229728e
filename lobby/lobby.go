// Package lobby is where players meet before a race: identities without
// sign-up (signed tokens), quick play with a rating-aware matchmaker,
// private invites, open challenges, the live list of races to watch,
// presence counts, and Glicko-2 ratings with a leaderboard and histories.
// It makes races with package race; the web package speaks for it.
//
// What instances share (the queue, challenges, invites, who is racing,
// the race list) lives behind the interfaces of shared.go: in memory for
// one server (memlobby), in Redis (redislobby) for several. The Lobby
// itself keeps only its own connections' bookkeeping: which of its
// sessions queued or opened a challenge, so that a matched event, made
// here or carried by the Courier from another instance, reaches the
// right one.
//
// Locking: the Lobby's mutex guards its own maps. It is never held while
// calling into a race or a shared store, so that a race's end (which runs
// with the race's lock held) may take it. The live race list is read on
// the heartbeat, outside the lock, and cached.
//
// One file per job:
//
//   - lobby.go: the Lobby, New, its heartbeat and Close.
//   - config.go: Config and the defaults of its zero fields.
//   - ports.go: Deps, what the lobby takes from outside, with Stores,
//     every store it keeps its state in, and how a call to the stores is
//     bounded and its failure refused.
//   - shared.go: the interfaces of what instances share (queue,
//     challenges, invites, seats, courier, race list).
//   - options.go: RaceOptions, a player's choice of race, checked.
//   - sessions.go: a connection's Session: entering, names, tokens,
//     leaving, and the rule that a player waits for one thing at a time.
//   - quickplay.go: the quick-play queues and the matchmaking pass;
//     matchmaker.go pairs the seekers of one queue.
//   - pairing.go: starting the race of a pairing, whichever way (Via) it
//     was made.
//   - notices.go: matched events delivered here or, through the courier,
//     on the instance that holds the player's session.
//   - computer.go: the offer of a race against the computer, and that race.
//   - invites.go: private races' invites; code.go makes their codes.
//   - challenges.go: open challenges.
//   - seats.go: who is racing (claims and marks), and who may take a seat.
//   - profiles.go: ratings recorded after a race, the leaderboard,
//     profiles and histories; ratings.go is the records' types and store.
//   - board.go: presence, the live race list and the lobby message.
//   - ghosts.go, daily.go: ghost races and the day's deal.
//   - ended.go, settle.go: the work that follows a race's end, and a
//     player's next request waiting for it.
//   - identity.go: player ids, names and signed tokens.
//   - events.go, errors.go: the lobby's events and error codes.
package lobby

import (
	"sync"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/race"
)

// Lobby is the meeting place. Its methods are safe for concurrent use.
type Lobby struct {
	deps Deps
	cfg  Config
	log  zerolog.Logger
	// dailyKey derives the day's deals (nil: none).
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
	others     Presence            // the other instances' counts, as of the last heartbeat (Stores.Presence)
	masses     []MassRace          // the open mass races, as of the last heartbeat or change (replaced, never changed in place)
	arenaList  []ArenaBrief        // the current arenas, as of the last heartbeat (replaced, never changed in place)
	arenaWatch map[*Session]*arenaWatcher
	arenasMade map[string]bool      // scheduled arenas made (or found made) by this instance
	arenaAway  map[string]time.Time // "ARENA PLAYER": since when this instance has seen a player waiting in an arena away

	listenMu  sync.Mutex      // orders Courier.Listen and Unlisten per player
	listening map[string]bool // players the courier listens for (under listenMu)

	rateMu sync.Mutex // serializes rating updates (read, compute, save)
	ends   *endQueue  // what follows the races' ends, in order
}

// New makes a lobby and starts its heartbeat on the clock; Close stops it.
// deps.Stores must hold every store but Courier, Races and Presence: a
// lobby without one is a mistake of its caller's, so New panics.
func New(cfg Config, deps Deps) *Lobby {
	cfg.fill()
	st := deps.Stores
	if st.Ratings == nil || st.Queue == nil || st.Challenges == nil || st.Invites == nil || st.Seats == nil || st.Ghosts == nil || st.Dailies == nil || st.Rooms == nil || st.Arenas == nil {
		panic("lobby: Deps.Stores lacks a store (memlobby.NewStores makes the in-memory ones)")
	}
	l := &Lobby{
		deps: deps, cfg: cfg, log: deps.Log.With().Str("component", "lobby").Logger(),
		sessions:   make(map[*Session]struct{}),
		online:     make(map[string]int),
		queuedBy:   make(map[string]*queued),
		challenges: make(map[string]*Session),
		listening:  make(map[string]bool),
		arenaWatch: make(map[*Session]*arenaWatcher),
		arenasMade: make(map[string]bool),
		arenaAway:  make(map[string]time.Time),
		listed:     []RaceSummary{},
		dailyKey:   dailyKeyOf(deps.DailySecret),
	}
	if st.Courier != nil {
		st.Courier.Start(func(n Notice) { l.receive(n, false) }, l.Publish)
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

// heartbeat is the lobby's tick (Config.Tick): matchmaking, offers of
// the computer, the challenges kept, the race list and presence read
// and shared, then the lobby message; it reschedules itself until Close.
func (l *Lobby) heartbeat() {
	l.matchNow()
	l.offerComputer()
	l.keepChallenges()
	l.refreshRaces()
	l.startMasses()
	l.runArenas()
	l.sharePresence()
	l.Publish()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.tick = l.deps.Clock.AfterFunc(l.cfg.Tick, l.heartbeat)
	}
}
