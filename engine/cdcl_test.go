package engine

import (
	"math/rand/v2"
	"testing"
)

// bruteSAT reports whether the clauses over n variables have a model, by
// trying every assignment.
func bruteSAT(n int, clauses [][]int) bool {
	for m := 0; m < 1<<n; m++ {
		if satisfies(clauses, func(v int) bool { return m>>(v-1)&1 == 1 }) {
			return true
		}
	}
	return false
}

func satisfies(clauses [][]int, val func(v int) bool) bool {
	for _, c := range clauses {
		ok := false
		for _, x := range c {
			if x > 0 && val(x) || x < 0 && !val(-x) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// TestCDCLAgainstBruteForce: random 3-SAT near the threshold (about half
// satisfiable), with units, duplicates and tautologies thrown in; every
// answer matches trying every assignment, and every model satisfies.
func TestCDCLAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	count := map[cdclResult]int{}
	for i := range 2000 {
		n := 3 + rng.IntN(14)
		m := int(4.3*float64(n)) + rng.IntN(5) - 2
		var clauses [][]int
		for range m {
			k := 3
			switch rng.IntN(20) {
			case 0:
				k = 1
			case 1:
				k = 2
			case 2:
				k = 5
			}
			c := make([]int, k)
			for j := range c {
				c[j] = 1 + rng.IntN(n)
				if rng.IntN(2) == 0 {
					c[j] = -c[j]
				}
			}
			clauses = append(clauses, c)
		}
		s := newCDCL(n, clauses)
		got := s.solve()
		count[got]++
		want := bruteSAT(n, clauses)
		if (got == cdclSat) != want || got == cdclUnknown {
			t.Fatalf("case %d: got %v, brute force %v: %v", i, got, want, clauses)
		}
		if got == cdclSat {
			model := s.model()
			if !satisfies(clauses, func(v int) bool { return model[v-1] }) {
				t.Fatalf("case %d: the model does not satisfy the clauses", i)
			}
		}
	}
	t.Logf("%v", count)
	if count[cdclSat] < 300 || count[cdclUnsat] < 300 {
		t.Errorf("the cases should hold both answers: %v", count)
	}
}

// TestCDCLBudget: a hard unsatisfiable problem (the pigeonhole principle,
// 9 pigeons in 8 holes) stops at its budget with no answer.
func TestCDCLBudget(t *testing.T) {
	const holes = 8
	v := func(p, h int) int { return p*holes + h + 1 }
	var clauses [][]int
	for p := range holes + 1 {
		c := []int{}
		for h := range holes {
			c = append(c, v(p, h))
		}
		clauses = append(clauses, c)
	}
	for h := range holes {
		for p := range holes + 1 {
			for q := p + 1; q <= holes; q++ {
				clauses = append(clauses, []int{-v(p, h), -v(q, h)})
			}
		}
	}
	s := newCDCL((holes+1)*holes, clauses)
	s.budget = 1000
	if got := s.solve(); got != cdclUnknown || s.conflicts > 1000 {
		t.Fatalf("got %v after %d conflicts, want unknown within 1000", got, s.conflicts)
	}
}
