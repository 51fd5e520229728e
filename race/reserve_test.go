package race_test

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

func newService(clock *racetest.Clock) *race.Service {
	return race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
}

func TestReservedSeatsStartWhenBothResume(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var ended []race.Ended
	svc := newService(clock)
	svc.OnEnd(func(e race.Ended) { ended = append(ended, e) })
	r, err := svc.Create(race.Options{Unrated: true})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.Reserve(race.Reservation{Name: "ann", Player: "p-ann"})
	b, _ := r.Reserve(race.Reservation{Name: "bob", Player: "p-bob"})
	if a.Seat != 0 || b.Seat != 1 || a.Token == b.Token {
		t.Fatalf("tickets %+v %+v", a, b)
	}
	for _, c := range []struct {
		player, token string
	}{{"p-ann", a.Token}, {"p-bob", b.Token}, {"p-cy", ""}} {
		token, reserved, err := svc.SeatOf(t.Context(), r.ID(), c.player)
		if err != nil || !reserved || token != c.token {
			t.Errorf("SeatOf(%s) = %q, %v, %v; want %q, reserved", c.player, token, reserved, err, c.token)
		}
	}
	if _, err := r.Reserve(race.Reservation{Name: "cy", Player: "p-cy"}); race.ErrorCode(err) != race.CodeRaceFull {
		t.Fatalf("third reserve: %v", err)
	}
	if _, err := r.Join("cy", "", &recorder{}); race.ErrorCode(err) != race.CodeRaceFull {
		t.Fatalf("join into reserved race: %v", err)
	}
	for _, who := range []string{"", "p-bob"} {
		if _, err := r.Resume(a.Token, who, "", &recorder{}); race.ErrorCode(err) != race.CodeNotYourSeat {
			t.Fatalf("ann's seat resumed for %q: %v", who, err)
		}
	}
	if _, err := r.Resume(a.Token, "p-ann", "", &recorder{}); err != nil {
		t.Fatal(err)
	}
	if r.State() != race.Waiting {
		t.Fatalf("state %s with one player in", r.State())
	}
	if _, err := r.Resume(b.Token, "p-bob", "", &recorder{}); err != nil {
		t.Fatal(err)
	}
	if r.State() != race.Countdown {
		t.Fatalf("state %s with both in", r.State())
	}
	w := &recorder{}
	cancel := r.Watch(w)
	if in, _ := r.Info(t.Context()); in.Spectators != 1 {
		t.Errorf("spectators %d, want 1", in.Spectators)
	}
	cancel()
	cancel()
	if in, _ := r.Info(t.Context()); in.Spectators != 0 {
		t.Errorf("spectators %d after leaving, want 0", in.Spectators)
	}
	clock.Advance(race.DefaultCountdown)
	r.Abort("shutdown")
	if len(ended) != 1 || ended[0].Result.Outcome != "aborted" || r.Result() == nil {
		t.Fatalf("OnEnd got %+v", ended)
	}
	if e := ended[0]; e.Race != r.ID() || e.Variant != "classic" || e.Players[0].Player != "p-ann" || e.Players[1].Player != "p-bob" {
		t.Errorf("OnEnd heard %+v, want the race's id, variant and both players' ids", e)
	}
}

func TestSeatOfUnreservedRace(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := newService(clock)
	r, _ := svc.Create(race.Options{})
	for _, id := range []string{r.ID(), "no-such-race"} {
		if token, reserved, err := svc.SeatOf(t.Context(), id, "p-ann"); token != "" || reserved || err != nil {
			t.Errorf("SeatOf(%s) = %q, %v, %v; want nothing reserved", id, token, reserved, err)
		}
	}
}

func TestReservedSeatNotTakenAborts(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r, _ := newService(clock).Create(race.Options{})
	a, _ := r.Reserve(race.Reservation{Name: "ann", Player: "p-ann"})
	_, _ = r.Reserve(race.Reservation{Name: "bob", Player: "p-bob"})
	if _, err := r.Resume(a.Token, "p-ann", "", &recorder{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(race.DefaultGrace)
	if res := r.Result(); res == nil || res.Reason != "left" || res.Rated {
		t.Fatalf("result %+v, want an unrated abort (left)", res)
	}
}

// TestEvictForgetsOldFinishedRaces: a finished race stays for keep after
// its end, then it and its log are gone; live races stay whatever their age.
func TestEvictForgetsOldFinishedRaces(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	store := memrace.NewStore()
	svc := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: store, Bus: memrace.NewBus()})
	done, _ := svc.Create(race.Options{})
	live, _ := svc.Create(race.Options{})
	for range 2 {
		if _, err := done.Join("p", "", &recorder{}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(race.DefaultCountdown)
	for s := range 2 {
		if err := done.Resign(s, ""); err != nil {
			t.Fatal(err)
		}
	}
	if moves, _ := store.Moves(t.Context(), done.ID()); !done.State().Over() || len(moves) != 2 {
		t.Fatalf("race is %s with %d moves logged after both resigned", done.State(), len(moves))
	}
	const keep = time.Hour
	clock.Advance(keep - time.Second)
	if n := svc.Evict(keep); n != 0 {
		t.Fatalf("evicted %d races before keep", n)
	}
	clock.Advance(time.Second)
	if n := svc.Evict(keep); n != 1 {
		t.Fatalf("evicted %d races, want the finished one", n)
	}
	if _, err := svc.Get(done.ID()); race.ErrorCode(err) != race.CodeNoSuchRace {
		t.Errorf("the evicted race is still found: %v", err)
	}
	if moves, _ := store.Moves(t.Context(), done.ID()); len(moves) != 0 {
		t.Errorf("its log still holds %d moves", len(moves))
	}
	if _, err := svc.Get(live.ID()); err != nil {
		t.Errorf("the waiting race was evicted: %v", err)
	}
}
