// Package metrics exposes the race server's metrics in the Prometheus text
// format: websocket connections, races by state, moves and their handling
// latency, send-queue drops, rate-limit hits and floods, and the standard
// Go runtime and process collectors (goroutines, memory, GC, file
// descriptors). Each Metrics has its own registry, so tests may make as
// many as they like.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"sirtommy/race"
	"sirtommy/web"
)

// moveBuckets are the move-handling latency buckets, in seconds: from
// 10 µs (an in-memory move on an idle server takes tens of µs) to 250 ms (far past the
// design's 30 ms move→opponent p99 target), roughly doubling.
func moveBuckets() []float64 {
	return []float64{0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25}
}

// Metrics is the server's metrics registry; it implements web.Observer.
// The zero value is not usable: make one with New.
type Metrics struct {
	reg         *prometheus.Registry
	moves       *prometheus.CounterVec
	accepted    prometheus.Counter // moves{result="accepted"}, looked up once
	moveLatency prometheus.Histogram
}

// New makes the registry with the Go and process collectors and the move
// metrics. Watch adds the server's and races' gauges once they exist.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sirtommy_moves_total",
			Help: "Move requests from seated players, by result (accepted, or the refusal's error code).",
		}, []string{"result"}),
		moveLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sirtommy_move_handling_seconds",
			Help:    "Time the server took to judge a move and queue its replies.",
			Buckets: moveBuckets(),
		}),
	}
	m.accepted = m.moves.WithLabelValues("accepted")
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.moves, m.moveLatency,
	)
	return m
}

// MoveHandled counts a move and records its handling time.
func (m *Metrics) MoveHandled(d time.Duration, err error) {
	if err == nil {
		m.accepted.Inc() // the usual case, without the label's lookup
	} else {
		m.moves.WithLabelValues(string(race.ErrorCode(err))).Inc()
	}
	m.moveLatency.Observe(d.Seconds())
}

// Watch registers gauges and counters read from the server's Stats and the
// race service at each scrape. Either may be nil.
func (m *Metrics) Watch(stats *web.Stats, races *race.Service) {
	if stats != nil {
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "sirtommy_websocket_connections", Help: "Websocket connections open now.",
			}, func() float64 { return float64(stats.Conns.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "sirtommy_send_queue_drops_total", Help: "Clients dropped because their send queue was full (too slow).",
			}, func() float64 { return float64(stats.SlowDropped.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "sirtommy_rate_limited_total", Help: "Client messages refused as over the per-connection budget.",
			}, func() float64 { return float64(stats.RateLimited.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "sirtommy_flood_closes_total", Help: "Connections closed for persistently exceeding the message budget.",
			}, func() float64 { return float64(stats.Flooded.Load()) }),
		)
	}
	if races != nil {
		m.reg.MustRegister(racesCollector{races: races, desc: prometheus.NewDesc(
			"sirtommy_races", "Races held in memory, by state.", []string{"state"}, nil)})
	}
}

// MustRegister adds collectors of the server's other parts (the
// database's); it panics on a name registered twice, as
// prometheus.MustRegister does.
func (m *Metrics) MustRegister(cs ...prometheus.Collector) { m.reg.MustRegister(cs...) }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// racesCollector reports the races the service holds, by state, at each
// scrape (finished races stay in memory while the server runs).
type racesCollector struct {
	races *race.Service
	desc  *prometheus.Desc
}

// raceStates are every state a race can be in, so each series exists from
// the first scrape.
func raceStates() []race.State {
	return []race.State{race.Waiting, race.Countdown, race.Running, race.Finished, race.Aborted}
}

// Describe sends the one descriptor.
func (c racesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect counts the races by state.
func (c racesCollector) Collect(ch chan<- prometheus.Metric) {
	states := raceStates()
	n := make(map[race.State]int, len(states))
	for _, r := range c.races.Races() {
		n[r.State()]++
	}
	for _, s := range states {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n[s]), string(s))
	}
}
