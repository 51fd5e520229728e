package engine

import "slices"

// Solve answers whether deal can be won under rules by a player who knows
// the order of the stock (Solvitaire's "thoughtful" model), with a winning
// game when it can, and the best reachable score when it cannot.
//
// The search is a depth-first search over game states with:
//   - forced safe moves: a card goes to a foundation at once when that can
//     never hurt (see safeMove);
//   - a transposition table keyed on a canonical form of the state, in which
//     interchangeable waste piles and foundations are sorted and, where suits
//     do not matter, cards are reduced to their ranks;
//   - deadlock pruning: an upper bound on the final score from the cards
//     buried under higher cards and the foundations they need (see
//     upperBound and chainBound); a branch whose bound cannot beat what is
//     sought is cut;
//   - for the question whether the deal can be won, limited-discrepancy
//     searches first (most deals are won, and a plain depth-first search
//     spends its budget under its first bad choice), with two move
//     orderings in turn where foundations are chains, then a full search
//     with what is left of the budget, which alone may answer Lost. A move
//     whose position the bound cuts at once costs no discrepancy.
//
// Where the search reaches its node limit, the SAT encoding of sat.go
// decides the position, in the variants it covers, within its own budget
// of conflicts (unless opt.SearchOnly). For a lost deal a second search
// looks for the best reachable score, and where it too runs out, the SAT
// encoding proves it. A limit reached is reported as Unknown, never as a
// loss, and a best score not proved is not called exact.
func Solve(rules *Rules, deal uint64, opt SolveOptions) Solution {
	g := New(rules, deal)
	return SolveGame(&g, opt)
}

// SolveGame is Solve from the position g (which is not changed). Line then
// starts from g. Unless the deal is won, Line is played on to the end of
// the game (see playOut), so that it ends stuck rather than cut off.
func SolveGame(g *Game, opt SolveOptions) Solution {
	sol := solveGame(g, opt)
	if sol.Outcome == Winnable {
		return sol
	}
	line, score, won := playOut(*g, sol.Line)
	sol.Line = line
	if score > sol.BestScore { // only where BestScore is not exact
		sol.BestScore = score
	}
	if won { // an unknown deal the play-out happened to win
		sol.Outcome, sol.ScoreExact = Winnable, true
	}
	return sol
}

// playOut plays line from g, then goes on to the end of the game: a move to
// a foundation where there is one, else a turned card onto a waste pile,
// else a turn of the next four, else a redeal. It never moves a card between waste piles, so it ends; it
// stops if only such moves are left. It returns the longer line, its final
// score, and whether it won.
func playOut(g Game, line []Move) ([]Move, int, bool) {
	for _, m := range line {
		if err := g.Apply(m); err != nil {
			return line, int(g.score), false // not a line from g: leave it
		}
	}
	line = slices.Clip(line)
	var buf [64]Move
	next := func() (Move, bool) {
		moves := g.AppendMoves(buf[:0])
		for _, m := range moves {
			if m.Kind == Place && m.To.Kind == Foundation {
				return m, true
			}
		}
		for _, m := range moves {
			if m.Kind == Place && m.To.Kind == Waste && slices.Contains(g.hand[:], m.Card) {
				return m, true
			}
		}
		if slices.Contains(moves, TurnMove) {
			return TurnMove, true
		}
		return RedealMove, slices.Contains(moves, RedealMove)
	}
	for g.status == Playing {
		m, ok := next()
		if !ok || g.Apply(m) != nil {
			break
		}
		line = append(line, m)
	}
	return line, int(g.score), g.status == Won
}

// solveGame is SolveGame before the play-out.
func solveGame(g *Game, opt SolveOptions) Solution {
	if opt.MaxNodes <= 0 {
		opt.MaxNodes = DefaultMaxNodes
	}
	s := newSolver(g.rules, opt.MaxNodes)
	start := *g
	deck := g.rules.Deck()

	// Phase 1: can the deal be won? Anything whose bound is below a win is cut.
	// First come searches that follow the move ordering with a few
	// discrepancies only, which find most wins long before a full search
	// would leave the subtree of its first bad choice. They may use the
	// whole budget: whatever is left then goes to the full search, which
	// with a narrow search that left nothing out alone can answer Lost.
	// (Keeping a quarter of the budget back for the full search settled
	// fewer classic deals: 239 against 244 of deals 1-300 at 200,000
	// positions; no real deal was proven lost either way.)
	s.floor = deck - 1
	won, complete := false, false
	// Where foundations are chains, the narrow searches run twice, with two
	// move orderings (see priority) and half the budget each: each finds
	// wins the other misses within its budget (of classic deals 1-300 at
	// 200,000 positions, 250 won against 244 with one ordering and the
	// whole budget; of 301-600, 229 against 214). Limited-budget records in
	// the table depend on the ordering, so it starts empty each time.
	// With the dead-child rule of expand and the empty-pile rule of
	// priority, other splits did no better (ordering 0 getting 3/8, 5/8 or
	// 6/8 of the budget: 543, 549 and 550 won of deals 1-600 against 549),
	// nor did running the two orderings in turn at each discrepancy budget,
	// each with its own table (551 of 1-600 at 200,000 positions, but 41
	// against 43 of the 50 hardest of 1-300 at 1,000,000), nor a budget
	// schedule with every value up to 8 (no change).
	orders := 1
	if s.chains {
		orders = 2
	}
	for k := range orders {
		s.order = k
		s.maxNodes = opt.MaxNodes / int64(orders) * int64(k+1)
		if k == orders-1 {
			s.maxNodes = opt.MaxNodes
		}
		s.aborted = false
		s.seen.reset()
		for _, d := range discrepancies {
			s.narrowed = false
			if won = s.search(start, d); won || s.aborted {
				break
			}
			if !s.narrowed {
				complete = true // nothing was left out: this was a full search
				break
			}
		}
		if won || complete {
			break
		}
	}
	if !won && !complete && !s.aborted {
		won = s.search(start, unlimited)
	}
	sol := Solution{Nodes: s.nodes}
	lost := !won && !s.aborted
	if s.aborted && !opt.SearchOnly {
		if opt.MaxConflicts <= 0 {
			opt.MaxConflicts = DefaultMaxConflicts
		}
		// An error (a variant the encoding does not cover, or a model that
		// does not replay as a win, which would be a fault in the
		// encoding) leaves the deal unknown.
		outcome, line, conflicts, err := satDecide(&start, opt.MaxConflicts)
		sol.Conflicts = conflicts
		if err == nil && outcome != Unknown {
			sol.SAT = true
			if outcome == Winnable {
				won, s.bestLine = true, line
			}
			lost = outcome == Lost
		}
	}
	switch {
	case won:
		sol.Outcome, sol.BestScore, sol.ScoreExact = Winnable, deck, true
		sol.Line = s.bestLine
		return sol
	case !lost:
		sol.Outcome, sol.BestScore = Unknown, s.best
		sol.Line = s.bestLine
		return sol
	}
	sol.Outcome = Lost
	if opt.SkipBestScore {
		sol.BestScore, sol.Line = s.best, s.bestLine
		return sol
	}
	// Phase 2: the best reachable score, by branch and bound from the best
	// score phase 1 saw. States seen in phase 1 were cut with another bound,
	// so the table starts empty.
	best, bestLine := s.best, slices.Clone(s.bestLine)
	s.reset()
	s.best, s.bestLine = best, bestLine
	s.floor = -1 // use the best score found so far
	s.search(start, unlimited)
	sol.Nodes += s.nodes
	sol.BestScore, sol.ScoreExact, sol.Line = s.best, !s.aborted, s.bestLine
	if !sol.ScoreExact && !opt.SearchOnly {
		// Phase 3: where the search ran out, the SAT encoding asks for one
		// card more than the best found until there is no such game, within
		// a quarter of the SAT budget: on classic deal 7450 (lost) that
		// takes the best score from the search's 42 to 49 in under three
		// minutes; the whole budget, 17 minutes, did not prove 49 the best.
		budget := opt.MaxConflicts
		if budget <= 0 {
			budget = DefaultMaxConflicts
		}
		best, line, exact, conflicts := satBestScore(&start, sol.BestScore, max(budget/4, 1))
		sol.Conflicts += conflicts
		if line != nil {
			sol.BestScore, sol.Line = best, line
		}
		sol.ScoreExact = exact
	}
	return sol
}

// solver holds one search's state. It is used by one goroutine.
type solver struct {
	rules *Rules
	// rankOnly: suits never matter, so cards are compared by rank.
	rankOnly bool
	// sameFoundations: the foundations are interchangeable once started.
	sameFoundations bool
	// chains: every foundation is a chain A, 2, 3, … of the same step 1,
	// which the safe moves and the deadlock bound rely on.
	chains bool

	seen     keySet
	nodes    int64
	maxNodes int64
	aborted  bool

	// narrowed: a move was left out for want of discrepancies, or a state
	// skipped that a search with a limited budget had seen.
	narrowed bool

	floor    int // cut a branch whose bound is <= floor; -1: the best so far
	best     int
	bestLine []Move
	path     []Move
	order    int // which move ordering: see priority
	// childBound: the upperBound of the position dfs is about to search,
	// computed by its parent, or -1.
	childBound int
	bufs       [][]Move // candidate moves, one buffer per depth
	games      []*Game  // the child being searched, one per depth

	// candidates' scratch space for sorting the moves of one node
	pri [64]int
	tmp [64]Move
}

func newSolver(r *Rules, maxNodes int64) *solver {
	s := &solver{rules: r, maxNodes: maxNodes, rankOnly: !r.InSuit, childBound: -1}
	s.sameFoundations = !r.LeftToRight && r.Start == [4]Rank{r.Start[0], r.Start[0], r.Start[0], r.Start[0]} &&
		r.Step == [4]int{r.Step[0], r.Step[0], r.Step[0], r.Step[0]}
	s.chains = r.Start == allAces && r.Step == stepOne && !r.InSuit && !r.WasteToWaste
	s.reset()
	return s
}

func (s *solver) reset() {
	s.seen.reset()
	s.nodes, s.aborted = 0, false
	s.path = s.path[:0]
	s.best = -1
}

// unlimited is the discrepancy budget of a full search.
const unlimited = 127

// discrepancies are the budgets of the narrow searches tried first.
var discrepancies = []int{0, 1, 2, 3, 4, 6, 8, 12, 16}

// search runs the depth-first search from g and reports whether it won.
// Below unlimited, disc is a budget of discrepancies: taking a node's i-th
// candidate (from 0) spends i of them, not counting candidates that the
// bound cuts at once. Only a search with an unlimited budget that does not
// win shows that nothing wins.
func (s *solver) search(g Game, disc int) bool {
	var pileKey [4]uint64
	for p := range 4 {
		pileKey[p] = s.pileHash(&g, p)
	}
	return s.dfs(&g, 0, disc, pileKey)
}

// dfs searches from g, whose waste piles hash to pileKey (see pileHash).
func (s *solver) dfs(g *Game, depth, disc int, pileKey [4]uint64) bool {
	s.nodes++
	if s.nodes > s.maxNodes {
		s.aborted, s.childBound = true, -1
		return false
	}
	mark := len(s.path)
	won := s.expand(g, depth, disc, &pileKey)
	s.path = s.path[:mark]
	return won
}

// expand is dfs after the node count: the safe moves, then the bound, the
// table and the candidates. dfs takes the moves it appends off the path.
func (s *solver) expand(g *Game, depth, disc int, pileKey *[4]uint64) bool {
	bound := s.childBound // g's bound if the parent computed it, else -1
	s.childBound = -1
	for {
		m, ok := s.safeMove(g)
		if !ok {
			break
		}
		_ = s.apply(g, m, pileKey) // safeMove only returns legal moves
		s.path = append(s.path, m)
		bound = -1
	}
	s.record(int(g.score), s.path)
	if g.status == Won {
		return true
	}
	if g.status != Playing {
		return false
	}
	// A state seen with at least this budget was searched as far as this
	// search would (and did not win, or the search would have ended), or cut
	// by the bound, which would cut it again (the floor never goes down).
	// If that budget was limited, moves below it may have been left out, so
	// this search cannot count as complete.
	if prev := s.seen.visit(s.key(g, pileKey), int8(disc)); prev >= int8(disc) {
		if prev < unlimited {
			s.narrowed = true
		}
		return false
	}
	floor := s.floor
	if floor < 0 {
		floor = s.best
	}
	if bound < 0 {
		bound = s.upperBound(g)
	}
	if bound <= floor {
		return false
	}

	for len(s.bufs) <= depth {
		s.bufs = append(s.bufs, make([]Move, 0, 32))
		s.games = append(s.games, new(Game))
	}
	moves := s.candidates(g, s.bufs[depth][:0], pileKey)
	s.bufs[depth] = moves
	// A discrepancy is counted only among the children the bound does not
	// cut at once: a child whose own bound is already too low counts as a
	// position searched but takes no place in the ordering, so that a dead
	// first choice does not make the live second one cost a discrepancy.
	// (Of the 50 classic deals of 1-300 that were unknown at 200,000
	// positions, 23 were then won at that budget, with dead children
	// counted as positions. Tried without gain: any later child costing
	// one discrepancy only, 21; a child whose search proved it lost
	// costing none, 22; recording a position whose search left nothing out
	// as settled for any budget, 23 (and 4 with the previous one); a child
	// whose every move the bound cuts counted as dead, 16 with the extra
	// bounds counted as positions, 24 without.)
	live := 0 // children searched so far
	for _, m := range moves {
		left := disc
		if disc < unlimited {
			if live > disc {
				s.narrowed = true
				break
			}
			left -= live
		}
		child := s.games[depth] // the children of this node, one at a time
		*child = *g
		childKey := *pileKey
		if s.apply(child, m, &childKey) != nil {
			continue
		}
		b := s.upperBound(child)
		if b <= floor {
			s.nodes++ // a position searched, as if dfs had cut it
			continue
		}
		live++
		s.childBound = b
		s.path = append(s.path, m)
		if s.dfs(child, depth+1, left, childKey) {
			return true
		}
		s.path = s.path[:len(s.path)-1]
		if s.aborted {
			return false
		}
	}
	return false
}

// safeMove returns a move to a foundation that can never make the game
// worse, if there is one:
//   - where foundations are chains A, 2, 3, … in any suit: a card of rank r
//     when every foundation is at least at r-1. Then each rank-r card still
//     out has a foundation waiting for it alone, so playing one now takes
//     nothing from another, and playing it now only adds options.
//   - in suit: any card that fits, since no other card can ever take its
//     place on its suit's foundation.
//
// In four-at-a-time a turned card may go up this way too: the waste piles
// are locked from the turn until the hand is placed anyway, so placing it
// takes no waste move away. (Before the move T turned the next four, a
// full hand left the waste piles free and its cards were not forced.)
func (s *solver) safeMove(g *Game) (Move, bool) {
	r := g.rules
	if !(s.chains || (r.InSuit && !r.WasteToWaste)) {
		return Move{}, false
	}
	minLevel := Rank(13)
	for f := range 4 {
		minLevel = min(minLevel, Rank(g.foundN[f]))
	}
	want, mask := g.takes()
	try := func(c Card) (Move, bool) {
		if !r.InSuit && c.Rank() > minLevel+1 {
			return Move{}, false
		}
		for f := range 4 {
			if c&mask[f] == want[f] {
				return PlaceMove(c, F(f)), true
			}
		}
		return Move{}, false
	}
	for _, c := range g.hand {
		if c != NoCard {
			if m, ok := try(c); ok {
				return m, true
			}
		}
	}
	if g.wasteLocked() {
		return Move{}, false
	}
	for p := range 4 {
		if n := g.wasteN[p]; n > 0 {
			if m, ok := try(g.waste[p][n-1]); ok {
				return m, true
			}
		}
	}
	return Move{}, false
}

// candidates lists the moves worth trying from g, best first, without
// moves that lead to the same canonical state as an earlier one.
func (s *solver) candidates(g *Game, dst []Move, pileKey *[4]uint64) []Move {
	all := g.AppendMoves(dst)
	// Drop moves equivalent to an earlier one: the same card (or an
	// interchangeable one) onto an equivalent pile.
	pilesSame := g.rules.Redeals == int(g.redeals) // gathered order no longer matters
	out := all[:0]
	for i, m := range all {
		dup := false
		for _, o := range all[:i] {
			if s.equivalent(g, m, o, pilesSame, pileKey) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, m)
		}
	}
	pri := &s.pri // scratch, not zeroed at every node
	for i, m := range out {
		pri[i] = s.priority(g, m)<<8 | i
	}
	// Insertion sort: the lists are short, and the values distinct.
	for i := 1; i < len(out); i++ {
		x, j := pri[i], i
		for ; j > 0 && pri[j-1] > x; j-- {
			pri[j] = pri[j-1]
		}
		pri[j] = x
	}
	tmp := &s.tmp
	copy(tmp[:], out)
	for i := range out {
		out[i] = tmp[pri[i]&0xff]
	}
	return out
}

func (s *solver) same(a, b Card) bool {
	if s.rankOnly {
		return a.Rank() == b.Rank()
	}
	return a == b
}

// equivalent reports whether moves a and b lead to states with one
// canonical form (b being earlier in the list).
func (s *solver) equivalent(g *Game, a, b Move, pilesSame bool, pileKey *[4]uint64) bool {
	if a.Kind != b.Kind || a.To.Kind != b.To.Kind || a.Kind != Place {
		return false
	}
	if a.Card != b.Card {
		// Interchangeable cards from the hand: same rank, both turned.
		if !s.rankOnly || !s.same(a.Card, b.Card) || a.To != b.To || !g.inHand(a.Card) || !g.inHand(b.Card) {
			return false
		}
		return true
	}
	i, j := a.To.Index, b.To.Index
	if a.To.Kind == Foundation {
		return s.sameFoundations && g.foundN[i] == g.foundN[j] && s.same(g.found[i], g.found[j])
	}
	return pilesSame && pileKey[i] == pileKey[j] && g.wasteN[i] == g.wasteN[j]
}

func (g *Game) inHand(c Card) bool {
	for _, h := range g.hand {
		if h == c {
			return true
		}
	}
	return false
}

// priority orders candidates: foundation moves first, then, in ordering 0,
// a card onto the waste pile whose top is the lowest card not below it,
// then empty piles, then the rest: where foundations are chains, onto the
// pile whose lowest card is highest (the pile whose cards are needed
// last), otherwise by how little they bury the top. Burying the least
// urgent pile settled a few more classic deals within a budget than
// burying the closest top (239 against 233 of deals 1-300, 210 against 205
// of 301-600, at 200,000 positions). Ordering 1 puts first the waste pile
// where the card adds to the fewest cards' runs of higher cards above them
// (see buried), which alone does worse but finds other wins.
//
// Where foundations are chains, an empty pile comes last in both orderings
// for a card below a Ten: an empty pile is best kept for a high card, which
// buries nothing there, while a low card can go onto a pile whose cards
// are needed later. With the Ten as the threshold, of classic deals 1-300
// at 200,000 positions, 280 were won against 271 with empty piles before
// the dumping moves, and of 301-600, 269 against 261 (thresholds Nine:
// 272 and 267 in ordering 0 alone; Eleven: 270 and 268; Queen: 271 and
// 267; Queen in both: 273 and 262).
func (s *solver) priority(g *Game, m Move) int {
	if m.Kind != Place {
		return 1000 // a redeal, or turning the next four after the waste moves
	}
	if m.To.Kind == Foundation {
		return 0
	}
	n := g.wasteN[m.To.Index]
	if n == 0 {
		if s.chains && m.Card.Rank() < 10 {
			return 400
		}
		return 100
	}
	top := g.waste[m.To.Index][n-1].Rank()
	r := m.Card.Rank()
	if s.order == 1 {
		b := 10 + 20*buried(g, int(m.To.Index), r)
		if top >= r {
			return b + int(top-r)
		}
		return b + 10 + int(r-top)
	}
	if top >= r {
		return 10 + int(top-r)
	}
	if s.chains && s.order == 0 {
		low := top
		for _, c := range g.waste[m.To.Index][:n] {
			low = min(low, c.Rank())
		}
		return 200 + int(King-low)
	}
	return 200 + int(r-top)
}

// upperBound is a bound on the final score from g. Where foundations are
// chains and no redeal is left: a card can leave a waste pile only after
// every card above it, and a card above it of higher rank needs a
// foundation already past its rank. So if no foundation is past rank k-1
// and every rank-k card still out lies under a higher card, no foundation
// will ever pass k-1.
func (s *solver) upperBound(g *Game) int {
	r := g.rules
	deck := r.Deck()
	if !s.chains || int(g.redeals) < r.Redeals {
		if r.InSuit && int(g.redeals) == r.Redeals && !r.WasteToWaste {
			return s.inSuitBound(g)
		}
		return deck
	}
	return chainBound(g)
}

// chainBound is an upper bound on the final score where foundations are
// chains A, 2, 3, … in any suit and no redeal is left. Such foundations are
// exactly the counts p(r) of cards of rank r on them, p(r) <= p(r-1), and a
// rank-r card can be played just when p(r-1) > p(r): a foundation is then
// at r-1. Let F(r) be p(r) now.
//
// It computes a set A of cards that contains every card that can ever reach
// a foundation from g, as the least fixed point of these rules (cnt(r) is
// the number of rank-r cards in A; the cards on the foundations start in A):
//
//   - a stock or turned card x of rank r joins A once pm(r-1) >= F(r)+1,
//     where pm(r) is the least cnt(s), s <= r;
//   - a waste card x of rank r joins A once every card above it in its pile
//     is in A, min(pm(r-1), cnt(r)) >= q and pm(r-1) >= q+1, where
//     q = max(F(r), m) and
//     m is the length of the longest non-increasing run (top down, not
//     necessarily contiguous) among the ranks >= r of the cards now above x.
//
// Soundness, by induction along any continuation of the game: let x (rank
// r) be played at time t, and assume every card played before t is in A.
// Cards never move between waste piles, so every card now above x was
// played before t, in top-down order, and is in A. Each of them of rank >= r
// went onto a foundation then at level >= r-1, which afterwards held a rank-r
// card (its own, or the one it was put on); one foundation takes cards in
// strictly increasing rank, so a non-increasing run of length m among them
// used m different foundations. So at time t at least q = max(F(r), m)
// foundations hold a rank-r card other than x (the F(r) ones already do),
// and x goes onto yet another, at r-1: at least q rank-r cards (not x) and
// q+1 rank-(r-1) cards were played before t, all in A. Since p never
// increases with the rank, p(r-1) <= pm(r-1) and p(r) <= min(pm(r-1),
// cnt(r)) then, which are the rules (for a stock or turned card, m = 0).
// The rules only ask for more as A shrinks, so the least fixed point
// contains x.
//
// The final foundations then hold p(r) <= cnt(r) cards of each rank with p
// non-increasing, so the score is at most the sum over r of min(4, the least
// cnt(s), s <= r).
func chainBound(g *Game) int {
	var cnt [15]int // per rank: cards in A
	for f := range 4 {
		for r := 1; r <= int(g.foundN[f]); r++ {
			cnt[r]++
		}
	}
	cnt[0] = 4
	found := cnt     // F(r)
	var free [15]int // cards in the stock or turned, by rank, not yet in A
	for _, c := range g.stock[g.next:g.stockN] {
		free[c.Rank()]++
	}
	for _, c := range g.hand {
		if c != NoCard {
			free[c.Rank()]++
		}
	}
	depth := g.wasteN
	// m(x) for the card x at index depth[p]-1 of pile p is found from the
	// cards above it, which are exactly the cards of p already in A: tails[p]
	// is kept over them (patience sorting): tails[p][k] is the highest last
	// rank of a non-increasing run of k+1 of them, top down; tails never
	// increases with k, so the runs that a rank-r card extends are those with
	// tails >= r. Runs longer than 4 are counted as 4: m >= 4 already makes a
	// card unplayable (only three other cards share its rank).
	var tails [4][4]uint8
	// The rules only ever add cards, so they can be applied in any order;
	// pm is kept up to date as cards join, so that one pass carries a
	// change up the ranks and fewer passes are needed.
	var pm [15]int // pm[r]: the least cnt(s), s <= r
	pm[0] = 4
	for r, low := 1, 4; r <= 13; r++ {
		low = min(low, cnt[r])
		pm[r] = low
	}
	for changed := true; changed; {
		changed = false
		for r := 1; r <= 13; r++ {
			if free[r] > 0 && pm[r-1] >= found[r]+1 {
				cnt[r] += free[r]
				free[r] = 0
				changed = true
			}
			pm[r] = min(pm[r-1], cnt[r])
		}
		for p := range 4 {
			for depth[p] > 0 {
				i := depth[p] - 1
				r := int(g.waste[p][i].Rank())
				t := &tails[p]
				m := 0
				for m < 4 && int(t[m]) >= r {
					m++
				}
				q := max(found[r], m)
				if pm[r-1] < q+1 || min(pm[r-1], cnt[r]) < q {
					break
				}
				if m < 4 {
					t[m] = uint8(r)
				}
				cnt[r]++
				depth[p]--
				changed = true
				for k, low := r, pm[r-1]; k <= 13; k++ {
					low = min(low, cnt[k])
					if low == pm[k] {
						break
					}
					pm[k] = low
				}
			}
		}
	}
	bound, prev := 0, 4
	for r := 1; r <= g.rules.Length; r++ {
		prev = min(prev, cnt[r])
		bound += prev
	}
	return bound
}

// inSuitBound: in suit and with no redeal left, a card under a higher card
// of its own suit can never leave, so its suit's foundation stops below it.
func (s *solver) inSuitBound(g *Game) int {
	var stop [4]int // per suit: the foundation cannot pass stop-1
	for i := range stop {
		stop[i] = 14
	}
	for p := range 4 {
		var highest [4]Rank
		for i := int(g.wasteN[p]) - 1; i >= 0; i-- {
			c := g.waste[p][i]
			if highest[c.Suit()] > c.Rank() {
				stop[c.Suit()] = min(stop[c.Suit()], int(c.Rank()))
			}
			highest[c.Suit()] = max(highest[c.Suit()], c.Rank())
		}
	}
	b := 0
	for suit := range 4 {
		b += min(stop[suit]-1, 13)
	}
	return b
}

// key is a 64-bit hash of the canonical form of g's state: what can still
// happen from it, with interchangeable piles sorted and, where suits do not
// matter, cards taken by rank. The stock position stands for the stock,
// whose order is fixed for the pass.
func (s *solver) key(g *Game, pileHashes *[4]uint64) uint64 {
	var hand [4]uint64
	for i, c := range g.hand {
		hand[i] = uint64(s.cardKey(c))
	}
	sort4(&hand)
	h := mix(uint64(g.next) | uint64(g.redeals)<<8 | uint64(g.stockN)<<16 |
		(hand[0]|hand[1]<<8|hand[2]<<16|hand[3]<<24)<<24)
	var fk [4]uint64
	for f := range 4 {
		fk[f] = uint64(g.foundN[f]) | uint64(s.cardKey(g.found[f]))<<8
	}
	if s.sameFoundations {
		sort4(&fk)
	}
	h = mix(h ^ (fk[0] | fk[1]<<16 | fk[2]<<32 | fk[3]<<48))
	// The piles, each hashed once more and summed: a sum does not depend on
	// the order of the piles, which is what sorting them would do; where
	// their order matters, each is salted with its place first. The mixes
	// do not wait for one another, unlike a chain of them.
	pk := pileHashes
	var salt [4]uint64
	if g.rules.Redeals != int(g.redeals) {
		salt = [4]uint64{1 << 56, 2 << 56, 3 << 56, 4 << 56}
	}
	return mix(h ^ (mix(pk[0]^salt[0]) + mix(pk[1]^salt[1]) + mix(pk[2]^salt[2]) + mix(pk[3]^salt[3])))
}

// sort4 sorts a in increasing order (a sorting network: five compare and
// swaps, cheaper than slices.Sort on four values).
func sort4(a *[4]uint64) {
	if a[0] > a[1] {
		a[0], a[1] = a[1], a[0]
	}
	if a[2] > a[3] {
		a[2], a[3] = a[3], a[2]
	}
	if a[0] > a[2] {
		a[0], a[2] = a[2], a[0]
	}
	if a[1] > a[3] {
		a[1], a[3] = a[3], a[1]
	}
	if a[1] > a[2] {
		a[1], a[2] = a[2], a[1]
	}
}

func (s *solver) cardKey(c Card) Card {
	if s.rankOnly {
		return Card(c.Rank())
	}
	return c
}

// pileHash is a 64-bit hash of waste pile p of g as the key sees it (cards
// by rank where suits do not matter): the XOR of a hash of each card with
// its height, so that apply keeps it up to date as cards come and go at the
// top instead of every pile being hashed again at every node.
func (s *solver) pileHash(g *Game, p int) uint64 {
	h := uint64(0)
	for i, c := range g.waste[p][:g.wasteN[p]] {
		h ^= s.cardHash(i, c)
	}
	return h
}

// cardHash is card c at height i of a waste pile, for pileHash.
func (s *solver) cardHash(i int, c Card) uint64 {
	return mix(uint64(0x51ED27B5A1C3E9D7) ^ uint64(i)<<8 ^ uint64(s.cardKey(c)))
}

// apply plays m on g and brings pileKey, the pileHash of each waste pile of
// g, up to date with it.
func (s *solver) apply(g *Game, m Move, pileKey *[4]uint64) error {
	before := g.wasteN
	if err := g.Apply(m); err != nil {
		return err
	}
	if m.Kind == Redeal {
		for p := range 4 {
			pileKey[p] = s.pileHash(g, p)
		}
		return nil
	}
	// A card went from the hand or a pile's top to a foundation or a pile's
	// top: at most one pile lost m.Card and one gained it.
	for p := range 4 {
		switch n := g.wasteN[p]; {
		case n < before[p]:
			pileKey[p] ^= s.cardHash(int(n), m.Card)
		case n > before[p]:
			pileKey[p] ^= s.cardHash(int(before[p]), m.Card)
		}
	}
	return nil
}

// mix is SplitMix64's finaliser, a cheap good 64-bit mixer.
func mix(z uint64) uint64 {
	z += 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// keySet maps state keys to the discrepancy budget each was searched with:
// open addressing with linear probing in a power-of-two table, grown at
// half full. The key 0 stands for itself by being stored as 1 (a 64-bit key
// is already a hash; one more collision among 2^64 changes nothing).
type keySet struct {
	slots []uint64
	disc  []int8
	n     int
}

func (t *keySet) reset() {
	if t.slots == nil || len(t.slots) > 1<<22 {
		t.slots, t.disc = make([]uint64, 1<<14), make([]int8, 1<<14)
	} else if t.n > 0 {
		clear(t.slots)
	}
	t.n = 0
}

// visit returns the budget k was searched with before (-1 if none) and
// records disc if it is larger: the state is to be searched again only if
// the budget returned is smaller than disc.
func (t *keySet) visit(k uint64, disc int8) int8 {
	if k == 0 {
		k = 1
	}
	mask := uint64(len(t.slots) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		switch t.slots[i] {
		case k:
			prev := t.disc[i]
			t.disc[i] = max(prev, disc)
			return prev
		case 0:
			t.slots[i], t.disc[i] = k, disc
			t.n++
			if 2*t.n > len(t.slots) {
				t.grow()
			}
			return -1
		}
	}
}

func (t *keySet) grow() {
	old, oldDisc := t.slots, t.disc
	t.slots, t.disc = make([]uint64, 2*len(old)), make([]int8, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	for j, k := range old {
		if k == 0 {
			continue
		}
		i := k & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i], t.disc[i] = k, oldDisc[j]
	}
}

// buried counts the cards of pile p whose longest non-increasing run of
// cards of their rank or higher above them grows when a card of rank r is
// put on top.
func buried(g *Game, p int, r Rank) int {
	var tails, tailsNew [4]uint8
	tailsNew[0] = uint8(r)
	cnt := 0
	for i := int(g.wasteN[p]) - 1; i >= 0; i-- {
		x := uint8(g.waste[p][i].Rank())
		m, mn := 0, 0
		for m < 4 && tails[m] >= x {
			m++
		}
		for mn < 4 && tailsNew[mn] >= x {
			mn++
		}
		if mn > m {
			cnt++
		}
		if m < 4 {
			tails[m] = x
		}
		if mn < 4 {
			tailsNew[mn] = x
		}
	}
	return cnt
}

// record keeps line as the solver's best line if score beats its best.
func (s *solver) record(score int, line []Move) {
	if score > s.best {
		s.best = score
		s.bestLine = append(s.bestLine[:0], line...)
	}
}
