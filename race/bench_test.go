package race_test

import (
	"fmt"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

type discard struct{}

func (discard) Deliver(race.Event) {}

// BenchmarkMove measures the race's share of the move path: parse,
// validate and apply, append to the in-memory log, publish "moved",
// "opponent" and "board" to subscribers, and ask the referee.
func BenchmarkMove(b *testing.B) {
	var (
		f    *fixture
		g    engine.Game
		deal uint64
	)
	start := func() {
		deal++
		f = newRace(b, named(deal))
		for range 2 {
			if _, err := f.race.Join("p", "", discard{}); err != nil {
				b.Fatal(err)
			}
		}
		f.race.Watch(discard{})
		f.clock.Advance(race.DefaultCountdown)
		g = newGame(deal)
	}
	start()
	b.ReportAllocs()
	for b.Loop() {
		if g.Status() != engine.Playing {
			b.StopTimer()
			start()
			b.StartTimer()
		}
		m := racetest.Greedy(&g)
		_ = g.Apply(m)
		if err := f.race.Move(0, m.String(), ""); err != nil {
			b.Fatal(err)
		}
	}
}

// queued is a subscriber as a websocket connection is (race.Queuer): the
// race queues its events under its lock and has them flushed once the
// lock is released. The first flush after a move's start is when the
// race let go of its lock: the lock's hold time.
type queued struct {
	pending  bool
	released *time.Time // the first flush since the move began; zero until then
}

func (q *queued) Deliver(race.Event) {}

func (q *queued) Queue(race.Event) bool {
	if q.pending {
		return false
	}
	q.pending = true
	return true
}

func (q *queued) Flush() {
	q.pending = false
	if q.released.IsZero() {
		*q.released = time.Now()
	}
}

// BenchmarkMoveTenRacers is one move in a race of ten with 100
// spectators, every receiver queued as a connection is: the CPU and
// allocations of a move, and (lock-ns/op) how long the race holds its
// lock for it, from the move's start until the first queued write may
// go. Issue 32 asks for it: the lock's hold grows with the receivers.
func BenchmarkMoveTenRacers(b *testing.B) {
	for _, spectators := range []int{0, 100} {
		b.Run(fmt.Sprintf("spectators=%d", spectators), func(b *testing.B) {
			var (
				f        *fixture
				g        engine.Game
				deal     uint64
				released time.Time
			)
			start := func() {
				deal++
				f = newRace(b, race.Options{Deal: deal, DealNamed: true, Seats: race.MaxSeats})
				for range race.MaxSeats {
					if _, err := f.race.Join("p", "", &queued{released: &released}); err != nil {
						b.Fatal(err)
					}
				}
				for range spectators {
					f.race.Watch(&queued{released: &released})
				}
				f.clock.Advance(race.DefaultCountdown)
				g = newGame(deal)
			}
			start()
			var held time.Duration
			b.ReportAllocs()
			for b.Loop() {
				if g.Status() != engine.Playing {
					b.StopTimer()
					start()
					b.StartTimer()
				}
				m := racetest.Greedy(&g)
				_ = g.Apply(m)
				released = time.Time{}
				began := time.Now()
				if err := f.race.Move(0, m.String(), ""); err != nil {
					b.Fatal(err)
				}
				if !released.IsZero() {
					held += released.Sub(began)
				}
			}
			b.ReportMetric(float64(held.Nanoseconds())/float64(b.N), "lock-ns/op")
		})
	}
}
