package engine

import (
	"testing"
	"time"
)

// BenchmarkAnalysisCurve measures the curve's cost: the coach's analysis
// of the games of deals 1-20 of TestAnalysisMeasure's racers of mixed
// strength (its budgets, with the expert's three chances), without the
// curve ("before") and with DefaultCurvePoints ("after"), as ms/game.
//
//	GOMAXPROCS=1 go test ./engine -run '^$' -bench AnalysisCurve -benchtime 1x -count 1
func BenchmarkAnalysisCurve(b *testing.B) {
	r := mustVariant(b, "classic")
	type game struct {
		deal  uint64
		moves []Move
	}
	var games []game
	for deal := uint64(1); deal <= 20; deal++ {
		_, _, moves := measuredGame(r, deal)
		games = append(games, game{deal, moves})
	}
	for _, c := range []struct {
		name   string
		points int
	}{{"before", 0}, {"after", DefaultCurvePoints}} {
		b.Run(c.name, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				for _, g := range games {
					start := New(r, g.deal)
					t0 := time.Now()
					if _, err := AnalyzeGame(&start, g.moves, AnalyzeOptions{
						Solve:       SolveOptions{MaxNodes: 300_000, MaxConflicts: 20_000, SkipBestScore: true},
						Chances:     true,
						CurvePoints: c.points,
					}); err != nil {
						b.Fatal(err)
					}
					total += time.Since(t0)
				}
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N*len(games)), "ms/game")
		})
	}
}
