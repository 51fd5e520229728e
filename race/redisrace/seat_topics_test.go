package redisrace_test

import (
	"testing"
	"time"

	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace"
	"sirtommy/race/redisrace/redistest"
)

// TestRemotePlayerFollowsOnlyItsSeat: a player connected to b, of a race
// a runs, follows only its own seat's topic once its seat is known, so b
// no longer receives (and decodes, and drops at the gate) every event of
// the other seat. On the old code b followed both seats' topics.
func TestRemotePlayerFollowsOnlyItsSeat(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	rdb := redistest.Start(t, redistest.Options{}).Client(t)
	a, b := newInstance(t, rdb, "a", clock), newInstance(t, rdb, "b", clock)
	r, err := a.svc.Create(race.Options{Deal: testDeal, DealNamed: true})
	if err != nil {
		t.Fatal(err)
	}
	h, err := b.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	var sub recorder
	tk, err := h.Join("p", "", &sub)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.bus.Sync(t.Context()); err != nil { // b's unsubscribe has reached Redis
		t.Fatal(err)
	}
	keys := redisrace.Keys{Prefix: "test:"}
	own, other := keys.Channel(race.SeatTopic(r.ID(), tk.Seat)), keys.Channel(race.SeatTopic(r.ID(), 1-tk.Seat))
	n, err := rdb.PubSubNumSub(t.Context(), own, other).Result()
	if err != nil {
		t.Fatal(err)
	}
	if n[own] != 1 || n[other] != 0 {
		t.Errorf("subscribers of seat %d's topic %d (want 1: b), of the other seat's %d (want 0)", tk.Seat, n[own], n[other])
	}
}
