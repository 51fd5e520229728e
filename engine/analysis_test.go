package engine

import (
	"math/rand/v2"
	"testing"
)

// randomGame plays random legal moves from g (a foundation move three
// times in four where there is one) until the game is over, and returns
// them.
func randomGame(g Game, rng *rand.Rand) []Move {
	var moves []Move
	for g.status == Playing && len(moves) < 200 {
		ms := g.Moves()
		m := ms[rng.IntN(len(ms))]
		for _, f := range ms {
			if f.To.Kind == Foundation && rng.IntN(4) > 0 {
				m = f
				break
			}
		}
		if err := g.Apply(m); err != nil {
			panic(err)
		}
		moves = append(moves, m)
	}
	return moves
}

// mediumGame is the medium bot's game of deal (seeded with the deal
// number) to its end: the final position and the moves.
func mediumGame(r *Rules, deal uint64) (Game, []Move) {
	g := New(r, deal)
	bot := NewBot(Medium, deal)
	var moves []Move
	for g.status == Playing {
		v := g.Memory()
		m, ok := bot.Choose(&v, g.Moves())
		if !ok || g.Apply(m) != nil {
			break
		}
		moves = append(moves, m)
	}
	return g, moves
}

// checkAnalysis checks an analysis of the game moves from start: every
// winnable verdict's position is before FirstLost, every lost one after
// LastWinnable, and the line replays to a win from LastWinnable.
func checkAnalysis(t *testing.T, start Game, moves []Move, a GameAnalysis) []Game {
	t.Helper()
	pos := []Game{start}
	for _, m := range moves {
		g := pos[len(pos)-1]
		if err := g.ApplyRecorded(m); err != nil {
			t.Fatal(err)
		}
		pos = append(pos, g)
	}
	if a.Plies != len(moves) {
		t.Fatalf("plies %d, want %d", a.Plies, len(moves))
	}
	if a.FirstLost >= 0 && a.FirstLost <= a.LastWinnable {
		t.Fatalf("first lost %d at or before last winnable %d", a.FirstLost, a.LastWinnable)
	}
	for _, v := range a.Probes {
		switch v.Outcome {
		case Winnable:
			if v.Ply > a.LastWinnable {
				t.Fatalf("position %d winnable after the last winnable %d", v.Ply, a.LastWinnable)
			}
		case Lost:
			if v.Ply < a.FirstLost || a.FirstLost < 0 {
				t.Fatalf("position %d lost before the first lost %d", v.Ply, a.FirstLost)
			}
		}
	}
	if a.LastWinnable >= 0 && pos[a.LastWinnable].status != Won && !winsFrom(pos[a.LastWinnable], a.Line) {
		t.Fatalf("the line %v does not win from position %d", a.Line, a.LastWinnable)
	}
	return pos
}

// TestAnalyzeAgainstBruteForce analyses random games from small end
// positions and checks every position's verdict against a search with no
// pruning: the positions up to LastWinnable can be won, those from
// FirstLost on cannot, and with so few cards nothing is left unknown.
func TestAnalyzeAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	cases := 60
	if testing.Short() {
		cases = 20
	}
	for _, name := range []string{"classic", "four-at-a-time", "calculation"} {
		r := mustVariant(t, name)
		lost, won := 0, 0
		for i := range cases {
			start := endgame(t, r, rng, 7+rng.IntN(3), 6)
			moves := randomGame(start, rng)
			a, err := AnalyzeGame(&start, moves, AnalyzeOptions{Solve: SolveOptions{MaxNodes: 100_000}})
			if err != nil {
				t.Fatal(err)
			}
			pos := checkAnalysis(t, start, moves, a)
			if !a.Complete() {
				t.Fatalf("%s case %d: incomplete on a small position: %+v", name, i, a)
			}
			memo := map[Game]int{}
			for p := range pos {
				best := bruteBest(&pos[p], memo)
				winnable := best == r.Deck()
				if winnable != (p <= a.LastWinnable) {
					t.Fatalf("%s case %d: position %d: brute force best %d, analysis last winnable %d, first lost %d\n%s",
						name, i, p, best, a.LastWinnable, a.FirstLost, pos[p].String())
				}
			}
			if a.FirstLost >= 0 {
				lost++
			} else {
				won++
			}
		}
		t.Logf("%s: %d games lost somewhere, %d winnable throughout", name, lost, won)
		if lost < cases/10 || won == 0 {
			t.Errorf("%s: the cases should hold losses and wins: %d lost, %d won", name, lost, won)
		}
	}
}

// TestAnalyzeFewSolves: a whole bot game on a real deal is analysed with
// a handful of solves (about log2 of its moves, the start included), and
// a won game with none.
func TestAnalyzeFewSolves(t *testing.T) {
	r := mustVariant(t, "classic")
	for _, deal := range []uint64{2, 3} { // lost late, with few unknowns to pay for
		g, moves := mediumGame(r, deal)
		start := New(r, deal)
		solves := 0
		a, err := AnalyzeGame(&start, moves, AnalyzeOptions{
			Solve: SolveOptions{MaxNodes: 20_000, MaxConflicts: 1_000},
			Solver: func(_ int, g *Game, o SolveOptions) (Solution, bool) {
				solves++
				return SolveGame(g, o), true
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		checkAnalysis(t, start, moves, a)
		limit := 2 + bitsLen(len(moves))
		if g.status == Won {
			limit = 0
		}
		unknown := 0
		for _, v := range a.Probes {
			if v.Outcome == Unknown {
				unknown++
			}
		}
		if solves > limit+unknown {
			t.Errorf("deal %d: %d solves for %d moves (%d unknown), want at most %d", deal, solves, len(moves), unknown, limit+unknown)
		}
		t.Logf("deal %d: %s after %d moves; last winnable %d, first lost %d, %d solves", deal, g.status, len(moves), a.LastWinnable, a.FirstLost, solves)
	}
}

func bitsLen(n int) int {
	k := 0
	for ; n > 0; n >>= 1 {
		k++
	}
	return k
}

// TestAnalyzeStops: a Solver that gives up stops the analysis, and what
// it did not settle stays unknown.
func TestAnalyzeStops(t *testing.T) {
	r := mustVariant(t, "classic")
	g := New(r, 1)
	moves := randomGame(g, rand.New(rand.NewPCG(1, 1)))
	a, err := AnalyzeGame(&g, moves, AnalyzeOptions{Solver: func(int, *Game, SolveOptions) (Solution, bool) { return Solution{}, false }})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Stopped || a.LastWinnable != -1 || a.Complete() {
		t.Fatalf("%+v", a)
	}
	if _, err := AnalyzeGame(&g, []Move{PlaceMove(NewCard(King, Spades), F(0))}, AnalyzeOptions{}); err == nil {
		t.Fatal("an illegal move was analysed")
	}
}

// TestAnalyzeChances: with Chances, the analysis carries the expert's
// chance without peeking at the start, the last position known winnable
// and the first known lost (where the game was still being played), each
// the same as ExpertChance from what the player had seen there; without
// it, none.
func TestAnalyzeChances(t *testing.T) {
	r := mustVariant(t, "classic")
	const deal = 2 // lost late by the medium bot
	_, moves := mediumGame(r, deal)
	start := New(r, deal)
	opt := AnalyzeOptions{Solve: SolveOptions{MaxNodes: 20_000, MaxConflicts: 1_000}}
	plain, err := AnalyzeGame(&start, moves, opt)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Chances != nil {
		t.Fatalf("chances without asking: %+v", plain.Chances)
	}
	opt.Chances = true
	a, err := AnalyzeGame(&start, moves, opt)
	if err != nil {
		t.Fatal(err)
	}
	pos := checkAnalysis(t, start, moves, a)
	var want []int
	for _, p := range []int{0, a.LastWinnable, a.FirstLost} {
		if p >= 0 && pos[p].status == Playing && (len(want) == 0 || want[len(want)-1] < p) {
			want = append(want, p)
		}
	}
	if len(a.Chances) != len(want) || len(want) < 2 {
		t.Fatalf("chances %+v, want them at %v (last winnable %d, first lost %d)", a.Chances, want, a.LastWinnable, a.FirstLost)
	}
	for i, c := range a.Chances {
		g := pos[want[i]]
		v := g.Memory()
		share, move := ExpertChance(&v, g.Moves())
		if c.Ply != want[i] || c.Percent != int(share*100+0.5) || c.Move != move || !contains(g.Moves(), c.Move) || c.Draws != defaultExpert.samples {
			t.Errorf("chance %+v, want ply %d, %.2f with %s", c, want[i], share, move)
		}
		t.Logf("ply %d: an expert wins %d%% (%s)", c.Ply, c.Percent, c.Move)
	}
}
