package redisrace

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/redisrace/redistest"
)

// Carry carries nothing past an event the bus still holds, on any topic:
// the carried one would reach Redis first, and a connection's events on
// its own topic and on its seat's must keep their order (the fleet's
// gate waits for a joined before the seat's events).
func TestCarryWaitsForTheBusQueue(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	b := NewBus(srv.Client(t), Keys{}, "instance-a", zerolog.Nop())
	t.Cleanup(func() { _ = b.Close() })
	ev := &race.PresenceEvent{Race: "R", Seat: 0, Connected: true}

	b.pending.Add(1) // as Publish does, before the queue: here, another topic's
	if _, ok := b.Carry(race.SeatTopic("R", 1), ev); ok {
		t.Fatal("carried past an event queued before it")
	}
	b.pending.Add(-1) // as the publisher does once Redis has it
	if _, ok := b.Carry(race.SeatTopic("R", 1), ev); !ok {
		t.Fatal("not carried once the queue was sent")
	}

	// Publish's own count comes back to zero once Redis has the event:
	// the publisher's pipeline answers it some time after the queue took
	// it, so the test waits for that rather than for a Sync (whose marker
	// goes by a command of its own, not through the queue).
	b.Publish("R/conn/a", ev)
	deadline := time.Now().Add(10 * time.Second)
	for b.pending.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d events still counted on their way after 10 s", b.pending.Load())
		}
		time.Sleep(time.Millisecond)
	}
	if b.Stats.PublishErrs.Load() != 0 || b.Stats.Dropped.Load() != 0 {
		t.Fatal("the event was not published")
	}
}
