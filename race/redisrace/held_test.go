package redisrace_test

import (
	"context"
	"fmt"
	"strings"
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

// A player on instance b of a race that runs on a plays its seat on b
// (fleet.HoldSeats): each move is answered there and logged by b, and a
// counts it for the opponent; a resignation goes to a, which takes the
// seat back; a race b takes over plays the seat itself.
func TestSeatPlayedOnItsInstance(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	a, b := twoInstances(t, clock)
	b.fleet.HoldSeats(true)
	r, err := a.svc.Create(race.Options{Deal: testDeal, DealNamed: true})
	if err != nil {
		t.Fatal(err)
	}
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
