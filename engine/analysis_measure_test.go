package engine

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAnalysisMeasure analyses the medium bot's games on a run of classic
// deals with the server's budgets (300,000 positions and 20,000 conflicts
// a position, 12 positions a game) and prints each game's verdict, solves
// and time, then a summary. It runs only when SIRTOMMY_ANALYSIS_MEASURE is
// set, as "FIRST-LAST":
//
//	SIRTOMMY_ANALYSIS_MEASURE=1-50 go test ./engine -run TestAnalysisMeasure -v
func TestAnalysisMeasure(t *testing.T) {
	spec := os.Getenv("SIRTOMMY_ANALYSIS_MEASURE")
	if spec == "" {
		t.Skip("set SIRTOMMY_ANALYSIS_MEASURE=FIRST-LAST to measure the analysis")
	}
	a, b, _ := strings.Cut(spec, "-")
	first, _ := strconv.ParseUint(a, 10, 64)
	last, _ := strconv.ParseUint(b, 10, 64)
	r := mustVariant(t, "classic")
	var times []time.Duration
	verdicts := map[string]int{}
	solvesAll := 0
	for deal := first; deal <= last; deal++ {
		g, moves := mediumGame(r, deal)
		start := New(r, deal)
		solves := 0
		t0 := time.Now()
		an, err := AnalyzeGame(&start, moves, AnalyzeOptions{
			Solve: SolveOptions{MaxNodes: 300_000, MaxConflicts: 20_000},
			Solver: func(_ int, g *Game, o SolveOptions) (Solution, bool) {
				solves++
				return SolveGame(g, o), true
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		d := time.Since(t0)
		times = append(times, d)
		solvesAll += solves
		verdict := "unknown"
		switch {
		case g.status == Won:
			verdict = "won"
		case an.FirstLost == 0:
			verdict = "lost-from-start"
		case an.Complete():
			verdict = "lost-at"
		}
		verdicts[verdict]++
		t.Logf("deal %d: %s after %d moves: %s (last winnable %d, first lost %d), %d solves, %v", deal, g.status, len(moves), verdict, an.LastWinnable, an.FirstLost, solves, d.Round(time.Millisecond))
	}
	slices.Sort(times)
	var total time.Duration
	for _, d := range times {
		total += d
	}
	t.Logf("%d games: %v; %d solves; time a game median %v, max %v, total %v", len(times), verdicts, solvesAll,
		times[len(times)/2].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond), total.Round(time.Millisecond))
}
