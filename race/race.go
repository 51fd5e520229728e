// Package race runs one Sir Tommy race: two seats playing their own
// engine.Game on the same deal, a countdown, a time limit, the referee, the
// event log, grace periods for disconnected players and the spectators'
// feed. It declares the small interfaces it needs from the outside (Clock,
// Store, Bus, Subscriber, Player); memrace holds in-memory implementations.
//
// One mutex per race owns all of its state; every timer callback and every
// request takes it, and events are published while it is held, so each
// subscriber sees them in the order they happened.
//
// Spreading races over several instances (Redis mode: leases, proxies,
// forwarding, takeover, drain) is race/fleet's, which imports this
// package; this one only keeps records and decides results through
// Records, and hands its fleet-wide jobs to a Fleet.
//
// # Files
//
// A race is one type, Race, whose methods are spread by job: race.go the
// type, its making and its moves; seats.go who sits where (joining,
// reserving, resuming, leaving, grace); computer.go and ghost.go the seats
// the server plays; lifecycle.go countdown, clock and end; referee.go who
// won; feed.go the spectators' feed (what they may see of the games as of
// its point, and what waits for the spectator delay); fair.go where each
// card lies and how the feed reaches the spectators; fanout.go who
// receives each event; match.go rounds and rematches; durable.go its
// record and restore.
//
// # Lock order
//
// The locks of this package, outermost first (docs/concurrency.md says
// why; race/fleet's own locks are outside these):
//
//  1. Race.mu: one race. Held while the race's own event log is appended
//     to (an acknowledged move is a stored move) or its result decided
//     (Records), and while events are published on the bus (whose
//     Deliver never blocks); a subscriber that can queue (Queuer) has
//     its events written by Race.unlock once the lock is released, so
//     that no socket write holds it. Its record is only queued under it: the
//     race's writer saves it outside (writer.go), and the caller waits
//     for that once the lock is released. Never held while taking another
//     race's lock or the Service's, nor while calling the OnEnd hook or
//     making the next race: those are queued on Race.later and run by
//     Race.unlock once the lock is released.
//  2. Service.mu, Service.hookMu, and the locks of the archiver and of
//     the sweeps (archiver.go, archivesweep.go): leaves. Held only to read
//     or change the Service's map, flags, archive queue and sweep timer;
//     nothing is called and no other lock is waited for while they are
//     held but the clock's, a leaf (Evict and Live copy the race list,
//     then look at each race without them; Create makes and registers a
//     race with the Fleet before taking Service.mu to list it; the
//     archiver reads a race and writes the archive outside its lock).
//  3. The bus's, the store's, the clock's, the subscribers' and the
//     record writer's own locks: leaves inside those types.
//
// A lock may be taken while holding only locks above it in this list, so
// no cycle of waits can form.
package race

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
)

// State is where a race stands.
type State string

// The states of a race, in order; Finished and Aborted are final.
const (
	Waiting   State = "waiting"   // seats still free
	Countdown State = "countdown" // every seat taken; StartAt is set
	Running   State = "running"   // moves are accepted
	Finished  State = "finished"  // decided: a win or a draw
	Aborted   State = "aborted"   // ended without a rated result
)

// Over reports whether the race has ended.
func (s State) Over() bool { return s == Finished || s == Aborted }

// Defaults for Options left zero.
const (
	// DefaultTimeLimit is the length of a race: long enough to play a deal
	// out at a comfortable pace (about 60 moves).
	DefaultTimeLimit = 10 * time.Minute
	// DefaultCountdown is the time between both seats being taken and the
	// start, so that both players see the board appear together.
	DefaultCountdown = 3 * time.Second
	// DefaultFirstMoveTimeout aborts a race (unrated) when a player has not
	// moved this long after the start: they are not there.
	DefaultFirstMoveTimeout = 30 * time.Second
	// DefaultGrace is how long a disconnected player may take to resume
	// before forfeiting: enough for a page reload or a network change.
	DefaultGrace = 30 * time.Second
	// TakeoverWait is how long a race another instance took over holds the
	// seats that were connected, as connected, for their connections to
	// follow it there (each instance that has one hears of the takeover and
	// resumes the seat at once). A seat nobody resumes in that time starts
	// its grace period then, counted from the takeover: so the grace clock
	// of a player whose connection is alive never starts.
	TakeoverWait = 5 * time.Second
	// DefaultWaitTimeout aborts a race whose seats are not both taken
	// this long after it was made ("expired"): an invite nobody used must
	// not hold memory for ever.
	DefaultWaitTimeout = time.Hour
	// maxNameLen bounds a player's display name, in bytes.
	maxNameLen = 40
)

// Options describe a race.
type Options struct {
	// Variant is the engine variant's name; empty means the default.
	Variant string
	// Deal is the deal number, used only when DealNamed is set (a private
	// race that names its deal, which is then public from the start).
	// Otherwise the deal is drawn at random and kept secret until the end,
	// with a Commitment published at the start.
	Deal      uint64
	DealNamed bool
	// DealFixed races on Deal too, but keeps it secret behind a fresh
	// salt and commitment, as a random deal (a recorded game raced
	// again, the day's deal).
	DealFixed bool
	// Salt, with DealFixed, is the commitment's salt (the day's deal's,
	// derived by the lobby); "" draws a fresh one.
	Salt string
	// SealedUntil, when set, keeps the deal secret until then even once
	// the race is over (the day's deal): the result carries no deal, salt
	// or game texts, the public record no moves, and spectators see every
	// card face down, until SealedUntil.
	SealedUntil time.Time
	// Solo races have one player: seat 0 is nobody (PlayerInfo.Solo) and
	// the race ends when the player's game does (OutcomeSolo, or a win if
	// they win the deal) or on time.
	Solo bool
	// Tag is the caller's label for the race (the lobby's "daily:…"),
	// handed back in Ended.
	Tag string
	// Grade, when not empty, draws the secret deal among the engine's
	// graded deals of that grade ("easy", "medium" or "hard"; see
	// engine.Graded), and the commitment covers it (GradedCommitment).
	// It is ignored where DealNamed is set.
	Grade string `json:",omitempty"`
	// Public races (listed, matchmade) delay the spectators' feed by
	// SpectatorDelay.
	Public         bool
	SpectatorDelay time.Duration
	// TimeLimit is the race's length from the start (default 10 min).
	TimeLimit time.Duration
	// Grace is how long a disconnected player has to resume (default 30 s).
	Grace time.Duration
	// Countdown is the time from both seats taken to the start (default 3 s).
	Countdown time.Duration
	// FirstMoveTimeout aborts the race when a player has not moved this long
	// after the start (default 30 s).
	FirstMoveTimeout time.Duration
	// WaitTimeout aborts the race ("expired") when it is still waiting
	// for players this long after it was made (default 1 h).
	WaitTimeout time.Duration
	// BestOf makes the race the first round of a match of that many rounds
	// (odd, at most 9; default 1): each round is a new race on a new deal,
	// made when the one before ends, until a player has won most rounds.
	BestOf int
	// Unrated races end with Result.Rated false even when decided (private
	// races that ask not to be rated). Races of more than two are never
	// rated.
	Unrated bool
	// Seats is the number of racers, MinSeats to MaxSeats (default 2). A
	// solo race and a best-of-N match have two.
	Seats int `json:",omitempty"`
	// Berserk lets each racer halve their own time in the countdown
	// (Race.Berserk): an arena's races.
	Berserk bool `json:",omitempty"`
}

func (o *Options) fill() {
	if o.TimeLimit <= 0 {
		o.TimeLimit = DefaultTimeLimit
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Countdown <= 0 {
		o.Countdown = DefaultCountdown
	}
	if o.FirstMoveTimeout <= 0 {
		o.FirstMoveTimeout = DefaultFirstMoveTimeout
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = DefaultWaitTimeout
	}
	if !o.Public {
		o.SpectatorDelay = 0
	}
	if o.BestOf <= 0 {
		o.BestOf = 1
	}
	if o.Seats <= 0 {
		o.Seats = MinSeats
	}
}

// Deps are what a race needs from the outside.
type Deps struct {
	Clock Clock
	Log   zerolog.Logger
	Store Store
	Bus   Bus
	// Records keeps races' records and decides results once across
	// instances (Redis mode); nil in memory mode.
	Records Records
	// Computers makes a computer player of a level again when a race with
	// a computer seat is rebuilt on another instance; nil: such a seat's
	// player is out (as though it had left).
	Computers ComputerFactory
	// Archive keeps every finished race forever; nil: finished races live
	// only as long as the live store keeps them (tests).
	Archive Archive
	// OnEnd, if set, is called once for every race that ends on this
	// instance, whichever instance made it. It runs after the race's lock
	// is released, in the goroutine that ended the race (a request or a
	// timer): it may call the race and the Service, and what takes long
	// belongs on a goroutine of its own.
	OnEnd func(Ended)
	// ended, set by NewService, is called instead of OnEnd with the race
	// that ended too: the Service archives the race, then calls its hook.
	ended func(*Race, Ended)
}

// Ended is a race that ended, for Deps.OnEnd: its players (with the lobby's
// player ids of reserved seats) and its result.
type Ended struct {
	Race    string
	Variant string
	Players []PlayerInfo
	Result  Result
	// Ghosts are the Refs of the recordings seated (SeatGhost), by seat;
	// "" for a seat that is not one.
	Ghosts []string
	// Tag is Options.Tag.
	Tag string
}

// Race is one race. Its methods are safe for concurrent use.
type Race struct {
	id    string
	opts  Options
	rules *engine.Rules
	deal  uint64
	salt  string
	clock Clock
	log   zerolog.Logger
	store Store
	// moveLog is the race's own log in store (openLog): a move appends
	// there.
	moveLog MoveLog
	// fan is who receives the race's events (fanout.go).
	fan fanout
	// commitment is Commitment(), set by commit.
	commitment string
	// records is nil in memory mode; writer saves the race's records
	// through it, outside mu (writer.go).
	records Records
	// archive is Deps.Archive (nil without one): a finished race's moves
	// are read there when the live store has lost its log (info).
	archive Archive
	writer  *recordWriter
	onEnd   func(Ended)
	ended   func(*Race, Ended) // Deps.ended: the Service's, in place of onEnd
	done    chan struct{}

	mu sync.Mutex
	// later is the work queued under mu that must run once mu is
	// released, in order (unlock runs it): the OnEnd hook, the store's
	// retention, making the next race. See "Lock order" in the package
	// documentation.
	later []func()
	state State
	// seats are the race's seats, 0 to len(seats)-1 (Options.Seats).
	seats     []seat
	createdAt time.Time
	startAt   time.Time
	endedAt   time.Time // when it ended (or was rebuilt here over)
	result    *Result
	countT    Timer
	waitT     Timer // aborts the race if it is still waiting (WaitTimeout)
	limitT    Timer
	firstT    Timer
	decideT   Timer // retries a result Redis could not store
	// deciding is set while the result is being stored (decide, Redis
	// mode): the race refuses moves and ends nothing else meanwhile.
	deciding bool
	// takingBack is set while a request is played again after its seat
	// was taken back from its holder (takeBackLocked): once only.
	takingBack bool
	// stopped is set when another instance runs the race now: this copy
	// refuses everything.
	stopped bool
	// halted is stopped, readable without the lock (Halted: a fleet
	// proxy's feed gate asks it from inside another race's delivery).
	halted atomic.Bool
	// recordsOff ends the race's subscription to its records topic
	// (remote.go); catchingUp is set while a read of its log for the
	// records it missed is under way.
	recordsOff func()
	catchingUp atomic.Bool
	// firstMovesRead is set once the log was read for held seats' first
	// moves at the first-move deadline (firstMoveCheck).
	firstMovesRead bool
	// The spectators' feed (feed.go, fair.go): what the spectators have
	// been sent and what waits for the spectator delay, and this copy's
	// epoch (one more for each instance that took the race over).
	feed  feed
	epoch uint64
	// The match this race is a round of, the next race once made, who asked
	// for a rematch, and how to make a race (set by the Service).
	match   Match
	next    *Race
	rematch []bool
	// spawning is set while the next race is being made, outside mu, so
	// that it is made once.
	spawning bool
	spawn    func(Options, func(*Race)) (*Race, error)
	// spectators is the number of spectators watching now; told is the
	// number last published, and watchT publishes a change (at most once
	// every spectatorsEvery, so that a crowd arriving is one message).
	spectators int
	told       int
	// remoteSpectators counts the spectators that stand for connections
	// on other instances (Remote): while it is 0 the watch topic stays on
	// this instance (publishLocked).
	remoteSpectators int
	watchT           Timer
}

// New makes a race waiting for its players.
func New(id string, opts Options, d Deps) (*Race, error) {
	opts.fill()
	rules, err := engine.Variant(opts.Variant)
	if err != nil {
		return nil, &Error{Code: CodeBadOptions, Message: err.Error(), Err: err}
	}
	opts.Variant = rules.Name
	if opts.BestOf%2 == 0 || opts.BestOf > maxBestOf {
		return nil, Errorf(CodeBadOptions, "bestOf must be odd, from 1 to %d", maxBestOf)
	}
	switch {
	case opts.Seats > MaxSeats:
		return nil, Errorf(CodeBadOptions, "seats must be from %d to %d, not %d", MinSeats, MaxSeats, opts.Seats)
	case opts.Seats > MinSeats && (opts.BestOf > 1 || opts.Solo):
		return nil, Errorf(CodeBadOptions, "a race of %d seats is one race of racers: no match, no solo seat", opts.Seats)
	}
	r := &Race{
		match: Match{Round: 1, BestOf: opts.BestOf},
		id:    id, opts: opts, rules: rules,
		seats: make([]seat, opts.Seats), rematch: make([]bool, opts.Seats),
		clock: d.Clock, store: d.Store, fan: newFanout(id, d.Bus, opts.Seats), records: d.Records, archive: d.Archive, onEnd: d.OnEnd, ended: d.ended,
		log:   d.Log.With().Str("race", id).Logger(),
		done:  make(chan struct{}),
		state: Waiting,
	}
	r.writer = writerFor(d.Records, r.log)
	r.moveLog = openLog(d.Store, id)
	switch {
	case opts.DealNamed:
		r.deal, r.opts.Grade = opts.Deal, ""
	case opts.DealFixed:
		_, r.salt = randomDeal()
		r.deal, r.opts.Grade = opts.Deal, ""
		if opts.Salt != "" {
			r.salt = opts.Salt
		}
	case opts.Grade != "":
		deals, err := gradedDeals(rules.Name, opts.Grade)
		if err != nil {
			return nil, err
		}
		g, _ := engine.ParseGrade(opts.Grade) // checked by gradedDeals
		r.opts.Grade = g.String()
		r.deal, r.salt = randomGradedDeal(deals)
	default:
		r.deal, r.salt = randomDeal()
	}
	r.commit()
	r.createdAt = r.clock.Now()
	if opts.Solo {
		r.seats[0].taken, r.seats[0].connected, r.seats[0].occ = true, true, soloSeat{}
	}
	r.waitT = r.clock.AfterFunc(opts.WaitTimeout, r.waitOver)
	for s := range r.seats {
		r.seats[s].game = engine.New(rules, r.deal)
	}
	r.initFeedLocked(r.gamesLocked(), make([]MoveRecord, len(r.seats)), 0)
	r.listenRecordsLocked()
	return r, nil
}

// FinalFor is the state event for seat s's player (player) or a
// spectator, as the race stands: the final state of a finished race.
func (r *Race) FinalFor(s int, player bool) *StateEvent {
	r.mu.Lock()
	defer r.unlock()
	if player {
		return r.snapshotLocked(s)
	}
	return r.watchSnapshotLocked()
}

// ID is the race's id.
func (r *Race) ID() string { return r.id }

// Done is closed when the race is finished or aborted.
func (r *Race) Done() <-chan struct{} { return r.done }

// State is where the race stands now.
func (r *Race) State() State {
	r.mu.Lock()
	defer r.unlock()
	return r.state
}

// Commitment is the published hash of the secret deal, or "" when the deal
// was named.
func (r *Race) Commitment() string { return r.commitment }

// commit sets the commitment from the deal, its salt and its grade, once
// they are fixed: it is shown in every state and lobby listing, and a
// hash each time was most of what the lobby's heartbeat allocated.
func (r *Race) commit() {
	switch {
	case r.opts.DealNamed:
		r.commitment = ""
	case r.opts.Grade != "":
		r.commitment = GradedCommitment(r.deal, r.opts.Grade, r.salt)
	default:
		r.commitment = Commitment(r.deal, r.salt)
	}
}

// Grade is the grade the secret deal was drawn from, or "".
func (r *Race) Grade() string { return r.opts.Grade }

// gradedDeals are the variant's deals of the named grade
// (CodeBadOptions for an unknown grade or a variant not graded).
func gradedDeals(variant, grade string) ([]uint64, error) {
	g, err := engine.ParseGrade(grade)
	if err != nil {
		return nil, badOption("grade %q is unknown: it must be one of easy, medium, hard", grade)
	}
	t, ok := engine.Graded(variant)
	if !ok {
		return nil, badOption("grade: the deals of %s are not graded; only those of %s are", variant, strings.Join(engine.GradedVariants(), ", "))
	}
	deals := t.Deals(g)
	if len(deals) == 0 {
		return nil, badOption("grade: no deal of %s is %s", variant, g)
	}
	return deals, nil
}

// Result is how the race ended, or nil while it is not over.
func (r *Race) Result() *Result {
	r.mu.Lock()
	defer r.unlock()
	if r.result == nil {
		return nil
	}
	res := *r.result
	return &res
}

// Move plays move text (notation, "3H>F2") for seat s; id is the request's
// id, echoed in the MovedEvent. A refused move returns an *Error and
// changes nothing.
//
// The same move sent again with the id of the seat's last logged move is
// answered with that move's MovedEvent again: its first answer may have
// been lost, or been unavailable although the log had stored it (Redis
// went away between storing it and answering), and the retry must not be
// refused as illegal.
func (r *Race) Move(s int, text, id string) error {
	m, err := engine.ParseMove(text)
	if err != nil {
		return &Error{Code: CodeIllegalMove, Reason: "bad-notation", Message: err.Error(), Err: err}
	}
	r.mu.Lock()
	defer r.unlock()
	return r.moveLocked(s, m, notation(m, text), id)
}

// notation is m's notation: text itself when that is what m prints as
// (as clients send it), so that a move costs no new string.
func notation(m engine.Move, text string) string {
	var buf [8]byte
	if b := m.AppendText(buf[:0]); string(b) != text {
		return string(b)
	}
	return text
}

// Resign ends seat s's game as resigned; id is the request's id, echoed in
// the MovedEvent. The player is then out: the referee compares foundation
// cards as for a stuck player.
func (r *Race) Resign(s int, id string) error {
	r.mu.Lock()
	defer r.unlock()
	if r.repeatedLocked(s, "resign", id) {
		return nil
	}
	if err := r.playableLocked(); err != nil {
		return err
	}
	st := &r.seats[s]
	if st.game.Status().Over() {
		return gameOverError(&st.game)
	}
	return r.resignLocked(s, id)
}

// repeatedLocked answers a request sent again: when move (notation or
// "resign") with request id is seat s's last logged entry, the seat gets
// its MovedEvent again, with the game as it is now, and it reports true.
func (r *Race) repeatedLocked(s int, move, id string) bool {
	last := r.seats[s].last
	if id == "" || last.ID != id || last.Move != move || r.stopped {
		return false
	}
	r.publishLocked(s, &MovedEvent{Race: r.id, ID: id, Seat: s, Seq: last.Seq, Move: last.Move, AtMs: last.AtMs, View: r.seats[s].game.View()})
	return true
}

// resignLocked logs and applies a resignation: it is the seat's last entry
// in the event log, numbered like a move.
func (r *Race) resignLocked(s int, id string) error {
	if err := r.heldHereLocked(s); err != nil {
		return err
	}
	st := &r.seats[s]
	rec := MoveRecord{Seat: s, Seq: len(st.moves) + 1, Move: "resign", AtMs: r.sinceStartLocked().Milliseconds(), ID: id}
	if err := r.moveLog.Append(context.Background(), rec); err != nil {
		if r.takeBackLocked(s, err) {
			return r.againLocked(func() error {
				if st.game.Status().Over() {
					return gameOverError(&st.game)
				}
				return r.resignLocked(s, id)
			})
		}
		return r.appendFailedLocked(s, "resignation", err)
	}
	st.game.Resign()
	st.last = rec
	r.log.Info().Int("seat", s).Int("score", st.game.Score()).Msg("player resigned")
	r.afterChangeLocked(feedMove{seat: s, seq: rec.Seq, move: rec.Move, atMs: rec.AtMs, resign: true}, r.moveEventsLocked(s, rec, &st.game))
	return nil
}

// heldHereLocked takes seat s back from its holder on another instance,
// if it has one, before a request of the seat's is played here.
func (r *Race) heldHereLocked(s int) error {
	if !r.seats[s].held || r.stopped {
		return nil
	}
	if err := r.holdLocked(s); err != nil {
		return r.appendFailedLocked(s, "move", err)
	}
	return nil
}

// againLocked plays a request again once its seat was taken back from
// its holder (takeBackLocked), which it does not do a second time.
func (r *Race) againLocked(play func() error) error {
	r.takingBack = true
	defer func() { r.takingBack = false }()
	return play()
}

// appendFailedLocked is the refusal of a move or resignation (what) that
// the event log did not take. Every storage failure is "unavailable": the
// race is unchanged, and the same request may be sent again.
func (r *Race) appendFailedLocked(s int, what string, err error) error {
	r.log.Error().Err(err).Int("seat", s).Msg("event log append failed")
	wrapped := fmt.Errorf("race %s: append: %w", r.id, err)
	if errors.Is(err, ErrNotOwner) {
		r.stopLocked() // the new owner has the race; requests go there now
	}
	return storageRefusal(what, err, wrapped)
}

// Stopped reports whether the race was stopped (Stop): another instance
// runs it now.
func (r *Race) Stopped() bool {
	r.mu.Lock()
	defer r.unlock()
	return r.stopped
}

func (r *Race) playableLocked() error {
	if r.stopped {
		return Errorf(CodeUnavailable, "the race moved to another server; resume it")
	}
	if r.state == Running && !r.clock.Now().Before(r.startAt.Add(r.opts.TimeLimit)) {
		r.timeUpLocked() // the time-limit timer has not run yet
	}
	switch {
	case r.state.Over():
		return Errorf(CodeRaceOver, "the race is %s", r.state)
	case r.deciding:
		return Errorf(CodeRaceOver, "the race is over; its result is being recorded")
	case r.state != Running:
		return Errorf(CodeNotStarted, "the race has not started yet")
	}
	return nil
}

// moveLocked plays move m, whose notation is text, for seat s.
func (r *Race) moveLocked(s int, m engine.Move, text, id string) error {
	if err := r.heldHereLocked(s); err != nil {
		return err
	}
	if r.repeatedLocked(s, text, id) {
		return nil
	}
	if err := r.playableLocked(); err != nil {
		return err
	}
	st := &r.seats[s]
	if st.berserk && r.berserkUpLocked(s) {
		return berserkUpError()
	}
	next := st.game // a copy: committed only once the log has the move
	if err := next.Apply(m); err != nil {
		return illegalMoveError(err)
	}
	rec := MoveRecord{Seat: s, Seq: len(st.moves) + 1, Move: text, AtMs: r.sinceStartLocked().Milliseconds(), ID: id}
	ev := r.moveEventsLocked(s, rec, &next)
	if err := r.appendLocked(rec, r.carryLocked(s, &ev), &ev); err != nil {
		if r.takeBackLocked(s, err) {
			return r.againLocked(func() error { return r.moveLocked(s, m, text, id) })
		}
		return r.appendFailedLocked(s, "move", err)
	}
	st.game = next
	st.moves, st.last = append(st.moves, m), rec
	if len(st.moves) == 1 {
		r.log.Debug().Int("seat", s).Msg("first move")
	}
	r.afterChangeLocked(feedMove{seat: s, seq: rec.Seq, move: rec.Move, atMs: rec.AtMs, play: m}, ev)
	return nil
}

// afterChangeLocked tells everyone about the new game of m's seat, which
// has played m, with ev (moveEventsLocked), and asks the referee.
func (r *Race) afterChangeLocked(m feedMove, ev moveEvents) {
	s := m.seat
	st := &r.seats[s]
	if ev.moved != nil { // nil: the seat's holder answered it (ApplyRemote)
		r.publishMoveLocked(s, ev.moved, ev.carried)
	}
	for o := range r.seats {
		if o != s {
			r.publishMoveLocked(o, ev.opp, ev.carried)
		}
	}
	// The spectators' board is made when the feed reaches the move.
	r.feedLocked(feedItem{move: m})
	if w, reason, done := r.refereeLocked(); done {
		r.finishLocked(w, reason)
		return
	}
	if c := st.computer(); c != nil {
		c.play(r, s)
	}
}

func (r *Race) sinceStartLocked() time.Duration {
	if r.startAt.IsZero() {
		return 0
	}
	return r.clock.Now().Sub(r.startAt)
}

func (r *Race) countsLocked(s int) Counts { return countsOf(&r.seats[s].game, r.seats[s].connected) }

// snapshotLocked is the StateEvent for seat s, or for spectators if s < 0
// without their boards: the spectators' boards are made from their feed
// alone (fair.go).
func (r *Race) snapshotLocked(s int) *StateEvent {
	ev := &StateEvent{
		Race: r.id, State: r.state, Variant: r.rules.Name,
		Commitment:  r.Commitment(),
		TimeLimitMs: r.opts.TimeLimit.Milliseconds(),
		Now:         r.clock.Now(),
		Result:      r.resultOutLocked(),
		Spectators:  r.spectators,
	}
	if r.match.BestOf > 1 || r.match.Prev != "" {
		m := r.match
		ev.Match = &m
	}
	if r.opts.DealNamed {
		ev.Deal = strconv.FormatUint(r.deal, 10)
	}
	ev.Players = r.playersLocked()
	if !r.startAt.IsZero() {
		start, end := r.startAt, r.startAt.Add(r.opts.TimeLimit)
		ev.StartAt, ev.EndsAt = &start, &end
	}
	if s >= 0 {
		seat := s
		v := r.boardLocked(s)
		c := r.countsLocked(r.opponentOfLocked(s))
		ev.Seat, ev.You, ev.Opponent = &seat, &v, &c
		if len(r.seats) > MinSeats {
			ev.Opponents = make([]Counts, len(r.seats))
			for i := range r.seats {
				ev.Opponents[i] = r.countsLocked(i)
			}
		}
		return ev
	}
	ev.SpectatorDelayMs = r.opts.SpectatorDelay.Milliseconds()
	return ev
}

// boardLocked is seat i's board as it may be shown now. Before the start
// the turned cards are hidden from everyone, the seat's own player
// included, so that both players see their first card at the same start
// instant and the first to join gains nothing by waiting.
func (r *Race) boardLocked(i int) engine.View {
	v := r.seats[i].game.View()
	if r.state == Waiting || r.state == Countdown {
		v.Turned = []engine.Card{}
	}
	return v
}

// Info is a race's public record: during the race, counts only; once it is
// over, the result, both game texts and every accepted move.
type Info struct {
	Race       string       `json:"race"`
	State      State        `json:"state"`
	Variant    string       `json:"variant"`
	Public     bool         `json:"public"`
	Players    []PlayerInfo `json:"players"`
	Counts     []Counts     `json:"counts"`
	Deal       string       `json:"deal,omitempty"`
	Commitment string       `json:"commitment,omitempty"`
	CreatedAt  time.Time    `json:"createdAt"`
	StartAt    *time.Time   `json:"startAt,omitempty"`
	TimeLimit  int64        `json:"timeLimitMs"`
	Result     *Result      `json:"result,omitempty"`
	Moves      []MoveRecord `json:"moves,omitempty"`
	// Spectators is the number of spectators watching now.
	Spectators int `json:"spectators"`
}

// Info returns the race's public record.
func (r *Race) Info(ctx context.Context) (Info, error) { return r.info(ctx, false) }

// info is the race's public record; whole, once it is over, even while
// its deal is sealed, with no spectators: the archive's (Archived.Info).
func (r *Race) info(ctx context.Context, whole bool) (Info, error) {
	r.mu.Lock()
	in := Info{
		Race: r.id, State: r.state, Variant: r.rules.Name, Public: r.opts.Public,
		Commitment: r.Commitment(), CreatedAt: r.createdAt, TimeLimit: r.opts.TimeLimit.Milliseconds(),
		Result: r.resultOutLocked(), Spectators: r.spectators,
	}
	if whole {
		in.Result, in.Spectators = r.result, 0
		if in.Result != nil {
			res := *in.Result
			in.Result = &res
		}
	}
	if r.opts.DealNamed {
		in.Deal = strconv.FormatUint(r.deal, 10)
	}
	in.Players, in.Counts = r.playersLocked(), make([]Counts, len(r.seats))
	for i := range r.seats {
		in.Counts[i] = r.countsLocked(i)
	}
	if !r.startAt.IsZero() {
		t := r.startAt
		in.StartAt = &t
	}
	over := r.state.Over() && (whole || !r.sealedLocked())
	r.unlock()
	if !over {
		return in, nil
	}
	moves, err := r.store.Moves(ctx, r.id)
	if err != nil {
		return in, &Error{Code: CodeUnavailable, Message: "the race's moves cannot be read now; try again shortly", Err: fmt.Errorf("race %s: read moves: %w", r.id, err)}
	}
	if len(moves) < totalMoves(in.Counts) && r.archive != nil {
		// The log holds fewer moves than the games made: the live store
		// lost it (Redis flushed, or restarted empty, or its retention
		// ran out before this copy's). The archive has them once the
		// race is archived; until then the log is all there is.
		a, ok, err := r.archive.Get(ctx, r.id)
		if err != nil {
			return in, &Error{Code: CodeUnavailable, Message: "the race's moves cannot be read now; try again shortly", Err: fmt.Errorf("race %s: read the archive: %w", r.id, err)}
		}
		if ok {
			moves = a.Info.Moves
		}
	}
	in.Moves = moves
	return in, nil
}

// playerInfoLocked describes seat i's player.
func (r *Race) playerInfoLocked(i int) PlayerInfo {
	st := &r.seats[i]
	p := PlayerInfo{Name: st.name, Player: st.player, Rating: st.rating, Taken: st.taken, Connected: st.connected, Berserk: st.berserk}
	if st.occ != nil {
		st.occ.describe(&p)
	}
	return p
}

// playersLocked describes every seat's player, by seat.
func (r *Race) playersLocked() []PlayerInfo {
	ps := make([]PlayerInfo, len(r.seats))
	for i := range r.seats {
		ps[i] = r.playerInfoLocked(i)
	}
	return ps
}

// totalMoves is the moves of every seat's counts together.
func totalMoves(counts []Counts) int {
	n := 0
	for _, c := range counts {
		n += c.Moves
	}
	return n
}
