package engine

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
			if t.status == Won || (t.status == Playing && s.quickWin(&t, cfg.nodes)) {
				w++
			}
		}
		return w
	}
	best := expertChoice{move: hard, won: wins(hard, 0), samples: k}
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
