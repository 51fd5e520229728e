package redisrace_test

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace"
	"sirtommy/race/redisrace/redistest"
)

// A move's event for another instance rides on its append: it reaches
// that instance's subscribers once, in order with the bus's own, and a
// move sent again after its answer was lost is not published twice.
func TestCarriedEventReachesOtherInstanceOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	a := redisrace.NewBus(rdb, redisrace.Keys{}, "instance-a", zerolog.Nop())
	b := redisrace.NewBus(rdb, redisrace.Keys{}, "instance-b", zerolog.Nop())
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	store := redisrace.NewStore(rdb, redisrace.StoreOptions{})
	topic := race.SeatTopic("R", 1)
	got := make(racetest.Chan, 16)
	cancel := b.Subscribe(topic, got)
	defer cancel()
	ctx, done := context.WithTimeout(t.Context(), settleWait)
	defer done()
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	move := race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1", ID: "m1"}
	ev := &race.OpponentEvent{Race: "R", Seat: 0, Counts: race.Counts{Score: 1, Stock: 51, Moves: 1, Connected: true}}
	c, ok := a.Carry(topic, ev)
	if !ok {
		t.Fatal("the bus holds nothing for the topic, yet it does not carry")
	}
	published, err := store.AppendCarrying(ctx, "R", move, []race.Carried{c})
	if err != nil || !published {
		t.Fatalf("append carrying an event: published %v, %v", published, err)
	}
	if e, ok := got.Next(t).(*race.OpponentEvent); !ok || *e != *ev {
		t.Fatalf("the other instance got %#v, want %#v", e, ev)
	}

	// The same move again, as a request sent again after its answer was
	// lost: logged already, and published already.
	again, _ := a.Carry(topic, ev)
	for _, events := range [][]race.Carried{{again}, nil} {
		published, err = store.AppendCarrying(ctx, "R", move, events)
		if err != nil || !published {
			t.Fatalf("the same move again: published %v, %v; want the first append's events reported out", published, err)
		}
	}
	// A marker by the bus: were the event published again, it would come first.
	marker := &race.PresenceEvent{Race: "R", Seat: 0, Connected: true}
	a.Publish(topic, marker)
	if e := got.Next(t); e.EventType() != marker.EventType() {
		t.Fatalf("after the same move again the other instance got %#v, want the marker only", e)
	}

	// A move appended without events reports them not out: the race
	// publishes them by the bus, and a second try of it does too.
	plain := race.MoveRecord{Seat: 0, Seq: 2, Move: "2S>W1", ID: "m2"}
	for range 2 {
		if published, err := store.AppendCarrying(ctx, "R", plain, nil); err != nil || published {
			t.Fatalf("append without events: published %v, %v; want false", published, err)
		}
	}
}
