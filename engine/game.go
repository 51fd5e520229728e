package engine

import (
	"encoding/json"
	"fmt"
)

// Status is where a game stands.
type Status uint8

// The statuses of a game; every one but Playing is final.
const (
	Playing  Status = iota
	Won             // every card in play is on the foundations
	Stuck           // no move can ever put another card on a foundation
	Resigned        // the player gave up
)

var statusNames = [...]string{"playing", "won", "stuck", "resigned"}

// String is the lower-case name used in notation and the protocol.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// MarshalText writes the name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the name.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("engine: unknown status %q", b)
}

// Over reports whether the game is finished.
func (s Status) Over() bool { return s != Playing }

// Game is one player's game on one deal. It is a plain value of fixed size:
// copying it copies the game, and Apply on a copy leaves the original alone
// (the solver and the bots rely on this). Its zero value is not usable; make
// one with New.
type Game struct {
	rules *Rules
	deal  uint64
	rng   splitMix64 // the deal's generator, for shuffled redeals

	stock  [52]Card // this pass's stock: stock[next:stockN] are still face down
	stockN uint8
	next   uint8

	hand  [4]Card // turned cards still to place; NoCard marks a placed slot
	handN uint8

	found  [4]Card // top card of each foundation, NoCard while empty
	foundN [4]uint8

	waste  [4][52]Card
	wasteN [4]uint8

	redeals uint8 // redeals used
	score   uint8 // cards on the foundations
	status  Status
	plies   uint32 // moves applied (strategy games can shuttle cards for ever: 16 bits wrapped)
}

// New starts a game of the given variant on deal number deal. The first
// card (or, in four-at-a-time, the first four) is turned at once: the waste
// piles are empty, so there is nothing to do before it.
func New(rules *Rules, deal uint64) Game {
	order, rng := dealWithGenerator(deal)
	g := Game{rules: rules, deal: deal, rng: rng}
	stock, starters := layout(rules, order)
	for f, c := range starters {
		if c != NoCard {
			g.found[f], g.foundN[f] = c, 1
			g.score++
		}
	}
	g.stockN = uint8(copy(g.stock[:], stock))
	g.turn()
	return g
}

// Layout is how deal n starts under rules: the stock, top card first, and
// the card each foundation starts with (NoCard where none is preset). It is
// a pure function of the deal number, for the CLI and tests; the server
// never sends it to a player.
func Layout(rules *Rules, n uint64) (stock []Card, starters [4]Card) {
	return layout(rules, Deal(n))
}

func layout(rules *Rules, order [52]Card) (stock []Card, starters [4]Card) {
	var taken [52]bool
	if rules.Preset {
		for f := range 4 {
			for i, c := range order {
				if !taken[i] && c.Rank() == rules.Start[f] {
					taken[i] = true
					starters[f] = c
					break
				}
			}
		}
	}
	stock = make([]Card, 0, 52)
	for i, c := range order {
		if !taken[i] && !rules.removed(c.Rank()) {
			stock = append(stock, c)
		}
	}
	return stock, starters
}

// Rules are the game's rules.
func (g *Game) Rules() *Rules { return g.rules }

// DealNumber is the deal the game was started on.
func (g *Game) DealNumber() uint64 { return g.deal }

// Status is where the game stands.
func (g *Game) Status() Status { return g.status }

// Score is the number of cards on the foundations.
func (g *Game) Score() int { return int(g.score) }

// Plies is the number of moves applied.
func (g *Game) Plies() int { return int(g.plies) }

// StockLeft is the number of face-down cards in the stock.
func (g *Game) StockLeft() int { return int(g.stockN - g.next) }

// Resign ends the game as resigned; it does nothing to a finished game.
func (g *Game) Resign() {
	if g.status == Playing {
		g.status = Resigned
	}
}

// turn turns the next cards of the stock once every turned card is placed:
// the Rules' Turn of them, or fewer at the end. One card at a time, it is
// done as the last card is placed; several at a time, the player does it
// with the move T (see canTurn), and at the start of each pass.
func (g *Game) turn() {
	if g.handN > 0 || g.next == g.stockN {
		return
	}
	k := min(uint8(g.rules.Turn), g.stockN-g.next)
	g.hand = [4]Card{}
	copy(g.hand[:k], g.stock[g.next:g.next+k])
	g.handN = k
	g.next += k
}

// canTurn reports whether the move T may turn the next cards now: with
// several cards turned at once (four-at-a-time), once every turned card is
// placed and while the stock holds cards. Until then the next cards stay
// face down, and waste cards may go to the foundations.
func (g *Game) canTurn() bool {
	return g.rules.Turn > 1 && g.handN == 0 && g.next < g.stockN && g.status == Playing
}

// fits reports whether foundation f takes card c now.
func (g *Game) fits(f int, c Card) bool {
	n := g.foundN[f]
	if n == 0 {
		if c.Rank() != g.rules.Start[f] {
			return false
		}
		if g.rules.LeftToRight {
			for i := range f {
				if g.foundN[i] == 0 {
					return false
				}
			}
		}
		return true
	}
	if int(n) >= g.rules.Length {
		return false
	}
	top := g.found[f]
	if g.rules.InSuit && c.Suit() != top.Suit() {
		return false
	}
	return c.Rank() == rankAfter(top.Rank(), g.rules.Step[f])
}

// takes is fits for many cards at once: foundation f takes card c now just
// when c&mask[f] == want[f]. A foundation that takes nothing wants 0xff,
// which no card matches.
func (g *Game) takes() (want, mask [4]Card) {
	r := g.rules
	for f := range 4 {
		want[f], mask[f] = 0xff, 0xff
		n := g.foundN[f]
		switch {
		case n == 0:
			if r.LeftToRight {
				open := true
				for i := range f {
					open = open && g.foundN[i] != 0
				}
				if !open {
					continue
				}
			}
			want[f], mask[f] = Card(r.Start[f]), 0x0f
		case int(n) < r.Length:
			top := g.found[f]
			next := rankAfter(top.Rank(), r.Step[f])
			if r.InSuit {
				want[f], mask[f] = NewCard(next, top.Suit()), 0x3f
			} else {
				want[f], mask[f] = Card(next), 0x0f
			}
		}
	}
	return want, mask
}

// wasteLocked reports whether waste cards may not move now: with several
// cards turned at once, all of them are placed before any waste card moves
// (the rule text: "place all four before you move anything from the waste
// piles"). Between two turns, with the next cards still face down, they may.
func (g *Game) wasteLocked() bool {
	return g.rules.Turn > 1 && g.handN > 0
}

func (g *Game) canRedeal() bool {
	if int(g.redeals) >= g.rules.Redeals || g.next < g.stockN || g.handN > 0 {
		return false
	}
	return g.wasteN != [4]uint8{}
}

func illegal(m Move, r Reason, format string, args ...any) error {
	return &IllegalMoveError{Move: m, Reason: r, Detail: fmt.Sprintf(format, args...)}
}

// Apply plays move m. An illegal move returns an *IllegalMoveError saying
// why, and changes nothing.
func (g *Game) Apply(m Move) error {
	if g.status != Playing {
		return illegal(m, ReasonGameOver, "the game is over (%s)", g.status)
	}
	if m.Kind != Place {
		return g.applyStockMove(m)
	}
	c, to := m.Card, m.To
	if !c.Valid() || to.Index > 3 || (to.Kind != Foundation && to.Kind != Waste) {
		return illegal(m, ReasonBadMove, "no such card or pile")
	}
	slot, from := -1, -1
	for i := range 4 {
		if g.hand[i] == c {
			slot = i
			break
		}
	}
	if slot < 0 {
		for p := range 4 {
			if n := g.wasteN[p]; n > 0 && g.waste[p][n-1] == c {
				from = p
				break
			}
		}
		if from < 0 {
			return illegal(m, ReasonNotAvailable, "%s is neither a turned card nor on top of a waste pile", c)
		}
		if g.wasteLocked() {
			return illegal(m, ReasonPlaceTurned, "place all turned cards before moving waste cards")
		}
	}
	switch to.Kind {
	case Foundation:
		if !g.fits(int(to.Index), c) {
			return illegal(m, ReasonNoFit, "%s does not fit on %s", c, g.describeFoundation(int(to.Index)))
		}
	case Waste:
		if from >= 0 {
			switch {
			case !g.rules.WasteToWaste:
				return illegal(m, ReasonWasteToWaste, "cards never move from one waste pile to another in %s", g.rules.Name)
			case int(to.Index) == from:
				return illegal(m, ReasonSamePile, "%s is already on %s", c, to)
			case g.wasteN[to.Index] == 0:
				return illegal(m, ReasonEmptyWaste, "an empty waste pile is filled only from the stock")
			}
		}
	}
	// The move is legal: take the card from its place and put it down.
	if slot >= 0 {
		g.hand[slot] = NoCard
		g.handN--
	} else {
		g.wasteN[from]--
	}
	i := to.Index
	if to.Kind == Foundation {
		g.found[i] = c
		g.foundN[i]++
		g.score++
	} else {
		g.waste[i][g.wasteN[i]] = c
		g.wasteN[i]++
	}
	g.plies++
	if g.handN == 0 && g.rules.Turn == 1 {
		g.turn()
	}
	g.settle()
	return nil
}

// applyStockMove is Apply for the moves that are not a card's: the turn of
// the next cards and the redeal.
func (g *Game) applyStockMove(m Move) error {
	switch m.Kind {
	case Turn:
		switch {
		case g.rules.Turn == 1:
			return illegal(m, ReasonNoTurn, "in %s each card is turned as the one before is placed", g.rules.Name)
		case g.handN > 0:
			return illegal(m, ReasonPlaceTurned, "place all turned cards before turning the next")
		case g.next == g.stockN:
			return illegal(m, ReasonNoTurn, "the stock is empty")
		}
		g.turn()
	case Redeal:
		if !g.canRedeal() {
			return illegal(m, ReasonNoRedeal, "a redeal needs an empty stock, every turned card placed, cards on the waste piles and a redeal left (%d of %d used)", g.redeals, g.rules.Redeals)
		}
		g.redeal()
	default:
		return illegal(m, ReasonBadMove, "no such move")
	}
	g.plies++
	g.settle()
	return nil
}

// available reports whether card c may be moved now as far as its place
// goes: it is a turned card or the top of a waste pile.
func (g *Game) available(c Card) bool {
	if c == NoCard {
		return false
	}
	for i := range 4 {
		if g.hand[i] == c {
			return true
		}
		if n := g.wasteN[i]; n > 0 && g.waste[i][n-1] == c {
			return true
		}
	}
	return false
}

func (g *Game) describeFoundation(f int) string {
	if g.foundN[f] == 0 {
		return fmt.Sprintf("empty foundation F%d", f+1)
	}
	if int(g.foundN[f]) >= g.rules.Length {
		return fmt.Sprintf("F%d, which is complete", f+1)
	}
	return fmt.Sprintf("F%d (top %s)", f+1, g.found[f])
}

// redeal gathers the waste piles into a new stock: W1 bottom to top, then W2,
// W3 and W4, the bottom card of W1 becoming the top of the stock; shuffled
// by the deal's generator where the rules say so.
func (g *Game) redeal() {
	g.stockN, g.next = 0, 0
	for p := range 4 {
		copy(g.stock[g.stockN:], g.waste[p][:g.wasteN[p]])
		g.stockN += g.wasteN[p]
		g.wasteN[p] = 0
	}
	if g.rules.ShuffleRedeal {
		g.rng.shuffle(g.stock[:g.stockN])
	}
	g.redeals++
	g.turn()
}

// settle updates the status after a move.
func (g *Game) settle() {
	if int(g.score) == g.rules.Deck() {
		g.status = Won
		return
	}
	if g.handN > 0 || g.next < g.stockN || g.canRedeal() {
		return // a turned card can always go to a waste pile; a redeal is a move
	}
	if !g.progressPossible() {
		g.status = Stuck
	}
}

// progressPossible reports, once the stock is used up, whether any waste
// card can still reach a foundation. Without waste-to-waste moves only the
// tops can; with them, any card can be dug out onto another non-empty pile
// as long as two piles hold cards.
func (g *Game) progressPossible() bool {
	nonEmpty := 0
	for p := range 4 {
		if g.wasteN[p] > 0 {
			nonEmpty++
		}
	}
	for p := range 4 {
		n := int(g.wasteN[p])
		lo := n - 1
		if g.rules.WasteToWaste && nonEmpty >= 2 {
			lo = 0
		}
		for i := max(lo, 0); i < n; i++ {
			for f := range 4 {
				if g.fits(f, g.waste[p][i]) {
					return true
				}
			}
		}
	}
	return false
}

// AppendMoves appends every legal move to dst and returns it; with a
// pre-sized dst it does not allocate.
func (g *Game) AppendMoves(dst []Move) []Move {
	if g.status != Playing {
		return dst
	}
	want, mask := g.takes()
	for _, c := range g.hand {
		if c == NoCard {
			continue
		}
		for f := range 4 {
			if c&mask[f] == want[f] {
				dst = append(dst, PlaceMove(c, F(f)))
			}
		}
		for w := range 4 {
			dst = append(dst, PlaceMove(c, W(w)))
		}
	}
	if !g.wasteLocked() {
		for p := range 4 {
			n := g.wasteN[p]
			if n == 0 {
				continue
			}
			c := g.waste[p][n-1]
			for f := range 4 {
				if c&mask[f] == want[f] {
					dst = append(dst, PlaceMove(c, F(f)))
				}
			}
			if g.rules.WasteToWaste {
				for w := range 4 {
					if w != p && g.wasteN[w] > 0 {
						dst = append(dst, PlaceMove(c, W(w)))
					}
				}
			}
		}
	}
	if g.canTurn() {
		dst = append(dst, TurnMove)
	}
	if g.canRedeal() {
		dst = append(dst, RedealMove)
	}
	return dst
}

// Moves returns every legal move.
func (g *Game) Moves() []Move { return g.AppendMoves(make([]Move, 0, 32)) }

// FoundationView is one foundation as a player sees it.
type FoundationView struct {
	Top   Card `json:"top,omitempty"` // absent while empty
	Count int  `json:"count"`
	// Wants is the rank it takes next, absent when complete.
	Wants Rank `json:"wants,omitempty"`
	Step  int  `json:"step"`
}

// WasteView is one waste pile as a player sees it: Cards bottom to top, or
// only the top card where the rules hide the rest.
type WasteView struct {
	Cards []Card `json:"cards"`
	Count int    `json:"count"`
}

// View is exactly what the player may see of their game: never the order of
// the face-down stock (in four-at-a-time, between two turns, not even the
// next four: Turned is empty while Stock is not, and the move T turns
// them), and under the strict rule never a buried waste card.
type View struct {
	Variant     string            `json:"variant"`
	Stock       int               `json:"stock"`  // face-down cards left
	Turned      []Card            `json:"turned"` // cards turned and still to place
	Foundations [4]FoundationView `json:"foundations"`
	Waste       [4]WasteView      `json:"waste"`
	RedealsLeft int               `json:"redealsLeft"`
	// WasteLocked: several cards are turned at once and not all placed,
	// so no waste card may move until the rest are.
	WasteLocked bool   `json:"wasteLocked,omitempty"`
	Status      Status `json:"status"`
	Score       int    `json:"score"`  // cards on the foundations
	Target      int    `json:"target"` // cards on the foundations to win
	Moves       int    `json:"moves"`  // moves made
}

// View is what the player may see now.
func (g *Game) View() View { return g.view(g.rules.HiddenWaste) }

// Memory is what a player who remembers every card they placed knows: the
// View with the waste piles in full even under the strict rule. Bots play
// from it; it never holds the stock order.
func (g *Game) Memory() View { return g.view(false) }

func (g *Game) view(hideBuried bool) View {
	// One array holds every card shown, the turned ones first, then each
	// waste pile's: a view is made on every move, and one allocation
	// rather than five is a tenth less of what a move allocates. Each
	// slice's capacity ends where it does, so that appending to one never
	// writes into the next.
	shown := int(g.handN)
	for p := range 4 {
		if n := int(g.wasteN[p]); hideBuried && n > 1 {
			shown++
		} else {
			shown += n
		}
	}
	all := make([]Card, 0, shown)
	v := View{
		Variant:     g.rules.Name,
		Stock:       g.StockLeft(),
		RedealsLeft: g.rules.Redeals - int(g.redeals),
		WasteLocked: g.wasteLocked(),
		Status:      g.status,
		Score:       int(g.score),
		Target:      g.rules.Deck(),
		Moves:       int(g.plies),
	}
	for _, c := range g.hand {
		if c != NoCard {
			all = append(all, c)
		}
	}
	v.Turned = all[:len(all):len(all)]
	for f := range 4 {
		fv := FoundationView{Top: g.found[f], Count: int(g.foundN[f]), Step: g.rules.Step[f]}
		switch {
		case fv.Count == 0:
			fv.Wants = g.rules.Start[f]
		case fv.Count < g.rules.Length:
			fv.Wants = rankAfter(fv.Top.Rank(), fv.Step)
		}
		v.Foundations[f] = fv
	}
	for p := range 4 {
		n := int(g.wasteN[p])
		cards := g.waste[p][:n]
		if hideBuried && n > 1 {
			cards = cards[n-1:]
		}
		from := len(all)
		all = append(all, cards...)
		v.Waste[p] = WasteView{Cards: all[from:len(all):len(all)], Count: n}
	}
	return v
}

// String is a short picture of the game for logs and the CLI.
func (g *Game) String() string {
	b, _ := json.Marshal(g.View())
	return string(b)
}
