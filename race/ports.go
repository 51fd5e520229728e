package race

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// MoveRecord is one accepted move as the event log keeps it.
type MoveRecord struct {
	Seat int    `json:"seat"`
	Seq  int    `json:"seq"`  // 1 for the seat's first move, then 2, 3, ...
	Move string `json:"move"` // in notation, "3H>F2"
	// AtMs is the time of the move in milliseconds after the race started.
	AtMs int64 `json:"atMs"`
	// ID is the id of the request that made the move, so that the same
	// request sent again is answered, not refused (see Race.Move).
	ID string `json:"id,omitempty"`
}

// At is the move's offset from the start of the race.
func (m MoveRecord) At() time.Duration { return time.Duration(m.AtMs) * time.Millisecond }

// ErrConflict is what Store.Append returns (wrapped) when the seat's log
// already holds a different move under that seq: another instance wrote
// the seat's log first. Nothing was appended.
var ErrConflict = errors.New("the seat's log already has another move with that seq")

// ErrUnavailable marks a store or bus that cannot be reached (Redis down):
// nothing was stored, and trying again later may work.
var ErrUnavailable = errors.New("storage unavailable")

// Store is the race's event log: every accepted move, in order. The
// in-memory one is memrace.Store; redisrace.Store keeps a Redis stream per
// race. A move is accepted only once Append has returned nil.
type Store interface {
	// Append adds one accepted move to race raceID's log. It is idempotent
	// per seat and seq: appending a record whose seat and seq are already
	// in the log with the same move does nothing and returns nil; with
	// another move it returns an error wrapping ErrConflict. A seat's seqs
	// must grow: a seq not above the seat's last one that is not in the log
	// is a conflict too.
	Append(ctx context.Context, raceID string, m MoveRecord) error
	// Moves returns race raceID's moves in the order they were appended.
	Moves(ctx context.Context, raceID string) ([]MoveRecord, error)
}

// LogOpener is implemented by stores that can hand a race its own log
// once (memrace.Store), so that each move appends to it without finding
// the race's log among every other race's first. A Store that wraps
// another to change its Append must not pass the other's OpenLog through
// (embed it as a Store, not as its own type): the race would append
// around the wrapper.
type LogOpener interface {
	// OpenLog returns race raceID's log, made if it has none yet.
	OpenLog(raceID string) MoveLog
}

// MoveLog is one race's event log: Append is Store.Append for that race.
type MoveLog interface {
	Append(ctx context.Context, m MoveRecord) error
}

// openLog is race raceID's log in store: the store's own handle when it
// has one (LogOpener), otherwise Store.Append with the race's id.
func openLog(store Store, raceID string) MoveLog {
	if o, ok := store.(LogOpener); ok {
		return o.OpenLog(raceID)
	}
	return storeLog{store: store, raceID: raceID}
}

// storeLog is one race's log in a Store that has no handles.
type storeLog struct {
	store  Store
	raceID string
}

func (l storeLog) Append(ctx context.Context, m MoveRecord) error {
	return l.store.Append(ctx, l.raceID, m)
}

// ErrNotOwner is what a Redis-mode store returns (wrapped, with
// ErrUnavailable) when another instance has taken the race over: this
// instance's copy must stop, and the request go to the new owner.
var ErrNotOwner = errors.New("another instance owns the race now")

// ErrNotHolder is what a Redis-mode store returns (wrapped, with
// ErrUnavailable) for an append of a seat's move by an instance that does
// not hold the seat (redisrace.Store.ClaimSeat): its player resumed the
// seat elsewhere, and plays there now.
var ErrNotHolder = errors.New("another instance holds the seat now")

// ErrRaceEnded is what a Redis-mode store returns (wrapped) for an append
// of a new move after the race's end sealed its log: the move is not the
// race's, whichever instance made it.
var ErrRaceEnded = errors.New("the race's log is sealed: the race is over")

// Retainer is implemented by stores that keep a race's records only for a
// while after it ends (redisrace.Store: the retention period). The race
// calls Finished once, when it ends.
type Retainer interface {
	Finished(ctx context.Context, raceID string) error
}

// Forgetter is implemented by stores that keep logs in this process's
// memory (memrace.Store): the Service calls Forget when it evicts a
// finished race, so that memory does not grow with every race ever run.
type Forgetter interface {
	Forget(ctx context.Context, raceID string) error
}

// Subscriber receives the events published on a topic. Deliver is called
// with the race's lock held: it must not block and must not call back into
// the race. A subscriber that cannot keep up drops itself.
type Subscriber interface {
	Deliver(ev Event)
}

// Queuer is a Subscriber whose events can be queued under the race's
// lock and written once it is released, so that the lock is never held
// across a write to a socket (the web's connections). The race calls
// Queue where it would call Deliver, and Flush after unlocking, in the
// same goroutine, for each Queue that returned true.
type Queuer interface {
	Subscriber
	// Queue queues ev; like Deliver it never blocks. It reports whether
	// the caller must call Flush: this call took the writing of the
	// queue on itself, and nobody else will write it.
	Queue(ev Event) bool
	// Flush writes what is queued, without waiting for the client.
	Flush()
}

// Sourced is implemented by a Subscriber that takes only some instances'
// events (Redis mode): a bus that knows which instance published an
// event (redisrace.Bus) calls DeliverFrom instead of Deliver, with origin
// "" for this instance's own. Only a race's owner publishes on its
// topics, but an instance that ran it before may have had events held on
// the way (a network partition) that arrive after the race changed
// hands: they are old, and must reach nobody.
type Sourced interface {
	Subscriber
	DeliverFrom(origin string, ev Event)
}

// Remote is implemented by a Subscriber that stands, on the race's owner,
// for a connection on another instance (Redis mode). That instance
// subscribes to the race's topics itself, once for all its connections,
// so the race delivers to such a subscriber only what is meant for its
// connection alone (its JoinedEvent, its snapshot, ReplacedEvent) and
// never subscribes it to a topic: the owner publishes each event once.
type Remote interface {
	Remote() bool
}

// Bus fans events out to subscribers by topic. The in-memory one is
// memrace.Bus; redisrace.Bus carries them between instances over Redis
// pub/sub. Events published on
// one topic reach each subscriber in the order they were published.
//
// A race uses the bus for its own topics only where the bus relays them
// (Relays: other instances, and the fleet's proxies, may follow them). On
// any other bus its connections are all its topics have, and the race
// delivers to them itself, in the same order (fanout.go).
type Bus interface {
	// Publish delivers ev to every current subscriber of topic, on every
	// instance.
	Publish(topic string, ev Event)
	// PublishLocal delivers ev to this instance's subscribers of topic
	// only: a race uses it for a topic no connection on another instance
	// follows (no remote seat, no remote spectator), so that a race whose
	// people are all on its owner sends nothing to other instances. A
	// remote connection is known to the owner (Remote) before the first
	// event it may see: the gate of a fleet proxy drops what the owner
	// published before it sent that connection its joined or snapshot.
	// On a bus that does not relay it is Publish.
	PublishLocal(topic string, ev Event)
	// Relays reports whether the bus carries events to other instances
	// (redisrace.Bus does; memrace.Bus does not).
	Relays() bool
	// Subscribe adds s to topic until cancel is called.
	Subscribe(topic string, s Subscriber) (cancel func())
}

// SeatTopic is the topic carrying what the player in seat sees.
func SeatTopic(raceID string, seat int) string { return raceID + "/seat/" + strconv.Itoa(seat) }

// RecordsTopic is the topic on which the holders of a race's seats on
// other instances send its owner the moves they played (RecordEvent).
func RecordsTopic(raceID string) string { return raceID + "/records" }

// WatchTopic is the topic carrying what spectators see.
func WatchTopic(raceID string) string { return raceID + "/watch" }
