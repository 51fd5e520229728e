package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"sirtommy/engine"
)

// oddsReport is what odds prints, as text or JSON.
type oddsReport struct {
	Variant  string  `json:"variant"`
	Player   string  `json:"player"` // "solver" or "bot:LEVEL"
	Start    uint64  `json:"start"`
	Deals    int     `json:"deals"`
	Won      int     `json:"won"`
	Lost     int     `json:"lost"`
	Unknown  int     `json:"unknown"`
	SAT      int     `json:"sat"`      // settled by the SAT encoding once the search ran out of budget
	WinRate  float64 `json:"winRate"`  // won / deals
	Lower95  float64 `json:"lower95"`  // Wilson 95%, unknown counted as lost
	Upper95  float64 `json:"upper95"`  // Wilson 95%, unknown counted as won
	AvgScore float64 `json:"avgScore"` // mean best (solver) or final (bot) score
	// Per-deal wall time on one core, in milliseconds.
	MedianMS float64 `json:"medianMs"`
	P99MS    float64 `json:"p99Ms"`
	MaxMS    float64 `json:"maxMs"`
	MeanMS   float64 `json:"meanMs"`
	// A bot's time per decision, over the positions with two or more
	// legal moves, in milliseconds.
	Decisions        int     `json:"decisions,omitempty"`
	DecisionMedianMS float64 `json:"decisionMedianMs,omitempty"`
	DecisionP99MS    float64 `json:"decisionP99Ms,omitempty"`
	DecisionMaxMS    float64 `json:"decisionMaxMs,omitempty"`
	Workers          int     `json:"workers"`
	Seconds          float64 `json:"seconds"` // wall time of the whole run
}

// dealResult is one deal's outcome in an odds run.
type dealResult struct {
	outcome engine.Outcome
	score   int
	sat     bool // settled by the SAT encoding
	took    time.Duration
	choices []float32 // a bot's decision times in ms, where it had a choice
}

func oddsCommand(ctx context.Context, e env) error {
	fs := newFlagSet(e, "odds", "odds --variant V --deals N --start S [--bot LEVEL] [--json]\n\nPlays N consecutive deals from S with the solver (or a bot) on all cores and\nprints how many were won, the win rate with a Wilson 95% interval (unknown\ncounted as lost for the lower bound and as won for the upper) and the time per deal.")
	variant := fs.String("variant", engine.DefaultVariant, "variant to play")
	deals := fs.Int("deals", 1000, "how many consecutive deals")
	start := fs.Uint64("start", 1, "first deal number")
	bot := fs.String("bot", "", "play with the bot at this level (easy, medium, hard, expert) instead of the solver")
	maxNodes := fs.Int64("max-nodes", engine.DefaultMaxNodes, "solver: positions searched per deal before the SAT encoding decides")
	searchOnly := fs.Bool("search-only", false, "solver: answer unknown where the search runs out of positions, without the SAT encoding")
	maxConflicts := fs.Int64("max-conflicts", engine.DefaultMaxConflicts, "solver: the SAT encoding's conflicts per deal before answering unknown")
	workers := fs.Int("workers", runtime.NumCPU(), "deals played at once")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	args, err := parseInterspersed(fs, e.args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usagef("odds: unexpected argument %q", args[0])
	}
	rules, err := engine.Variant(*variant)
	if err != nil {
		return usageError{err}
	}
	if *deals <= 0 || *workers <= 0 {
		return usagef("odds: --deals and --workers must be positive")
	}
	play, player, err := oddsPlayer(rules, *bot, engine.SolveOptions{MaxNodes: *maxNodes, SkipBestScore: true, SearchOnly: *searchOnly, MaxConflicts: *maxConflicts})
	if err != nil {
		return err
	}

	bar := newBar(e.stderr, *deals)
	began := time.Now()
	results := make([]dealResult, *deals)
	next := make(chan int)
	var wg sync.WaitGroup
	for range *workers {
		wg.Go(func() {
			for i := range next {
				t0 := time.Now()
				r := play(*start + uint64(i))
				r.took = time.Since(t0)
				results[i] = r
				if bar != nil {
					_ = bar.Add(1)
				}
			}
		})
	}
	done := *deals
feed:
	for i := range *deals {
		select {
		case next <- i:
		case <-ctx.Done():
			done = i
			break feed
		}
	}
	close(next)
	wg.Wait()
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(e.stderr)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("odds: stopped after %d deals: %w", done, err)
	}
	rep := summarise(results, rules.Name, player, *start, *workers)
	rep.Seconds = time.Since(began).Seconds()
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReport(e.stdout, rep)
	return nil
}

// oddsPlayer returns the function that plays one deal.
func oddsPlayer(rules *engine.Rules, bot string, opt engine.SolveOptions) (func(uint64) dealResult, string, error) {
	if bot == "" {
		return func(deal uint64) dealResult {
			sol := engine.Solve(rules, deal, opt)
			return dealResult{outcome: sol.Outcome, score: sol.BestScore, sat: sol.SAT}
		}, "solver", nil
	}
	level, err := engine.ParseLevel(bot)
	if err != nil {
		return nil, "", usageError{err}
	}
	return func(deal uint64) dealResult {
		// engine.PlayBot, timing each decision.
		b := engine.NewBot(level, deal)
		g := engine.New(rules, deal)
		var choices []float32
		legal := make([]engine.Move, 0, 64)
		for n := 0; g.Status() == engine.Playing; n++ {
			if n >= engine.MaxBotMoves {
				g.Resign()
				break
			}
			legal = g.AppendMoves(legal[:0])
			v := g.Memory()
			t0 := time.Now()
			m, ok := b.Choose(&v, legal)
			if len(legal) > 1 {
				choices = append(choices, float32(time.Since(t0))/float32(time.Millisecond))
			}
			if !ok || g.Apply(m) != nil {
				g.Resign()
				break
			}
		}
		out := engine.Lost
		if g.Status() == engine.Won {
			out = engine.Winnable
		}
		return dealResult{outcome: out, score: g.Score(), choices: choices}
	}, "bot:" + level.String(), nil
}

// newBar returns a progress bar on w when w is a terminal, else nil.
func newBar(w io.Writer, n int) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("deals"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
}

func summarise(results []dealResult, variant, player string, start uint64, workers int) oddsReport {
	rep := oddsReport{Variant: variant, Player: player, Start: start, Deals: len(results), Workers: workers}
	times := make([]float64, len(results))
	var choices []float64
	scores := 0
	for i, r := range results {
		for _, c := range r.choices {
			choices = append(choices, float64(c))
		}
		switch r.outcome {
		case engine.Winnable:
			rep.Won++
		case engine.Lost:
			rep.Lost++
		default:
			rep.Unknown++
		}
		if r.sat {
			rep.SAT++
		}
		scores += r.score
		times[i] = float64(r.took) / float64(time.Millisecond)
	}
	n := len(results)
	rep.WinRate = float64(rep.Won) / float64(n)
	rep.Lower95, _ = wilson(rep.Won, n)
	_, rep.Upper95 = wilson(rep.Won+rep.Unknown, n)
	rep.AvgScore = float64(scores) / float64(n)
	slices.Sort(times)
	rep.MedianMS = percentile(times, 0.50)
	rep.P99MS = percentile(times, 0.99)
	rep.MaxMS = percentile(times, 1)
	for _, t := range times {
		rep.MeanMS += t / float64(n)
	}
	if len(choices) > 0 {
		slices.Sort(choices)
		rep.Decisions = len(choices)
		rep.DecisionMedianMS = percentile(choices, 0.50)
		rep.DecisionP99MS = percentile(choices, 0.99)
		rep.DecisionMaxMS = percentile(choices, 1)
	}
	return rep
}

// wilson is the Wilson score interval at 95% for k successes in n trials.
func wilson(k, n int) (lo, hi float64) {
	const z = 1.959963984540054 // the 97.5% point of the standard normal
	p, nf := float64(k)/float64(n), float64(n)
	den := 1 + z*z/nf
	centre := (p + z*z/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return max(0, centre-half), min(1, centre+half)
}

// percentile of sorted values, nearest rank.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func printReport(w io.Writer, r oddsReport) {
	fmt.Fprintf(w, "variant %s, %s, deals %d to %d (%d deals, %d workers, %.1f s)\n",
		r.Variant, r.Player, r.Start, r.Start+uint64(r.Deals)-1, r.Deals, r.Workers, r.Seconds)
	fmt.Fprintf(w, "won %d, lost %d, unknown %d", r.Won, r.Lost, r.Unknown)
	if r.SAT > 0 {
		fmt.Fprintf(w, " (%d settled by the SAT encoding)", r.SAT)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "win rate %.2f%% (Wilson 95%%: %.2f%% to %.2f%%)\n", 100*r.WinRate, 100*r.Lower95, 100*r.Upper95)
	fmt.Fprintf(w, "average score %.2f\n", r.AvgScore)
	fmt.Fprintf(w, "time per deal: median %.3f ms, p99 %.3f ms, max %.3f ms, mean %.3f ms\n", r.MedianMS, r.P99MS, r.MaxMS, r.MeanMS)
	if r.Decisions > 0 {
		fmt.Fprintf(w, "time per decision (%d with two or more legal moves): median %.3f ms, p99 %.3f ms, max %.3f ms\n", r.Decisions, r.DecisionMedianMS, r.DecisionP99MS, r.DecisionMaxMS)
	}
}
