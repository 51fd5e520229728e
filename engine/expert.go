package engine

import "slices"

// The expert level: perfect-information Monte Carlo, without peeking.
//
// For each choice the expert draws orders of the cards it cannot see (the
// pool unseenCards returns from the View: the stock, and any waste card the
// View hides), the same way the hard level does, from its own generator.
// Each draw is a game that looks to the player exactly like the real one;
// the expert plays each candidate move on it and asks the solver, which
// knows that game's stock, whether the game can then be won, within a small
// budget of positions. The move that wins the most draws is played; where
// no move wins more draws than the hard level's choice, the hard level's
// choice is played, so that where the draws do not tell the moves apart
// (early on nearly every move wins nearly every draw) it plays no worse
// than hard. Like the other levels it sees only the View and the legal
// moves: the real stock is never read (TestBotDoesNotPeek).
//
// Where the choice is forced, or trivially safe (the hard level's list of
// moves worth comparing holds one move: a card that fits a foundation where
// foundations step by one, or no card turned), it plays the hard level's
// move without drawing.

// expertConfig is how much the expert thinks.
type expertConfig struct {
	// samples is how many orders of the unseen cards each choice is tried
	// on; nodes is the solver's budget of positions per move and order;
	// maxCands is how many moves at most are compared (the hard level's
	// list, cheapest first).
	samples  int
	nodes    int64
	maxCands int
	// margin is how many more draws than the hard level's move another
	// move must win to be played instead.
	margin int
}

// defaultExpert is the expert's configuration: a first choice, tried on
// classic deals 1-10 only (7 won, about 1.5 s a deal) before it was
// measured on deals from 100001 (docs/engine.md); the shared machine left
// no time to tune it.
var defaultExpert = expertConfig{samples: 12, nodes: 2000, maxCands: 8, margin: 1}

// expertChoice is what the expert found at one choice.
type expertChoice struct {
	move    Move
	won     int // draws the move won
	samples int // draws tried (0: no draw was needed)
}

// expertMove is the expert's choice in g, the game built from v with the
// unseen cards pool. With full, it draws even where the choice is forced
// or safe, to tell how often the move it plays wins (ExpertChance).
func (b *Bot) expertMove(g *Game, v *View, pool []Card, legal []Move, full bool) (expertChoice, bool) {
	first, ok := mediumMove(g)
	if !ok {
		return expertChoice{}, false
	}
	cfg := b.expert
	s := newSolver(g.rules, cfg.nodes)
	hard := first
	if hc := g.hardCandidates(first, legal, b.maxCands); len(hc) > 1 {
		if hard, ok = b.hardMove(g, v, pool, legal); !ok {
			return expertChoice{}, false
		}
	}
	if !full {
		if len(legal) == 1 {
			return expertChoice{move: legal[0]}, true
		}
		if m, ok := s.safeMove(g); ok && contains(legal, m) {
			return expertChoice{move: m}, true // provably costs nothing
		}
	}
	// The hard level's move first: the others must beat it.
	order := g.expertCandidates(hard, legal, max(cfg.maxCands, 1))
	if len(legal) == 1 {
		order = order[:1]
	}
	if g.rules.WasteToWaste && !full {
		order = b.shuffles.withoutReturns(g, order, legal)
	}
	playouts := undecidedByPlayout(g.rules)
	k := max(cfg.samples, 1)
	// The draws: each a game that looks like g, shared by every move so
	// that the moves are compared on the same luck.
	draws := make([]Game, k)
	fill := make([]Card, len(pool))
	for i := range draws {
		copy(fill, pool)
		b.rng.Shuffle(len(fill), func(i, j int) { fill[i], fill[j] = fill[j], fill[i] })
		draws[i] = *g
		draws[i].setUnseen(v, fill, b.rng.Uint64())
	}
	wins := func(m Move, need int) int {
		// The draws m wins, stopping once it cannot reach need.
		w := 0
		for i := range draws {
			if w+k-i < need {
				return w
			}
			t := draws[i]
			if t.Apply(m) != nil {
				return -1
			}
			if t.status == Won || (t.status == Playing && s.winsDraw(&t, cfg.nodes, playouts)) {
				w++
			}
		}
		return w
	}
	best := expertChoice{move: order[0], won: wins(order[0], 0), samples: k}
	if best.won < 0 {
		best.won = 0
	}
	bar := best.won + cfg.margin + 1 // what another move must reach
	for _, m := range order[1:] {
		if best.won == k || bar > k {
			break
		}
		if w := wins(m, bar); w >= bar {
			best.move, best.won = m, w
			bar = w + 1
		}
	}
	return best, true
}

// expertCandidates lists the moves the expert compares, first first: the
// hard level's list of moves worth comparing, then the other legal moves
// (other foundation moves, turns, waste moves), one empty waste pile
// standing for all and one of two foundations that take the same rank in
// any suit for both; at most limit.
func (g *Game) expertCandidates(first Move, legal []Move, limit int) []Move {
	cands := []Move{first}
	same := func(a, b Move) bool {
		if a == b {
			return true
		}
		if a.Kind != Place || b.Kind != Place || a.Card != b.Card || a.To.Kind != b.To.Kind {
			return false
		}
		i, j := int(a.To.Index), int(b.To.Index)
		if a.To.Kind == Waste {
			return g.wasteN[i] == 0 && g.wasteN[j] == 0
		}
		return !g.rules.InSuit && g.rules.Step[i] == g.rules.Step[j] && g.foundN[i] == g.foundN[j] &&
			(g.foundN[i] == 0 || g.found[i].Rank() == g.found[j].Rank())
	}
	add := func(m Move) {
		if len(cands) >= limit || !contains(legal, m) {
			return
		}
		for _, c := range cands {
			if same(c, m) {
				return
			}
		}
		cands = append(cands, m)
	}
	if first.Kind != Place || first.To.Kind != Foundation {
		for _, m := range g.hardCandidates(first, legal, limit)[1:] {
			add(m)
		}
	}
	for _, m := range legal {
		if m.Kind == Place && m.To.Kind == Foundation {
			add(m)
		}
	}
	for _, m := range g.hardCandidates(Move{Kind: Turn}, legal, limit)[1:] {
		add(m)
	}
	for _, m := range legal {
		add(m)
	}
	return cands
}

// undecidedByPlayout reports whether, in these rules, a draw the search
// leaves undecided within its budget is decided by the medium policy's
// playout. That is so where waste cards move between piles (strategy):
// there the search decided 23% of the expert's draws on tuning deals 21-30
// (against 60% in classic), so the draws told the moves apart by chance,
// and the expert won 86% of deals 100001-100200 against hard's 99%.
// Elsewhere the expert stays as it was measured (docs/solver.md).
func undecidedByPlayout(r *Rules) bool { return r.WasteToWaste }

// winsDraw reports whether the draw g, a game still playing, is won: the
// search finds a win within maxNodes positions or, with playouts, the
// medium policy's playout wins it. A playout cannot win a draw the search
// proved lost, so the playout only decides what the search leaves
// undecided; it goes first as it costs far less. A false is not a proof
// of loss.
func (s *solver) winsDraw(g *Game, maxNodes int64, playouts bool) bool {
	if playouts {
		p := *g
		if p.playout(); p.status == Won {
			return true
		}
	}
	return s.quickWin(g, maxNodes)
}

// quickWin reports whether the search finds a win from g within maxNodes
// positions: the solver's first phase (narrow searches in both orderings,
// then a full one with what is left), without the SAT stage. A false is
// not a proof of loss.
func (s *solver) quickWin(g *Game, maxNodes int64) bool {
	s.reset()
	s.floor = g.rules.Deck() - 1
	orders := int64(1)
	if s.chains {
		orders = 2
	}
	won, complete := false, false
	for k := range orders {
		s.order = int(k)
		s.maxNodes = maxNodes / orders * (k + 1)
		if k == orders-1 {
			s.maxNodes = maxNodes
		}
		s.aborted = false
		s.seen.reset()
		for _, d := range discrepancies {
			s.narrowed = false
			if won = s.search(*g, d); won || s.aborted {
				break
			}
			if !s.narrowed {
				complete = true
				break
			}
		}
		if won || complete {
			break
		}
	}
	if !won && !complete && !s.aborted {
		won = s.search(*g, unlimited)
	}
	return won
}

// ExpertChance is how often, with what the player can see, the expert
// wins from the position v (the player's Memory(); a plain View() also
// works) with the legal moves legal: the share of the expert's draws of
// the unseen cards that the move it would play wins, with that move. It
// reads nothing but v and legal, and is deterministic: the same position
// gives the same answer. A game already won has chance 1 and one with no
// legal move chance 0 (with the zero Move).
//
// The share is over a few draws (12), so it is coarse: a position the
// expert wins from 62% of the time may show as 58% or 67%.
func ExpertChance(v *View, legal []Move) (float64, Move) { return expertChance(v, legal, nil) }

// expertChance is ExpertChance with the expert's configuration cfg (nil:
// the default).
func expertChance(v *View, legal []Move, cfg *expertConfig) (float64, Move) {
	if v.Status == Won {
		return 1, Move{}
	}
	if len(legal) == 0 || v.Status != Playing {
		return 0, Move{}
	}
	rules, err := Variant(v.Variant)
	if err != nil {
		return 0, fallbackMove(legal)
	}
	pool, ok := unseenCards(rules, v)
	if !ok {
		return 0, fallbackMove(legal)
	}
	g := gameFromView(rules, v, pool, 0)
	b := NewBot(Expert, expertChanceSeed)
	if cfg != nil {
		b.expert = *cfg
	}
	e, ok := b.expertMove(&g, v, pool, legal, true)
	if !ok || !contains(legal, e.move) || e.samples == 0 {
		return 0, fallbackMove(legal)
	}
	return float64(e.won) / float64(e.samples), e.move
}

// expertChanceSeed seeds ExpertChance's draws, so that its answers repeat.
const expertChanceSeed = 0xc0ac4

// wasteShuffles is what the expert remembers of its moves between waste
// piles (strategy): the layouts of the waste piles it has stood on since
// the position last progressed. Only such moves can be undone, so only
// they can make a game loop; never going back to a layout it has left
// keeps the expert from looping, whatever its draws say. Every other move
// progresses for good: it places a turned card, raises a card to a
// foundation, turns or redeals.
type wasteShuffles struct {
	since   progress // the position's progress when layouts began
	layouts []uint64
}

// progress is what no move between waste piles changes.
type progress struct {
	stock, score, redeals uint8
	hand                  [4]Card
}

func progressOf(g *Game) progress {
	return progress{stock: g.stockN - g.next, score: g.score, redeals: g.redeals, hand: g.hand}
}

// wasteLayout is a hash of the waste piles' cards, pile by pile.
func (g *Game) wasteLayout() uint64 {
	const prime = 1099511628211 // FNV-1a's 64-bit prime
	h := uint64(14695981039346656037)
	for p := range 4 {
		for _, c := range g.waste[p][:g.wasteN[p]] {
			h = (h ^ uint64(c)) * prime
		}
		h = (h ^ 0xff) * prime // the pile's end
	}
	return h
}

// betweenWastes reports whether m moves a waste pile's top card onto
// another waste pile.
func (g *Game) betweenWastes(m Move) bool {
	return m.Kind == Place && m.To.Kind == Waste && !g.inHand(m.Card)
}

// withoutReturns notes g's layout and leaves out of order the moves
// between waste piles that go back to a layout noted since the position
// last progressed. If that leaves nothing, it takes the first legal move
// that does not go back; if there is none, order as it was (the game can
// then only loop, and PlayBot's MaxBotMoves ends it).
func (w *wasteShuffles) withoutReturns(g *Game, order, legal []Move) []Move {
	if p := progressOf(g); p != w.since {
		w.since, w.layouts = p, w.layouts[:0]
	}
	if here := g.wasteLayout(); !slices.Contains(w.layouts, here) {
		w.layouts = append(w.layouts, here)
	}
	returns := func(m Move) bool {
		if !g.betweenWastes(m) {
			return false
		}
		t := *g
		return t.Apply(m) == nil && slices.Contains(w.layouts, t.wasteLayout())
	}
	kept := make([]Move, 0, len(order))
	for _, m := range order {
		if !returns(m) {
			kept = append(kept, m)
		}
	}
	if len(kept) > 0 {
		return kept
	}
	for _, m := range legal {
		if !returns(m) {
			return []Move{m}
		}
	}
	return order
}
