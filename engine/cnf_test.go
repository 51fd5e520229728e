package engine

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// readCNF reads DIMACS CNF back: its variable count and clauses.
func readCNF(t *testing.T, b []byte) (int, [][]int) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	vars, want := -1, -1
	var clauses [][]int
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "c "):
		case strings.HasPrefix(line, "p cnf "):
			f := strings.Fields(line)
			vars, _ = strconv.Atoi(f[2])
			want, _ = strconv.Atoi(f[3])
		default:
			var c []int
			for _, f := range strings.Fields(line) {
				l, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				if l == 0 {
					break
				}
				if l > vars || -l > vars {
					t.Fatalf("literal %d past %d variables", l, vars)
				}
				c = append(c, l)
			}
			clauses = append(clauses, c)
		}
	}
	if vars < 0 || len(clauses) != want {
		t.Fatalf("header: %d variables, %d clauses announced, %d read", vars, want, len(clauses))
	}
	return vars, clauses
}

// TestWriteCNF: the formula written, read back and given to the engine's
// own SAT solver, answers as the solver does: deal 3 of classic can be
// won, and on end-game positions
// (as TestSATBestScore makes them) "at least K cards" is satisfiable
// exactly up to the brute-force best score.
func TestWriteCNF(t *testing.T) {
	r := mustVariant(t, "classic")
	ask := func(g *Game, atLeast int, budget int64) cdclResult {
		t.Helper()
		var b bytes.Buffer
		if err := WriteCNF(&b, g, atLeast); err != nil {
			t.Fatal(err)
		}
		n, clauses := readCNF(t, b.Bytes())
		s := newCDCL(n, clauses)
		s.budget = budget
		return s.solve()
	}
	g := New(r, 3)
	if got := ask(&g, 0, 0); got != cdclSat {
		t.Fatalf("deal 3, a win: %v", got)
	}
	if got := ask(&g, 52, 0); got != cdclSat {
		t.Fatalf("deal 3, 52 cards: %v", got)
	}
	for seed, variant := range []string{"classic", "four-at-a-time", "calculation"} {
		r := mustVariant(t, variant)
		rng := rand.New(rand.NewPCG(59, uint64(seed)))
		for i := range scaled(20) {
			g := endgame(t, r, rng, 6+rng.IntN(3), 6)
			best := bruteBest(&g, map[Game]int{})
			for k := int(g.score) + 1; k <= r.Deck(); k++ {
				if got, want := ask(&g, k, 0), map[bool]cdclResult{true: cdclSat, false: cdclUnsat}[k <= best]; got != want {
					t.Fatalf("%s case %d: at least %d cards: %v, but brute force's best is %d\n%s", variant, i, k, got, best, g.String())
				}
			}
		}
	}
}

// TestWriteCNFRefuses: a variant the encoding does not cover, a game that
// is over and a count out of range are errors, and nothing is written.
func TestWriteCNFRefuses(t *testing.T) {
	g := New(mustVariant(t, "in-suit"), 1)
	c := New(mustVariant(t, "classic"), 1)
	for _, tc := range []struct {
		g       *Game
		atLeast int
	}{{&g, 0}, {&c, -1}, {&c, 53}} {
		var b bytes.Buffer
		if err := WriteCNF(&b, tc.g, tc.atLeast); err == nil || b.Len() != 0 {
			t.Errorf("%s, at least %d: %v, %d bytes", tc.g.rules.Name, tc.atLeast, err, b.Len())
		}
	}
}
