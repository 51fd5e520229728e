package race_test

import (
	"testing"

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
