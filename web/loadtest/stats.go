package loadtest

import (
	"maps"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: latencies are recorded in microseconds from 1 µs to one
// minute (anything slower is clamped: a reply a minute late is a failure
// anyway), with 3 significant digits (0.1% resolution).
const (
	histMinMicros = 1
	histMaxMicros = int64(time.Minute / time.Microsecond)
	histSigFigs   = 3
)

// latency is a concurrency-safe HDR histogram of durations.
type latency struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

func newLatency() *latency {
	return &latency{h: hdrhistogram.New(histMinMicros, histMaxMicros, histSigFigs)}
}

// recordSince records the time since sent, unless sent is before from
// (the warm-up).
func (l *latency) recordSince(sent, from time.Time) {
	if !sent.Before(from) {
		l.record(time.Since(sent))
	}
}

func (l *latency) record(d time.Duration) {
	us := min(max(d.Microseconds(), histMinMicros), histMaxMicros)
	l.mu.Lock()
	_ = l.h.RecordValue(us) // in range by the clamp above
	l.mu.Unlock()
}

// Quantiles are a latency distribution's summary, in milliseconds.
type Quantiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50Ms"`
	P99   float64 `json:"p99Ms"`
	P999  float64 `json:"p999Ms"`
	Max   float64 `json:"maxMs"`
}

func (l *latency) quantiles() Quantiles {
	l.mu.Lock()
	defer l.mu.Unlock()
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Quantiles{
		Count: l.h.TotalCount(),
		P50:   ms(l.h.ValueAtQuantile(50)),
		P99:   ms(l.h.ValueAtQuantile(99)),
		P999:  ms(l.h.ValueAtQuantile(99.9)),
		Max:   ms(l.h.Max()),
	}
}

// counters count errors by code (and other named events) safely.
type counters struct {
	mu sync.Mutex
	m  map[string]int64
}

func (c *counters) add(name string) {
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[string]int64)
	}
	c.m[name]++
	c.mu.Unlock()
}

func (c *counters) snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.m)
}
