package main

import (
	"sort"
	"testing"
	"time"

	"sirtommy/race/redisrace/redistest"
)

// benchPace spaces one player's moves so that a connection stays under
// the server's default message budget (20 a second).
const benchPace = 60 * time.Millisecond

// BenchmarkCrossInstanceWebsocket measures, through the real servers on
// one Redis, a move sent over a websocket to instance A until the
// opponent's websocket on instance B has the "opponent" message, and the
// same from B to A: the players take turns. It reports the median and the
// 99th percentile; pacing and new races are not timed.
func BenchmarkCrossInstanceWebsocket(b *testing.B) {
	rds := redistest.Start(b, redistest.Options{})
	pg := fleetDatabase(b)
	a, _, _, _ := startServe(b, "--redis", rds.URL(), "--database", pg, "--drain-timeout", "100ms", "--log-level", "warn")
	bb, _, _, _ := startServe(b, "--redis", rds.URL(), "--database", pg, "--drain-timeout", "100ms", "--log-level", "warn")
	var ps [2]*player
	newRace := func() {
		id := createRace(b, a)
		ps[0], ps[1] = join(b, a, id, "on-a"), join(b, bb, id, "on-b")
		for _, p := range ps {
			p.c.next("running", func(m msg) bool { return m.str("type") == "state" && m.str("state") == "running" })
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.StopTimer()
	for i := range b.N {
		me := ps[i%2]
		if me == nil || me.game.Status().Over() {
			if ps[0] != nil {
				_ = ps[0].c.ws.Close()
				_ = ps[1].c.ws.Close()
			}
			newRace()
			me = ps[i%2]
		}
		other := ps[1-i%2]
		m := me.game.AppendMoves(nil)[0]
		time.Sleep(benchPace / 2)
		b.StartTimer()
		start := time.Now()
		me.c.send(map[string]any{"type": "move", "id": "b", "move": m.String()})
		other.c.next("opponent", ofType("opponent"))
		lat = append(lat, time.Since(start))
		b.StopTimer()
		if r := me.c.next("answer", func(x msg) bool { return x.str("id") == "b" }); r.str("type") != "moved" {
			b.Fatalf("move refused: %v", r)
		}
		_ = me.game.Apply(m)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkCrossInstancePairing measures quick play across two real
// servers on one Redis: ann waits in the queue on A; from bob's "queue"
// sent to B until ann's websocket on A has "matched" (B pairs, makes the
// race, and the courier carries ann's event over Redis pub/sub to A). It
// reports the median and the 99th percentile; new players are not timed.
func BenchmarkCrossInstancePairing(b *testing.B) {
	rds := redistest.Start(b, redistest.Options{})
	pg := fleetDatabase(b)
	a, _, _, _ := startServe(b, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms", "--log-level", "warn")
	bb, _, _, _ := startServe(b, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms", "--log-level", "warn")
	lat := make([]time.Duration, 0, b.N)
	b.StopTimer()
	for range b.N {
		ann, bob := hello(b, a, "ann"), hello(b, bb, "bob")
		ann.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
		b.StartTimer()
		start := time.Now()
		bob.send(map[string]any{"type": "queue", "id": "q", "variant": "classic"})
		ann.next("matched", ofType("matched"))
		lat = append(lat, time.Since(start))
		b.StopTimer()
		bob.next("matched", ofType("matched"))
		_ = ann.ws.Close()
		_ = bob.ws.Close()
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
