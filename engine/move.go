package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// PileKind says which row of the layout a pile is in.
type PileKind uint8

// The two rows a card can be moved to.
const (
	Foundation PileKind = iota + 1
	Waste
)

// Pile names one foundation or waste pile: F1-F4 or W1-W4 in notation, left
// to right. Index is 0-based.
type Pile struct {
	Kind  PileKind
	Index uint8
}

// F is foundation i (0 to 3); W is waste pile i.
func F(i int) Pile { return Pile{Foundation, uint8(i)} }

// W is waste pile i (0 to 3).
func W(i int) Pile { return Pile{Waste, uint8(i)} }

// String is the notation form, "F1" to "F4" or "W1" to "W4".
func (p Pile) String() string { return string(p.AppendText(nil)) }

// AppendText appends the notation form to b.
func (p Pile) AppendText(b []byte) []byte {
	switch p.Kind {
	case Foundation:
		return strconv.AppendUint(append(b, 'F'), uint64(p.Index)+1, 10)
	case Waste:
		return strconv.AppendUint(append(b, 'W'), uint64(p.Index)+1, 10)
	}
	return append(b, '?')
}

// ParsePile reads "F1".."F4" or "W1".."W4", case-insensitively.
func ParsePile(s string) (Pile, error) {
	if len(s) == 2 && s[1] >= '1' && s[1] <= '4' {
		switch upper(s[0]) {
		case 'F':
			return F(int(s[1] - '1')), nil
		case 'W':
			return W(int(s[1] - '1')), nil
		}
	}
	return Pile{}, fmt.Errorf("engine: %q is not a pile (F1-F4 or W1-W4)", s)
}

// MoveKind tells a card move from a redeal or a turn.
type MoveKind uint8

// The kinds of move.
const (
	// Place moves a card (a turned card, or the top of a waste pile) to a pile.
	Place MoveKind = iota
	// Redeal gathers the waste piles into a new stock, where the rules allow.
	Redeal
	// Turn turns the next cards of the stock where several are turned at
	// once (four-at-a-time), once every turned card is placed. With one
	// card at a time the next is turned by itself.
	Turn
)

// Move is one move of one player. A card's place decides where it comes from:
// it must be a turned card or the top card of a waste pile, so the card alone
// names the source without ambiguity.
type Move struct {
	Kind MoveKind
	Card Card
	To   Pile
}

// PlaceMove moves card c to pile to.
func PlaceMove(c Card, to Pile) Move { return Move{Kind: Place, Card: c, To: to} }

// RedealMove is the redeal.
var RedealMove = Move{Kind: Redeal}

// TurnMove turns the next four (four-at-a-time).
var TurnMove = Move{Kind: Turn}

// String is the move's notation: "3H>F2" (the 3 of Hearts to foundation 2),
// "JD>W1" (the Jack of Diamonds to waste pile 1), "R" (redeal) or "T"
// (turn the next four).
func (m Move) String() string {
	var buf [8]byte
	return string(m.AppendText(buf[:0]))
}

// AppendText appends the notation form to b: "3H>F2", "R" or "T".
func (m Move) AppendText(b []byte) []byte {
	switch m.Kind {
	case Redeal:
		return append(b, 'R')
	case Turn:
		return append(b, 'T')
	}
	return m.To.AppendText(append(m.Card.AppendText(b), '>'))
}

// MarshalText writes the notation form.
func (m Move) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads the notation form.
func (m *Move) UnmarshalText(b []byte) error {
	p, err := ParseMove(string(b))
	if err != nil {
		return err
	}
	*m = p
	return nil
}

// ParseMove reads one move in notation, case-insensitively: "CARD>PILE",
// "R" or "T". ("T" alone is no card: a card is two letters, as in "TD".)
func ParseMove(s string) (Move, error) {
	t := strings.TrimSpace(s)
	switch {
	case strings.EqualFold(t, "R"):
		return RedealMove, nil
	case strings.EqualFold(t, "T"):
		return TurnMove, nil
	}
	card, pile, ok := strings.Cut(t, ">")
	if !ok {
		return Move{}, fmt.Errorf("engine: %q is not a move (CARD>PILE as in 3H>F2 or JD>W1, R to redeal, or T to turn the next four)", s)
	}
	c, err := ParseCard(card)
	if err != nil {
		return Move{}, fmt.Errorf("engine: move %q: %w", s, err)
	}
	p, err := ParsePile(pile)
	if err != nil {
		return Move{}, fmt.Errorf("engine: move %q: %w", s, err)
	}
	return PlaceMove(c, p), nil
}

// Reason is a stable code for why a move was refused; the protocol and the
// CLI show it to players.
type Reason uint8

// Why a move can be illegal.
const (
	ReasonGameOver     Reason = iota + 1 // the game is won, stuck or resigned
	ReasonNotAvailable                   // the card is neither turned nor on top of a waste pile
	ReasonNoFit                          // the foundation does not take that card now
	ReasonPlaceTurned                    // four-at-a-time: turned cards must all be placed first (before a waste move or the next turn)
	ReasonWasteToWaste                   // waste to waste is not allowed in this variant
	ReasonSamePile                       // a card cannot move onto its own pile
	ReasonEmptyWaste                     // an empty waste pile is refilled only from the stock
	ReasonNoRedeal                       // no redeal allowed now
	ReasonBadMove                        // the move names no real card or pile
	ReasonNoTurn                         // nothing to turn: the stock is empty, or the variant turns one card by itself
)

var reasonCodes = map[Reason]string{
	ReasonGameOver:     "game-over",
	ReasonNotAvailable: "card-not-available",
	ReasonNoFit:        "does-not-fit",
	ReasonPlaceTurned:  "place-turned-first",
	ReasonWasteToWaste: "no-waste-to-waste",
	ReasonSamePile:     "same-pile",
	ReasonEmptyWaste:   "empty-waste",
	ReasonNoRedeal:     "no-redeal",
	ReasonBadMove:      "bad-move",
	ReasonNoTurn:       "no-turn",
}

// String is the stable code, such as "does-not-fit".
func (r Reason) String() string {
	if s, ok := reasonCodes[r]; ok {
		return s
	}
	return "unknown"
}

// IllegalMoveError says why a move was refused. The game is unchanged.
type IllegalMoveError struct {
	Move   Move
	Reason Reason
	Detail string // a sentence for the player
}

func (e *IllegalMoveError) Error() string {
	return fmt.Sprintf("illegal move %s: %s", e.Move, e.Detail)
}
