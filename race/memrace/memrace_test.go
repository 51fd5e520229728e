package memrace_test

import (
	"errors"
	"testing"

	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

type rec struct{ got []string }

func (r *rec) Deliver(ev race.Event) { r.got = append(r.got, ev.(*race.RematchEvent).Race) }

func TestBusOrderAndCancel(t *testing.T) {
	b := memrace.NewBus()
	var x, y rec
	cancelX := b.Subscribe("t", &x)
	cancelY := b.Subscribe("t", &y)
	b.Subscribe("other", &y)
	for _, id := range []string{"1", "2", "3"} {
		b.Publish("t", &race.RematchEvent{Race: id})
	}
	cancelX()
	cancelX() // twice is fine
	b.Publish("t", &race.RematchEvent{Race: "4"})
	cancelY()
	b.Publish("t", &race.RematchEvent{Race: "5"})
	if got := len(x.got); got != 3 || x.got[2] != "3" {
		t.Errorf("x got %v", x.got)
	}
	if want := "1234"; join(y.got) != want {
		t.Errorf("y got %v, want %s in order", y.got, want)
	}
}

func join(s []string) string {
	out := ""
	for _, x := range s {
		out += x
	}
	return out
}

func TestStoreKeepsOrderPerRace(t *testing.T) {
	s := memrace.NewStore()
	ctx := t.Context()
	for i := 1; i <= 3; i++ {
		_ = s.Append(ctx, "a", race.MoveRecord{Seat: i % 2, Seq: i, Move: "AS>F1"})
	}
	_ = s.Append(ctx, "b", race.MoveRecord{Seq: 9})
	got, err := s.Moves(ctx, "a")
	if err != nil || len(got) != 3 || got[2].Seq != 3 {
		t.Fatalf("moves %v %v", got, err)
	}
	got[0].Seq = 100 // a copy
	if again, _ := s.Moves(ctx, "a"); again[0].Seq != 1 {
		t.Error("Moves returned the store's own slice")
	}
}

func TestStoreConformance(t *testing.T) {
	racetest.TestStore(t, func(*testing.T) race.Store { return memrace.NewStore() })
}

func TestBusConformance(t *testing.T) {
	racetest.TestBus(t, func(*testing.T) (race.Bus, race.Bus) {
		b := memrace.NewBus()
		return b, b
	}, racetest.Settle)
}

// TestArchive runs the archive's conformance suite on the in-memory twin.
func TestArchive(t *testing.T) {
	racetest.ArchiveSuite(t, func(*testing.T) race.Archive { return memrace.NewArchive() })
}

// A race's own log (OpenLog) is the Store's log of that race: what one
// appends the other reads and refuses to contradict.
func TestOpenLogIsTheStoresLog(t *testing.T) {
	s := memrace.NewStore()
	ctx := t.Context()
	l := s.OpenLog("a")
	if err := l.Append(ctx, race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "a", race.MoveRecord{Seat: 1, Seq: 1, Move: "2S>W1"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, race.MoveRecord{Seat: 1, Seq: 1, Move: "2S>W1"}); err != nil {
		t.Errorf("the same record again through the handle: %v, want nil", err)
	}
	if err := l.Append(ctx, race.MoveRecord{Seat: 1, Seq: 1, Move: "3S>W1"}); !errors.Is(err, race.ErrConflict) {
		t.Errorf("a contradicting record through the handle: %v, want ErrConflict", err)
	}
	if err := l.Append(ctx, race.MoveRecord{Seat: race.MaxSeats, Seq: 1}); err == nil {
		t.Error("a seat past the last a race may have accepted")
	}
	got, err := s.Moves(ctx, "a")
	if err != nil || len(got) != 2 || got[0].Move != "AS>F1" || got[1].Move != "2S>W1" {
		t.Fatalf("moves %v %v", got, err)
	}
	if other, _ := s.Moves(ctx, "b"); len(other) != 0 {
		t.Errorf("race b has %v", other)
	}
}
