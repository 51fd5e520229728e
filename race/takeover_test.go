package race_test

import (
	"testing"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
)

// restored rebuilds f's race as another instance taking it over does
// (Restore from its record and log, then Rearm); f's race is stopped.
func restored(t *testing.T, f *fixture) *race.Race {
	t.Helper()
	rec := race.RecordForTest(f.race)
	moves, _ := f.store.Moves(t.Context(), "r1")
	f.race.Stop()
	r, err := race.Restore(rec, moves, race.Deps{Clock: f.clock, Log: zerolog.Nop(), Store: f.store, Bus: memrace.NewBus()})
	if err != nil {
		t.Fatal(err)
	}
	race.RearmForTest(r, rec)
	t.Cleanup(r.Stop)
	return r
}

// takenOver is f's race restored, with a spectator watching it.
func takenOver(t *testing.T, f *fixture) (*race.Race, *recorder) {
	t.Helper()
	r := restored(t, f)
	spec := &recorder{}
	t.Cleanup(r.Watch(spec))
	return r, spec
}

// presences are the presence events ev holds for seat s.
func presences(evs []race.Event, s int) []*race.PresenceEvent {
	var out []*race.PresenceEvent
	for _, ev := range evs {
		if p, ok := ev.(*race.PresenceEvent); ok && p.Seat == s {
			out = append(out, p)
		}
	}
	return out
}

// TestTakeoverHoldsConnectedSeats: a race taken over shows its connected
// players as connected while their connections follow it (TakeoverWait).
// One that resumes in that time never had a grace period (no presence
// event, nobody saw a disconnect); one that does not starts it then,
// counted from the takeover, and forfeits when it ends.
func TestTakeoverHoldsConnectedSeats(t *testing.T) {
	f := newRace(t, race.Options{Deal: 11, DealFixed: true})
	f.seatBoth(t)
	for s := range 2 {
		g := newGame(11)
		if err := f.race.Move(s, engine.PlaceMove(g.View().Turned[0], engine.W(0)).String(), ""); err != nil {
			t.Fatal(err)
		}
	}
	from := f.clock.Now()
	r, spec := takenOver(t, f)
	st, ok := spec.Events()[0].(*race.StateEvent)
	if !ok || !st.Players[0].Connected || !st.Players[1].Connected {
		t.Fatalf("spectator's first event after the takeover %#v: want both players connected", spec.Events()[0])
	}

	f.clock.Advance(race.TakeoverWait / 2)
	back := &recorder{}
	if _, err := r.Resume(f.tok[0], "", "", back); err != nil {
		t.Fatalf("seat 0 follows the takeover: %v", err)
	}
	f.clock.Advance(race.TakeoverWait)
	if p := presences(spec.Events(), 0); len(p) != 0 {
		t.Fatalf("seat 0, resumed in time, had presence events %+v", p[0])
	}
	p := presences(spec.Events(), 1)
	if len(p) != 1 || p[0].Connected || p[0].GraceUntil == nil || !p[0].GraceUntil.Equal(from.Add(race.DefaultGrace)) {
		t.Fatalf("seat 1, never resumed: presence %+v, want one disconnect with grace until %v", p, from.Add(race.DefaultGrace))
	}
	if got := r.State(); got != race.Running {
		t.Fatalf("state %s before seat 1's grace ended", got)
	}
	f.clock.Advance(from.Add(race.DefaultGrace).Sub(f.clock.Now()))
	in, err := r.Info(t.Context())
	if err != nil || in.Result == nil || in.Result.Winner == nil || *in.Result.Winner != 0 || in.Result.Reason != race.ReasonForfeit {
		t.Fatalf("after seat 1's grace: %+v %v, want seat 0 winning by forfeit", in.Result, err)
	}
}
