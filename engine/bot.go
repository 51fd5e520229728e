package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// The computer player.
//
// Fairness: a Bot plays from what a player with perfect memory knows and
// nothing else. Choose takes a View (the caller passes g.Memory(): the View
// with the waste piles in full, which never holds the order of the face-down
// stock) and the list of legal moves, which follows from what the player sees.
// It is never given a Game, so it cannot read the stock, the deal number or
// the deal's generator. It thinks on a hypothetical Game built from the View
// alone (gameFromView), where the places of the cards it cannot see (the
// stock, and any waste card the View hides) are filled with the cards the
// View does not show: in a fixed order for the easy and medium levels, whose
// policies never look at them, and in random orders drawn from the Bot's own
// generator for the playouts of the hard level. TestBotDoesNotPeek checks
// this from the outside.
//
// A Bot is deterministic: bots of the same level and seed, shown the same
// positions in the same order, choose the same moves. It keeps no mutable
// package-level state, starts no goroutines and does no I/O; a Bot is not
// safe for concurrent use, but any number of Bots may play at once.

// Level is how well a Bot plays.
type Level uint8

// The levels, weakest first.
const (
	// Easy plays like a beginner: every card that fits a foundation goes
	// up, but it keeps its waste piles in order of how soon a card could go
	// up (which changes under it as the foundations grow), and now and then
	// puts a card on a waste pile at random.
	Easy Level = iota + 1
	// Medium plays a greedy heuristic: foundation moves first, then each card
	// on the waste pile where it buries least, keeping piles in the order the
	// foundations will want them.
	Medium
	// Hard tries each sensible move against random orders of the cards it
	// cannot see, playing each game out with the Medium policy, and keeps the
	// move with the best average result.
	Hard
	// Expert solves: for each choice it draws orders of the cards it
	// cannot see, consistent with all it has seen, settles each with the
	// perfect-information solver under a small budget, and keeps the move
	// that wins the most of them (perfect-information Monte Carlo), the
	// hard level's move where they do not tell the moves apart. See
	// expert.go.
	Expert
)

var levelNames = [...]string{Easy: "easy", Medium: "medium", Hard: "hard", Expert: "expert"}

// Levels lists the levels, weakest first.
func Levels() []Level { return []Level{Easy, Medium, Hard, Expert} }

// String is the level's name: "easy", "medium", "hard" or "expert".
func (l Level) String() string {
	if l >= Easy && l <= Expert {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// ParseLevel reads a level's name, case-insensitively.
func ParseLevel(s string) (Level, error) {
	for _, l := range Levels() {
		if strings.EqualFold(s, levelNames[l]) {
			return l, nil
		}
	}
	return 0, fmt.Errorf("engine: unknown bot level %q (known: easy, medium, hard, expert)", s)
}

// MarshalText writes the level's name.
func (l Level) MarshalText() ([]byte, error) {
	if l < Easy || l > Expert {
		return nil, fmt.Errorf("engine: cannot write unknown bot level %d", uint8(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText reads the level's name.
func (l *Level) UnmarshalText(b []byte) error {
	p, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = p
	return nil
}

// Bot is a computer player. Make one with NewBot.
type Bot struct {
	level Level
	rng   *rand.Rand

	// Hard: how many hypothetical stocks each decision is tried on, in two
	// rounds; how many moves at most are compared; what a win is worth on
	// top of its score; by how much (in quarter points per stock) a move
	// that trails the best after the first round is dropped; and by how much
	// another move must beat the medium policy's to be chosen instead, as
	// sampling noise would otherwise pick worse moves (with 8 stocks and no
	// margin, hard won no more classic deals than medium).
	rounds   [2]int
	maxCands int
	winBonus int
	cut      int
	margin   int

	// Easy: the chance, in percent, of placing a card at random.
	carelessness int

	// Expert: see expert.go. shuffles is its memory of the waste layouts
	// it moved through (strategy), so that it never loops.
	expert   expertConfig
	shuffles wasteShuffles
}

// NewBot makes a bot of the given level whose choices are drawn from its
// own generator seeded with seed. It panics on a level that is not one of
// Levels(): parse untrusted names with ParseLevel.
func NewBot(level Level, seed uint64) *Bot {
	if level < Easy || level > Expert {
		panic(fmt.Sprintf("engine: NewBot: unknown level %d", uint8(level)))
	}
	return &Bot{
		level:        level,
		rng:          rand.New(rand.NewPCG(seed, 0x5eed_b07_5e1f)),
		rounds:       [2]int{16, 32},
		maxCands:     6,
		cut:          12,
		winBonus:     13,
		margin:       2,
		carelessness: 10,
		expert:       defaultExpert,
	}
}

// Level is the bot's level.
func (b *Bot) Level() Level { return b.level }

// Choose picks one of the legal moves for the position v, which should be
// the player's Memory() (a plain View() also works: cards it hides are
// treated as unknown). It returns false only when legal is empty. See the
// note on fairness above: nothing but v and legal is used.
func (b *Bot) Choose(v *View, legal []Move) (Move, bool) {
	if len(legal) == 0 {
		return Move{}, false
	}
	if len(legal) == 1 {
		return legal[0], true
	}
	rules, err := Variant(v.Variant)
	if err != nil {
		return fallbackMove(legal), true
	}
	pool, ok := unseenCards(rules, v)
	if !ok {
		return fallbackMove(legal), true
	}
	// A table to think on: the View, with the unseen cards in a fixed order
	// where the View shows none. The policies below read only what the
	// player sees of it.
	g := gameFromView(rules, v, pool, 0)
	var m Move
	switch b.level {
	case Easy:
		m, ok = easyMove(&g, b.rng, b.carelessness)
	case Hard:
		m, ok = b.hardMove(&g, v, pool, legal)
	case Expert:
		var e expertChoice
		e, ok = b.expertMove(&g, v, pool, legal, false)
		m = e.move
	default:
		m, ok = mediumMove(&g)
	}
	if !ok || !contains(legal, m) {
		return fallbackMove(legal), true
	}
	return m, true
}

// fallbackMove is a safe choice when the position cannot be understood: a
// foundation move if there is one, else the first legal move.
func fallbackMove(legal []Move) Move {
	for _, m := range legal {
		if m.Kind == Place && m.To.Kind == Foundation {
			return m
		}
	}
	return legal[0]
}

func contains(ms []Move, m Move) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// MaxBotMoves is the most moves PlayBot makes before it resigns. No game
// comes near it: the longest plays each card once onto a waste pile and once
// onto a foundation per pass, plus the digging moves of strategy.
const MaxBotMoves = 2000

// PlayBot plays deal number deal of the given rules to its end with bot b,
// showing it the game's Memory() and legal moves, and returns the final game
// and the moves played. A game that reaches MaxBotMoves moves (none does) or
// in which the bot cannot move is resigned.
func PlayBot(rules *Rules, deal uint64, b *Bot) (Game, []Move) {
	g := New(rules, deal)
	var moves []Move
	legal := make([]Move, 0, 64)
	for g.Status() == Playing {
		if len(moves) >= MaxBotMoves {
			g.Resign()
			break
		}
		legal = g.AppendMoves(legal[:0])
		v := g.Memory()
		m, ok := b.Choose(&v, legal)
		if !ok || g.Apply(m) != nil {
			g.Resign()
			break
		}
		moves = append(moves, m)
	}
	return g, moves
}

// unseenCards returns the cards of the variant's deck that the View does not
// show, in new-deck order: the face-down stock and any waste card the View
// hides. Cards under a foundation's top are known by rank (the foundation
// built up to its top) but, outside in-suit, not by suit: a card of each such
// rank is taken out arbitrarily, as suits then do not matter. It reports false
// when the View is not a position of these rules.
func unseenCards(rules *Rules, v *View) ([]Card, bool) {
	if v.Stock < 0 || len(v.Turned) > rules.Turn {
		return nil, false
	}
	var seen [64]bool
	see := func(c Card) bool {
		if !c.Valid() || rules.removed(c.Rank()) || seen[c] {
			return false
		}
		seen[c] = true
		return true
	}
	for _, c := range v.Turned {
		if !see(c) {
			return nil, false
		}
	}
	hidden := 0
	for p := range v.Waste {
		w := &v.Waste[p]
		if len(w.Cards) > w.Count {
			return nil, false
		}
		hidden += w.Count - len(w.Cards)
		for _, c := range w.Cards {
			if !see(c) {
				return nil, false
			}
		}
	}
	var buried [14]int // ranks under foundation tops whose suits are unknown
	for f := range v.Foundations {
		fv := &v.Foundations[f]
		if fv.Count == 0 {
			continue
		}
		if fv.Count < 0 || fv.Count > rules.Length || !see(fv.Top) {
			return nil, false
		}
		r := rules.Start[f]
		for i := 0; i < fv.Count-1; i++ {
			if rules.InSuit {
				if !see(NewCard(r, fv.Top.Suit())) {
					return nil, false
				}
			} else {
				buried[r]++
			}
			r = rankAfter(r, rules.Step[f])
		}
		if r != fv.Top.Rank() {
			return nil, false
		}
	}
	pool := make([]Card, 0, 52)
	for i := range 52 {
		c := CardAt(i)
		if seen[c] || rules.removed(c.Rank()) {
			continue
		}
		if buried[c.Rank()] > 0 {
			buried[c.Rank()]--
			continue
		}
		pool = append(pool, c)
	}
	for _, n := range buried {
		if n != 0 {
			return nil, false
		}
	}
	if len(pool) != v.Stock+hidden {
		return nil, false
	}
	return pool, true
}

// gameFromView builds a game that looks to the player exactly like v, with
// the cards of fill (the unseen cards, as unseenCards returns them, in any
// order) first under the waste piles' hidden cards, bottom up, then as the
// stock, top first. seed seeds the generator of shuffled redeals, which the
// player cannot know either. Only v, fill and seed are read.
func gameFromView(rules *Rules, v *View, fill []Card, seed uint64) Game {
	g := Game{rules: rules, status: v.Status, plies: uint32(v.Moves)}
	for p := range v.Waste {
		w := &v.Waste[p]
		copy(g.waste[p][w.Count-len(w.Cards):], w.Cards)
		g.wasteN[p] = uint8(w.Count)
	}
	g.setUnseen(v, fill, seed)
	for f := range v.Foundations {
		if n := v.Foundations[f].Count; n > 0 {
			g.found[f], g.foundN[f] = v.Foundations[f].Top, uint8(n)
			g.score += uint8(n)
		}
	}
	g.handN = uint8(copy(g.hand[:], v.Turned))
	g.redeals = uint8(max(rules.Redeals-v.RedealsLeft, 0))
	return g
}

// setUnseen puts the cards of fill where v shows none: under the hidden
// waste cards, then in the stock; and seeds the generator of shuffled
// redeals.
func (g *Game) setUnseen(v *View, fill []Card, seed uint64) {
	for p := range v.Waste {
		h := v.Waste[p].Count - len(v.Waste[p].Cards)
		copy(g.waste[p][:h], fill[:h])
		fill = fill[h:]
	}
	g.stockN = uint8(copy(g.stock[:], fill[:v.Stock]))
	g.next = 0
	g.rng = splitMix64{state: seed}
}

// The policies below read only what the player sees of a Game: the turned
// cards, the foundations, the waste piles, the number of cards in the stock
// and of redeals used. They never read g.stock, g.rng or g.deal.

// nextRank is the rank after k for a foundation of the given step, as
// rankAfter but without a division.
func nextRank(k Rank, step int) Rank {
	x := int(k) + step
	for x > 13 {
		x -= 13
	}
	return Rank(x)
}

// wants is the rank each foundation takes now, 0 where it takes none (it is
// complete, or left to right, it may not start yet). In suit, the card must
// also be of the foundation's suit.
func (g *Game) wants() [4]Rank {
	var w [4]Rank
	started := true
	for f := range 4 {
		n := int(g.foundN[f])
		switch {
		case n >= g.rules.Length:
		case n == 0:
			if started || !g.rules.LeftToRight {
				w[f] = g.rules.Start[f]
			}
			started = false
		default:
			w[f] = nextRank(g.found[f].Rank(), g.rules.Step[f])
		}
	}
	return w
}

// fitsAny reports whether some foundation takes c now.
func (g *Game) fitsAny(c Card) bool {
	for f := range 4 {
		if g.fits(f, c) {
			return true
		}
	}
	return false
}

// far is the distance of a card no foundation will ever take.
const far = 99

// stepInverse[s] is the inverse of s modulo 13, for the steps of Calculation.
var stepInverse = [...]int{0, 1, 7, 9, 10}

// distance is how many cards foundation f must take before it can take a
// card of rank r (0: it takes one now), or far if it never will. It ignores
// suits and the left-to-right rule, which only delays a start.
func (g *Game) distance(f int, r Rank) int {
	rules := g.rules
	n := int(g.foundN[f])
	if n >= rules.Length {
		return far
	}
	s, want := rules.Step[f], rules.Start[f]
	if n > 0 {
		want = nextRank(g.found[f].Rank(), s)
	}
	k := 0
	switch {
	case s == 1:
		if k = int(r) - int(want); k < 0 {
			k += 13
		}
	case s >= 2 && s < len(stepInverse):
		k = (int(r) - int(want) + 13) % 13 * stepInverse[s] % 13
	default:
		for k = 0; k < 13 && want != r; k++ {
			want = rankAfter(want, s)
		}
	}
	if k >= rules.Length-n {
		return far
	}
	return k
}

// need is how late a card of rank r is wanted: the largest distance over
// the foundations that will still take that rank, or far if none will. Every
// foundation takes a card of each rank on its way, so this is when the last
// of them gets there. Keeping the waste piles in the order of this stable
// measure (in the classic game simply by rank, suits ignored even in suit)
// wins several times more deals than ordering them by how soon a card could
// go up, which changes as the foundations grow.
func (g *Game) need(r Rank) int {
	worst := -1
	for f := range 4 {
		if d := g.distance(f, r); d < far {
			worst = max(worst, d)
		}
	}
	if worst < 0 {
		return far
	}
	return worst
}

// soon is how soon a card of rank r could go up: the least distance over
// the foundations. Ordering the waste piles by it is the beginner's mistake
// the easy level makes: it changes as the foundations grow.
func (g *Game) soon(r Rank) int {
	best := far
	for f := range 4 {
		best = min(best, g.distance(f, r))
	}
	return best
}

// order is the measure the waste piles are kept in: need, or soon for the
// naive easy level.
func (g *Game) order(r Rank, naive bool) int {
	if naive {
		return g.soon(r)
	}
	return g.need(r)
}

// wasteTop is the top card of waste pile p, or NoCard.
func (g *Game) wasteTop(p int) Card {
	if n := g.wasteN[p]; n > 0 {
		return g.waste[p][n-1]
	}
	return NoCard
}

// placeCost is how bad it is to put a card whose order is nc on waste pile
// p (lower is better): best on a card needed no sooner, the closer the
// better, as the pile then comes off in order; then on an empty pile; else
// on the card needed latest, which it blocks for the shortest time. The rule
// texts' tips follow: a King only fits on a King or an empty pile, which so
// becomes the pile of high cards, and low cards go where they bury nothing
// needed sooner. (Keeping the last empty pile for high cards, or avoiding two
// cards of a rank on one pile, won no more deals.)
func (g *Game) placeCost(nc, p int, naive bool) int {
	t := g.wasteTop(p)
	if t == NoCard {
		return 2000
	}
	nt := g.order(t.Rank(), naive)
	if nt >= nc {
		return 1000 + nt - nc
	}
	return 3000 + nc - nt
}

// bestWaste is the waste pile where card c does least harm, among the piles
// ok accepts.
func (g *Game) bestWaste(c Card, ok func(p int) bool, naive bool) (int, int) {
	nc := g.order(c.Rank(), naive)
	best, bestCost := -1, 0
	for p := range 4 {
		if !ok(p) {
			continue
		}
		if cost := g.placeCost(nc, p, naive); best < 0 || cost < bestCost {
			best, bestCost = p, cost
		}
	}
	return best, bestCost
}

func anyPile(int) bool { return true }

// foundationMove is the foundation move to make, if any: every card that
// fits goes up. Where a card fits several foundations (Calculation), the one
// whose next wanted rank is easiest to find is chosen.
func (g *Game) foundationMove() (Move, bool) {
	wants := g.wants()
	var opts [32]Move
	n := 0
	try := func(c Card) {
		for f := range 4 {
			if wants[f] == c.Rank() && (!g.rules.InSuit || g.foundN[f] == 0 || g.found[f].Suit() == c.Suit()) {
				opts[n] = PlaceMove(c, F(f))
				n++
			}
		}
	}
	// Waste tops first: where a waste top and a turned card want the same
	// foundation, the waste top going up frees the card under it while the
	// turned card can still go anywhere; and with four cards turned at once
	// the waste piles are free only until a turned card is placed. (Turned
	// cards first wins a third fewer classic deals, and most four-at-a-time
	// ones.)
	if !g.wasteLocked() {
		for p := range 4 {
			if c := g.wasteTop(p); c != NoCard {
				try(c)
			}
		}
	}
	for _, c := range g.hand {
		if c != NoCard {
			try(c)
		}
	}
	if n <= 1 || g.rules.Step == stepOne {
		return opts[0], n > 0
	}
	best, bestScore := 0, -1
	for i, m := range opts[:n] {
		f := int(m.To.Index)
		score := 0
		if int(g.foundN[f])+1 < g.rules.Length {
			score = g.availability(rankAfter(m.Card.Rank(), g.rules.Step[f]), m.Card)
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return opts[best], true
}

// availability scores how soon a card of rank r (other than card not) is
// likely to be at hand: turned cards and waste tops count most, cards not
// yet seen next, buried waste cards least.
func (g *Game) availability(r Rank, not Card) int {
	score := 0
	for _, c := range g.hand {
		if c != NoCard && c != not && c.Rank() == r {
			score += 8
		}
	}
	for p := range 4 {
		n := int(g.wasteN[p])
		for i := 0; i < n; i++ {
			if c := g.waste[p][i]; c != not && c.Rank() == r {
				if i == n-1 {
					score += 8
				} else {
					score++
				}
			}
		}
	}
	return score
}

// digMove (waste to waste, Strategy only) moves the top card of the waste
// pile holding the shallowest buried card that fits a foundation onto
// another waste pile, if that card lies at most maxDepth cards deep. Each dig
// brings that card one closer to the top, and no other card that fits is as
// shallow, so digging always ends with a foundation move: the bot cannot
// loop.
func (g *Game) digMove(maxDepth int) (Move, bool) {
	if !g.rules.WasteToWaste || g.wasteLocked() {
		return Move{}, false
	}
	nonEmpty := 0
	for p := range 4 {
		if g.wasteN[p] > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < 2 {
		return Move{}, false
	}
	from, depth := -1, maxDepth+1
	for p := range 4 {
		n := int(g.wasteN[p])
		for i := n - 2; i >= 0 && n-1-i < depth; i-- {
			if g.fitsAny(g.waste[p][i]) {
				from, depth = p, n-1-i
				break
			}
		}
	}
	if from < 0 {
		return Move{}, false
	}
	c := g.wasteTop(from)
	to, _ := g.bestWaste(c, func(p int) bool { return p != from && g.wasteN[p] > 0 }, false)
	return PlaceMove(c, W(to)), true
}

// placeMove puts a turned card on a waste pile: the card needed latest
// first, where several are turned, so that sooner cards end up above it.
func (g *Game) placeMove(naive bool) (Move, bool) {
	card, cn := NoCard, -1
	for _, c := range g.hand {
		if c == NoCard {
			continue
		}
		if n := g.order(c.Rank(), naive); n > cn {
			card, cn = c, n
		}
	}
	if card == NoCard {
		return Move{}, false
	}
	p, _ := g.bestWaste(card, anyPile, naive)
	return PlaceMove(card, W(p)), true
}

// digDepthWhileDealing is how deep the medium policy digs in Strategy while
// cards remain to be turned; once the stock is out it digs to any depth.
const digDepthWhileDealing = 2

// mediumMove is the medium policy's move in g, if g is not over. It only
// ever returns a legal move, and never loops: every move places a turned
// card, puts a card on a foundation, turns the next cards, redeals (at most
// Redeals times) or digs towards a foundation move. In four-at-a-time it
// turns the next four only once no waste card fits a foundation: between
// turns the waste piles are free and the next four unseen.
func mediumMove(g *Game) (Move, bool) {
	if g.status != Playing {
		return Move{}, false
	}
	if m, ok := g.foundationMove(); ok {
		return m, true
	}
	depth := digDepthWhileDealing
	if g.handN == 0 {
		depth = far
	}
	if m, ok := g.digMove(depth); ok {
		return m, true
	}
	if m, ok := g.placeMove(false); ok {
		return m, true
	}
	if g.canTurn() {
		return TurnMove, true
	}
	if g.canRedeal() {
		return RedealMove, true
	}
	return Move{}, false
}

// easyMove plays foundation moves like the medium policy, but places a
// turned card by the naive order (soon rather than need), on a random waste
// pile carelessness percent of the time, and digs (Strategy) only when
// nothing else is left.
func easyMove(g *Game, rng *rand.Rand, carelessness int) (Move, bool) {
	if g.status != Playing {
		return Move{}, false
	}
	if m, ok := g.foundationMove(); ok {
		return m, true
	}
	if g.handN > 0 {
		if rng.IntN(100) < carelessness {
			var cards [4]Card
			n := 0
			for _, c := range g.hand {
				if c != NoCard {
					cards[n] = c
					n++
				}
			}
			return PlaceMove(cards[rng.IntN(n)], W(rng.IntN(4))), true
		}
		return g.placeMove(true)
	}
	return mediumMove(g)
}

// hardMove tries each candidate move on several hypothetical games, the
// unseen cards in random orders, plays each out with the medium policy, and
// keeps the move with the best average result (the final score, plus a
// bonus for a win) if it beats the medium policy's own move by the margin.
// It works in two rounds: after the first, moves that trail the best by more
// than the cut are dropped, and the second round's stocks go to the rest.
// Candidates share the hypothetical stocks, so that they are compared on the
// same luck.
func (b *Bot) hardMove(g *Game, v *View, pool []Card, legal []Move) (Move, bool) {
	first, ok := mediumMove(g)
	if !ok {
		return Move{}, false
	}
	cands := g.hardCandidates(first, legal, b.maxCands)
	if len(cands) == 1 {
		return first, true
	}
	rounds := b.rounds
	if len(pool) == 0 && (g.rules.Redeals == int(g.redeals) || !g.rules.ShuffleRedeal) {
		rounds = [2]int{1, 0} // nothing is unknown: one playout each tells all
	}
	totals := make([]int, len(cands))
	alive := make([]bool, len(cands))
	for i := range alive {
		alive[i] = true
	}
	fill := make([]Card, len(pool))
	n := 0 // stocks tried so far
	for r, stocks := range rounds {
		if r > 0 {
			best := slices.Max(totals)
			for i := 1; i < len(cands); i++ {
				alive[i] = alive[i] && 4*totals[i] >= 4*best-b.cut*n
			}
		}
		for range stocks {
			n++
			copy(fill, pool)
			b.rng.Shuffle(len(fill), func(i, j int) { fill[i], fill[j] = fill[j], fill[i] })
			h := *g
			h.setUnseen(v, fill, b.rng.Uint64())
			for i, m := range cands {
				if !alive[i] {
					continue
				}
				t := h
				if t.Apply(m) != nil {
					alive[i] = false
					continue
				}
				t.playout()
				totals[i] += t.Score()
				if t.status == Won {
					totals[i] += b.winBonus
				}
			}
		}
	}
	best := 0
	for i := range cands {
		if alive[i] && totals[i] > totals[best] {
			best = i
		}
	}
	if 4*totals[best] <= 4*totals[0]+b.margin*n {
		best = 0
	}
	return cands[best], true
}

// playout plays the game to its end with the medium policy.
func (g *Game) playout() {
	for range MaxBotMoves {
		m, ok := mediumMove(g)
		if !ok || g.Apply(m) != nil {
			return
		}
	}
}

// hardCandidates lists the moves worth comparing, the medium policy's first:
// where to put each turned card (one empty pile standing for all), and, where
// the choice matters, which foundation to play to (Calculation) or whether
// to dig first (Strategy). Where every foundation steps by 1 a card that fits
// one always goes up: that can never hurt. At most limit moves, the cheapest
// by the medium policy's measure.
func (g *Game) hardCandidates(first Move, legal []Move, limit int) []Move {
	cands := []Move{first}
	if first.Kind == Place && first.To.Kind == Foundation && g.rules.Step == stepOne {
		return cands
	}
	if g.handN == 0 {
		return cands // nothing turned: foundation moves, digs, turns and redeals only
	}
	type scored struct {
		m    Move
		cost int
	}
	var more []scored
	add := func(m Move, cost int) {
		if m != first && contains(legal, m) {
			more = append(more, scored{m, cost})
		}
	}
	for _, c := range g.hand {
		if c == NoCard {
			continue
		}
		nc := g.need(c.Rank())
		empty := false
		for p := range 4 {
			if g.wasteN[p] == 0 {
				if empty {
					continue
				}
				empty = true
			}
			add(PlaceMove(c, W(p)), g.placeCost(nc, p, false))
		}
		for f := range 4 {
			if g.fits(f, c) {
				add(PlaceMove(c, F(f)), 0)
			}
		}
	}
	if !g.wasteLocked() {
		for p := range 4 {
			if c := g.wasteTop(p); c != NoCard {
				for f := range 4 {
					if g.fits(f, c) {
						add(PlaceMove(c, F(f)), 0)
					}
				}
			}
		}
	}
	if m, ok := g.digMove(far); ok {
		add(m, 0)
	}
	// Cheapest first (a stable insertion sort: the lists are short).
	for i := 1; i < len(more); i++ {
		for j := i; j > 0 && more[j].cost < more[j-1].cost; j-- {
			more[j], more[j-1] = more[j-1], more[j]
		}
	}
	for _, s := range more {
		if len(cands) >= limit {
			break
		}
		cands = append(cands, s.m)
	}
	return cands
}
