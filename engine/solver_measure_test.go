package engine

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSolverMeasure solves a run of classic deals one after another and
// prints each outcome with its nodes and time, then a summary. It runs only
// when SIRTOMMY_MEASURE is set, as "FIRST-LAST" or "FIRST-LAST:MAXNODES":
//
//	SIRTOMMY_MEASURE=1-200:200000 go test ./engine -run TestSolverMeasure -v
//
// SIRTOMMY_MEASURE_LIST="4 5 7" solves those deals instead of the range;
// SIRTOMMY_MEASURE_VARIANT picks another variant; SIRTOMMY_MEASURE_SCORE=1
// also runs phase 2 (the best score of a lost deal).
func TestSolverMeasure(t *testing.T) {
	spec := os.Getenv("SIRTOMMY_MEASURE")
	if spec == "" {
		t.Skip("set SIRTOMMY_MEASURE=FIRST-LAST[:MAXNODES] to measure the solver")
	}
	var first, last uint64
	var maxNodes int64 = 200_000
	var rng, nodes string
	rng, nodes, _ = strings.Cut(spec, ":")
	a, b, _ := strings.Cut(rng, "-")
	first, _ = strconv.ParseUint(a, 10, 64)
	last, _ = strconv.ParseUint(b, 10, 64)
	if nodes != "" {
		maxNodes, _ = strconv.ParseInt(nodes, 10, 64)
	}
	variant := os.Getenv("SIRTOMMY_MEASURE_VARIANT")
	rules := mustVariant(t, variant)
	skip := os.Getenv("SIRTOMMY_MEASURE_SCORE") == ""
	cpu0 := cpuTime()
	var times []time.Duration
	counts := map[Outcome]int{}
	var total int64
	deals := []uint64{}
	for n := first; n <= last; n++ {
		deals = append(deals, n)
	}
	if list := os.Getenv("SIRTOMMY_MEASURE_LIST"); list != "" {
		deals = deals[:0]
		for _, f := range strings.Fields(list) {
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				t.Fatalf("SIRTOMMY_MEASURE_LIST: %v", err)
			}
			deals = append(deals, n)
		}
	}
	runtime.LockOSThread() // so that the thread's CPU time is the solver's
	defer runtime.UnlockOSThread()
	var walls []time.Duration
	for _, n := range deals {
		t0, c0 := time.Now(), threadCPUTime()
		sol := Solve(rules, n, SolveOptions{MaxNodes: maxNodes, SkipBestScore: skip})
		took, wall := threadCPUTime()-c0, time.Since(t0)
		times = append(times, took)
		walls = append(walls, wall)
		counts[sol.Outcome]++
		total += sol.Nodes
		if sol.Outcome == Winnable {
			g := New(rules, n)
			for _, m := range sol.Line {
				if err := g.Apply(m); err != nil {
					t.Fatalf("deal %d: line does not replay: %v", n, err)
				}
			}
			if g.Status() != Won {
				t.Fatalf("deal %d: line ends %v", n, g.Status())
			}
		}
		fmt.Printf("deal %d %s best %d nodes %d cpu %v wall %v\n", n, sol.Outcome, sol.BestScore, sol.Nodes, took.Round(time.Microsecond), wall.Round(time.Microsecond))
	}
	slices.Sort(times)
	slices.Sort(walls)
	q := func(p float64) time.Duration { return times[min(len(times)-1, int(p*float64(len(times))))] }
	cpu := cpuTime() - cpu0
	fmt.Printf("summary %d deals (%d-%d) maxnodes %d: won %d lost %d unknown %d; nodes %d; per-deal CPU median %v p90 %v p99 %v max %v; wall median %v; process cpu %v (%.0f ns/node)\n",
		len(deals), first, last, maxNodes, counts[Winnable], counts[Lost], counts[Unknown], total,
		q(0.5).Round(time.Microsecond), q(0.9).Round(time.Microsecond), q(0.99).Round(time.Microsecond), times[len(times)-1].Round(time.Microsecond),
		walls[len(walls)/2].Round(time.Microsecond), cpu.Round(time.Millisecond), float64(cpu.Nanoseconds())/float64(max(total, 1)))
}
