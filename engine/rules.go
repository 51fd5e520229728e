package engine

import (
	"fmt"
	"sort"
	"strings"
)

// Rules describes one variant of Sir Tommy. The engine has a single code path
// driven by these fields; a variant is nothing but a Rules value.
type Rules struct {
	// Name is the variant's identifier in notation, the CLI and the protocol.
	Name string
	// Summary is one sentence for players: what differs from the classic game.
	Summary string

	// Turn is how many stock cards are turned at once (1, or 4 in
	// four-at-a-time). One at a time, the next card is turned as the last
	// is placed. Several at a time, the first are turned at the start, and
	// the next only by the move T once all turned cards are placed; no
	// waste card may move from the turn until the last turned card is
	// placed, and between that and the next T they may.
	Turn int
	// WasteToWaste allows moving a waste pile's top card onto another
	// non-empty waste pile (Strategy). An empty waste pile is refilled only
	// from the stock, as 001's edge cases say.
	WasteToWaste bool
	// HiddenWaste shows the player only the top card of each waste pile
	// (the old strict rule: the cards below must be remembered).
	HiddenWaste bool
	// Redeals is how many times the waste piles may be gathered into a new
	// stock once the stock is used up.
	Redeals int
	// ShuffleRedeal shuffles the gathered cards (from the deal's generator)
	// instead of keeping the order in which they were gathered.
	ShuffleRedeal bool

	// Start is the rank each foundation starts with, left to right.
	Start [4]Rank
	// Step is how many ranks each foundation climbs per card, wrapping past
	// the King (1 everywhere but Calculation).
	Step [4]int
	// Length is the number of cards a complete foundation holds.
	Length int
	// InSuit builds each foundation in the suit of its first card.
	InSuit bool
	// Preset takes the foundations' first cards out of the deck before play:
	// foundation i gets the first card, in deal order, of rank Start[i] that
	// no foundation to its left took.
	Preset bool
	// LeftToRight makes a new foundation start only in the leftmost empty one.
	LeftToRight bool
	// Removed ranks are taken out of the deck before play (Puss in the Corner
	// removes the Kings).
	Removed []Rank
}

// Deck is the number of cards in play: 52 less the removed ranks.
func (r *Rules) Deck() int { return 52 - 4*len(r.Removed) }

// removed reports whether rank k is out of play in this variant.
func (r *Rules) removed(k Rank) bool {
	for _, x := range r.Removed {
		if x == k {
			return true
		}
	}
	return false
}

// rankAfter is the rank a foundation of the given step wants on top of rank k.
func rankAfter(k Rank, step int) Rank { return Rank((int(k)-1+step)%13 + 1) }

var allAces = [4]Rank{Ace, Ace, Ace, Ace}
var stepOne = [4]int{1, 1, 1, 1}

// variants lists every named variant; the first is the default.
var variants = []Rules{
	{Name: "classic", Summary: "One card at a time onto four waste piles; foundations A to K in any suit; one pass, no redeal.",
		Turn: 1, Start: allAces, Step: stepOne, Length: 13},
	{Name: "aces-out", Summary: "The four Aces start as foundations before play.",
		Turn: 1, Start: allAces, Step: stepOne, Length: 13, Preset: true},
	{Name: "four-at-a-time", Summary: "Four cards are turned at once and all four placed before any waste card goes to a foundation.",
		Turn: 4, Start: allAces, Step: stepOne, Length: 13},
	{Name: "strict", Summary: "Only the top card of each waste pile can be seen: remember what lies below.",
		Turn: 1, Start: allAces, Step: stepOne, Length: 13, HiddenWaste: true},
	{Name: "in-suit", Summary: "Foundations are built in suit; the waste piles may be gathered, shuffled and played through twice more.",
		Turn: 1, Start: allAces, Step: stepOne, Length: 13, InSuit: true, Redeals: 2, ShuffleRedeal: true},
	{Name: "redeal", Summary: "The classic game with one redeal: the waste piles gathered, in order, into a new stock.",
		Turn: 1, Start: allAces, Step: stepOne, Length: 13, Redeals: 1},
	{Name: "strategy", Summary: "The top card of a waste pile may move onto another waste pile.",
		Turn: 1, Start: allAces, Step: stepOne, Length: 13, WasteToWaste: true},
	{Name: "numerica", Summary: "Foundations are started strictly left to right.",
		Turn: 1, Start: allAces, Step: stepOne, Length: 13, LeftToRight: true},
	{Name: "calculation", Summary: "An A, 2, 3 and 4 start the foundations, which build by 1, 2, 3 and 4, wrapping past the King, each ending on a King.",
		Turn: 1, Start: [4]Rank{1, 2, 3, 4}, Step: [4]int{1, 2, 3, 4}, Length: 13, Preset: true},
	{Name: "puss-in-the-corner", Summary: "The Aces start as foundations and the Kings are removed: foundations A to Q.",
		Turn: 1, Start: allAces, Step: stepOne, Length: 12, Preset: true, Removed: []Rank{King}},
}

// DefaultVariant is the name of the game played when none is named.
const DefaultVariant = "classic"

// Variant returns the rules of the named variant (case-insensitive). The
// returned pointer is shared: treat it as read-only.
func Variant(name string) (*Rules, error) {
	if name == "" {
		name = DefaultVariant
	}
	for i := range variants {
		if strings.EqualFold(variants[i].Name, name) {
			return &variants[i], nil
		}
	}
	return nil, fmt.Errorf("engine: unknown variant %q (known: %s)", name, strings.Join(VariantNames(), ", "))
}

// VariantNames lists the variants' names, the default first and the rest sorted.
func VariantNames() []string {
	names := make([]string, 0, len(variants))
	for _, v := range variants[1:] {
		names = append(names, v.Name)
	}
	sort.Strings(names)
	return append([]string{variants[0].Name}, names...)
}

// Variants returns every named variant's rules, in VariantNames order.
func Variants() []*Rules {
	out := make([]*Rules, 0, len(variants))
	for _, n := range VariantNames() {
		r, _ := Variant(n)
		out = append(out, r)
	}
	return out
}
