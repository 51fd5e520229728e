package redisrace_test

import (
	"sort"
	"sync"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// crossRacer plays seat 0 of races on instance a whose seat 1 is a
// connection on instance b, one race after another.
type crossRacer struct {
	b     *testing.B
	a, bb *instance
	r     *race.Race
	game  engine.Game
	opp   racetest.Chan
}

var crossOpts = race.Options{Deal: testDeal, DealNamed: true, Countdown: time.Millisecond, TimeLimit: time.Hour, FirstMoveTimeout: time.Hour}

func (c *crossRacer) newRace() {
	var err error
	if c.r, err = c.a.svc.Create(crossOpts); err != nil {
		c.b.Fatal(err)
	}
	if _, err := c.r.Join("a", "", racetest.Chan(make(chan race.Event, 1))); err != nil {
		c.b.Fatal(err)
	}
	h, err := c.bb.svc.Open(c.b.Context(), c.r.ID())
	if err != nil {
		c.b.Fatal(err)
	}
	c.opp = make(racetest.Chan, 1024)
	if _, err := h.Join("b", "", c.opp); err != nil {
		c.b.Fatal(err)
	}
	for c.r.State() != race.Running {
		time.Sleep(time.Millisecond)
	}
	rules, _ := engine.Variant("")
	c.game = engine.New(rules, testDeal)
	for len(c.opp) > 0 {
		<-c.opp
	}
}

// move makes one move and returns the time until b's connection had the
// opponent's update.
func (c *crossRacer) move() time.Duration {
	if c.r == nil || c.game.Status().Over() || c.r.State().Over() {
		c.newRace()
	}
	m := c.game.AppendMoves(nil)[0]
	_ = c.game.Apply(m)
	start := time.Now()
	if err := c.r.Move(0, m.String(), ""); err != nil {
		c.b.Fatal(err)
	}
	for {
		if _, ok := c.opp.Next(c.b).(*race.OpponentEvent); ok {
			return time.Since(start)
		}
	}
}

// twoInstances starts a Redis server and instances a and b on it, both on
// clock.
func twoInstances(t testing.TB, clock race.Clock) (*instance, *instance) {
	t.Helper()
	rdb := redistest.Start(t, redistest.Options{}).Client(t)
	return newInstance(t, rdb, "a", clock), newInstance(t, rdb, "b", clock)
}

func report(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkCrossInstanceMove measures a move made on instance A until the
// opponent, whose connection is on instance B, has the update: A applies
// and logs the move, publishes the opponent's counts, Redis carries them
// to B, and B hands them to the connection. One race at a time; it
// reports the median and the 99th percentile of that latency (ns/op also
// counts making a new race when one ends, the latencies do not).
func BenchmarkCrossInstanceMove(b *testing.B) {
	a, bb := twoInstances(b, race.SystemClock{})
	c := &crossRacer{b: b, a: a, bb: bb}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		lat = append(lat, c.move())
	}
	b.StopTimer()
	report(b, lat)
}

// BenchmarkCrossInstanceMoveParallel is the same with 100 races moving at
// once, as fast as they can, on two instances in one process.
func BenchmarkCrossInstanceMoveParallel(b *testing.B) {
	const racesPerProc = 50 // × GOMAXPROCS races at once
	a, bb := twoInstances(b, race.SystemClock{})
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	b.SetParallelism(racesPerProc)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c := &crossRacer{b: b, a: a, bb: bb}
		for pb.Next() {
			d := c.move()
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}
	})
	b.StopTimer()
	report(b, lat)
}
