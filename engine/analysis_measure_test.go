package engine

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAnalysisMeasure analyses games of racers of mixed strength on a run
// of deals with the coach's budgets (300,000 positions and 20,000
// conflicts a position, 12 positions a game) and prints each game's
// verdict, solves and time, then a summary: the share of games left
// unknown, and the median and p99 time of a whole analysis. Deal d is
// played by the racer d mod 5: the easy, medium, hard and expert bots, and
// a careless player (the medium bot playing a random legal move one time
// in eight). It runs only when SIRTOMMY_ANALYSIS_MEASURE is set, as
// "FIRST-LAST"; SIRTOMMY_ANALYSIS_VARIANT names the variant (classic if
// unset); SIRTOMMY_ANALYSIS_CRITICAL, if set, is a file to which each game
// left unknown is written as one line: the variant, the deal, the first
// position not settled and the game's moves.
//
//	SIRTOMMY_ANALYSIS_MEASURE=1-200 go test ./engine -run TestAnalysisMeasure -v -timeout 0
func TestAnalysisMeasure(t *testing.T) {
	spec := os.Getenv("SIRTOMMY_ANALYSIS_MEASURE")
	if spec == "" {
		t.Skip("set SIRTOMMY_ANALYSIS_MEASURE=FIRST-LAST to measure the analysis")
	}
	a, b, _ := strings.Cut(spec, "-")
	first, err1 := strconv.ParseUint(a, 10, 64)
	last, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil || last < first {
		t.Fatalf("SIRTOMMY_ANALYSIS_MEASURE=%q: want FIRST-LAST, two deal numbers", spec)
	}
	variant := cmpOr(os.Getenv("SIRTOMMY_ANALYSIS_VARIANT"), "classic")
	r := mustVariant(t, variant)
	var critical *os.File
	if path := os.Getenv("SIRTOMMY_ANALYSIS_CRITICAL"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		critical = f
	}
	var times []time.Duration
	verdicts := map[string]int{}
	solvesAll := 0
	for deal := first; deal <= last; deal++ {
		racer, g, moves := measuredGame(r, deal)
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
		if verdict == "unknown" && critical != nil {
			fmt.Fprintf(critical, "%s %d %d %s\n", variant, deal, an.LastWinnable+1, movesText(moves))
		}
		t.Logf("deal %d (%s): %s after %d moves: %s (last winnable %d, first lost %d), %d solves, %v", deal, racer, g.status, len(moves), verdict, an.LastWinnable, an.FirstLost, solves, d.Round(time.Millisecond))
	}
	slices.Sort(times)
	var total time.Duration
	for _, d := range times {
		total += d
	}
	n := len(times)
	t.Logf("%s, %d games: %v (unknown %.1f%%); %d solves; time a game median %v, p99 %v, max %v, total %v", variant, n, verdicts,
		100*float64(verdicts["unknown"])/float64(n), solvesAll, times[n/2].Round(time.Millisecond),
		times[min(n-1, n*99/100)].Round(time.Millisecond), times[n-1].Round(time.Millisecond), total.Round(time.Millisecond))
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// measuredGame is the game of deal d by the racer d mod 5 (see
// TestAnalysisMeasure) to its end: the racer's name, the final position
// and the moves.
func measuredGame(r *Rules, deal uint64) (string, Game, []Move) {
	if k := deal % 5; k < 4 {
		l := Levels()[k]
		g, moves := PlayBot(r, deal, NewBot(l, deal))
		return l.String(), g, moves
	}
	g := New(r, deal)
	bot := NewBot(Medium, deal)
	rng := rand.New(rand.NewPCG(deal, 8))
	var moves []Move
	for g.status == Playing && len(moves) < MaxBotMoves {
		legal := g.Moves()
		v := g.Memory()
		m, ok := bot.Choose(&v, legal)
		if rng.IntN(8) == 0 {
			m, ok = legal[rng.IntN(len(legal))], true
		}
		if !ok || g.Apply(m) != nil {
			break
		}
		moves = append(moves, m)
	}
	return "careless", g, moves
}

// movesText is moves in notation, separated by spaces.
func movesText(moves []Move) string {
	var b []byte
	for i, m := range moves {
		if i > 0 {
			b = append(b, ' ')
		}
		b = m.AppendText(b)
	}
	return string(b)
}
