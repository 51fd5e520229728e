package racetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"sirtommy/race"
)

// deliveryWait bounds the wait for an event to cross a bus (Redis pub/sub
// between two instances); it only keeps a broken bus from hanging a test.
const deliveryWait = 5 * time.Second

// TestStore runs the conformance suite every race.Store passes: order,
// idempotent appends, conflicts, separate races. newStore makes an empty
// store (or one whose race ids the suite picks fresh).
func TestStore(t *testing.T, newStore func(t *testing.T) race.Store) {
	t.Run("order", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		want := []race.MoveRecord{
			{Seat: 0, Seq: 1, Move: "AS>F1", AtMs: 10},
			{Seat: 1, Seq: 1, Move: "7H>W1", AtMs: 12},
			{Seat: 1, Seq: 2, Move: "9S>W2", AtMs: 15},
			{Seat: 0, Seq: 2, Move: "resign", AtMs: 20},
		}
		for _, m := range want {
			if err := s.Append(ctx, "order", m); err != nil {
				t.Fatalf("append %+v: %v", m, err)
			}
		}
		got, err := s.Moves(ctx, "order")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("moves %v, want %v", got, want)
		}
	})
	t.Run("idempotent", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		m := race.MoveRecord{Seat: 1, Seq: 1, Move: "KD>W3", AtMs: 5}
		for range 3 {
			if err := s.Append(ctx, "idem", m); err != nil {
				t.Fatalf("append again: %v", err)
			}
		}
		m2 := race.MoveRecord{Seat: 1, Seq: 2, Move: "QC>W3", AtMs: 6}
		if err := s.Append(ctx, "idem", m2); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, "idem", m); err != nil { // an old retry
			t.Fatalf("late retry: %v", err)
		}
		got, _ := s.Moves(ctx, "idem")
		if len(got) != 2 {
			t.Errorf("moves %v: a retried append was stored twice", got)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		if err := s.Append(ctx, "conf", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"}); err != nil {
			t.Fatal(err)
		}
		err := s.Append(ctx, "conf", race.MoveRecord{Seat: 0, Seq: 1, Move: "2S>W1"})
		if !errors.Is(err, race.ErrConflict) {
			t.Errorf("another move under a stored seq: %v, want ErrConflict", err)
		}
		if err := s.Append(ctx, "conf", race.MoveRecord{Seat: 1, Seq: 1, Move: "2S>W1"}); err != nil {
			t.Errorf("the other seat's seq 1: %v", err)
		}
		got, _ := s.Moves(ctx, "conf")
		if len(got) != 2 || got[0].Move != "AS>F1" {
			t.Errorf("moves %v", got)
		}
	})
	t.Run("races apart", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		_ = s.Append(ctx, "x", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"})
		_ = s.Append(ctx, "y", race.MoveRecord{Seat: 0, Seq: 1, Move: "2S>W1"})
		got, err := s.Moves(ctx, "x")
		if err != nil || len(got) != 1 || got[0].Move != "AS>F1" {
			t.Errorf("race x: %v %v", got, err)
		}
		none, err := s.Moves(ctx, "nobody")
		if err != nil || len(none) != 0 {
			t.Errorf("unknown race: %v %v", none, err)
		}
	})
	t.Run("finished", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		_ = s.Append(ctx, "fin", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"})
		if r, ok := s.(race.Retainer); ok {
			if err := r.Finished(ctx, "fin"); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := s.Moves(ctx, "fin"); len(got) != 1 {
			t.Errorf("a finished race's log is gone at once: %v", got)
		}
	})
}

// Chan is a race.Subscriber that queues events on a channel (never
// blocking: a full channel drops, which fails the test that waits).
type Chan chan race.Event

// Deliver queues ev.
func (c Chan) Deliver(ev race.Event) {
	select {
	case c <- ev:
	default:
	}
}

// Next waits for the next event.
func (c Chan) Next(t testing.TB) race.Event {
	t.Helper()
	select {
	case ev := <-c:
		return ev
	case <-time.After(deliveryWait):
		t.Fatal("no event arrived")
		return nil
	}
}

// TestBus runs the conformance suite every race.Bus passes. newBuses
// returns two buses that share subscribers: two instances on one Redis, or
// the same in-memory bus twice. settle waits until subscriptions made so
// far are live everywhere (nothing for an in-memory bus).
func TestBus(t *testing.T, newBuses func(t *testing.T) (a, b race.Bus), settle func(t *testing.T, b race.Bus)) {
	t.Run("order across instances", func(t *testing.T) {
		a, b := newBuses(t)
		here, there := make(Chan, 256), make(Chan, 256)
		defer a.Subscribe("r1/watch", here)()
		defer b.Subscribe("r1/watch", there)()
		settle(t, a)
		settle(t, b)
		const n = 100
		for i := range n {
			a.Publish("r1/watch", &race.BoardEvent{Race: "r1", Seq: i + 1, Move: "AS>F1"})
		}
		for _, c := range []Chan{here, there} {
			for i := range n {
				ev, ok := c.Next(t).(*race.BoardEvent)
				if !ok || ev.Seq != i+1 {
					t.Fatalf("event %d: %+v", i+1, ev)
				}
			}
		}
	})
	t.Run("topics apart and cancel", func(t *testing.T) {
		a, b := newBuses(t)
		x, y := make(Chan, 16), make(Chan, 16)
		cancelX := b.Subscribe("r2/seat/0", x)
		defer b.Subscribe("r2/seat/1", y)()
		settle(t, b)
		a.Publish("r2/seat/1", &race.OpponentEvent{Race: "r2", Seat: 0, Counts: race.Counts{Score: 3}})
		if ev, ok := y.Next(t).(*race.OpponentEvent); !ok || ev.Counts.Score != 3 {
			t.Fatalf("seat 1 got %+v", ev)
		}
		cancelX()
		cancelX() // twice is fine
		a.Publish("r2/seat/0", &race.RematchEvent{Race: "r2"})
		a.Publish("r2/seat/1", &race.RematchEvent{Race: "r2", Seat: 1})
		if ev, ok := y.Next(t).(*race.RematchEvent); !ok || ev.Seat != 1 {
			t.Fatalf("seat 1 got %+v", ev)
		}
		select {
		case ev := <-x:
			t.Errorf("a cancelled subscriber got %+v", ev)
		default:
		}
	})
	t.Run("every event type", func(t *testing.T) {
		a, b := newBuses(t)
		c := make(Chan, 16)
		defer b.Subscribe("r3/seat/0", c)()
		settle(t, b)
		seat := 0
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		evs := []race.Event{
			&race.StateEvent{Race: "r3", State: race.Running, Seat: &seat, StartAt: &at, Now: at},
			&race.MovedEvent{Race: "r3", ID: "m1", Seq: 1, Move: "AS>F1"},
			&race.OpponentEvent{Race: "r3", Seat: 1},
			&race.BoardEvent{Race: "r3", Seq: 2},
			&race.PresenceEvent{Race: "r3", Seat: 1, GraceUntil: &at},
			&race.ReplacedEvent{Race: "r3"},
			&race.JoinedEvent{Race: "r3", Token: "t"},
			&race.NextEvent{Race: "r3", Next: "r4"},
			&race.RematchEvent{Race: "r3", Seat: 1},
		}
		for _, ev := range evs {
			a.Publish("r3/seat/0", ev)
		}
		for _, want := range evs {
			got := c.Next(t)
			if got.EventType() != want.EventType() || fmt.Sprint(got) != fmt.Sprint(want) && got.EventType() != "state" && got.EventType() != "presence" {
				t.Errorf("got %T %+v, want %+v", got, got, want)
			}
		}
	})
}

// Settle is a TestBus settle function for buses that need none.
func Settle(*testing.T, race.Bus) {}
