package redislobby_test

import (
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/lobby/redislobby"
	"sirtommy/race/redisrace/redistest"
)

func TestPresenceSumsLiveInstances(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	ctx := t.Context()
	keys := redislobby.Keys{Prefix: "p:"}
	t0 := time.Unix(1000, 0)
	a := redislobby.NewPresence(rdb, keys, "a", fixedClock{t0})
	b := redislobby.NewPresence(rdb, keys, "b", fixedClock{t0})
	if o, err := a.Share(ctx, lobby.Presence{Online: 2, Queued: 1, Queues: map[string]int{"classic": 1}}); err != nil || o.Online != 0 {
		t.Fatalf("alone: %+v, %v", o, err)
	}
	o, err := b.Share(ctx, lobby.Presence{Online: 5, Racing: 2})
	if err != nil || o.Online != 2 || o.Queued != 1 || o.Queues["classic"] != 1 || o.Racing != 0 {
		t.Fatalf("b sees a: %+v, %v", o, err)
	}
	if o, _ := a.Share(ctx, lobby.Presence{Online: 2}); o.Online != 5 || o.Racing != 2 {
		t.Fatalf("a sees b: %+v", o)
	}
	// b stops sharing; after the TTL a no longer counts it.
	late := redislobby.NewPresence(rdb, keys, "a", fixedClock{t0.Add(redislobby.PresenceTTL + time.Second)})
	if o, _ := late.Share(ctx, lobby.Presence{Online: 2}); o.Online != 0 {
		t.Fatalf("a still sees b after its TTL: %+v", o)
	}
	if n, _ := rdb.HLen(ctx, keys.PresenceKey()).Result(); n != 1 {
		t.Fatalf("%d instances stored, want only a", n)
	}
	if err := a.Forget(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.HLen(ctx, keys.PresenceKey()).Result(); n != 0 {
		t.Fatalf("%d instances after forget", n)
	}
}
