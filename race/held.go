package race

// The holder's side of a seat-played move (docs/redis.md, "Seat-played
// moves"): the instance with a seat's connection plays the seat's moves
// itself when the race runs on another instance, and sends the owner
// each move it logged, which the owner counts (Race.ApplyRemote).

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"sirtommy/engine"
)

// HoldingStore is a Store in which an instance can hold a race's seat
// (redisrace.Store): the log then takes the seat's moves from that holder
// alone, whichever instance owns the race.
type HoldingStore interface {
	// ClaimSeat makes this instance the holder of the seat, shutting out
	// any earlier holder; it fails with ErrRaceEnded once the race's end
	// sealed the log.
	ClaimSeat(ctx context.Context, raceID string, seat int) (holder string, err error)
	// AppendHeld appends m as holder, publishing events with it (see
	// CarryingStore); it fails with ErrNotHolder once another holds the
	// seat and with ErrRaceEnded once the log is sealed.
	AppendHeld(ctx context.Context, raceID, holder string, m MoveRecord, events []Carried) (published bool, err error)
	// ReleaseSeat gives the seat back to the race's owner, this instance:
	// its own appends of the seat's moves are taken again, and no
	// holder's.
	ReleaseSeat(ctx context.Context, raceID string, seat int) error
}

// Teller reaches the connections to a race's other seats on the
// holder's instance (the fleet's), so that a move played there updates an
// opponent there without going by the race's owner and back.
type Teller interface {
	// Listening lists the seats of race id, other than seat, whose
	// connection here takes the race's events now.
	Listening(id string, seat int) []int
	// Tell hands ev to the connection here of each of seats that still
	// takes the race's events.
	Tell(id string, seats []int, ev *OpponentEvent)
}

// HeldSeat plays one seat of a race that runs on another instance: it
// checks, applies, logs and answers the seat's moves from a copy of the
// seat's game, and sends each logged move to the race's owner (a
// RecordEvent on the race's RecordsTopic: carried by the append where the
// bus can, else published after it). Only moves: a resignation, berserk
// or leaving goes to the owner, after which the seat is opened again.
// Its methods are safe for concurrent use; a seat's moves are played one
// at a time.
type HeldSeat struct {
	id     string
	seat   int
	holder string
	store  HoldingStore
	bus    Bus
	clock  Clock
	tell   Teller // nil: the owner tells every opponent

	mu        sync.Mutex
	game      engine.Game
	last      MoveRecord
	seq       int // the seat's last logged seq
	startAt   time.Time
	timeLimit time.Duration
	firstMove time.Duration // the first-move deadline, after startAt
	berserk   bool
	state     State

	// latest answers the seat's last logged move, for ViewAhead, which
	// must not wait for mu: a state reaches a connection under its race's
	// lock, and when this instance runs the race too (it took the race
	// over), a move here holds mu while it waits for that lock to have
	// the race count it (PublishLocal). The two would wait for each
	// other for ever.
	latest atomic.Pointer[MovedEvent]
}

// OpenHeld claims seat seat of the race rec for this instance and
// rebuilds the seat's game from the race's log moves (all of its seats'
// or the seat's alone), read after the claim: no move of the seat's can
// be logged after that read by anyone else. d gives the clock, the store
// (a HoldingStore) and the bus.
func OpenHeld(ctx context.Context, rec *Record, seat int, moves func(context.Context) ([]MoveRecord, error), d Deps) (*HeldSeat, error) {
	hs, ok := d.Store.(HoldingStore)
	if !ok {
		return nil, fmt.Errorf("race %s: the store cannot hold seats", rec.ID)
	}
	opts := rec.Options
	opts.fill()
	if seat < 0 || seat >= len(rec.Seats) {
		return nil, fmt.Errorf("race %s: no seat %d", rec.ID, seat)
	}
	rules, err := engine.Variant(opts.Variant)
	if err != nil {
		return nil, fmt.Errorf("race %s: %w", rec.ID, err)
	}
	holder, err := hs.ClaimSeat(ctx, rec.ID, seat)
	if err != nil {
		return nil, err
	}
	logged, err := moves(ctx)
	if err != nil {
		return nil, err
	}
	h := &HeldSeat{
		id: rec.ID, seat: seat, holder: holder, store: hs, bus: d.Bus, clock: d.Clock,
		game: engine.New(rules, rec.Deal), startAt: rec.StartAt, timeLimit: opts.TimeLimit, firstMove: opts.FirstMoveTimeout,
		berserk: rec.Seats[seat].Berserk, state: rec.State,
	}
	for _, m := range logged {
		if m.Seat != seat {
			continue
		}
		if _, _, err := replayRecord(&h.game, m); err != nil {
			return nil, fmt.Errorf("race %s: seat %d move %d %q: %w", rec.ID, seat, m.Seq, m.Move, err)
		}
		h.seq, h.last = m.Seq, m
	}
	if h.seq > 0 {
		h.latest.Store(h.movedLocked(h.last))
	}
	return h, nil
}

// TellHere has the holder tell the opponents' connections on its
// instance of each move itself, through t: the owner then sends them
// nothing of it (RecordEvent.Told). Call it before the first Move.
func (h *HeldSeat) TellHere(t Teller) { h.tell = t }

// Seat is the seat held.
func (h *HeldSeat) Seat() int { return h.seat }

// Move plays move text for the seat, with request id id, and returns
// the MovedEvent that answers it. Its errors are Race.Move's: a move the
// log has already (the same id, sent again) is answered again; a move
// after the race's end is refused as race over; one refused because the
// seat is held elsewhere now (its player resumed there) or that the log
// could not take is unavailable.
func (h *HeldSeat) Move(text, id string) (*MovedEvent, error) {
	m, err := engine.ParseMove(text)
	if err != nil {
		return nil, &Error{Code: CodeIllegalMove, Reason: "bad-notation", Message: err.Error(), Err: err}
	}
	text = notation(m, text)
	h.mu.Lock()
	defer h.mu.Unlock()
	if id != "" && h.last.ID == id && h.last.Move == text {
		return h.movedLocked(h.last), nil
	}
	if err := h.playableLocked(); err != nil {
		return nil, err
	}
	next := h.game // a copy: committed only once the log has the move
	if err := next.Apply(m); err != nil {
		return nil, illegalMoveError(err)
	}
	rec := MoveRecord{Seat: h.seat, Seq: h.seq + 1, Move: text, AtMs: h.clock.Now().Sub(h.startAt).Milliseconds(), ID: id}
	ev := &RecordEvent{Race: h.id, Record: rec}
	if h.tell != nil {
		ev.Told = h.tell.Listening(h.id, h.seat)
	}
	var carried []Carried
	if c, ok := h.bus.(Carrier); ok {
		if cr, ok := c.Carry(RecordsTopic(h.id), ev); ok {
			carried = []Carried{cr}
		}
	}
	published, err := h.store.AppendHeld(context.Background(), h.id, h.holder, rec, carried)
	if err != nil {
		return nil, h.appendFailedLocked(err)
	}
	if published {
		// The owner may be this instance (it took the race over since the
		// seat was opened): the bus does not deliver its own messages
		// back from Redis.
		h.bus.PublishLocal(RecordsTopic(h.id), ev)
	} else {
		h.bus.Publish(RecordsTopic(h.id), ev)
	}
	h.game, h.seq, h.last = next, rec.Seq, rec
	moved := h.movedLocked(rec)
	h.latest.Store(moved)
	if len(ev.Told) > 0 {
		// Under the seat's lock: each opponent hears the seat's moves in
		// their order.
		h.tell.Tell(h.id, ev.Told, opponentEvent(h.id, h.seat, &h.game, true))
	}
	return moved, nil
}

// ViewAhead is the seat's view when its holder has played more moves
// than moves, the count of a view made elsewhere (the owner's snapshot,
// which may not have counted the last ones yet). It never waits for a
// move in progress, whose answer follows (latest).
func (h *HeldSeat) ViewAhead(moves int) (engine.View, bool) {
	m := h.latest.Load()
	if m == nil || m.View.Moves <= moves {
		return engine.View{}, false
	}
	return m.View, true
}

// movedLocked is the MovedEvent of the seat's logged move rec, the game as
// it is now.
func (h *HeldSeat) movedLocked(rec MoveRecord) *MovedEvent {
	return &MovedEvent{Race: h.id, ID: rec.ID, Seat: h.seat, Seq: rec.Seq, Move: rec.Move, AtMs: rec.AtMs, View: h.game.View()}
}

// playableLocked refuses a move the race would refuse for its time: before
// its start, after its time limit, after the seat's berserk half, and a
// first move after the first-move deadline (the owner aborts the race
// then, after reading the log for the first moves logged before it:
// Race.firstMoveCheck). The race's other ends (a win, everyone out)
// reach the holder as the log's seal (ErrRaceEnded).
func (h *HeldSeat) playableLocked() error {
	now := h.clock.Now()
	switch {
	case h.state.Over():
		return Errorf(CodeRaceOver, "the race is %s", h.state)
	case h.startAt.IsZero() || now.Before(h.startAt):
		return Errorf(CodeNotStarted, "the race has not started yet")
	case !now.Before(h.startAt.Add(h.timeLimit)):
		return Errorf(CodeRaceOver, "the race's time is up")
	case h.berserk && !now.Before(h.startAt.Add(h.timeLimit/2)):
		return berserkUpError()
	case h.seq == 0 && !now.Before(h.startAt.Add(h.firstMove)):
		return Errorf(CodeRaceOver, "no first move in time: the race is aborted")
	}
	return nil
}

// appendFailedLocked is the refusal of a move the log did not take.
func (h *HeldSeat) appendFailedLocked(err error) error {
	wrapped := fmt.Errorf("race %s seat %d: append: %w", h.id, h.seat, err)
	switch {
	case errors.Is(err, ErrRaceEnded):
		h.state = Finished
	case errors.Is(err, ErrNotHolder):
		return &Error{Code: CodeUnavailable, Message: "the seat is played from another connection now", Err: wrapped}
	}
	return storageRefusal("move", err, wrapped)
}
