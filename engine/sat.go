package engine

import (
	"fmt"
	"math/bits"
	"slices"
)

// The SAT encoding decides the positions the depth-first search leaves
// unknown. It covers the games whose foundations are chains of ranks in
// any suit (A, 2, 3, … or Calculation's sequences by 2, 3 and 4), with no
// redeal left and cards never moving between waste piles: classic,
// aces-out, four-at-a-time, strict, numerica, calculation and
// puss-in-the-corner, from any position, and in-suit and redeal once no
// redeal is left (in suit, each card's foundation is its suit's). In
// strategy it decides the game without waste-to-waste moves, whose wins
// are wins but whose losses prove nothing. It says whether every card can reach a foundation; a satisfying
// assignment is read back into a game, which is replayed through the
// engine before it is believed.
//
// The cards still in play are numbered: first those on the waste piles (W1
// bottom to top, then W2, W3, W4), then the turned cards, then the stock in
// order. The turned cards and then each Turn cards of the stock form a
// group, placed together (one card a group but in four-at-a-time), and
// card i "comes" when its group is placed: the waste cards are all there
// from the start, and waste cards may go to the foundations between
// groups. Such a game is then fixed by three choices per card: the waste
// pile it goes on (in one-card groups a turned card may go to a foundation
// at once, which is the same as placing it and playing it before anything
// else comes), the foundation chain it ends on, and when it is played:
//
//   - pile(i,q): card i goes onto waste pile q; exactly one q, fixed for
//     the cards already there. The empty piles are interchangeable, and
//     of them pile q is first used after the empty pile before it.
//   - chain(i,k): card i ends on foundation k; exactly one k whose chain
//     still lacks its rank, and one card of each rank per foundation.
//     Foundations that climb alike and stand at one height are
//     interchangeable, and the cards of the next rank go onto them in the
//     order the cards come (where all four stand at one height, the first
//     such card on the first foundation, and so on).
//   - before(i,j): card i is played before card j. These define a total
//     order: no cycle of three.
//   - alive(i,t), t > i: card i is not yet played when card t comes. It is
//     false for larger t once false, true among the cards already on the
//     piles and within a group, the same for the cards of one group, and
//     consistent with the order: a card played after one still waiting is
//     waiting too, and a card played after card t came was there when t
//     came.
//   - direct(i), in groups of several cards only: card i goes from the
//     hand to a foundation while its group is placed. It is then played
//     before the next group comes, before the cards of its group that go
//     to the waste piles, and before every card still waiting when it
//     came (waste cards stay put while a group is placed).
//
// The rules of play are then two families of clauses:
//
//   - a foundation is built in order: if cards i and j end on one
//     foundation, j having the rank before i's in its chain, j is played
//     before i;
//   - a waste pile is a stack: if card j goes onto the pile of card i while
//     i is still there (alive(i,j)), j is played before i. Cards of one
//     group may be placed in any order, so among them any order of play
//     stacks.
//
// In four-at-a-time a group of the stock comes with the move T, once the
// group before is placed and the waste cards played in between are up
// (the waste piles are free between groups and locked while a group is
// placed, as the rules say), so the line read off a model turns each
// group with T.
//
// From a mid-game position (not a deal's start) one more family, implied
// by the others, says that a card is played only after more cards of the
// rank below than of its own (see passClauses): without it the solver
// proves a mid-game position lost only by a long pigeonhole argument over
// the four foundations.
//
// Every card is played at some point of the order, so a model is a win, and
// no model means that no game wins. For a classic deal that is about 3,100
// variables and 98,000 clauses. Asked instead for a game with at least so
// many cards on the foundations (see encodePartial), it finds the best
// score of a lost position one card at a time.
type satEncoding struct {
	n       int
	nVars   int
	clauses [][]int
	pile    [][4]int // pile[i][q]: the variable pile(i,q)
	chain   [][4]int // chain[i][k]: the variable chain(i,k)
	before  [][]int  // before[i][j], i < j: the variable before(i,j)
	alive   [][]int  // alive[i][t], t > i: the variable alive(i,t)
	direct  []int    // direct[i]: the variable direct(i), 0 in one-card groups
	played  []int    // played[i]: the variable played(i), where not every card must be
}

func (e *satEncoding) newVar() int {
	e.nVars++
	return e.nVars
}

func (e *satEncoding) add(lits ...int) {
	e.clauses = append(e.clauses, lits)
}

// prec is the literal "card i is played before card j", i != j.
func (e *satEncoding) prec(i, j int) int {
	if i < j {
		return e.before[i][j]
	}
	return -e.before[j][i]
}

func (e *satEncoding) exactlyOne(v [4]int) {
	e.add(v[0], v[1], v[2], v[3])
	e.atMostOne(v)
}

func (e *satEncoding) atMostOne(v [4]int) {
	for a := range 4 {
		for b := a + 1; b < 4; b++ {
			e.add(-v[a], -v[b])
		}
	}
}

// satPosition is what the encoding needs of a position: the cards still in
// play in the order above, how many of them are already on the waste piles
// and where, the groups the others come in, and the foundations.
type satPosition struct {
	cards  []Card
	placed int   // cards[:placed] are on the waste piles
	pileOf []int // for each placed card, its pile
	// group numbers the groups the cards come in, from 0 for the turned
	// cards; the placed cards are in group -1.
	group []int
	// multi: some groups hold several cards (four-at-a-time).
	multi bool
	// locked: the turned cards are being placed, so no waste card may move
	// until the last of them is.
	locked bool

	heights [4]int
	// slot[k][r] is where rank r stands in foundation k's chain (0 for its
	// first card), or -1 if it has no place there; rankAt[k][s] is the
	// rank at place s, of length places.
	slot   [4][14]int
	rankAt [4][13]int
	length int
	// alike: the four chains are the same ranks in the same order.
	alike bool
	// onSuit, in suit: the foundation each suit's cards go to (see
	// satCovers), so that the foundations are not interchangeable.
	onSuit []int

	// atLeast, if above 0, asks for a game with at least that many cards on
	// the foundations instead of a win (see encodePartial).
	atLeast int

	// restricted: the rules allow moves the encoding leaves out (waste to
	// waste), so a model is a win but no model proves nothing.
	restricted bool
	// midGame: the position is not a deal's start (cards on the waste
	// piles, or on the foundations beyond those the rules put there). The
	// clauses of passClauses are added only then: from a deal's start the
	// encoding stays as measured over classic deals 1 to 10,000.
	midGame bool
	// noPass drops the implied clauses of passClauses, for tests of them.
	noPass bool
	// allLabellings drops the clauses that keep one labelling of
	// interchangeable piles and foundations, for tests of those clauses.
	allLabellings bool
}

// encodeChains encodes whether every card of position p can reach a
// foundation.
func encodeChains(p *satPosition) *satEncoding {
	n := len(p.cards)
	e := &satEncoding{n: n}
	e.pile = make([][4]int, n)
	e.chain = make([][4]int, n)
	e.before = make([][]int, n)
	e.alive = make([][]int, n)
	e.direct = make([]int, n)
	e.played = make([]int, n)
	for i := range n {
		for q := range 4 {
			e.pile[i][q] = e.newVar()
			e.chain[i][q] = e.newVar()
		}
		e.before[i] = make([]int, n)
		e.alive[i] = make([]int, n)
		for j := i + 1; j < n; j++ {
			e.before[i][j] = e.newVar()
			e.alive[i][j] = e.newVar()
		}
	}
	empty := emptyPiles(p)
	for i := range n {
		e.exactlyOne(e.pile[i])
		if i < p.placed {
			e.add(e.pile[i][p.pileOf[i]])
			// There now, so there when the waste cards above it came.
			for t := i + 1; t < p.placed; t++ {
				e.add(e.alive[i][t])
			}
			continue
		}
		if p.allLabellings {
			continue
		}
		// The empty piles are interchangeable (the others are told apart
		// by their cards): the a-th of them is first used after the
		// (a-1)-th.
		for a := 1; a < len(empty); a++ {
			used := []int{-e.pile[i][empty[a]]}
			for h := p.placed; h < i; h++ {
				used = append(used, e.pile[h][empty[a-1]])
			}
			e.add(used...)
		}
	}
	var byRank [14][]int
	for i, c := range p.cards {
		byRank[c.Rank()] = append(byRank[c.Rank()], i)
	}
	same := p.alike && p.heights == [4]int{p.heights[0], p.heights[0], p.heights[0], p.heights[0]}
	partial := p.atLeast > 0
	for i := range n {
		if partial {
			e.played[i] = e.newVar()
			e.add(-e.played[i], e.chain[i][0], e.chain[i][1], e.chain[i][2], e.chain[i][3])
			for k := range 4 {
				e.add(e.played[i], -e.chain[i][k]) // not played: on no foundation
			}
			e.atMostOne(e.chain[i])
		} else {
			e.exactlyOne(e.chain[i])
		}
		for k := range 4 {
			if p.slot[k][p.cards[i].Rank()] < p.heights[k] {
				e.add(-e.chain[i][k]) // that foundation has its card of this rank, or takes none
			}
		}
		if p.onSuit != nil {
			e.add(e.chain[i][p.onSuit[p.cards[i].Suit()]]) // in suit: its suit's foundation
		}
	}
	for r, cards := range byRank {
		for k := range 4 {
			for a := range cards {
				for b := a + 1; b < len(cards); b++ {
					e.add(-e.chain[cards[a]][k], -e.chain[cards[b]][k])
				}
			}
		}
		if !p.allLabellings && !partial && p.onSuit == nil {
			if same && p.heights[0] < p.length && r == p.rankAt[0][p.heights[0]] {
				for k, i := range cards {
					e.add(e.chain[i][k])
				}
			} else if !same {
				e.labelFoundations(p, r, cards)
			}
		}
		// The rank before r on each foundation whose chain still lacks both
		// (in classic, r-1 on every one). The clauses go by card i, card j,
		// foundation k, the order they had before Calculation's chains: the
		// SAT solver's path, and so every figure measured, depends on it.
		var prev [4]int
		for k := range 4 {
			if s := p.slot[k][r]; s > p.heights[k] {
				prev[k] = p.rankAt[k][s-1]
			}
		}
		for _, i := range cards {
			for pr := 1; pr <= 13; pr++ {
				if !slices.Contains(prev[:], pr) {
					continue
				}
				for _, j := range byRank[pr] {
					for k := range 4 {
						if prev[k] == pr {
							e.add(-e.chain[i][k], -e.chain[j][k], e.prec(j, i))
						}
					}
				}
			}
		}
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			for k := j + 1; k < n; k++ {
				e.add(-e.before[i][j], -e.before[j][k], e.before[i][k])
				e.add(e.before[i][j], e.before[j][k], -e.before[i][k])
			}
		}
	}
	for i := range n {
		for t := i + 2; t < n; t++ {
			e.add(-e.alive[i][t], e.alive[i][t-1])
		}
		for j := i + 1; j < n; j++ {
			e.add(e.before[i][j], e.alive[i][j]) // j first: i was there when j came
			for t := j + 1; t < n; t++ {
				e.add(-e.before[i][j], -e.alive[i][t], e.alive[j][t])
				e.add(e.before[i][j], -e.alive[j][t], e.alive[i][t])
			}
			if p.multi && i >= p.placed && p.group[i] == p.group[j] {
				continue // placed in any order
			}
			for q := range 4 {
				e.add(-e.pile[i][q], -e.pile[j][q], -e.alive[i][j], -e.before[i][j])
			}
		}
	}
	if p.multi {
		e.encodeGroups(p)
	}
	if p.alike && p.midGame && !partial && !p.noPass {
		e.passClauses(p, byRank)
	}
	if partial {
		e.encodePartial(p, byRank)
	}
	return e
}

// emptyPiles lists the waste piles of p with no card on them, in order.
func emptyPiles(p *satPosition) []int {
	var used [4]bool
	for _, q := range p.pileOf {
		used[q] = true
	}
	var empty []int
	for q := range 4 {
		if !used[q] {
			empty = append(empty, q)
		}
	}
	return empty
}

// labelFoundations adds, for the cards of rank r, the clauses that label
// interchangeable foundations one way only where they do not all stand
// at one height: foundations with the same chain at the same height,
// whose next card is of rank r, take their rank-r cards in the order the
// cards come (a game putting them in another order is the same game with
// those foundations swapped).
func (e *satEncoding) labelFoundations(p *satPosition, r int, cards []int) {
	var class []int
	for k := range 4 {
		if h := p.heights[k]; h < p.length && p.rankAt[k][h] == r {
			class = append(class, k)
		}
	}
	for a, ka := range class {
		for _, kb := range class[:a] {
			if p.rankAt[ka] != p.rankAt[kb] || p.heights[ka] != p.heights[kb] {
				continue
			}
			// kb < ka: a card on ka comes after any card on kb.
			for x, i := range cards {
				for _, j := range cards[x+1:] {
					e.add(-e.chain[i][ka], -e.chain[j][kb])
				}
			}
		}
	}
}

// passClauses adds clauses that the others imply but that the SAT solver
// would find only by a pigeonhole argument over the foundations, which
// resolution makes long: where the foundations are alike chains, a card
// of rank r goes onto a foundation then at the rank before r, so when it
// is played more foundations have passed that rank than r itself. If
// F(s) foundations hold a card of rank s now, a card i of rank r played
// after a set S of the other rank-r cards still out needs at least
// F(r) - F(r-1) + |S| + 1 of the cards of the rank before still out
// played before it. For each such S (at most 8 of them) and each set U of
// those cards large enough that one of them must be played before i, the
// clause is: some card of S comes after i, or some card of U before it.
func (e *satEncoding) passClauses(p *satPosition, byRank [14][]int) {
	held := func(r int) int { // F(r): foundations holding a card of rank r
		n := 0
		for k := range 4 {
			if s := p.slot[k][r]; s >= 0 && s < p.heights[k] {
				n++
			}
		}
		return n
	}
	for r, cards := range byRank {
		s := p.slot[0][r]
		if s <= 0 || len(cards) == 0 {
			continue // the chain's first rank needs nothing below it
		}
		below := byRank[p.rankAt[0][s-1]]
		base := held(r) - held(p.rankAt[0][s-1]) + 1
		for _, i := range cards {
			var others []int
			for _, x := range cards {
				if x != i {
					others = append(others, x)
				}
			}
			for set := 0; set < 1<<len(others); set++ {
				var clause []int
				for b, x := range others {
					if set>>b&1 == 1 {
						clause = append(clause, e.prec(i, x))
					}
				}
				need := base + len(clause)
				if need <= 0 {
					continue
				}
				m := len(below)
				if need > m {
					e.add(clause...) // i cannot come after all of S
					continue
				}
				// Every set U of m-need+1 cards of the rank before holds
				// one played before i.
				for u := 0; u < 1<<m; u++ {
					if bitsCount(u) != m-need+1 {
						continue
					}
					c := slices.Clone(clause)
					for b, j := range below {
						if u>>b&1 == 1 {
							c = append(c, e.prec(j, i))
						}
					}
					e.add(c...)
				}
			}
		}
	}
}

func bitsCount(u int) int { return bits.OnesCount(uint(u)) }

// encodePartial adds the clauses of a game that need not be won: played(i)
// says whether card i ever reaches a foundation. A card not played stays
// on its pile to the end: it is alive throughout and comes after every
// played card in the order, so a card put on it is not played either (the
// stack clause). A card on a foundation needs the card below it there
// (which in a won game the count of cards implies), and at least atLeast
// cards are on the foundations in the end: at most n - (atLeast - the
// cards there now) cards not played, by Sinz's sequential counter.
func (e *satEncoding) encodePartial(p *satPosition, byRank [14][]int) {
	n := e.n
	for i := range n {
		if i+1 < n {
			e.add(e.played[i], e.alive[i][n-1])
		}
		for j := range n {
			if j != i {
				e.add(-e.played[i], e.played[j], e.prec(i, j))
			}
		}
		if e.direct[i] != 0 {
			e.add(-e.direct[i], e.played[i])
		}
		for k := range 4 {
			s := p.slot[k][p.cards[i].Rank()]
			if s <= p.heights[k] {
				continue // first on its foundation from here
			}
			below := []int{-e.chain[i][k]}
			for _, j := range byRank[p.rankAt[k][s-1]] {
				below = append(below, e.chain[j][k])
			}
			e.add(below...)
		}
	}
	score := 0
	for _, h := range p.heights {
		score += h
	}
	left := make([]int, n) // the literals "card i is not played"
	for i := range n {
		left[i] = -e.played[i]
	}
	e.atMost(left, n-(p.atLeast-score))
}

// atMost adds Sinz's sequential counter: at most k of lits are true.
func (e *satEncoding) atMost(lits []int, k int) {
	n := len(lits)
	switch {
	case k >= n:
		return
	case k <= 0:
		for _, l := range lits {
			e.add(-l)
		}
		return
	}
	// s[i][j]: at least j+1 of lits[:i+1] are true.
	s := make([][]int, n-1)
	for i := range s {
		s[i] = make([]int, k)
		for j := range k {
			s[i][j] = e.newVar()
		}
	}
	e.add(-lits[0], s[0][0])
	for j := 1; j < k; j++ {
		e.add(-s[0][j])
	}
	for i := 1; i < n-1; i++ {
		e.add(-lits[i], s[i][0])
		e.add(-s[i-1][0], s[i][0])
		for j := 1; j < k; j++ {
			e.add(-lits[i], -s[i-1][j-1], s[i][j])
			e.add(-s[i-1][j], s[i][j])
		}
		e.add(-lits[i], -s[i-1][k-1])
	}
	e.add(-lits[n-1], -s[n-2][k-1])
}

// encodeGroups adds the clauses of groups of several cards: when a card
// comes (see alive and direct above).
func (e *satEncoding) encodeGroups(p *satPosition) {
	n := e.n
	for i := p.placed; i < n; i++ {
		e.direct[i] = e.newVar()
	}
	for i := range n {
		for t := i + 1; t < n; t++ {
			switch {
			case p.group[t] == p.group[i] && i >= p.placed:
				e.add(e.alive[i][t]) // not played before its group is placed
			case p.locked && p.group[t] == 0:
				e.add(e.alive[i][t]) // the waste is locked until the turned cards are placed
			case t-1 > i && p.group[t] == p.group[t-1]:
				e.add(-e.alive[i][t-1], e.alive[i][t]) // a group comes at once
			}
		}
	}
	for x := p.placed; x < n; x++ {
		d := e.direct[x]
		for t := x + 1; t < n; t++ {
			if p.group[t] != p.group[x] {
				e.add(-d, -e.alive[x][t]) // played before the next group comes
				break
			}
		}
		for y := range n {
			switch {
			case y == x || p.group[y] > p.group[x]:
			case p.group[y] == p.group[x]:
				e.add(-d, e.direct[y], e.prec(x, y)) // before its group's waste cards
			default:
				e.add(-d, -e.alive[y][x], e.prec(x, y)) // before the waiting waste cards
			}
		}
	}
}

// satPlan is a winning game read off a model: for each card (by its place
// in the stock) its waste pile and chain, whether it goes from the hand to a
// foundation, the cards in the order they are played, and for each card the
// last card that came before it is played.
type satPlan struct {
	pile, chain    []int
	direct, played []bool
	order          []int
	turned         []int
}

// plan reads a model of e.
func (e *satEncoding) plan(model []bool) *satPlan {
	val := func(lit int) bool {
		if lit < 0 {
			return !model[-lit-1]
		}
		return model[lit-1]
	}
	n := e.n
	p := &satPlan{pile: make([]int, n), chain: make([]int, n), direct: make([]bool, n), played: make([]bool, n), turned: make([]int, n)}
	for i := range n {
		for q := range 4 {
			if val(e.pile[i][q]) {
				p.pile[i] = q
			}
			if val(e.chain[i][q]) {
				p.chain[i] = q
			}
		}
		p.turned[i] = i
		for t := i + 1; t < n && val(e.alive[i][t]); t++ {
			p.turned[i] = t
		}
		p.played[i] = e.played[i] == 0 || val(e.played[i])
		// In one-card groups a card played before the next comes goes
		// straight from the hand.
		p.direct[i] = p.played[i] && p.turned[i] == i
		if e.direct[i] != 0 {
			p.direct[i] = val(e.direct[i])
		}
		p.order = append(p.order, i)
	}
	slices.SortFunc(p.order, func(a, b int) int {
		switch {
		case a == b:
			return 0
		case val(e.prec(a, b)):
			return -1
		}
		return 1
	})
	return p
}

// satCovers reports whether the SAT encoding covers g (see the top of this
// file), and returns what it needs of g if so.
func satCovers(g *Game) (*satPosition, bool) {
	r := g.rules
	if int(g.redeals) != r.Redeals || g.status != Playing || (r.InSuit && (r.WasteToWaste || r.Start != allAces || r.Step != stepOne)) {
		return nil, false
	}
	p := &satPosition{restricted: r.WasteToWaste, locked: g.wasteLocked(), length: r.Length}
	if r.InSuit {
		// Each suit climbs on the foundation it started; the suits not
		// started yet take the empty foundations in order (which empty
		// foundation an Ace starts does not matter).
		p.onSuit = []int{-1, -1, -1, -1}
		var taken [4]bool
		for k := range 4 {
			if g.foundN[k] > 0 {
				p.onSuit[g.found[k].Suit()], taken[k] = k, true
			}
		}
		for suit := range 4 {
			for k := 0; p.onSuit[suit] < 0 && k < 4; k++ {
				if !taken[k] {
					p.onSuit[suit], taken[k] = k, true
				}
			}
		}
	}
	for q := range 4 {
		for _, c := range g.waste[q][:g.wasteN[q]] {
			p.cards = append(p.cards, c)
			p.pileOf = append(p.pileOf, q)
			p.group = append(p.group, -1)
		}
	}
	p.placed = len(p.cards)
	start := 0
	if r.Preset {
		start = 4
	}
	p.midGame = p.placed > 0 || int(g.score) > start
	for _, c := range g.hand {
		if c != NoCard {
			p.cards = append(p.cards, c)
			p.group = append(p.group, 0)
		}
	}
	for i, c := range g.stock[g.next:g.stockN] {
		p.cards = append(p.cards, c)
		p.group = append(p.group, 1+i/r.Turn)
	}
	p.multi = r.Turn > 1
	p.alike = true
	for k := range 4 {
		p.heights[k] = int(g.foundN[k])
		p.slot[k] = [14]int{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
		rank := r.Start[k]
		for s := range r.Length {
			p.slot[k][rank] = s
			p.rankAt[k][s] = int(rank)
			rank = rankAfter(rank, r.Step[k])
		}
		p.alike = p.alike && r.Start[k] == r.Start[0] && r.Step[k] == r.Step[0]
	}
	return p, true
}

// satDecide decides whether g, which satCovers, can be won, within a
// budget of maxConflicts conflicts (<= 0: none): Winnable with the winning
// line, Lost, or Unknown when the budget runs out. It also returns the
// conflicts spent.
func satDecide(g *Game, maxConflicts int64) (Outcome, []Move, int64, error) {
	p, ok := satCovers(g)
	if !ok {
		return Unknown, nil, 0, fmt.Errorf("engine: the SAT encoding does not cover %s from this position", g.rules.Name)
	}
	return satDecidePosition(g, p, maxConflicts)
}

// satBestScore raises from, a score that some game from g reaches, to the
// best score any game from g reaches, asking the SAT encoding for a game
// with one more card on the foundations than the best so far, within
// maxConflicts conflicts in all (<= 0: none). It returns the best score
// found with a line reaching it (nil if none beat from), whether that score
// is proved the best, and the conflicts spent.
func satBestScore(g *Game, from int, maxConflicts int64) (best int, line []Move, exact bool, conflicts int64) {
	p, ok := satCovers(g)
	if !ok || p.restricted {
		return from, nil, false, 0
	}
	best = from
	for best < g.rules.Deck() {
		p.atLeast = best + 1
		e := encodeChains(p)
		s := newCDCL(e.nVars, e.clauses)
		if maxConflicts > 0 {
			s.budget = max(maxConflicts-conflicts, 1)
		}
		result := s.solve()
		conflicts += s.conflicts
		switch result {
		case cdclUnsat:
			return best, line, true, conflicts
		case cdclUnknown:
			return best, line, false, conflicts
		}
		better, score, err := e.plan(s.model()).line(*g, p)
		if err != nil {
			return best, line, false, conflicts // a fault in the encoding: claim nothing more
		}
		best, line = score, better
	}
	return best, line, true, conflicts
}

// satDecidePosition is satDecide for g's position p, as satCovers gives it.
func satDecidePosition(g *Game, p *satPosition, maxConflicts int64) (Outcome, []Move, int64, error) {
	e := encodeChains(p)
	s := newCDCL(e.nVars, e.clauses)
	s.budget = maxConflicts
	switch s.solve() {
	case cdclUnsat:
		if p.restricted {
			return Unknown, nil, s.conflicts, nil // lost only without the moves left out
		}
		return Lost, nil, s.conflicts, nil
	case cdclUnknown:
		return Unknown, nil, s.conflicts, nil
	}
	line, _, err := e.plan(s.model()).line(*g, p)
	if err != nil {
		return Unknown, nil, s.conflicts, err
	}
	return Winnable, line, s.conflicts, nil
}

// line plays plan pl from g, whose cards are as in p, and returns its moves
// and final score once the engine has found them legal and winning (or
// reaching p.atLeast).
func (pl *satPlan) line(g Game, p *satPosition) ([]Move, int, error) {
	var line []Move
	play := func(m Move) error {
		if err := g.Apply(m); err != nil {
			return fmt.Errorf("engine: the SAT model's move %d: %w", len(line)+1, err)
		}
		line = append(line, m)
		return nil
	}
	// onF[k]: the foundation chain k is built on. A foundation not yet
	// started is taken when the chain's first card is played: any empty one
	// will do, the rules saying which (numerica: the leftmost).
	var onF [4]int
	for k := range 4 {
		onF[k] = k
		if g.foundN[k] == 0 {
			onF[k] = -1
		}
	}
	pos := make([]int, len(pl.order)) // pos[i]: card i's place in pl.order
	for at, i := range pl.order {
		pos[i] = at
	}
	next := 0 // into pl.order
	for t := 0; t < len(p.cards); {
		// The group from card t: its cards that go to the waste piles are
		// placed, those played later first; then come the cards played
		// before the next group: those of the group going straight to
		// the foundations, then waste cards.
		end := t + 1
		for t >= p.placed && end < len(p.cards) && p.group[end] == p.group[t] {
			end++
		}
		if t >= p.placed && g.canTurn() {
			// A group from the stock, in four-at-a-time: the waste cards
			// played before it came are up, so it is turned now.
			if err := play(TurnMove); err != nil {
				return nil, 0, err
			}
		}
		var toWaste []int
		for i := max(t, p.placed); i < end; i++ {
			if !pl.direct[i] {
				toWaste = append(toWaste, i)
			}
		}
		slices.SortFunc(toWaste, func(a, b int) int { return pos[b] - pos[a] })
		for _, i := range toWaste {
			if err := play(PlaceMove(p.cards[i], W(pl.pile[i]))); err != nil {
				return nil, 0, err
			}
		}
		for ; next < len(pl.order) && pl.played[pl.order[next]] && pl.turned[pl.order[next]] < end; next++ {
			i := pl.order[next]
			k := pl.chain[i]
			if onF[k] < 0 {
				for f := range 4 {
					if g.foundN[f] == 0 && g.fits(f, p.cards[i]) && !slices.Contains(onF[:], f) {
						onF[k] = f
						break
					}
				}
			}
			if err := play(PlaceMove(p.cards[i], F(max(onF[k], 0)))); err != nil {
				return nil, 0, err
			}
		}
		t = end
	}
	if (p.atLeast == 0 && g.status != Won) || int(g.score) < p.atLeast {
		return nil, 0, fmt.Errorf("engine: the SAT model's game ends %s with %d cards", g.status, g.score)
	}
	return line, int(g.score), nil
}
