package redisrace

import (
	"testing"

	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/redisrace/redistest"
)

// Carry carries nothing past an event the bus still holds for the topic:
// the carried one would reach Redis first.
func TestCarryWaitsForTheBusQueue(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	b := NewBus(srv.Client(t), Keys{}, "instance-a", zerolog.Nop())
	t.Cleanup(func() { _ = b.Close() })
	topic, other := race.SeatTopic("R", 1), race.SeatTopic("S", 1)
	ev := &race.PresenceEvent{Race: "R", Seat: 0, Connected: true}

	b.pend(b.keys.Channel(topic), 1) // as Publish does, before the queue
	if _, ok := b.Carry(topic, ev); ok {
		t.Fatal("carried past an event queued on the topic")
	}
	if _, ok := b.Carry(other, ev); !ok {
		t.Fatal("an event queued on another topic held this one back")
	}
	b.pend(b.keys.Channel(topic), -1) // as the publisher does once Redis has it
	if _, ok := b.Carry(topic, ev); !ok {
		t.Fatal("not carried once the queue was sent")
	}
	if len(b.pending) != 0 {
		t.Fatalf("pending counts left: %v", b.pending)
	}
}
