package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

// TestBerserk: in a race that allows it, a racer halves their own time
// in the countdown (asked twice, once); everyone sees it; after the
// start it is refused, and in a race without it always. When half the
// time is up the berserk racer's game ends (logged as a resignation with
// race.BerserkTimeID, a move after refused) and the referee ranks it by
// its cards; the other racer plays on. A race restored from its record
// and log keeps the choice and its clock.
func TestBerserk(t *testing.T) {
	plain := newRace(t, race.Options{Deal: 7, DealFixed: true})
	plain.seatBoth(t)
	if err := plain.race.Berserk(0); race.ErrorCode(err) != race.CodeNoBerserk {
		t.Errorf("berserk in a race without it: %v, want %s", err, race.CodeNoBerserk)
	}

	const limit = 10 * time.Minute
	f := newRace(t, race.Options{Deal: 7, DealFixed: true, Berserk: true, TimeLimit: limit})
	for s := range 2 {
		f.subs[s] = &recorder{}
		if _, err := f.race.Join("p", "", f.subs[s]); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := f.race.Berserk(0); err != nil {
			t.Fatalf("berserk in the countdown: %v", err)
		}
	}
	if st, ok := f.subs[1].Last().(*race.StateEvent); !ok || !st.Players[0].Berserk || st.Players[1].Berserk {
		t.Fatalf("the other racer's state %#v: want seat 0 berserk", f.subs[1].Last())
	}
	f.clock.Advance(race.DefaultCountdown)
	if err := f.race.Berserk(1); race.ErrorCode(err) != race.CodeBerserkLate {
		t.Errorf("berserk after the countdown: %v, want %s", err, race.CodeBerserkLate)
	}
	g := engine.New(mustVariant(t, "classic"), 7)
	for range 3 {
		m := racetest.Greedy(&g)
		_ = g.Apply(m)
		if err := f.race.Move(0, m.String(), ""); err != nil {
			t.Fatal(err)
		}
		if err := f.race.Move(1, m.String(), ""); err != nil {
			t.Fatal(err)
		}
	}
	rec, logged := race.RecordForTest(f.race), mustMoves(t, f.store, f.race.ID())

	f.clock.Advance(limit/2 - time.Second)
	if in := info(t, f.race); in.Counts[0].Status != engine.Playing {
		t.Fatalf("seat 0 %s a second before half time", in.Counts[0].Status)
	}
	f.clock.Advance(time.Second)
	in := info(t, f.race)
	if in.Counts[0].Status != engine.Resigned || in.Counts[1].Status != engine.Playing || in.State != race.Running {
		t.Fatalf("at half time: seat 0 %s, seat 1 %s, race %s; want seat 0 out, seat 1 playing on", in.Counts[0].Status, in.Counts[1].Status, in.State)
	}
	log := mustMoves(t, f.store, f.race.ID())
	if last := log[len(log)-1]; last.Seat != 0 || last.Move != "resign" || last.ID != race.BerserkTimeID {
		t.Errorf("the log ends with %+v, want seat 0's resignation %q", last, race.BerserkTimeID)
	}
	m := racetest.Greedy(&g)
	if err := f.race.Move(0, m.String(), "late"); race.ErrorCode(err) != race.CodeIllegalMove {
		t.Errorf("a move after the berserk time: %v, want %s", err, race.CodeIllegalMove)
	}

	// Restored before half time, the race ends seat 0's game on time
	// (nobody comes back to it: a long grace keeps it running).
	rec.Options.Grace = time.Hour
	clock := racetest.NewClock(f.clock.Now().Add(-limit/2 + 10*time.Second))
	store := memrace.NewStore()
	for _, m := range logged {
		if err := store.Append(context.Background(), rec.ID, m); err != nil {
			t.Fatal(err)
		}
	}
	r, err := race.Restore(rec, logged, race.Deps{Clock: clock, Log: zerolog.Nop(), Store: store, Bus: memrace.NewBus()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	race.RearmForTest(r, rec)
	if in := info(t, r); !in.Players[0].Berserk || in.Counts[0].Status != engine.Playing {
		t.Fatalf("restored: %+v, %s", in.Players[0], in.Counts[0].Status)
	}
	clock.Advance(limit/2 - 10*time.Second)
	if in := info(t, r); in.Counts[0].Status != engine.Resigned || in.Counts[1].Status != engine.Playing {
		t.Errorf("restored, at half time: seat 0 %s, seat 1 %s", in.Counts[0].Status, in.Counts[1].Status)
	}
}

func info(t *testing.T, r *race.Race) race.Info {
	t.Helper()
	in, err := r.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func mustMoves(t *testing.T, s *memrace.Store, id string) []race.MoveRecord {
	t.Helper()
	log, err := s.Moves(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

func mustVariant(t *testing.T, name string) *engine.Rules {
	t.Helper()
	rules, err := engine.Variant(name)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}
