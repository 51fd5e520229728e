package redisrace_test

import (
	"sort"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// BenchmarkCrossInstanceMove measures a move made on instance A until the
// opponent, whose connection is on instance B, has the update: A applies
// and logs the move, publishes the opponent's counts, Redis carries them
// to B, and B hands them to the connection. It reports the median and
// the 99th percentile.
func BenchmarkCrossInstanceMove(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	rdb := client(b, srv)
	clock := race.SystemClock{}
	a := newInstance(b, rdb, "a", clock)
	bb := newInstance(b, rdb, "b", clock)
	rules, _ := engine.Variant("")
	opts := race.Options{Deal: testDeal, DealNamed: true, Countdown: time.Millisecond, TimeLimit: time.Hour, FirstMoveTimeout: time.Hour}

	var (
		r    *race.Race
		game engine.Game
		opp  racetest.Chan
	)
	newRace := func() {
		var err error
		if r, err = a.svc.Create(opts); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Join("a", "", racetest.Chan(make(chan race.Event, 1))); err != nil {
			b.Fatal(err)
		}
		h, err := bb.svc.Open(b.Context(), r.ID())
		if err != nil {
			b.Fatal(err)
		}
		opp = make(racetest.Chan, 1024)
		if _, err := h.Join("b", "", opp); err != nil {
			b.Fatal(err)
		}
		for r.State() != race.Running {
			time.Sleep(time.Millisecond)
		}
		game = engine.New(rules, testDeal)
		drain(opp)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if r == nil || game.Status().Over() || r.State().Over() {
			newRace()
		}
		m := game.AppendMoves(nil)[0]
		_ = game.Apply(m)
		b.StartTimer()
		start := time.Now()
		if err := r.Move(0, m.String(), ""); err != nil {
			b.Fatal(err)
		}
		for {
			if _, ok := opp.Next(b).(*race.OpponentEvent); ok {
				break
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

func drain(c racetest.Chan) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}
