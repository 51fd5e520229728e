package race_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestDrainWaitsForRunningRacesAndLogsCarryTheRace(t *testing.T) {
	var logs lockedBuffer
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := race.NewService(race.Deps{Clock: clock, Log: zerolog.New(&logs).Level(zerolog.DebugLevel), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	running, _ := svc.Create(race.Options{})
	waiting, _ := svc.Create(race.Options{})
	for range 2 {
		if _, err := running.Join("p", "", &recorder{}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(race.DefaultCountdown)
	done := make(chan int)
	go func() { done <- svc.Drain(context.Background()) }()
	// The waiting race is aborted at once; the running one goes on until
	// its own end (here: nobody moves, so the first-move abort).
	for waiting.State() != race.Aborted {
		time.Sleep(time.Millisecond)
	}
	if _, err := svc.Create(race.Options{}); race.ErrorCode(err) != race.CodeDraining {
		t.Errorf("create while draining: %v", err)
	}
	if running.State() != race.Running {
		t.Fatalf("running race is %s during the drain", running.State())
	}
	clock.Advance(race.DefaultFirstMoveTimeout)
	if cut := <-done; cut != 0 {
		t.Errorf("drain cut %d races", cut)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) < 5 {
		t.Fatalf("only %d log lines", len(lines))
	}
	for _, l := range lines {
		if !strings.Contains(l, `"race":"`+running.ID()+`"`) && !strings.Contains(l, `"race":"`+waiting.ID()+`"`) {
			t.Errorf("log line without its race: %s", l)
		}
	}
}

func TestDrainTimeoutAbortsWhatIsLeft(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	r, _ := svc.Create(race.Options{})
	for range 2 {
		_, _ = r.Join("p", "", &recorder{})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if cut := svc.Drain(ctx); cut != 1 {
		t.Errorf("cut %d, want 1", cut)
	}
	in, _ := r.Info(t.Context())
	if in.State != race.Aborted || in.Result.Reason != "shutdown" {
		t.Errorf("race %s %+v", in.State, in.Result)
	}
}
