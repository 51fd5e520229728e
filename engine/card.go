// Package engine holds the rules of Sir Tommy and its variants: cards,
// numbered deals, rules as data, game state and moves, the views a player may
// see, the move notation, a perfect-information solver and a computer player.
//
// It does no I/O and starts no goroutines: every race on the server runs two
// independent Game values on the same deal, and nothing else is trusted.
package engine

import (
	"fmt"
	"strings"
)

// Rank is a card's rank, 1 (Ace) to 13 (King). The zero Rank is no rank.
type Rank uint8

// The ranks with names; the others are their numbers.
const (
	Ace   Rank = 1
	Jack  Rank = 11
	Queen Rank = 12
	King  Rank = 13
)

// Suit is a card's suit, in the order Spades, Hearts, Diamonds, Clubs.
type Suit uint8

// The four suits, in the order of a new deck.
const (
	Spades Suit = iota
	Hearts
	Diamonds
	Clubs
)

const rankLetters = "A23456789TJQK"
const suitLetters = "SHDC"

// Card is one playing card: the rank in the low four bits and the suit in the
// two above. The zero Card is "no card", so that fixed-size arrays of cards
// need no separate length where a hole is meaningful.
type Card uint8

// NoCard is the zero Card: an empty slot.
const NoCard Card = 0

// Hidden is a card shown face down: its place may be seen but not its
// face (a spectator's view of a card a racer still playing has not turned
// yet). It is written "??" and is never in a Game.
const Hidden Card = 0x80

// NewCard makes the card of rank r and suit s.
func NewCard(r Rank, s Suit) Card { return Card(r) | Card(s)<<4 }

// Rank is the card's rank.
func (c Card) Rank() Rank { return Rank(c & 0x0f) }

// Suit is the card's suit.
func (c Card) Suit() Suit { return Suit(c >> 4) }

// Valid reports whether c is one of the 52 real cards.
func (c Card) Valid() bool { return c.Rank() >= Ace && c.Rank() <= King && c>>6 == 0 }

// Index is the card's place in a new deck, 0 (AS) to 51 (KC): suit-major,
// Spades, Hearts, Diamonds, Clubs, each Ace to King.
func (c Card) Index() int { return int(c.Suit())*13 + int(c.Rank()) - 1 }

// CardAt is the card at index i (0 to 51) of a new deck; the inverse of Index.
func CardAt(i int) Card { return NewCard(Rank(i%13+1), Suit(i/13)) }

// String is the two-letter form: rank A 2-9 T J Q K, then suit S H D C
// ("AS", "TD", "KH"). NoCard prints as "--", Hidden as "??".
func (c Card) String() string {
	if c == Hidden {
		return "??"
	}
	if !c.Valid() {
		return "--"
	}
	return string([]byte{rankLetters[c.Rank()-1], suitLetters[c.Suit()]})
}

// AppendText appends the two-letter form (as String) to b.
func (c Card) AppendText(b []byte) []byte {
	if c == Hidden || !c.Valid() {
		return append(b, c.String()...)
	}
	return append(b, rankLetters[c.Rank()-1], suitLetters[c.Suit()])
}

// MarshalText writes the two-letter form, so that JSON carries "AS", not 1.
func (c Card) MarshalText() ([]byte, error) {
	if !c.Valid() && c != Hidden {
		return nil, fmt.Errorf("engine: cannot write invalid card %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads the two-letter form, or "??" (Hidden).
func (c *Card) UnmarshalText(b []byte) error {
	if string(b) == "??" {
		*c = Hidden
		return nil
	}
	p, err := ParseCard(string(b))
	if err != nil {
		return err
	}
	*c = p
	return nil
}

// String is the rank's letter: A 2-9 T J Q K.
func (r Rank) String() string {
	if r < Ace || r > King {
		return "?"
	}
	return rankLetters[r-1 : r]
}

// String is the suit's letter: S H D C.
func (s Suit) String() string {
	if s > Clubs {
		return "?"
	}
	return suitLetters[s : s+1]
}

// MarshalText writes the rank's letter, so that JSON carries "A", not 1.
func (r Rank) MarshalText() ([]byte, error) {
	if r < Ace || r > King {
		return nil, fmt.Errorf("engine: cannot write invalid rank %d", uint8(r))
	}
	return []byte(r.String()), nil
}

// UnmarshalText reads a rank letter.
func (r *Rank) UnmarshalText(b []byte) error {
	p, err := ParseRank(string(b))
	if err != nil {
		return err
	}
	*r = p
	return nil
}

// ParseRank reads one rank letter (case-insensitive; "10" is also taken for T).
func ParseRank(s string) (Rank, error) {
	u := strings.ToUpper(s)
	if u == "10" {
		return 10, nil
	}
	if len(u) == 1 {
		if i := strings.IndexByte(rankLetters, u[0]); i >= 0 {
			return Rank(i + 1), nil
		}
	}
	return 0, fmt.Errorf("engine: %q is not a rank (A 2-9 T J Q K)", s)
}

// ParseCard reads the two-letter form, case-insensitively ("as", "TD", "10h").
func ParseCard(s string) (Card, error) {
	if len(s) < 2 || len(s) > 3 {
		return NoCard, fmt.Errorf("engine: %q is not a card (rank A 2-9 T J Q K, then suit S H D C, as in AS or TD)", s)
	}
	r, err := ParseRank(s[:len(s)-1])
	if err != nil {
		return NoCard, fmt.Errorf("engine: %q is not a card: %w", s, err)
	}
	i := strings.IndexByte(suitLetters, upper(s[len(s)-1]))
	if i < 0 {
		return NoCard, fmt.Errorf("engine: %q is not a card: suit must be S, H, D or C", s)
	}
	return NewCard(r, Suit(i)), nil
}

func upper(b byte) byte {
	if b >= 'a' && b <= 'z' {
		return b - 'a' + 'A'
	}
	return b
}

// FormatCards writes cards in the two-letter form separated by spaces.
func FormatCards(cs []Card) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.String())
	}
	return b.String()
}
