package engine

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

// TestExpertTune plays classic deals with an expert of the given
// configuration, when asked:
//
//	SIRTOMMY_EXPERT_TUNE=FIRST:N:SAMPLES:NODES:MARGIN go test ./engine -run TestExpertTune -v -timeout 0
//
// and prints its wins, average score and median decision time (over the
// choices where it drew), for tuning defaultExpert.
func TestExpertTune(t *testing.T) {
	spec := os.Getenv("SIRTOMMY_EXPERT_TUNE")
	if spec == "" {
		t.Skip("set SIRTOMMY_EXPERT_TUNE=FIRST:N:SAMPLES:NODES:MARGIN")
	}
	var first, n uint64
	var cfg expertConfig
	if _, err := fmt.Sscanf(spec, "%d:%d:%d:%d:%d", &first, &n, &cfg.samples, &cfg.nodes, &cfg.margin); err != nil {
		t.Fatal(err)
	}
	cfg.maxCands = defaultExpert.maxCands
	variant := os.Getenv("SIRTOMMY_EXPERT_VARIANT")
	if variant == "" {
		variant = "classic"
	}
	rules := mustVariant(t, variant)
	won, score := 0, 0
	var times []time.Duration
	start := time.Now()
	for deal := first; deal < first+n; deal++ {
		b := NewBot(Expert, deal)
		b.expert = cfg
		g := New(rules, deal)
		for g.Status() == Playing {
			legal := g.Moves()
			v := g.Memory()
			t0 := time.Now()
			m, _ := b.Choose(&v, legal)
			if len(legal) > 1 {
				times = append(times, time.Since(t0))
			}
			if g.Apply(m) != nil {
				t.Fatal("illegal")
			}
		}
		score += g.Score()
		if g.Status() == Won {
			won++
		}
	}
	slices.Sort(times)
	t.Logf("%s %v deals %d-%d: won %d (%.1f%%), average score %.2f, %d choices, median %v, p90 %v, max %v, %v/deal",
		variant, cfg, first, first+n-1, won, 100*float64(won)/float64(n), float64(score)/float64(n), len(times),
		times[len(times)/2], times[len(times)*9/10], times[len(times)-1], time.Since(start)/time.Duration(n))
}
