package race_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

// hangAfter turns a deadlock of TestServiceLockOrderUnderStress into a
// failure with every goroutine's stack, instead of the test binary's
// timeout ten minutes later: it is how long the workers may go without
// finishing a single iteration. It asserts no speed: a deadlock stops all
// progress, while a slow machine only slows it (under -race on a loaded
// machine the whole run takes a minute or more).
const hangAfter = 60 * time.Second

// seatSink is a seat's connection in the stress test: it keeps only the
// latest token it was given, the latest next race announced and the
// latest view of its own game.
type seatSink struct {
	mu    sync.Mutex
	token string
	next  string
	view  *engine.View
}

func (s *seatSink) Deliver(ev race.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := ev.(type) {
	case *race.JoinedEvent:
		s.token = e.Token
	case *race.NextEvent:
		s.next = e.Next
	case *race.StateEvent:
		if e.You != nil {
			s.view = e.You
		}
	}
}

// move is a move from the seat's latest view, if it has one.
func (s *seatSink) move() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.view == nil {
		return "", false
	}
	m, ok := racetest.FromView(s.view)
	return m.String(), ok
}

func (s *seatSink) get() (token, next string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token, s.next
}

// TestServiceLockOrderUnderStress runs everything that takes a service's
// lock and a race's lock at once: Create, Get, Rematch, the next round of
// a match, Evict, Abort, Drain, races of ten that racers join, leave and
// come back to at once, and an OnEnd hook that reads the service (as the
// lobby's does). Before the lock order was followed, Rematch held
// its race's lock while Create took the service's, and Evict held the
// service's while taking each race's: this deadlocked within a second.
func TestServiceLockOrderUnderStress(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	var ends, tenRanked atomic.Int64
	svc.OnEnd(func(e race.Ended) {
		ends.Add(1)
		if len(e.Players) == race.MaxSeats && len(e.Result.Ranking) == race.MaxSeats {
			tenRanked.Add(1) // a race of ten decided, every racer ranked
		}
		_ = svc.Live() // a hook may read the service and the race: it runs outside the race's lock
	})

	const (
		workers    = 2   // per kind of work
		iterations = 400 // per worker
		// tenIterations are the races of ten each of their workers runs:
		// ten goroutines each.
		tenIterations = iterations / 4
	)
	var done atomic.Int64 // iterations done, by every worker
	total := int64(3*workers*iterations + workers*tenIterations)
	drainAt := total * 3 / 4

	// ignorable are the refusals racing workers cause each other: a race
	// aborted, evicted or drained under a worker's feet.
	ignorable := func(err error) bool {
		switch race.ErrorCode(err) {
		case race.CodeRaceOver, race.CodeDraining, race.CodeNoSuchRace, race.CodeNotOver,
			race.CodeRaceFull, race.CodeBadToken, race.CodeNotStarted, race.CodeIllegalMove:
			return true
		}
		return false
	}
	var errMu sync.Mutex
	var errs []error
	fail := func(what string, err error) {
		if err == nil || ignorable(err) {
			return
		}
		errMu.Lock()
		defer errMu.Unlock()
		if len(errs) < 10 {
			errs = append(errs, errors.New(what+": "+err.Error()))
		}
	}

	// seatTwo joins two players to a new race of opts.
	seatTwo := func(opts race.Options) (*race.Race, [2]*seatSink) {
		var sinks [2]*seatSink
		r, err := svc.Create(opts)
		if err != nil {
			fail("create", err)
			return nil, sinks
		}
		for s := range 2 {
			sinks[s] = &seatSink{}
			if _, err := r.Join("p", "", sinks[s]); err != nil {
				fail("join", err)
				return nil, sinks
			}
		}
		return r, sinks
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range workers {
		// Rematches: a race ends, both ask, the new race is aborted and
		// asked for again, a few times over.
		wg.Go(func() {
			for range iterations {
				done.Add(1)
				r, _ := seatTwo(race.Options{})
				for chain := 0; r != nil && chain < 3; chain++ {
					r.Abort("left")
					_, _ = r.Rematch(0)
					next, err := r.Rematch(1)
					fail("rematch", err)
					if next == "" {
						break
					}
					r, err = svc.Get(next)
					fail("get next", err)
				}
			}
		})
		// Matches: both players resign every round (a draw), so that the
		// next round is made from the end of the one before.
		wg.Go(func() {
			for range iterations {
				done.Add(1)
				r, sinks := seatTwo(race.Options{BestOf: 3})
				for round := 0; r != nil && round < 3; round++ {
					clock.Advance(race.DefaultCountdown)
					fail("resign", r.Resign(0, ""))
					fail("resign", r.Resign(1, ""))
					_, next := sinks[0].get()
					if next == "" || !r.State().Over() {
						break
					}
					nr, err := svc.Get(next)
					if err != nil {
						fail("get round", err)
						break
					}
					for s := range 2 {
						tok, _ := sinks[s].get()
						sinks[s] = &seatSink{}
						if _, err := nr.Resume(tok, "", "", sinks[s]); err != nil {
							fail("resume round", err)
						}
					}
					r = nr
				}
			}
		})
		// Races of ten: ten racers join at once, a third of them leave
		// and come back before the start; once it runs, each resigns or
		// leaves for good (forfeiting only their own place) at once; the
		// countdown and the grace periods run out under them.
		wg.Go(func() {
			for range tenIterations {
				done.Add(1)
				r, err := svc.Create(race.Options{Seats: race.MaxSeats})
				if err != nil {
					fail("create ten", err)
					continue
				}
				sinks, seats := make([]*seatSink, race.MaxSeats), make([]int, race.MaxSeats)
				var racers sync.WaitGroup
				for i := range sinks {
					sinks[i] = &seatSink{}
					racers.Go(func() {
						tk, err := r.Join("p", "", sinks[i])
						if err != nil {
							fail("join ten", err)
							return
						}
						seats[i] = tk.Seat
						if rand.IntN(3) == 0 {
							r.Leave(tk.Seat, sinks[i])
							tok, _ := sinks[i].get()
							_, err := r.Resume(tok, "", "", sinks[i])
							fail("resume ten", err)
						}
					})
				}
				racers.Wait()
				clock.Advance(race.DefaultCountdown)
				for i := range sinks {
					racers.Go(func() {
						if rand.IntN(2) == 0 {
							fail("resign ten", r.Resign(seats[i], ""))
							return
						}
						// A first move, so that the first-move rule
						// does not abort the race before the grace
						// period runs out; then gone for good.
						if m, ok := sinks[i].move(); ok {
							fail("move ten", r.Move(seats[i], m, ""))
						}
						r.Leave(seats[i], sinks[i])
					})
				}
				racers.Wait()
				clock.Advance(race.DefaultGrace)
			}
		})
		// Evictions, lookups and aborts of whatever the service holds.
		wg.Go(func() {
			for range iterations {
				done.Add(1)
				svc.Evict(0)
				for _, r := range svc.Races() {
					if _, err := svc.Get(r.ID()); err != nil && race.ErrorCode(err) != race.CodeNoSuchRace {
						fail("get", err)
					}
					if rand.IntN(4) == 0 {
						r.Abort("shutdown")
					}
					_ = r.State()
				}
				_ = svc.Live()
			}
		})
	}
	// Drain once most of the work is done: the workers then meet
	// "draining" refusals and go on.
	drained := make(chan int, 1)
	wg.Go(func() {
		for done.Load() < drainAt {
			select {
			case <-stop:
				return
			default:
			}
			time.Sleep(time.Millisecond)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // abort what is left at once
		drained <- svc.Drain(ctx)
	})

	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	tick := time.NewTicker(hangAfter)
	defer tick.Stop()
	for last := int64(-1); ; {
		select {
		case <-finished:
		case <-tick.C:
			if n := done.Load(); n != last {
				last = n
				continue
			}
			var b strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
			close(stop)
			t.Fatalf("deadlock: %d of %d iterations done, none in the last %s; goroutines:\n%s", done.Load(), total, hangAfter, b.String())
		}
		break
	}
	for _, err := range errs {
		t.Error(err)
	}
	select {
	case <-drained:
	default:
		t.Error("the drain did not run")
	}
	if ends.Load() == 0 {
		t.Error("no race ended")
	}
	if tenRanked.Load() == 0 {
		t.Error("no race of ten was decided: its racers' resignations and forfeits never ended one")
	}
	// Everything left is over after the drain; one more eviction empties
	// the service. (The workers' Advances, made at once, may have set the
	// fake clock back a little: an hour on, every race ended long ago.)
	clock.Advance(time.Hour)
	svc.Evict(0)
	if n := len(svc.Races()); n != 0 {
		for _, r := range svc.Races() {
			in, _ := r.Info(t.Context())
			t.Errorf("left after the drain and an eviction: race %s %s %+v", r.ID(), in.State, in.Result)
		}
	}
	t.Logf("%d iterations, %d races ended, %d of them races of ten ranked", done.Load(), ends.Load(), tenRanked.Load())
}
