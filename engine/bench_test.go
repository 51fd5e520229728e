package engine

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// benchPositions collects positions of random classic games, each with a
// legal move, so that a benchmark can apply one move to a copy of one.
func benchPositions(b *testing.B, n int) ([]Game, []Move) {
	b.Helper()
	return benchPositionsOf(b, "classic", n)
}

// benchPositionsOf is benchPositions in the named variant.
func benchPositionsOf(b *testing.B, variant string, n int) ([]Game, []Move) {
	b.Helper()
	r := mustVariant(b, variant)
	rng := rand.New(rand.NewPCG(1, 2))
	games := make([]Game, 0, n)
	moves := make([]Move, 0, n)
	var buf [64]Move
	for deal := uint64(0); len(games) < n; deal++ {
		g := New(r, deal)
		for g.Status() == Playing && len(games) < n {
			m := randomMove(&g, rng, buf[:])
			games = append(games, g)
			moves = append(moves, m)
			if err := g.Apply(m); err != nil {
				b.Fatal(err)
			}
		}
	}
	return games, moves
}

// BenchmarkApply is one legal move applied to a copy of a game in play: the
// copy is part of each operation, the choice of position and move is not.
func BenchmarkApply(b *testing.B) {
	const n = 1 << 12
	games, moves := benchPositions(b, n)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g := games[i&(n-1)]
		if err := g.Apply(moves[i&(n-1)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyFourAtATime is BenchmarkApply in four-at-a-time, whose
// moves include turning the next four.
func BenchmarkApplyFourAtATime(b *testing.B) {
	const n = 1 << 12
	games, moves := benchPositionsOf(b, "four-at-a-time", n)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g := games[i&(n-1)]
		if err := g.Apply(moves[i&(n-1)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendMoves lists the legal moves of a game in play.
func BenchmarkAppendMoves(b *testing.B) {
	const n = 1 << 12
	games, _ := benchPositions(b, n)
	buf := make([]Move, 0, 64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = games[i&(n-1)].AppendMoves(buf[:0])
	}
	if len(buf) == 0 && games[0].Status() == Playing {
		b.Fatal("no moves")
	}
}

// BenchmarkPlayout plays a whole classic deal at random, from New to the end.
func BenchmarkPlayout(b *testing.B) {
	r := mustVariant(b, "classic")
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]Move, 0, 64)
	moves := 0
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		g := New(r, i)
		for g.Status() == Playing {
			buf = g.AppendMoves(buf[:0])
			if err := g.Apply(buf[rng.IntN(len(buf))]); err != nil {
				b.Fatal(err)
			}
			moves++
		}
	}
	b.ReportMetric(float64(moves)/float64(b.N), "moves/op")
}

// BenchmarkSolve solves classic deals 1-40 with a budget of 100,000
// positions each (phase 1 only) and reports the cost per position searched,
// the figure that decides how many deals a time budget settles: ns/node of
// wall time, and cpu-ns/node of the thread's CPU time, which moves less
// when other work shares the machine:
//
//	GOMAXPROCS=1 go test ./engine -run XXX -bench Solve -count 5
func BenchmarkSolve(b *testing.B) {
	r := mustVariant(b, "classic")
	var nodes int64
	runtime.LockOSThread() // so that the thread's CPU time is the solver's
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	cpu0 := threadCPUTime()
	for b.Loop() {
		for deal := uint64(1); deal <= 40; deal++ {
			nodes += Solve(r, deal, SolveOptions{MaxNodes: 100_000, SkipBestScore: true, SearchOnly: true}).Nodes
		}
	}
	cpu := threadCPUTime() - cpu0
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(nodes), "ns/node")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(nodes), "cpu-ns/node")
	b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
}

// BenchmarkSolveDeals solves classic deals 1-1000 one after another on one
// thread, with the default budget (phase 1 only) and the SAT encoding for
// the deals the search leaves unknown, and reports the thread's CPU time
// per deal: its median, 99th percentile and maximum, the measure of
// the solver's speed, the counts of each outcome, and how many deals the
// SAT encoding settled. One iteration takes minutes:
//
//	GOMAXPROCS=1 go test ./engine -run XXX -bench SolveDeals -benchtime 1x
func BenchmarkSolveDeals(b *testing.B) {
	r := mustVariant(b, "classic")
	runtime.LockOSThread() // so that the thread's CPU time is the solver's
	defer runtime.UnlockOSThread()
	for b.Loop() {
		times := make([]time.Duration, 0, 1000)
		var counts [3]int
		bySAT := 0
		for deal := uint64(1); deal <= 1000; deal++ {
			cpu0 := threadCPUTime()
			sol := Solve(r, deal, SolveOptions{MaxNodes: solveDealsBudget, SkipBestScore: true})
			times = append(times, threadCPUTime()-cpu0)
			counts[sol.Outcome]++
			if sol.SAT {
				bySAT++
			}
		}
		slices.Sort(times)
		b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms/deal")
		b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms/deal")
		b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "max-ms/deal")
		b.ReportMetric(float64(bySAT), "sat")
		b.ReportMetric(float64(counts[Winnable]), "won")
		b.ReportMetric(float64(counts[Lost]), "lost")
		b.ReportMetric(float64(counts[Unknown]), "unknown")
	}
}

// solveDealsBudget is BenchmarkSolveDeals' budget per deal.
const solveDealsBudget = DefaultMaxNodes

// hardDeals are the classic deals of 1-600 that the search leaves unknown
// at 2,000,000 positions.
var hardDeals = []uint64{24, 74, 94, 143, 151, 164, 264, 317, 327, 341, 346, 392, 404, 453, 459, 532, 576}

// BenchmarkSATDecide is the SAT encoding's time for a deal the search
// cannot settle: each of hardDeals in turn, from encoding to checked line.
//
//	go test ./engine -run XXX -bench SATDecide -benchtime 1x
func BenchmarkSATDecide(b *testing.B) {
	r := mustVariant(b, "classic")
	runtime.LockOSThread() // so that the thread's CPU time is the solver's
	defer runtime.UnlockOSThread()
	times := make([]time.Duration, 0, len(hardDeals))
	for b.Loop() {
		for _, deal := range hardDeals {
			g := New(r, deal)
			cpu0 := threadCPUTime()
			out, _, _, err := satDecide(&g, DefaultMaxConflicts)
			times = append(times, threadCPUTime()-cpu0)
			if err != nil || out != Winnable {
				b.Fatalf("deal %d: %v %v", deal, out, err)
			}
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms/deal")
	b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "max-ms/deal")
}
