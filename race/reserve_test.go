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
	var ended []race.Result
	r, err := newService(clock).Create(race.Options{Unrated: true, OnEnd: func(_ string, res race.Result) { ended = append(ended, res) }})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.Reserve("ann")
	b, _ := r.Reserve("bob")
	if a.Seat != 0 || b.Seat != 1 || a.Token == b.Token {
		t.Fatalf("tickets %+v %+v", a, b)
	}
	if _, err := r.Reserve("cy"); race.ErrorCode(err) != race.CodeRaceFull {
		t.Fatalf("third reserve: %v", err)
	}
	if _, err := r.Join("cy", "", &recorder{}); race.ErrorCode(err) != race.CodeRaceFull {
		t.Fatalf("join into reserved race: %v", err)
	}
	if _, err := r.Resume(a.Token, "", &recorder{}); err != nil {
		t.Fatal(err)
	}
	if r.State() != race.Waiting {
		t.Fatalf("state %s with one player in", r.State())
	}
	if _, err := r.Resume(b.Token, "", &recorder{}); err != nil {
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
	if len(ended) != 1 || ended[0].Outcome != "aborted" || r.Result() == nil {
		t.Fatalf("OnEnd got %+v", ended)
	}
}

func TestReservedSeatNotTakenAborts(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r, _ := newService(clock).Create(race.Options{})
	a, _ := r.Reserve("ann")
	_, _ = r.Reserve("bob")
	if _, err := r.Resume(a.Token, "", &recorder{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(race.DefaultGrace)
	if res := r.Result(); res == nil || res.Reason != "left" || res.Rated {
		t.Fatalf("result %+v, want an unrated abort (left)", res)
	}
}
