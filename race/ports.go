package race

import (
	"context"
	"time"
)

// MoveRecord is one accepted move as the event log keeps it.
type MoveRecord struct {
	Seat int    `json:"seat"`
	Seq  int    `json:"seq"`  // 1 for the seat's first move, then 2, 3, ...
	Move string `json:"move"` // in notation, "3H>F2"
	// AtMs is the time of the move in milliseconds after the race started.
	AtMs int64 `json:"atMs"`
}

// At is the move's offset from the start of the race.
func (m MoveRecord) At() time.Duration { return time.Duration(m.AtMs) * time.Millisecond }

// Store is the race's event log: every accepted move, in order. The
// in-memory one is memrace.Store; a Redis stream will implement it later.
// A move is accepted only once Append has returned nil.
type Store interface {
	// Append adds one accepted move to race raceID's log.
	Append(ctx context.Context, raceID string, m MoveRecord) error
	// Moves returns race raceID's moves in the order they were appended.
	Moves(ctx context.Context, raceID string) ([]MoveRecord, error)
}

// Subscriber receives the events published on a topic. Deliver is called
// with the race's lock held: it must not block and must not call back into
// the race. A subscriber that cannot keep up drops itself.
type Subscriber interface {
	Deliver(ev Event)
}

// Bus fans events out to subscribers by topic. The in-memory one is
// memrace.Bus; Redis pub/sub will implement it later. Events published on
// one topic reach each subscriber in the order they were published.
type Bus interface {
	// Publish delivers ev to every current subscriber of topic.
	Publish(topic string, ev Event)
	// Subscribe adds s to topic until cancel is called.
	Subscribe(topic string, s Subscriber) (cancel func())
}

// SeatTopic is the topic carrying what the player in seat sees.
func SeatTopic(raceID string, seat int) string {
	if seat == 0 {
		return raceID + "/seat/0"
	}
	return raceID + "/seat/1"
}

// WatchTopic is the topic carrying what spectators see.
func WatchTopic(raceID string) string { return raceID + "/watch" }
