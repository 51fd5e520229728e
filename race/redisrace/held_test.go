package redisrace_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace"
	"sirtommy/race/redisrace/redistest"
)

// A seat held on instance B is played there: each move B logs reaches the
// race's owner on A once, on the race's records topic (carried by the
// append), and the owner counts it; a move sent again is answered again
// and sent nowhere.
func TestHeldSeatMovesReachTheOwner(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	busA := redisrace.NewBus(rdb, redisrace.Keys{}, "instance-a", zerolog.Nop())
	busB := redisrace.NewBus(rdb, redisrace.Keys{}, "instance-b", zerolog.Nop())
	t.Cleanup(func() { _ = busA.Close(); _ = busB.Close() })
	storeA := redisrace.NewStore(rdb, redisrace.StoreOptions{Instance: "instance-a"})
	storeB := redisrace.NewStore(rdb, redisrace.StoreOptions{Instance: "instance-b"})
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	owner, err := race.New("R", race.Options{Deal: 5, DealNamed: true}, race.Deps{Clock: clock, Log: zerolog.Nop(), Store: storeA, Bus: busA})
	if err != nil {
		t.Fatal(err)
	}
	var p, q racetest.Recorder
	if _, err := owner.Join("p", "", &p); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Join("q", "", &q); err != nil {
		t.Fatal(err)
	}
	clock.Advance(race.DefaultCountdown)
	records := make(racetest.Chan, 16)
	defer busA.Subscribe(race.RecordsTopic("R"), records)()
	ctx, cancel := context.WithTimeout(t.Context(), settleWait)
	defer cancel()
	if err := busA.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	rec := &race.Record{ID: "R", Options: race.Options{Deal: 5, DealNamed: true}, Deal: 5, State: race.Running, StartAt: clock.Now(),
		Seats: []race.SeatState{{Taken: true}, {Taken: true}}}
	held, err := race.OpenHeld(ctx, rec, 1, func(ctx context.Context) ([]race.MoveRecord, error) { return storeB.Moves(ctx, "R") },
		race.Deps{Clock: clock, Log: zerolog.Nop(), Store: storeB, Bus: busB})
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := engine.Variant("classic")
	ref := engine.New(rules, 5)
	var last race.MoveRecord
	for i := range 3 {
		m := ref.AppendMoves(nil)[0]
		moved, err := held.Move(m.String(), "q"+string(rune('0'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := ref.Apply(m); err != nil {
			t.Fatal(err)
		}
		ev, ok := records.Next(t).(*race.RecordEvent)
		if !ok || ev.Record.Seq != moved.Seq || ev.Record.Move != moved.Move || ev.Record.Seat != 1 {
			t.Fatalf("the owner got %#v for %+v", ev, moved)
		}
		if gap, err := owner.ApplyRemote(ev.Record); gap || err != nil {
			t.Fatalf("counting %+v: gap %v, %v", ev.Record, gap, err)
		}
		last = ev.Record
	}
	if again, err := held.Move(last.Move, last.ID); err != nil || again.Seq != last.Seq {
		t.Fatalf("the last move sent again: %+v, %v", again, err)
	}
	marker := &race.PresenceEvent{Race: "R", Seat: 1, Connected: true}
	busB.Publish(race.RecordsTopic("R"), marker)
	if e := records.Next(t); e.EventType() != marker.EventType() {
		t.Fatalf("after the move sent again the owner got %#v, want the marker only", e)
	}
	info, err := owner.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Counts[1]; got.Moves != ref.Plies() || got.Score != ref.Score() {
		t.Fatalf("the owner counts seat 1 at %+v, want %d moves and %d cards", got, ref.Plies(), ref.Score())
	}
	logged, err := storeA.Moves(ctx, "R")
	if err != nil || len(logged) != 3 {
		t.Fatalf("the log holds %v, %v; want the three moves", logged, err)
	}
}

// raceHeldOnB makes instances a and b, on one Redis and clock, with b
// holding the seats of its players of races elsewhere
// (fleet.HoldSeats), and a race of testDeal on a.
func raceHeldOnB(t *testing.T) (*racetest.Clock, *instance, *instance, *race.Race) {
	t.Helper()
	clock := racetest.NewClock(time.Now())
	a, b := twoInstances(t, clock)
	b.fleet.HoldSeats(true)
	r, err := a.svc.Create(race.Options{Deal: testDeal, DealNamed: true})
	if err != nil {
		t.Fatal(err)
	}
	return clock, a, b, r
}

// A player on instance b of a race that runs on a plays its seat on b
// (fleet.HoldSeats): each move is answered there and logged by b, and a
// counts it for the opponent; a resignation goes to a, which takes the
// seat back; a race b takes over plays the seat itself.
func TestSeatPlayedOnItsInstance(t *testing.T) {
	clock, a, b, r := raceHeldOnB(t)
	var err error
	var subs [2]recorder
	var hs [2]race.Handle
	for s, in := range []*instance{a, b} {
		if hs[s], err = in.svc.Open(t.Context(), r.ID()); err != nil {
			t.Fatal(err)
		}
		if _, err := hs[s].Join("p", "", &subs[s]); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(race.DefaultCountdown)
	subs[1].waitFor(t, "running state", func(ev race.Event) bool { st, ok := ev.(*race.StateEvent); return ok && st.State == race.Running })
	rules, _ := engine.Variant("")
	g := engine.New(rules, testDeal)
	play(t, hs[1], &g, 1, 3)
	for seq := 1; seq <= 3; seq++ {
		subs[1].waitFor(t, "moved", func(ev race.Event) bool { mv, ok := ev.(*race.MovedEvent); return ok && mv.Seq == seq })
	}
	subs[0].waitFor(t, "opponent", func(ev race.Event) bool {
		op, ok := ev.(*race.OpponentEvent)
		return ok && op.Seat == 1 && op.Counts.Moves == 3
	})
	keys := redisrace.Keys{Prefix: "test:"}
	if h := b.rdb.HGet(t.Context(), keys.Seqs(r.ID()), "h:1").Val(); !strings.HasPrefix(h, "b#") {
		t.Fatalf("seat 1's holder %q, want b", h)
	}

	// a crashes; b's next move takes the race over and plays the seat
	// itself, taking it back from its own holder.
	a.crash(t)
	play(t, hs[1], &g, 1, 1)
	subs[1].waitFor(t, "moved", func(ev race.Event) bool { mv, ok := ev.(*race.MovedEvent); return ok && mv.Seq == 4 })
	if err := hs[1].Resign(1, "bye"); err != nil {
		t.Fatalf("resign: %v", err)
	}
	moves, err := redisrace.NewStore(b.rdb, redisrace.StoreOptions{Keys: keys}).Moves(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	for _, m := range moves {
		seqs = append(seqs, m.Seq)
	}
	if fmt.Sprint(seqs) != "[1 2 3 4 5]" || moves[4].Move != "resign" {
		t.Fatalf("the log's seqs %v, want 1 to 5 ending with the resignation", seqs)
	}
	if h := b.rdb.HGet(t.Context(), keys.Seqs(r.ID()), "h:1").Val(); h != "" {
		t.Fatalf("seat 1's holder %q after the race's owner played it, want none", h)
	}
}

// sourced records the events of a topic with the instance that published
// each (race.Sourced).
type sourced struct {
	mu   sync.Mutex
	from []string
	evs  []race.Event
}

func (s *sourced) Deliver(ev race.Event) { s.DeliverFrom("", ev) }

func (s *sourced) DeliverFrom(origin string, ev race.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.from, s.evs = append(s.from, origin), append(s.evs, ev)
}

// Both players of a race that runs on a are on b, which plays their
// seats: b tells each of a move of the other's itself, once per move and
// in order, and a, which counts the move, sends nothing of it back on the
// seat's channel.
func TestOpponentToldOnTheHoldersInstance(t *testing.T) {
	clock, a, b, r := raceHeldOnB(t)
	var err error
	keys := redisrace.Keys{Prefix: "test:"}
	busC := redisrace.NewBus(a.rdb, keys, "c", zerolog.Nop())
	t.Cleanup(func() { _ = busC.Close() })
	var onSeat1 sourced
	defer busC.Subscribe(race.SeatTopic(r.ID(), 1), &onSeat1)()
	ctx, cancel := context.WithTimeout(t.Context(), settleWait)
	defer cancel()
	if err := busC.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	var subs [2]recorder
	var hs [2]race.Handle
	for s := range hs {
		if hs[s], err = b.svc.Open(t.Context(), r.ID()); err != nil {
			t.Fatal(err)
		}
		if _, err := hs[s].Join(fmt.Sprintf("p%d", s), "", &subs[s]); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(race.DefaultCountdown)
	for s := range subs {
		subs[s].waitFor(t, "running state", func(ev race.Event) bool { st, ok := ev.(*race.StateEvent); return ok && st.State == race.Running })
	}
	rules, _ := engine.Variant("")
	g := engine.New(rules, testDeal)
	play(t, hs[0], &g, 0, 3)
	waitUntil(t, "the owner counts seat 0's moves", func() bool {
		info, err := r.Info(t.Context())
		return err == nil && info.Counts[0].Moves == 3
	})
	// A marker through a's bus after the moves: what a published on seat
	// 1's channel before it has reached c.
	marker := &race.PresenceEvent{Race: r.ID(), Seat: 9}
	a.bus.Publish(race.SeatTopic(r.ID(), 1), marker)
	waitUntil(t, "the marker", func() bool {
		onSeat1.mu.Lock()
		defer onSeat1.mu.Unlock()
		return slices.ContainsFunc(onSeat1.evs, func(ev race.Event) bool {
			pe, ok := ev.(*race.PresenceEvent)
			return ok && pe.Seat == 9
		})
	})
	onSeat1.mu.Lock()
	for i, ev := range onSeat1.evs {
		if _, ok := ev.(*race.OpponentEvent); ok {
			t.Errorf("seat 1's channel carried %#v from %q; want nothing of seat 0's moves", ev, onSeat1.from[i])
		}
	}
	onSeat1.mu.Unlock()
	var heard []int
	for _, ev := range subs[1].Events() {
		if op, ok := ev.(*race.OpponentEvent); ok && op.Seat == 0 {
			heard = append(heard, op.Counts.Moves)
		}
	}
	if fmt.Sprint(heard) != "[1 2 3]" {
		t.Fatalf("seat 1 heard seat 0 at moves %v; want 1, 2, 3 once each", heard)
	}
}

// waitUntil waits up to five seconds for ok.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("waited in vain for %s", what)
}
