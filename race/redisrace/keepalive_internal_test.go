package redisrace

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// A quiet subscription connection is pinged (a dead one is found by the
// ping's failed write and made again), and a ping's answer does not
// reach the bus's subscribers. The bus reads its subscription itself, so
// nothing of go-redis's channel pings it any more.
func TestBusPingsAQuietSubscription(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	b := newBus(srv.Client(t), Keys{}, "instance-a", zerolog.Nop(), 20*time.Millisecond)
	t.Cleanup(func() { _ = b.Close() })
	var got racetest.Recorder
	defer b.Subscribe("R/all", &got)()
	if err := b.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := srv.CommandCalls(t)["ping"]
	deadline := time.Now().Add(10 * time.Second)
	for srv.CommandCalls(t)["ping"] < before+3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d pings in 10 s of a quiet subscription; want 3 or more", srv.CommandCalls(t)["ping"]-before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(got.Events()); n != 0 {
		t.Fatalf("the subscriber got %d events from pings", n)
	}
	if b.Stats.DecodeErrs.Load() != 0 || b.Stats.Lapses.Load() != 0 {
		t.Fatalf("decode errors %d, lapses %d; want none", b.Stats.DecodeErrs.Load(), b.Stats.Lapses.Load())
	}
}
