package engine

import (
	"cmp"
	"slices"
)

// cdcl is a conflict-driven clause-learning SAT solver in the manner of
// MiniSat (Eén and Sörensson, 2003): two watched literals per clause,
// first-UIP learning with clause minimisation, VSIDS branching with phase
// saving, Luby restarts and the deletion of the less active half of the
// learnt clauses from time to time, and a budget of conflicts. It is here
// rather than a library because the Go SAT solver to hand, gophersat
// v1.4.0, can be given no budget, and cannot run twice at once (it learns
// clauses into a package-level buffer, bufLits in its learn.go: odds on two
// workers grew to 24 GB and was killed); and this one, on the classic deals
// the search leaves unknown, took 17 s where gophersat took 23 s, and
// proved deal 7450 lost in one to one and a half minutes where gophersat
// took four. Its state is its own: any number may run at once.
type cdcl struct {
	nVars    int
	clauses  []*cdclClause // the problem's clauses of two literals or more
	learnts  []*cdclClause
	watches  [][]cdclWatch // by literal: the clauses watching its negation, for when it becomes true
	assigns  []int8        // by variable: 0 unassigned, 1 true, -1 false
	vals     []int8        // by literal: the same, for the literal
	level    []int32
	reason   []*cdclClause
	trail    []cdclLit
	trailLim []int // where each decision level starts in trail
	qhead    int   // trail[qhead:] are still to propagate

	activity []float64
	varInc   float64
	heap     cdclHeap // unassigned variables by activity
	phase    []bool   // the value each variable had last (phase saving)
	seen     []bool

	claInc    float64
	maxLearnt float64

	conflicts int64
	budget    int64 // conflicts allowed; <= 0: no limit
	unsat     bool  // a contradiction found while adding clauses
}

// cdclLit is a literal: 2*variable for the positive one, 2*variable+1 for
// its negation, variables counted from 0.
type cdclLit int32

func (l cdclLit) neg() cdclLit { return l ^ 1 }
func (l cdclLit) v() int       { return int(l >> 1) }

// cdclWatch is a clause in a watch list, with one of its literals other
// than the watched one: when that literal is true the clause is satisfied,
// and propagation need not look at the clause itself.
type cdclWatch struct {
	c       *cdclClause
	blocker cdclLit
}

type cdclClause struct {
	lits     []cdclLit // lits[0] and lits[1] are watched
	activity float64
	learnt   bool
	deleted  bool
}

// cdclResult is a solve's answer.
type cdclResult int8

const (
	cdclUnknown cdclResult = iota // the budget ran out
	cdclSat
	cdclUnsat
)

// newCDCL makes a solver for the clauses, written as in DIMACS: variable v
// (from 1) is v, its negation -v.
func newCDCL(nVars int, clauses [][]int) *cdcl {
	s := &cdcl{
		nVars:    nVars,
		watches:  make([][]cdclWatch, 2*nVars),
		assigns:  make([]int8, nVars),
		vals:     make([]int8, 2*nVars),
		level:    make([]int32, nVars),
		reason:   make([]*cdclClause, nVars),
		activity: make([]float64, nVars),
		phase:    make([]bool, nVars),
		seen:     make([]bool, nVars),
		varInc:   1,
		claInc:   1,
	}
	s.heap = cdclHeap{act: s.activity, pos: make([]int, nVars)}
	for v := range nVars {
		s.heap.pos[v] = -1
		s.heap.insert(v)
	}
	for _, c := range clauses {
		s.addClause(c)
	}
	s.maxLearnt = float64(len(s.clauses)) / 3
	return s
}

func (s *cdcl) value(l cdclLit) int8 { return s.vals[l] }

// addClause adds a problem clause at decision level 0.
func (s *cdcl) addClause(dimacs []int) {
	if s.unsat {
		return
	}
	lits := make([]cdclLit, 0, len(dimacs))
	for _, x := range dimacs {
		l := cdclLit(2 * (x - 1))
		if x < 0 {
			l = cdclLit(2*(-x-1) + 1)
		}
		switch s.value(l) {
		case 1:
			return // already satisfied
		case -1:
			continue // false at level 0: leave it out
		}
		dup := false
		for _, o := range lits {
			if o == l.neg() {
				return // a tautology
			}
			dup = dup || o == l
		}
		if !dup {
			lits = append(lits, l)
		}
	}
	switch len(lits) {
	case 0:
		s.unsat = true
	case 1:
		s.assign(lits[0], nil)
		if s.propagate() != nil {
			s.unsat = true
		}
	default:
		c := &cdclClause{lits: lits}
		s.clauses = append(s.clauses, c)
		s.watch(c)
	}
}

func (s *cdcl) watch(c *cdclClause) {
	s.watches[c.lits[0].neg()] = append(s.watches[c.lits[0].neg()], cdclWatch{c, c.lits[1]})
	s.watches[c.lits[1].neg()] = append(s.watches[c.lits[1].neg()], cdclWatch{c, c.lits[0]})
}

func (s *cdcl) assign(l cdclLit, from *cdclClause) {
	v := l.v()
	s.assigns[v] = 1
	if l&1 == 1 {
		s.assigns[v] = -1
	}
	s.vals[l], s.vals[l^1] = 1, -1
	s.level[v] = int32(len(s.trailLim))
	s.reason[v] = from
	s.trail = append(s.trail, l)
}

// propagate assigns what the clauses imply, and returns a clause all of
// whose literals are false, if one comes up.
func (s *cdcl) propagate() *cdclClause {
	for s.qhead < len(s.trail) {
		p := s.trail[s.qhead] // p is now true: the clauses watching ¬p may be unit
		s.qhead++
		falseLit := p.neg()
		ws := s.watches[p]
		i, j := 0, 0
		var conflict *cdclClause
		for i < len(ws) {
			w := ws[i]
			i++
			if s.value(w.blocker) == 1 {
				ws[j] = w
				j++
				continue
			}
			c := w.c
			if c.lits[0] == falseLit {
				c.lits[0], c.lits[1] = c.lits[1], c.lits[0]
			}
			first := c.lits[0]
			if first != w.blocker && s.value(first) == 1 {
				ws[j] = cdclWatch{c, first}
				j++
				continue
			}
			moved := false
			for k := 2; k < len(c.lits); k++ {
				if s.value(c.lits[k]) != -1 {
					c.lits[1], c.lits[k] = c.lits[k], c.lits[1]
					nl := c.lits[1].neg()
					s.watches[nl] = append(s.watches[nl], cdclWatch{c, first})
					moved = true
					break
				}
			}
			if moved {
				continue
			}
			ws[j] = cdclWatch{c, first}
			j++
			if s.value(first) == -1 {
				conflict = c
				s.qhead = len(s.trail)
				for i < len(ws) {
					ws[j] = ws[i]
					i++
					j++
				}
				break
			}
			s.assign(first, c)
		}
		s.watches[p] = ws[:j]
		if conflict != nil {
			return conflict
		}
	}
	return nil
}

// analyze finds the first-UIP clause learnt from conflict, and the level to
// go back to.
func (s *cdcl) analyze(conflict *cdclClause) ([]cdclLit, int) {
	learnt := []cdclLit{0} // room for the asserting literal
	pathC := 0
	var p cdclLit = -1
	idx := len(s.trail) - 1
	c := conflict
	for {
		if c.learnt {
			s.bumpClause(c)
		}
		start := 0
		if p != -1 {
			start = 1 // c.lits[0] is p itself
		}
		for _, q := range c.lits[start:] {
			v := q.v()
			if s.seen[v] || s.level[v] == 0 {
				continue
			}
			s.seen[v] = true
			s.bumpVar(v)
			if int(s.level[v]) == len(s.trailLim) {
				pathC++
			} else {
				learnt = append(learnt, q)
			}
		}
		for !s.seen[s.trail[idx].v()] {
			idx--
		}
		p = s.trail[idx]
		idx--
		c = s.reason[p.v()]
		s.seen[p.v()] = false
		pathC--
		if pathC == 0 {
			break
		}
	}
	learnt[0] = p.neg()
	// Minimise: drop a literal whose reason's other literals are all in the
	// clause already (or fixed at level 0).
	marked := slices.Clone(learnt[1:])
	kept := learnt[:1]
	for _, q := range learnt[1:] {
		r := s.reason[q.v()]
		if r == nil {
			kept = append(kept, q)
			continue
		}
		redundant := true
		for _, x := range r.lits[1:] {
			if !s.seen[x.v()] && s.level[x.v()] > 0 {
				redundant = false
				break
			}
		}
		if !redundant {
			kept = append(kept, q)
		}
	}
	for _, q := range marked {
		s.seen[q.v()] = false
	}
	learnt = kept
	back := 0
	if len(learnt) > 1 {
		hi := 1
		for i := 2; i < len(learnt); i++ {
			if s.level[learnt[i].v()] > s.level[learnt[hi].v()] {
				hi = i
			}
		}
		learnt[1], learnt[hi] = learnt[hi], learnt[1]
		back = int(s.level[learnt[1].v()])
	}
	return learnt, back
}

func (s *cdcl) bumpVar(v int) {
	s.activity[v] += s.varInc
	if s.activity[v] > 1e100 {
		for i := range s.activity {
			s.activity[i] *= 1e-100
		}
		s.varInc *= 1e-100
	}
	s.heap.up(v)
}

func (s *cdcl) bumpClause(c *cdclClause) {
	c.activity += s.claInc
	if c.activity > 1e20 {
		for _, l := range s.learnts {
			l.activity *= 1e-20
		}
		s.claInc *= 1e-20
	}
}

// backtrack undoes every assignment above level lvl.
func (s *cdcl) backtrack(lvl int) {
	if len(s.trailLim) <= lvl {
		return
	}
	for i := len(s.trail) - 1; i >= s.trailLim[lvl]; i-- {
		v := s.trail[i].v()
		s.phase[v] = s.assigns[v] > 0
		s.assigns[v] = 0
		s.vals[2*v], s.vals[2*v+1] = 0, 0
		s.reason[v] = nil
		s.heap.insert(v)
	}
	s.trail = s.trail[:s.trailLim[lvl]]
	s.trailLim = s.trailLim[:lvl]
	s.qhead = len(s.trail)
}

// reduce deletes the less active half of the learnt clauses, keeping those
// of two literals and those that are the reason for an assignment.
// (Ranking them by the decision levels they span first, as Glucose does,
// took 9% more conflicts on the classic deals of hardDeals.)
func (s *cdcl) reduce() {
	ls := s.learnts
	slices.SortFunc(ls, func(a, b *cdclClause) int { return cmp.Compare(a.activity, b.activity) })
	kept := ls[:0]
	for i, c := range ls {
		locked := s.reason[c.lits[0].v()] == c && s.value(c.lits[0]) == 1
		if i < len(ls)/2 && len(c.lits) > 2 && !locked {
			c.deleted = true
			continue
		}
		kept = append(kept, c)
	}
	s.learnts = kept
	for lit, ws := range s.watches {
		out := ws[:0]
		for _, w := range ws {
			if !w.c.deleted {
				out = append(out, w)
			}
		}
		s.watches[lit] = out
	}
}

// solve searches until it finds a model or a proof that there is none, or
// spends its budget of conflicts.
func (s *cdcl) solve() cdclResult {
	if s.unsat {
		return cdclUnsat
	}
	if s.propagate() != nil {
		return cdclUnsat
	}
	for restart := 0; ; restart++ {
		switch r := s.search(int64(100 * luby(restart))); r {
		case cdclSat, cdclUnsat:
			return r
		}
		if s.budget > 0 && s.conflicts >= s.budget {
			s.backtrack(0)
			return cdclUnknown
		}
	}
}

// search runs until a model, a proof of unsatisfiability, or maxConflicts
// conflicts (then it reports cdclUnknown, for a restart).
func (s *cdcl) search(maxConflicts int64) cdclResult {
	var n int64
	for {
		if conflict := s.propagate(); conflict != nil {
			s.conflicts++
			n++
			if len(s.trailLim) == 0 {
				return cdclUnsat
			}
			learnt, back := s.analyze(conflict)
			s.backtrack(back)
			if len(learnt) == 1 {
				s.assign(learnt[0], nil)
			} else {
				c := &cdclClause{lits: learnt, learnt: true}
				s.learnts = append(s.learnts, c)
				s.watch(c)
				s.bumpClause(c)
				s.assign(learnt[0], c)
			}
			s.varInc /= 0.95
			s.claInc /= 0.999
			if s.budget > 0 && s.conflicts >= s.budget {
				s.backtrack(0)
				return cdclUnknown
			}
			continue
		}
		if n >= maxConflicts {
			s.backtrack(0)
			return cdclUnknown
		}
		if float64(len(s.learnts)-len(s.trail)) >= s.maxLearnt {
			s.reduce()
			s.maxLearnt *= 1.1
		}
		v := -1
		for s.heap.len() > 0 {
			x := s.heap.pop()
			if s.assigns[x] == 0 {
				v = x
				break
			}
		}
		if v < 0 {
			return cdclSat
		}
		s.trailLim = append(s.trailLim, len(s.trail))
		l := cdclLit(2 * v)
		if !s.phase[v] {
			l++
		}
		s.assign(l, nil)
	}
}

// model is the satisfying assignment after cdclSat: model[v-1] for
// variable v.
func (s *cdcl) model() []bool {
	m := make([]bool, s.nVars)
	for v := range m {
		m[v] = s.assigns[v] > 0
	}
	return m
}

// luby is term x (from 0) of the Luby sequence 1 1 2 1 1 2 4 1 1 2 …
func luby(x int) int {
	size, seq := 1, 0
	for size < x+1 {
		seq++
		size = 2*size + 1
	}
	for size-1 != x {
		size = (size - 1) >> 1
		seq--
		x %= size
	}
	return 1 << seq
}

// cdclHeap is a binary max-heap of variables by activity.
type cdclHeap struct {
	act  []float64
	heap []int
	pos  []int // by variable: its index in heap, or -1
}

func (h *cdclHeap) len() int { return len(h.heap) }

func (h *cdclHeap) less(a, b int) bool { return h.act[h.heap[a]] > h.act[h.heap[b]] }

func (h *cdclHeap) swap(a, b int) {
	h.heap[a], h.heap[b] = h.heap[b], h.heap[a]
	h.pos[h.heap[a]], h.pos[h.heap[b]] = a, b
}

func (h *cdclHeap) insert(v int) {
	if h.pos[v] >= 0 {
		return
	}
	h.pos[v] = len(h.heap)
	h.heap = append(h.heap, v)
	h.siftUp(h.pos[v])
}

// up restores the heap after v's activity grew.
func (h *cdclHeap) up(v int) {
	if h.pos[v] >= 0 {
		h.siftUp(h.pos[v])
	}
}

func (h *cdclHeap) siftUp(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *cdclHeap) pop() int {
	v := h.heap[0]
	last := len(h.heap) - 1
	h.swap(0, last)
	h.heap = h.heap[:last]
	h.pos[v] = -1
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.heap) && h.less(l, m) {
			m = l
		}
		if r < len(h.heap) && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h.swap(i, m)
		i = m
	}
	return v
}
