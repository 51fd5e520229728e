package engine

// DefaultCurvePoints is the bound on the positions of a game at which the
// analysis computes the expert's chance for its curve (AnalyzeOptions.
// CurvePoints): each costs one of the expert's choices (12 draws, each
// searched with a small budget), a fraction of a second, so a game of 90
// moves is sampled every third position rather than costing 91 of them.
const DefaultCurvePoints = 32

// ChancePoint is the expert's chance without peeking at one position of a
// game, a point of its curve.
type ChancePoint struct {
	// Ply is the position: after the game's first Ply moves.
	Ply int `json:"ply"`
	// Percent is the share of the expert's draws won, rounded to a whole
	// percent (0 to 100).
	Percent int `json:"percent"`
}

// curveEvery is the step between the positions of a curve of a game of
// plies moves with at most max points: every position when they fit,
// otherwise every k-th, k as small as keeps positions 0, k, 2k, … and the
// last one within max.
func curveEvery(plies, max int) int {
	if max < 2 || plies+1 <= max {
		return 1
	}
	return (plies + max - 2) / (max - 1) // ⌈plies/(max-1)⌉
}

// curvePlies are the positions of the curve: 0, every, 2·every, … and
// the game's last position.
func curvePlies(plies, every int) []int {
	var out []int
	for p := 0; p <= plies; p += every {
		out = append(out, p)
	}
	if out[len(out)-1] != plies {
		out = append(out, plies)
	}
	return out
}

// chanceCurve is the expert's chance at the positions of curvePlies, with
// the step used. A won position is 100, one with no legal move 0. step,
// when set, is told before each position how many are done of how many;
// its false ends the curve (nil: the caller gave up).
func chanceCurve(pos []Game, max int, step func(done, total int) bool) ([]ChancePoint, int) {
	plies := len(pos) - 1
	every := curveEvery(plies, max)
	at := curvePlies(plies, every)
	var out []ChancePoint
	for i, p := range at {
		if step != nil && !step(i, len(at)) {
			return nil, 0
		}
		g := pos[p]
		v := g.Memory()
		share, _ := ExpertChance(&v, g.Moves())
		out = append(out, ChancePoint{Ply: p, Percent: percentOf(share)})
	}
	return out, every
}

// percentOf is a share in [0,1] as a whole percent.
func percentOf(share float64) int { return int(share*100 + 0.5) }
