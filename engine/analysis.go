package engine

import (
	"fmt"
	"math/bits"
)

// DefaultMaxProbes is AnalyzeGame's bound on the positions it solves when
// none is given: a binary search over a game of 60 moves needs 6 or 7, and
// the rest leave room for positions the solver cannot settle.
const DefaultMaxProbes = 12

// AnalyzeOptions bound AnalyzeGame's work.
type AnalyzeOptions struct {
	// Solve is each position's budget (SkipBestScore is always set: a
	// verdict needs no best score).
	Solve SolveOptions
	// MaxProbes bounds the positions solved (0: DefaultMaxProbes).
	MaxProbes int
	// Solver, when set, solves a position instead of SolveGame: ply is its
	// index in the game (0 is the deal's start, which a cache of whole
	// deals may already know). It reports false to stop the analysis (its
	// caller gave up); what is not settled then stays unknown.
	Solver func(ply int, g *Game, opt SolveOptions) (Solution, bool)
	// Progress, when set, is told after each position solved how many
	// were and about how many the whole analysis will take.
	Progress func(done, total int)
	// Chances, when set, adds the expert's win chance without peeking
	// (ExpertChance) at the positions that tell the game's story: the
	// start, the last position known winnable and the first known lost.
	Chances bool
	// CurvePoints, when above 0, adds the expert's chance without peeking
	// at every position of the game (GameAnalysis.Curve), sampled every
	// k-th position where the game has more than CurvePoints positions.
	CurvePoints int
	// CurveStep, when set, is told before each point of the curve how
	// many are done of how many; its false stops the analysis (Stopped),
	// as the Solver's does.
	CurveStep func(done, total int) bool
}

// Chance is how often the expert, seeing only what the player saw (their
// Memory), wins from one position of a game: the share of its draws of
// the unseen cards that the move it would play there wins.
type Chance struct {
	// Ply is the position: after the game's first Ply moves.
	Ply int `json:"ply"`
	// Percent is the share won, rounded to a whole percent.
	Percent int `json:"percent"`
	// Draws is how many orders of the unseen cards were tried.
	Draws int `json:"draws"`
	// Move is the move the expert would play there.
	Move Move `json:"move"`
}

// UnmarshalText reads a name that MarshalText wrote.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, name := range outcomeNames {
		if string(b) == name {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("engine: %q is not an outcome (won, lost or unknown)", b)
}

// Verdict is what is known of one position of a game.
type Verdict struct {
	// Ply is the position: after the game's first Ply moves.
	Ply     int     `json:"ply"`
	Outcome Outcome `json:"result"`
	// By says how it is known: "solver" (solved from there), "line" (the
	// player's moves followed a winning line known from an earlier
	// position), "rules" (the game was over there: won or stuck).
	By        string `json:"by"`
	Nodes     int64  `json:"nodes,omitempty"`
	Conflicts int64  `json:"conflicts,omitempty"`
}

// GameAnalysis says, for every position of a game, whether it could still
// be won with perfect information. A game's positions are monotone: a
// position that cannot be won leaves none that can, so they are winnable
// up to some move and lost after it. What is known is LastWinnable and
// FirstLost; the positions strictly between them (or after LastWinnable,
// if FirstLost is -1) are unknown: the solver ran out of budget there, or
// the analysis of its probes did.
type GameAnalysis struct {
	// Plies is the game's moves: its positions are 0 to Plies.
	Plies int `json:"plies"`
	// LastWinnable is the last position known to be winnable, -1 if none.
	LastWinnable int `json:"lastWinnable"`
	// FirstLost is the first position known to be lost, -1 if none.
	FirstLost int `json:"firstLost"`
	// Line is a winning line from LastWinnable, which the engine replays to
	// a win from there (empty when LastWinnable is the game's own win).
	Line []Move `json:"line,omitempty"`
	// Probes are the verdicts found, in the order found.
	Probes []Verdict `json:"probes"`
	// Stopped is set when the Solver stopped the analysis.
	Stopped bool `json:"stopped,omitempty"`
	// Chances are the expert's chances without peeking (with
	// AnalyzeOptions.Chances), in the order of their positions.
	Chances []Chance `json:"chances,omitempty"`
	// Curve is the expert's chance without peeking over the game (with
	// AnalyzeOptions.CurvePoints): at positions 0, CurveEvery,
	// 2·CurveEvery, … and the last, in order. An analysis stored before
	// the curve existed has none.
	Curve []ChancePoint `json:"curve,omitempty"`
	// CurveEvery is the step between the curve's positions: 1 when every
	// position has its point.
	CurveEvery int `json:"curveEvery,omitempty"`
}

// Complete reports whether every position's verdict is known.
func (a *GameAnalysis) Complete() bool {
	return a.LastWinnable == a.Plies || (a.FirstLost >= 0 && a.FirstLost == a.LastWinnable+1)
}

// AnalyzeGame finds where a game stopped being winnable: start is its
// first position (not changed) and moves the moves played from there, as
// a game text records them (they are applied with ApplyRecorded).
//
// It solves few positions: a won game needs none; a game that ended stuck
// is lost at its end; the start is solved first (see Solver); and since
// positions are monotone, a binary search between the last position known
// winnable and the first known lost finds the move that lost the game,
// with about log2(moves) solves. Where a position comes out unknown, the
// search tries the untried position nearest the middle instead, and stops
// when none is left or MaxProbes were solved. A winning line found at a
// position also settles the later positions whose moves follow it. A
// solver's winning line is believed only if it replays to a win.
func AnalyzeGame(start *Game, moves []Move, opt AnalyzeOptions) (GameAnalysis, error) {
	pos, err := gamePositions(start, moves)
	if err != nil {
		return GameAnalysis{}, err
	}
	a := analyze(pos, moves, opt)
	if opt.Chances && !a.Stopped {
		a.Chances = chancesAt(pos, &a)
	}
	if opt.CurvePoints > 0 && !a.Stopped {
		a.Curve, a.CurveEvery = chanceCurve(pos, opt.CurvePoints, opt.CurveStep)
		a.Stopped = a.Curve == nil
	}
	return a, nil
}

// gamePositions are the game's positions: start, then after each move.
func gamePositions(start *Game, moves []Move) ([]Game, error) {
	n := len(moves)
	pos := make([]Game, n+1)
	pos[0] = *start
	for i, m := range moves {
		g := pos[i]
		if err := g.ApplyRecorded(m); err != nil {
			return nil, fmt.Errorf("engine: move %d (%s): %w", i+1, m, err)
		}
		pos[i+1] = g
	}
	return pos, nil
}

// analyze is AnalyzeGame's search over the positions pos of the game moves.
func analyze(pos []Game, moves []Move, opt AnalyzeOptions) GameAnalysis {
	n := len(moves)
	if opt.MaxProbes <= 0 {
		opt.MaxProbes = DefaultMaxProbes
	}
	opt.Solve.SkipBestScore = true
	solve := opt.Solver
	if solve == nil {
		solve = func(_ int, g *Game, o SolveOptions) (Solution, bool) { return SolveGame(g, o), true }
	}
	a := GameAnalysis{Plies: n, LastWinnable: -1, FirstLost: -1}
	switch pos[n].status {
	case Won:
		a.LastWinnable = n
		a.Probes = append(a.Probes, Verdict{Ply: n, Outcome: Winnable, By: "rules"})
		return a
	case Stuck:
		a.FirstLost = n
		a.Probes = append(a.Probes, Verdict{Ply: n, Outcome: Lost, By: "rules"})
	}
	hi := n + 1 // the first position known lost, or past the end
	if a.FirstLost >= 0 {
		hi = a.FirstLost
	}
	tried := make([]bool, n+1)
	solved := 0
	probe := func(p int) bool {
		tried[p] = true
		g := pos[p]
		sol, ok := solve(p, &g, opt.Solve)
		if !ok {
			a.Stopped = true
			return false
		}
		solved++
		v := Verdict{Ply: p, Outcome: sol.Outcome, By: "solver", Nodes: sol.Nodes, Conflicts: sol.Conflicts}
		if v.Outcome == Winnable && !winsFrom(pos[p], sol.Line) {
			v.Outcome = Unknown // never believed without a replay
		}
		a.Probes = append(a.Probes, v)
		switch v.Outcome {
		case Winnable:
			if p > a.LastWinnable {
				a.LastWinnable, a.Line = p, sol.Line
				// The player's next moves may follow the line.
				for a.LastWinnable < hi-1 && a.LastWinnable < n && len(a.Line) > 0 && moves[a.LastWinnable] == a.Line[0] {
					a.LastWinnable++
					a.Line = a.Line[1:]
					tried[a.LastWinnable] = true
					a.Probes = append(a.Probes, Verdict{Ply: a.LastWinnable, Outcome: Winnable, By: "line"})
				}
			}
		case Lost:
			if p < hi {
				hi, a.FirstLost = p, p
			}
		}
		if opt.Progress != nil {
			opt.Progress(solved, solved+remainingProbes(tried, a.LastWinnable, hi))
		}
		return true
	}
	if hi > 0 && !probe(0) {
		return a
	}
	for solved < opt.MaxProbes {
		p, ok := nextProbe(tried, a.LastWinnable, hi)
		if !ok || !probe(p) {
			break
		}
	}
	a.Line = append([]Move(nil), a.Line...)
	return a
}

// chancesAt is the expert's chance at the start of the game and at its
// last position known winnable and first known lost, where the game was
// still being played there (a won or stuck position has no choice).
func chancesAt(pos []Game, a *GameAnalysis) []Chance {
	var out []Chance
	for _, p := range []int{0, a.LastWinnable, a.FirstLost} {
		if p < 0 || p >= len(pos) || pos[p].status != Playing || (len(out) > 0 && out[len(out)-1].Ply >= p) {
			continue
		}
		g := pos[p]
		v := g.Memory()
		share, move := ExpertChance(&v, g.Moves())
		out = append(out, Chance{Ply: p, Percent: percentOf(share), Draws: defaultExpert.samples, Move: move})
	}
	return out
}

// winsFrom reports whether line wins the game from g.
func winsFrom(g Game, line []Move) bool {
	for _, m := range line {
		if g.Apply(m) != nil {
			return false
		}
	}
	return g.status == Won
}

// nextProbe is the untried position strictly between lo and hi nearest
// their middle (the lower of two as near), if there is one.
func nextProbe(tried []bool, lo, hi int) (int, bool) {
	mid := lo + (hi-lo)/2
	for d := 0; mid-d > lo || mid+d < hi; d++ {
		if p := mid - d; p > lo && p < hi && !tried[p] {
			return p, true
		}
		if p := mid + d; p > lo && p < hi && !tried[p] {
			return p, true
		}
	}
	return 0, false
}

// remainingProbes estimates the solves a binary search over the untried
// positions between lo and hi still needs.
func remainingProbes(tried []bool, lo, hi int) int {
	left := 0
	for p := lo + 1; p < hi; p++ {
		if !tried[p] {
			left++
		}
	}
	return bits.Len(uint(left))
}
