package redisrace_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/fleet"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace"
	"sirtommy/race/redisrace/redistest"
)

// deafBus is an instance's bus that never hears a race's new owner
// announced (fleet.OwnerTopic): the instance was cut off from Redis when
// the announcement went out.
type deafBus struct{ *redisrace.Bus }

// Subscribe drops the subscriptions to owner announcements.
func (b deafBus) Subscribe(topic string, s race.Subscriber) func() {
	if strings.HasSuffix(topic, fleet.OwnerTopic("")) {
		return func() {}
	}
	return b.Bus.Subscribe(topic, s)
}

// deaf makes an instance's bus a deafBus.
func deaf(d *race.Deps) { d.Bus = deafBus{d.Bus.(*redisrace.Bus)} }

// isState, isJoined and the like pick events out of a recorder.
func isState(ev race.Event) bool  { _, ok := ev.(*race.StateEvent); return ok }
func isJoined(ev race.Event) bool { _, ok := ev.(*race.JoinedEvent); return ok }

// TestLostLeaseReattachesConnections: instance a runs a race with an idle
// player and a spectator attached to it there, and never hears that b
// took the race over (the announcement is lost: a was cut off). When a
// finds its lease gone, it attaches both to the race on b at once: they
// get a fresh joined and state (the spectator's one epoch on) without
// sending anything, and the idle player's next move goes to b. On the
// code before, a dropped the race and nobody was attached again.
func TestLostLeaseReattachesConnections(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	rdb := redistest.Start(t, redistest.Options{}).Client(t)
	a := newInstance(t, rdb, "a", clock, deaf)
	b := newInstance(t, rdb, "b", clock)
	r, err := a.svc.Create(race.Options{Deal: testDeal, DealNamed: true})
	if err != nil {
		t.Fatal(err)
	}
	var p0, p1, spec recorder
	h0, err := a.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h0.Join("idle", "", &p0); err != nil {
		t.Fatal(err)
	}
	h1, err := b.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h1.Join("mover", "", &p1); err != nil {
		t.Fatal(err)
	}
	hs, err := a.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Watch(&spec)()
	clock.Advance(race.DefaultCountdown)
	rules, _ := engine.Variant("")
	g0, g1 := engine.New(rules, testDeal), engine.New(rules, testDeal)
	play(t, h0, &g0, 0, 2)
	play(t, h1, &g1, 1, 2)

	// a's lease runs out and b takes the race over (b's next move goes to
	// a, whose log refuses it as not a's any more: b then finds the lease
	// its own); a hears nothing of it.
	id := r.ID()
	rdb.Del(t.Context(), redisrace.Keys{Prefix: "test:"}.Owner(id))
	if ok, err := b.cluster.Claim(t.Context(), id); !ok || err != nil {
		t.Fatalf("b claims: %v %v", ok, err)
	}
	play(t, h1, &g1, 1, 1)
	if _, err := b.svc.Get(id); err != nil {
		t.Fatalf("b does not run the race: %v", err)
	}
	n0, ns := len(p0.Events()), len(spec.Events())

	// a's lease loop finds the lease lost.
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan struct{})
	go func() { a.fleet.Run(ctx, 20*time.Millisecond); close(ran) }()
	defer func() { cancel(); <-ran }()
	after := func(rec *recorder, from int, what string, ok func(race.Event) bool) race.Event {
		t.Helper()
		return rec.waitFor(t, what, func(ev race.Event) bool {
			for _, e := range rec.Events()[from:] {
				if ok(e) {
					return true
				}
			}
			return false
		})
	}
	after(&p0, n0, "a fresh joined for the idle player", isJoined)
	after(&spec, ns, "a fresh state for the spectator", func(ev race.Event) bool {
		st, ok := ev.(*race.StateEvent)
		return ok && st.Ver>>32 == 1 && st.Boards[1].Moves == 3
	})
	// The idle player plays on, through b.
	play(t, h0, &g0, 0, 1)
	after(&p1, 0, "the idle player's move on b", func(ev race.Event) bool {
		o, ok := ev.(*race.OpponentEvent)
		return ok && o.Counts.Moves == 3
	})
}

// TestLapseReattachesConnections: the pub/sub connections drop and come
// back (Redis closes them): whatever was published meanwhile is lost, so
// instance a, whose idle player and spectator follow a race that runs on
// b, attaches both again at once and they get a fresh joined and state
// without sending anything. On the code before, nothing came until one
// of them sent a request, which a spectator never does.
func TestLapseReattachesConnections(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	rdb := redistest.Start(t, redistest.Options{}).Client(t)
	a := newInstance(t, rdb, "a", clock)
	b := newInstance(t, rdb, "b", clock)
	r, err := b.svc.Create(race.Options{Deal: testDeal, DealNamed: true})
	if err != nil {
		t.Fatal(err)
	}
	var p0, p1, spec recorder
	h0, err := a.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h0.Join("idle", "", &p0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Join("mover", "", &p1); err != nil {
		t.Fatal(err)
	}
	hs, err := a.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Watch(&spec)()
	clock.Advance(race.DefaultCountdown)
	rules, _ := engine.Variant("")
	g1 := engine.New(rules, testDeal)
	play(t, r, &g1, 1, 2)
	spec.waitFor(t, "the second board", func(ev race.Event) bool {
		bd, ok := ev.(*race.BoardEvent)
		return ok && bd.Seq == 2
	})
	n0, ns := len(p0.Events()), len(spec.Events())

	if err := rdb.ClientKillByFilter(t.Context(), "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	fresh := func(rec *recorder, from int, what string, ok func(race.Event) bool) {
		t.Helper()
		rec.waitFor(t, what, func(race.Event) bool {
			for _, e := range rec.Events()[from:] {
				if ok(e) {
					return true
				}
			}
			return false
		})
	}
	fresh(&p0, n0, "a fresh joined for the idle player", isJoined)
	fresh(&p0, n0, "a fresh state for the idle player", isState)
	fresh(&spec, ns, "a fresh state for the spectator", isState)
	if a.bus.Stats.Lapses.Load() == 0 {
		t.Error("a's bus counted no lapse")
	}
	// The feed goes on after it.
	play(t, r, &g1, 1, 1)
	spec.waitFor(t, "the third board", func(ev race.Event) bool {
		bd, ok := ev.(*race.BoardEvent)
		return ok && bd.Seq == 3
	})
}

// TestOldOwnersEventsReachNobody: a race's connections take its events
// from the instance that runs it alone, b: one on another instance (a),
// and one on b itself. An event another instance published on the race's
// topics (an old owner's, held by a partition and delivered late)
// reaches neither, though their instances' buses received it. On the
// code before, it reached both.
func TestOldOwnersEventsReachNobody(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	rdb := redistest.Start(t, redistest.Options{}).Client(t)
	a := newInstance(t, rdb, "a", clock)
	b := newInstance(t, rdb, "b", clock)
	r, err := b.svc.Create(race.Options{Deal: testDeal, DealNamed: true})
	if err != nil {
		t.Fatal(err)
	}
	var p0, p1, witness, witnessB recorder
	h0, err := a.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h0.Join("on a", "", &p0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Join("on b", "", &p1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(race.DefaultCountdown)
	// A witness on a's bus gets every message of seat 0's topic, from
	// anyone: once it has one, the connection's feed was offered it too.
	topic := race.SeatTopic(r.ID(), 0)
	defer a.bus.Subscribe(topic, &witness)()
	topicB := race.SeatTopic(r.ID(), 1)
	defer b.bus.Subscribe(topicB, &witnessB)()
	for _, bus := range []*redisrace.Bus{a.bus, b.bus} {
		if err := bus.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	old := redisrace.NewBus(rdb, redisrace.Keys{Prefix: "test:"}, "c", zerolog.Nop())
	defer old.Close()
	stale := func(ev race.Event) bool {
		o, ok := ev.(*race.OpponentEvent)
		return ok && o.Counts.Moves == 99
	}
	old.Publish(topic, &race.OpponentEvent{Race: r.ID(), Seat: 1, Counts: race.Counts{Moves: 99}})
	old.Publish(topicB, &race.OpponentEvent{Race: r.ID(), Seat: 0, Counts: race.Counts{Moves: 99}})
	witness.waitFor(t, "the old owner's event on a", stale)
	witnessB.waitFor(t, "the old owner's event on b", stale)
	rules, _ := engine.Variant("")
	g1 := engine.New(rules, testDeal)
	play(t, r, &g1, 1, 1)
	p0.waitFor(t, "the owner's event", func(ev race.Event) bool {
		o, ok := ev.(*race.OpponentEvent)
		return ok && o.Counts.Moves == 1
	})
	for who, rec := range map[string]*recorder{"on a": &p0, "on b": &p1} {
		for _, ev := range rec.Events() {
			if stale(ev) {
				t.Errorf("the old owner's event reached the connection %s", who)
			}
		}
	}
}
