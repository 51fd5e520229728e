package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// allCards is the 52 cards in new-deck order.
func allCards() []Card {
	cs := make([]Card, 52)
	for i := range cs {
		cs[i] = CardAt(i)
	}
	return cs
}

// mustCard parses a card or fails the test.
func mustCard(t testing.TB, s string) Card {
	t.Helper()
	c, err := ParseCard(s)
	if err != nil {
		t.Fatalf("ParseCard(%q): %v", s, err)
	}
	return c
}

// mustCards parses space-separated cards or fails the test.
func mustCards(t testing.TB, s string) []Card {
	t.Helper()
	var cs []Card
	for _, w := range strings.Fields(s) {
		cs = append(cs, mustCard(t, w))
	}
	return cs
}

func TestCardNewDeckOrder(t *testing.T) {
	// Index and CardAt are inverse, and a new deck is AS..KS AH..KH AD..KD AC..KC.
	want := "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS " +
		"AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH " +
		"AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD " +
		"AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC"
	if got := FormatCards(allCards()); got != want {
		t.Fatalf("new deck:\n got %s\nwant %s", got, want)
	}
	for i, c := range allCards() {
		if !c.Valid() {
			t.Errorf("CardAt(%d) = %d is not valid", i, c)
		}
		if c.Index() != i {
			t.Errorf("CardAt(%d).Index() = %d", i, c.Index())
		}
		if c != NewCard(c.Rank(), c.Suit()) {
			t.Errorf("NewCard(%v, %v) != %v", c.Rank(), c.Suit(), c)
		}
	}
}

func TestCardRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range allCards() {
		t.Run(c.String(), func(t *testing.T) {
			s := c.String()
			if len(s) != 2 {
				t.Fatalf("String() = %q, want two letters", s)
			}
			if seen[s] {
				t.Fatalf("two cards print as %q", s)
			}
			seen[s] = true
			for _, form := range []string{s, strings.ToLower(s), s[:1] + strings.ToLower(s[1:]), strings.ToLower(s[:1]) + s[1:]} {
				got, err := ParseCard(form)
				if err != nil {
					t.Fatalf("ParseCard(%q): %v", form, err)
				}
				if got != c {
					t.Fatalf("ParseCard(%q) = %v, want %v", form, got, c)
				}
			}
			b, err := c.MarshalText()
			if err != nil || string(b) != s {
				t.Fatalf("MarshalText() = %q, %v; want %q", b, err, s)
			}
			var u Card
			if err := u.UnmarshalText(b); err != nil || u != c {
				t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", b, u, err, c)
			}
		})
	}
}

func TestParseCardForms(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"AS", "AS"},
		{"as", "AS"},
		{"aS", "AS"},
		{"td", "TD"},
		{"Td", "TD"},
		{"10H", "TH"},
		{"10h", "TH"},
		{"10c", "TC"},
		{"kh", "KH"},
		{"qC", "QC"},
		{"jd", "JD"},
		{"9s", "9S"},
		{"2c", "2C"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, err := ParseCard(tt.in)
			if err != nil {
				t.Fatalf("ParseCard(%q): %v", tt.in, err)
			}
			if c.String() != tt.want {
				t.Fatalf("ParseCard(%q) = %v, want %s", tt.in, c, tt.want)
			}
		})
	}
}

func TestParseCardRejects(t *testing.T) {
	bad := []string{
		"", "A", "S", "T", "10", "AX", "XS", "1S", "0S", "11S", "01S", "1OS",
		"ASS", "AAS", "10X", "100S", " AS", "AS ", "A S", "AS\n", "KSX",
		"ZZ", "--", "♠A", "A♠", "10♥", "ıS", "ſS", "\x00S", "A\x00",
	}
	for _, s := range bad {
		t.Run(s, func(t *testing.T) {
			c, err := ParseCard(s)
			if err == nil {
				t.Fatalf("ParseCard(%q) = %v, want an error", s, c)
			}
			if c != NoCard {
				t.Errorf("ParseCard(%q) returned %v with its error, want NoCard", s, c)
			}
			var u Card = NewCard(King, Clubs)
			if err := u.UnmarshalText([]byte(s)); err == nil {
				t.Errorf("UnmarshalText(%q) accepted it", s)
			}
			if u != NewCard(King, Clubs) {
				t.Errorf("UnmarshalText(%q) changed the card to %v on error", s, u)
			}
		})
	}
}

func TestCardInvalidValues(t *testing.T) {
	for _, c := range []Card{NoCard, NewCard(0, Spades), NewCard(14, Hearts), NewCard(15, Clubs), Card(0x41), Card(0xff)} {
		if c.Valid() {
			t.Errorf("Card(%#x).Valid() = true", uint8(c))
		}
		if c.String() != "--" {
			t.Errorf("Card(%#x).String() = %q, want --", uint8(c), c.String())
		}
		if _, err := c.MarshalText(); err == nil {
			t.Errorf("Card(%#x).MarshalText() gave no error", uint8(c))
		}
	}
	if got := Rank(0).String() + Rank(14).String() + Suit(4).String(); got != "???" {
		t.Errorf("invalid rank/suit strings = %q, want ???", got)
	}
}

func TestParseRank(t *testing.T) {
	for r := Ace; r <= King; r++ {
		for _, s := range []string{r.String(), strings.ToLower(r.String())} {
			got, err := ParseRank(s)
			if err != nil || got != r {
				t.Errorf("ParseRank(%q) = %v, %v; want %v", s, got, err, r)
			}
		}
	}
	if got, err := ParseRank("10"); err != nil || got != 10 {
		t.Errorf(`ParseRank("10") = %v, %v`, got, err)
	}
	for _, s := range []string{"", "1", "0", "11", "X", "AA", "t0"} {
		if _, err := ParseRank(s); err == nil {
			t.Errorf("ParseRank(%q) accepted it", s)
		}
	}
}

func TestCardJSON(t *testing.T) {
	for _, c := range allCards() {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("json.Marshal(%v): %v", c, err)
		}
		if want := `"` + c.String() + `"`; string(b) != want {
			t.Fatalf("json.Marshal(%v) = %s, want %s", c, b, want)
		}
		var u Card
		if err := json.Unmarshal(b, &u); err != nil || u != c {
			t.Fatalf("json.Unmarshal(%s) = %v, %v", b, u, err)
		}
	}
	// Slices and arrays of cards are arrays of text, not base64 bytes.
	cs := mustCards(t, "AS TD KH 2C")
	b, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["AS","TD","KH","2C"]`; string(b) != want {
		t.Fatalf("json.Marshal(%v) = %s, want %s", cs, b, want)
	}
	var back []Card
	if err := json.Unmarshal([]byte(`["as","10d","kH","2c"]`), &back); err != nil {
		t.Fatal(err)
	}
	if FormatCards(back) != "AS TD KH 2C" {
		t.Fatalf("json.Unmarshal = %v", back)
	}
	if err := json.Unmarshal([]byte(`"XS"`), new(Card)); err == nil {
		t.Error(`json.Unmarshal("XS") accepted it`)
	}
	if _, err := json.Marshal(NoCard); err == nil {
		t.Error("json.Marshal(NoCard) gave no error")
	}
}

func TestFormatCards(t *testing.T) {
	tests := []struct {
		in   []Card
		want string
	}{
		{nil, ""},
		{[]Card{NewCard(Ace, Spades)}, "AS"},
		{[]Card{NewCard(10, Diamonds), NewCard(King, Hearts), NoCard}, "TD KH --"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := FormatCards(tt.in); got != tt.want {
				t.Fatalf("FormatCards = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestHiddenCard: a face-down card writes and reads as "??", and is no
// card a move can name.
func TestHiddenCard(t *testing.T) {
	if Hidden.Valid() || Hidden.String() != "??" {
		t.Fatalf("Hidden: valid %v, %q", Hidden.Valid(), Hidden.String())
	}
	b, err := Hidden.MarshalText()
	if err != nil || string(b) != "??" {
		t.Fatalf("MarshalText: %q %v", b, err)
	}
	var c Card
	if err := c.UnmarshalText([]byte("??")); err != nil || c != Hidden {
		t.Fatalf("UnmarshalText(??) = %v, %v", c, err)
	}
	if _, err := ParseCard("??"); err == nil {
		t.Fatal("ParseCard(??) is a card")
	}
	if _, err := ParseMove("??>W1"); err == nil {
		t.Fatal("ParseMove(??>W1) is a move")
	}
}
