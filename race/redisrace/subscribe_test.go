package redisrace_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace"
	"sirtommy/race/redisrace/redistest"
)

// TestSubscriptionsGoTogether: subscriptions made at once, which the bus
// sends to Redis in runs (TestRunTakesOneKindInARow), are every one live
// after Sync, and gone after their cancels; changes of one channel keep
// their order (subscribed, unsubscribed, subscribed again: it is
// subscribed). How many commands they took depends on how busy the
// machine is, and is logged.
func TestSubscriptionsGoTogether(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	a := redisrace.NewBus(rdb, redisrace.Keys{}, "instance-a", zerolog.Nop())
	b := redisrace.NewBus(rdb, redisrace.Keys{}, "instance-b", zerolog.Nop())
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	if err := rdb.ConfigResetStat(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	const topics = 200
	recs := make([]*racetest.Recorder, topics)
	cancels := make([]func(), topics)
	for i := range recs {
		recs[i] = &racetest.Recorder{}
		cancels[i] = a.Subscribe(fmt.Sprint("R", i, "/watch"), recs[i])
	}
	again := &racetest.Recorder{}
	a.Subscribe("X/watch", again)()
	a.Subscribe("X/watch", again)
	ctx, cancel := context.WithTimeout(t.Context(), settleWait)
	defer cancel()
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d subscriptions made at once (and Sync's marker) took %d SUBSCRIBE commands", topics+2, srv.CommandCalls(t)["subscribe"])
	for i := range recs {
		b.Publish(fmt.Sprint("R", i, "/watch"), &race.PresenceEvent{Race: fmt.Sprint("R", i)})
	}
	b.Publish("X/watch", &race.PresenceEvent{Race: "X"})
	deadline := time.Now().Add(settleWait)
	for i, r := range append(recs, again) {
		for len(r.Events()) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("topic %d: nothing delivered", i)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for _, c := range cancels {
		c()
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d unsubscriptions made at once (and Sync's markers) took %d UNSUBSCRIBE commands", topics, srv.CommandCalls(t)["unsubscribe"])
	for i := range recs {
		b.Publish(fmt.Sprint("R", i, "/watch"), &race.PresenceEvent{Race: fmt.Sprint("R", i)})
	}
	b.Publish("X/watch", &race.PresenceEvent{Race: "X", Seat: 1})
	for len(again.Events()) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the subscription still live was not delivered to")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i, r := range recs {
		if n := len(r.Events()); n != 1 {
			t.Errorf("topic %d: %d events, want 1 (its subscription was cancelled before the second)", i, n)
		}
	}
}

// BenchmarkSubscribeAndSync measures what a connection's first request
// to a race on another instance waits for before it is forwarded: a
// subscription to a new channel made live (Sync). It reports the
// marker messages a Sync published (PUBLISH commands per op).
func BenchmarkSubscribeAndSync(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	rdb := srv.Client(b)
	bus := redisrace.NewBus(rdb, redisrace.Keys{}, "instance-a", zerolog.Nop())
	b.Cleanup(func() { _ = bus.Close() })
	if err := rdb.ConfigResetStat(b.Context()).Err(); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		n++
		cancel := bus.Subscribe(fmt.Sprint("R", n, "/watch"), &racetest.Recorder{})
		ctx, stop := context.WithTimeout(b.Context(), settleWait)
		if err := bus.Sync(ctx); err != nil {
			b.Fatal(err)
		}
		stop()
		cancel()
	}
	b.ReportMetric(float64(srv.CommandCalls(b)["publish"])/float64(n), "publish/op")
}
