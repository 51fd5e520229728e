package engine

// Outcome is the solver's answer for a deal.
type Outcome uint8

// The solver's answers. Unknown is honest: a node limit reached is not a loss.
const (
	Unknown Outcome = iota
	Winnable
	Lost
)

var outcomeNames = [...]string{"unknown", "won", "lost"}

// String is "won", "lost" or "unknown".
func (o Outcome) String() string { return outcomeNames[o] }

// MarshalText writes the name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// SolveOptions bound the solver's work.
type SolveOptions struct {
	// MaxNodes stops the search after this many positions (0: DefaultMaxNodes).
	MaxNodes int64
	// SkipBestScore skips the work that finds the best reachable score of
	// a lost deal (a second search, then the SAT encoding where that runs
	// out); BestScore is then the best score seen.
	SkipBestScore bool
	// SearchOnly leaves a deal that the search does not settle within
	// MaxNodes unknown, instead of handing it to the SAT encoding (see
	// sat.go), in the positions it covers: those of every variant but
	// in-suit and redeal while a redeal is left.
	SearchOnly bool
	// MaxConflicts stops the SAT stage after this many conflicts (0:
	// DefaultMaxConflicts), leaving the deal unknown.
	MaxConflicts int64
}

// DefaultMaxNodes is the node budget when none is given: enough for the
// search to settle 90% of classic deals (about a quarter of a second at
// most on one core), after which the SAT stage settles the rest more
// cheaply than a longer search would. Over classic deals 1-1,000 on one
// core, search then SAT took 84 s in all (p99 1.6 s a deal) at 200,000
// positions, 88 s at 600,000, 109 s at 100,000 and 141 s (p99 3.1 s) at
// 2,000,000.
const DefaultMaxNodes = 200_000

// DefaultMaxConflicts is the SAT stage's budget when none is given: the
// classic deals the search leaves unknown are won within about 70,000
// conflicts (a few seconds), and the one lost deal of 1-10,000, 7450, is
// proved lost in 783,464 (a minute and a half); twice as many leaves room.
const DefaultMaxConflicts = 2_000_000

// Solution is what the solver found for one deal.
type Solution struct {
	Outcome Outcome `json:"result"`
	// BestScore is the most cards the foundations can hold: 52 (or the
	// variant's deck) when won; when lost, exact if ScoreExact.
	BestScore  int  `json:"bestScore"`
	ScoreExact bool `json:"scoreExact"`
	// Line is a game reaching BestScore from the start of the deal: the
	// winning game when won, and otherwise played on to the game's end.
	Line  []Move `json:"-"`
	Nodes int64  `json:"nodes"`
	// SAT tells that the search ran out of budget and the SAT encoding
	// decided the outcome.
	SAT bool `json:"sat,omitempty"`
	// Conflicts is the SAT stage's work, if it ran.
	Conflicts int64 `json:"conflicts,omitempty"`
}
