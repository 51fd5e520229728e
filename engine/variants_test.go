package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// wasteSourceMoves lists the legal moves that take a card from a waste pile.
func wasteSourceMoves(g *Game) []Move {
	var out []Move
	for _, m := range g.Moves() {
		if m.Kind == Place && !slices.Contains(turned(g), m.Card) {
			out = append(out, m)
		}
	}
	return out
}

func TestVariantFourAtATime(t *testing.T) {
	r := mustVariant(t, "four-at-a-time")
	// A deal whose first four cards hold an Ace and a Two.
	n := findDeal(t, 1000, func(n uint64) bool {
		d := Deal(n)
		return slices.ContainsFunc(d[:4], func(c Card) bool { return c.Rank() == Ace }) &&
			slices.ContainsFunc(d[:4], func(c Card) bool { return c.Rank() == 2 })
	})
	d := Deal(n)
	g := New(r, n)
	if got := turned(&g); !slices.Equal(got, d[:4]) || g.StockLeft() != 48 {
		t.Fatalf("deal %d starts with %v turned and %d in the stock; want %v and 48", n, got, g.StockLeft(), d[:4])
	}
	var ace, two Card
	var others []Card
	for _, c := range d[:4] {
		switch {
		case c.Rank() == Ace && ace == NoCard:
			ace = c
		case c.Rank() == 2 && two == NoCard:
			two = c
		default:
			others = append(others, c)
		}
	}
	// A turned card may go to a foundation at once; the Two waits on W1.
	play(t, &g, ace.String()+">F1", two.String()+">W1")
	twoUp := PlaceMove(two, F(0))
	refuse(t, &g, twoUp, ReasonPlaceTurned)
	if ws := wasteSourceMoves(&g); len(ws) != 0 {
		t.Fatalf("with turned cards to place, Moves offers waste moves %v", ws)
	}
	play(t, &g, others[0].String()+">W2")
	refuse(t, &g, twoUp, ReasonPlaceTurned)
	play(t, &g, others[1].String()+">W3")

	// All four are placed: the next four stay face down until T, and
	// until then a waste card may go to a foundation.
	if got := turned(&g); len(got) != 0 || g.StockLeft() != 48 {
		t.Fatalf("after the first four: %v turned, %d in the stock; want none and 48", got, g.StockLeft())
	}
	if !slices.Contains(g.Moves(), twoUp) || !slices.Contains(g.Moves(), TurnMove) {
		t.Fatalf("once all four are placed, %v or T is not offered (moves %v)", twoUp, g.Moves())
	}
	// T turns the next four and locks the waste piles again until they
	// are placed.
	play(t, &g, "T")
	if got := turned(&g); !slices.Equal(got, d[4:8]) || g.StockLeft() != 44 {
		t.Fatalf("after T: %v turned, %d in the stock; want %v and 44", got, g.StockLeft(), d[4:8])
	}
	refuse(t, &g, twoUp, ReasonPlaceTurned)
	next := turned(&g)
	play(t, &g, next[0].String()+">W4")
	refuse(t, &g, twoUp, ReasonPlaceTurned)
	play(t, &g, next[1].String()+">W2", next[2].String()+">W3", next[3].String()+">W4")
	if err := g.Apply(twoUp); err != nil {
		t.Fatalf("after the second four are placed, %v: %v", twoUp, err)
	}
	if g.foundN[0] != 2 || g.found[0] != two {
		t.Fatalf("F1 holds %d cards, top %v; want 2, top %v", g.foundN[0], g.found[0], two)
	}
}

// deckWithout is the deal's order less the given cards and ranks.
func deckWithout(n uint64, cards []Card, ranks ...Rank) []Card {
	var out []Card
	for _, c := range Deal(n) {
		if !slices.Contains(cards, c) && !slices.Contains(ranks, c.Rank()) {
			out = append(out, c)
		}
	}
	return out
}

// firstOfRanks is the first card of each rank, in deal order.
func firstOfRanks(n uint64, ranks ...Rank) []Card {
	var out []Card
	d := Deal(n)
	for _, k := range ranks {
		for _, c := range d {
			if c.Rank() == k {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

func TestVariantNames(t *testing.T) {
	want := []string{"classic", "aces-out", "calculation", "four-at-a-time", "in-suit", "numerica", "puss-in-the-corner", "redeal", "strategy", "strict"}
	if got := VariantNames(); !slices.Equal(got, want) {
		t.Fatalf("VariantNames() = %v, want %v", got, want)
	}
	for i, r := range Variants() {
		if r.Name != want[i] || r.Summary == "" {
			t.Errorf("Variants()[%d] = %q (summary %q)", i, r.Name, r.Summary)
		}
	}
	tests := []struct {
		in, want string
	}{
		{"classic", "classic"},
		{"", "classic"},
		{"CLASSIC", "classic"},
		{"Puss-In-The-Corner", "puss-in-the-corner"},
		{"in-suit", "in-suit"},
	}
	for _, tt := range tests {
		t.Run("ok "+tt.in, func(t *testing.T) {
			r, err := Variant(tt.in)
			if err != nil || r.Name != tt.want {
				t.Fatalf("Variant(%q) = %v, %v; want %s", tt.in, r, err, tt.want)
			}
		})
	}
	for _, name := range []string{"nope", "classic ", " classic", "aces out", "four", "strategy2", "calculations", "puss"} {
		t.Run("unknown "+name, func(t *testing.T) {
			if r, err := Variant(name); err == nil {
				t.Fatalf("Variant(%q) = %s, want an error", name, r.Name)
			}
		})
	}
}

func TestVariantClassic(t *testing.T) {
	r := mustVariant(t, "classic")
	if r.Deck() != 52 {
		t.Fatalf("classic deck = %d", r.Deck())
	}
	const n = 1 // 7H 9S 4H 8D ... 2S AH ...
	d := Deal(n)
	g := New(r, n)
	v := g.View()
	if !slices.Equal(v.Turned, d[:1]) || v.Stock != 51 || v.Score != 0 || v.Target != 52 || v.RedealsLeft != 0 || v.Status != Playing {
		t.Fatalf("classic deal 1 starts as %+v", v)
	}
	if got := stockOrder(&g); !slices.Equal(got, d[1:]) {
		t.Fatalf("stock = %v, want the deal order after the first card", got)
	}
	// Every card up to AH goes on a waste pile; AH may start any foundation,
	// and the 2S on it is of another suit: suits do not matter.
	for i, c := range d[:19] {
		refuse(t, &g, PlaceMove(c, F(i%4)), ReasonNoFit)
		play(t, &g, PlaceMove(c, W(i%4)).String())
	}
	// 2S, the 19th card, is on top of W3.
	if wasteTop(&g, 2) != mustCard(t, "2S") {
		t.Fatalf("W3 top = %v, want 2S", wasteTop(&g, 2))
	}
	for f := range 4 {
		if !hasMove(t, &g, "AH>F"+string(rune('1'+f))) {
			t.Errorf("AH>F%d is not offered on empty foundations", f+1)
		}
	}
	play(t, &g, "AH>F3", "2S>F3")
	if foundationTops(&g) != "-- -- 2S --" || g.Score() != 2 {
		t.Fatalf("foundations %s, score %d", foundationTops(&g), g.Score())
	}
	refuseText(t, &g, "R", ReasonNoRedeal)
}

func TestVariantAcesOut(t *testing.T) {
	for _, n := range []uint64{1, 2, 18446744073709551615} {
		g := New(mustVariant(t, "aces-out"), n)
		aces := firstOfRanks(n, Ace) // the first Ace only
		var all []Card
		for _, c := range Deal(n) {
			if c.Rank() == Ace {
				all = append(all, c)
			}
		}
		if got := FormatCards(g.found[:]); got != FormatCards(all) || g.foundN != [4]uint8{1, 1, 1, 1} {
			t.Errorf("deal %d: foundations %s %v, want the Aces in deal order %s", n, got, g.foundN, FormatCards(all))
		}
		if g.found[0] != aces[0] {
			t.Errorf("deal %d: F1 = %v, want the first Ace %v", n, g.found[0], aces[0])
		}
		if g.Score() != 4 || g.StockLeft() != 47 {
			t.Errorf("deal %d: score %d, stock %d; want 4 and 47 (one card turned)", n, g.Score(), g.StockLeft())
		}
		rest := deckWithout(n, nil, Ace)
		if got := append(turned(&g), stockOrder(&g)...); !slices.Equal(got, rest) {
			t.Errorf("deal %d: stock %v, want the deal less the Aces, in order: %v", n, got, rest)
		}
	}
}

func TestVariantStrict(t *testing.T) {
	const n = 1
	d := Deal(n)
	for _, name := range []string{"strict", "classic"} {
		t.Run(name, func(t *testing.T) {
			g := New(mustVariant(t, name), n)
			play(t, &g, d[0].String()+">W1", d[1].String()+">W1", d[2].String()+">W1", d[3].String()+">W2")
			v, m := g.View(), g.Memory()
			if !slices.Equal(m.Waste[0].Cards, d[:3]) || m.Waste[0].Count != 3 {
				t.Fatalf("Memory W1 = %+v, want %v", m.Waste[0], d[:3])
			}
			if v.Waste[0].Count != 3 || !slices.Equal(v.Waste[1].Cards, d[3:4]) {
				t.Fatalf("View W1 = %+v, W2 = %+v", v.Waste[0], v.Waste[1])
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			buried := d[:2]
			if name == "strict" {
				if !slices.Equal(v.Waste[0].Cards, d[2:3]) {
					t.Fatalf("strict View W1 = %v, want only the top %v", v.Waste[0].Cards, d[2])
				}
				for _, c := range buried {
					if strings.Contains(string(b), `"`+c.String()+`"`) {
						t.Errorf("strict View shows buried %v: %s", c, b)
					}
				}
			} else {
				if !slices.Equal(v.Waste[0].Cards, d[:3]) {
					t.Fatalf("classic View W1 = %v, want %v", v.Waste[0].Cards, d[:3])
				}
			}
			// The face-down stock is in neither.
			mb, _ := json.Marshal(m)
			for _, c := range d[5:] {
				if strings.Contains(string(b), `"`+c.String()+`"`) || strings.Contains(string(mb), `"`+c.String()+`"`) {
					t.Errorf("a view shows the face-down %v", c)
				}
			}
			// Memory shows what the player placed, even under the strict rule.
			if !strings.Contains(string(mb), `"`+d[0].String()+`"`) {
				t.Errorf("Memory does not show %v: %s", d[0], mb)
			}
		})
	}
}

func TestVariantInSuit(t *testing.T) {
	r := mustVariant(t, "in-suit")
	const n = 1 // Aces in deal order: AH AC AD AS; Twos later: 2D, 2C
	t.Run("suit", func(t *testing.T) {
		g, c := New(r, n), New(mustVariant(t, "classic"), n)
		refused, allowed := 0, 0
		w := 0
		for _, card := range Deal(n) {
			switch card.Rank() {
			case Ace:
				f := slices.Index(g.foundN[:], 0)
				play(t, &g, PlaceMove(card, F(f)).String())
				play(t, &c, PlaceMove(card, F(f)).String())
				continue
			case 2:
				for f := range 4 {
					if g.foundN[f] != 1 {
						continue
					}
					m := PlaceMove(card, F(f))
					if g.found[f].Suit() != card.Suit() {
						refuse(t, &g, m, ReasonNoFit)
						if !slices.Contains(c.Moves(), m) {
							t.Errorf("classic refuses %v on %v", card, g.found[f])
						}
						refused++
					} else if slices.Contains(g.Moves(), m) {
						allowed++
					} else {
						t.Errorf("in-suit refuses %v on %v", card, g.found[f])
					}
				}
			}
			play(t, &g, PlaceMove(card, W(w%4)).String())
			play(t, &c, PlaceMove(card, W(w%4)).String())
			w++
		}
		if refused == 0 || allowed == 0 {
			t.Fatalf("deal %d tried %d wrong-suit and %d right-suit Twos; want some of each", n, refused, allowed)
		}
	})
	t.Run("two shuffled redeals", func(t *testing.T) {
		// Every card onto W1 in the order turned: the gathered cards are the
		// deal's order, shuffled by step 4 with the generator going on. The
		// orders were computed by the same independent re-implementation as
		// the deal vectors.
		want := []string{
			"TC 8S 8H KC 6S AC 2H 4S KS 8C 3S 9D 2C 9C 7D AH JS 5S 7H TH 4C 9S TS 9H TD JH " +
				"JD QH QC QD 5H 6H 4H 3H 5C KH KD AD 5D 3C QS 7C 8D 2S AS 6D 6C 7S 2D 3D JC 4D",
			"8S 4S 8H KH AS 4D 4H 7C 2D JD 7S JH 6S 6C 8C 5D 5C 3H AC 5S 4C 3S 7D 5H 2H QC " +
				"9D QS 3D KS QH 6H QD KD TC 2S TD 9H 2C 3C 9C 8D 7H 6D JS TS 9S AH JC KC AD TH",
		}
		var games [2]Game
		for k := range games {
			g := New(r, n)
			for pass := range 3 {
				refuseText(t, &g, "R", ReasonNoRedeal) // the stock is not used up
				for g.StockLeft() > 0 || len(turned(&g)) > 0 {
					c := turned(&g)[0]
					if pass == 2 && c.Rank() == Ace {
						// Aces on W2 keep the last pass from being stuck, so
						// that R is refused for want of a redeal.
						play(t, &g, c.String()+">W2")
						continue
					}
					play(t, &g, c.String()+">W1")
				}
				if pass == 2 {
					if g.Status() != Playing || g.View().RedealsLeft != 0 {
						t.Fatalf("last pass: status %v, %d redeals left", g.Status(), g.View().RedealsLeft)
					}
					refuseText(t, &g, "R", ReasonNoRedeal)
					break
				}
				if g.Status() != Playing || g.View().RedealsLeft != 2-pass {
					t.Fatalf("pass %d: status %v, %d redeals left", pass+1, g.Status(), g.View().RedealsLeft)
				}
				play(t, &g, "R")
				if got := FormatCards(g.stock[:g.stockN]); got != want[pass] {
					t.Fatalf("redeal %d:\n got %s\nwant %s", pass+1, got, want[pass])
				}
				if g.wasteN != [4]uint8{} || !slices.Equal(turned(&g), g.stock[:1]) {
					t.Fatalf("redeal %d left waste %v, turned %v", pass+1, g.wasteN, turned(&g))
				}
			}
			games[k] = g
		}
		if games[0] != games[1] {
			t.Fatal("the same deal and moves gave two different games")
		}
	})
}

func TestVariantRedeal(t *testing.T) {
	r := mustVariant(t, "redeal")
	const n = 2
	g := New(r, n)
	// Aces to the foundations; the other cards round the waste piles in turn.
	var piles [4][]Card
	w := 0
	for _, c := range Deal(n) {
		if c.Rank() == Ace {
			play(t, &g, PlaceMove(c, F(slices.Index(g.foundN[:], 0))).String())
			continue
		}
		if w < 40 { // leave W1 longer than the others
			play(t, &g, PlaceMove(c, W(w%4)).String())
			piles[w%4] = append(piles[w%4], c)
		} else {
			play(t, &g, PlaceMove(c, W(0)).String())
			piles[0] = append(piles[0], c)
		}
		w++
	}
	if g.Status() != Playing || !hasMove(t, &g, "R") {
		t.Fatalf("with the stock used up: status %v, moves %v", g.Status(), g.Moves())
	}
	play(t, &g, "R")
	want := slices.Concat(piles[0], piles[1], piles[2], piles[3])
	if got := append(turned(&g), stockOrder(&g)...); !slices.Equal(got, want) {
		t.Fatalf("new stock:\n got %v\nwant %v (W1 bottom to top, then W2, W3, W4)", got, want)
	}
	if g.Score() < 4 || len(want) != 52-g.Score() {
		t.Fatalf("score %d, new stock %d cards", g.Score(), len(want))
	}
	// One redeal only. The Twos go on W1, the rest on W2: with the Aces up,
	// a Two on top keeps the game going, so R is refused for want of a redeal.
	for g.StockLeft() > 0 || len(turned(&g)) > 0 {
		c := turned(&g)[0]
		if c.Rank() == 2 {
			play(t, &g, c.String()+">W1")
		} else {
			play(t, &g, c.String()+">W2")
		}
	}
	if g.Status() != Playing || wasteTop(&g, 0).Rank() != 2 {
		t.Fatalf("second pass ends %v with %v on W1", g.Status(), wasteTop(&g, 0))
	}
	refuseText(t, &g, "R", ReasonNoRedeal)
	if g.View().RedealsLeft != 0 {
		t.Fatalf("RedealsLeft = %d", g.View().RedealsLeft)
	}
}

func TestVariantStrategy(t *testing.T) {
	const n = 1 // 7H 9S 4H ...
	t.Run("deal", func(t *testing.T) {
		g := New(mustVariant(t, "strategy"), n)
		play(t, &g, "7H>W1", "9S>W2")
		if !hasMove(t, &g, "7H>W2") || hasMove(t, &g, "7H>W3") || hasMove(t, &g, "7H>W1") {
			t.Fatalf("strategy moves %v: want 7H>W2 only among waste moves of 7H", g.Moves())
		}
		refuseText(t, &g, "7H>W3", ReasonEmptyWaste)
		refuseText(t, &g, "7H>W1", ReasonSamePile)
		play(t, &g, "7H>W2")
		if g.wasteN != [4]uint8{0, 2, 0, 0} || wasteTop(&g, 1) != mustCard(t, "7H") {
			t.Fatalf("after 7H>W2: waste %v", g.wasteN)
		}
		refuseText(t, &g, "7H>W1", ReasonEmptyWaste) // emptied W1 is filled only from the stock
		play(t, &g, "4H>W1")                         // which it may be
		play(t, &g, "4H>W2")
	})
	t.Run("classic refuses", func(t *testing.T) {
		g := New(mustVariant(t, "classic"), n)
		play(t, &g, "7H>W1", "9S>W2")
		refuseText(t, &g, "7H>W2", ReasonWasteToWaste)
		refuseText(t, &g, "7H>W3", ReasonWasteToWaste)
		refuseText(t, &g, "7H>W1", ReasonWasteToWaste)
	})
	t.Run("buried card keeps the game going", func(t *testing.T) {
		// The stock's last card goes on W3: no top fits F1, but the buried
		// 3H does and can be dug out in strategy; classic is stuck.
		for _, tt := range []struct {
			variant string
			want    Status
		}{{"strategy", Playing}, {"classic", Stuck}} {
			g := position(t, tt.variant, [4]string{"2S"}, [4]string{"3H KC", "QD"}, "JS")
			play(t, &g, "JS>W3")
			if g.Status() != tt.want {
				t.Fatalf("%s: status %v, want %v", tt.variant, g.Status(), tt.want)
			}
			if tt.want == Playing {
				play(t, &g, "KC>W2", "3H>F1")
				if g.Status() != Stuck || g.Score() != 3 {
					t.Fatalf("after digging 3H out: %v %d", g.Status(), g.Score())
				}
			}
		}
	})
	t.Run("a single pile cannot be dug", func(t *testing.T) {
		g := position(t, "strategy", [4]string{"2S"}, [4]string{"3H KC"}, "JS")
		play(t, &g, "JS>W1")
		if g.Status() != Stuck {
			t.Fatalf("status %v, want stuck: with one waste pile nothing can move", g.Status())
		}
	})
}

func TestVariantNumerica(t *testing.T) {
	const n = 1
	for _, name := range []string{"numerica", "classic"} {
		t.Run(name, func(t *testing.T) {
			g := New(mustVariant(t, name), n)
			aces, w := 0, 0
			for _, c := range Deal(n) {
				if c.Rank() != Ace {
					play(t, &g, PlaceMove(c, W(w%4)).String())
					w++
					continue
				}
				// Aces so far are on F1..F(aces): try every foundation to the right
				// of the next one.
				for f := aces + 1; f < 4; f++ {
					m := PlaceMove(c, F(f))
					if name == "numerica" {
						refuse(t, &g, m, ReasonNoFit)
					} else if !slices.Contains(g.Moves(), m) {
						t.Errorf("classic refuses %v", m)
					}
				}
				play(t, &g, PlaceMove(c, F(aces)).String())
				aces++
			}
			if aces != 4 || g.foundN != [4]uint8{1, 1, 1, 1} {
				t.Fatalf("foundations %v", g.foundN)
			}
		})
	}
}

func TestVariantCalculation(t *testing.T) {
	r := mustVariant(t, "calculation")
	t.Run("start", func(t *testing.T) {
		for _, n := range []uint64{1, 2, 18446744073709551615} {
			g := New(r, n)
			starts := firstOfRanks(n, Ace, 2, 3, 4)
			if !slices.Equal(g.found[:], starts) || g.foundN != [4]uint8{1, 1, 1, 1} || g.Score() != 4 {
				t.Errorf("deal %d: foundations %s %v, want %s", n, foundationTops(&g), g.foundN, FormatCards(starts))
			}
			if got := append(turned(&g), stockOrder(&g)...); !slices.Equal(got, deckWithout(n, starts)) {
				t.Errorf("deal %d: stock %v, want the deal less %v", n, got, starts)
			}
			v := g.View()
			for f, want := range []Rank{2, 4, 6, 8} {
				if v.Foundations[f].Wants != want || v.Foundations[f].Step != f+1 {
					t.Errorf("deal %d: F%d wants %v step %d; want %v step %d", n, f+1, v.Foundations[f].Wants, v.Foundations[f].Step, want, f+1)
				}
			}
		}
	})
	// Each foundation's whole sequence, as the rule text gives it.
	seqs := [4]string{
		"A 2 3 4 5 6 7 8 9 T J Q K",
		"2 4 6 8 T Q A 3 5 7 9 J K",
		"3 6 9 Q 2 5 8 J A 4 7 T K",
		"4 8 Q 3 7 J 2 6 T A 5 9 K",
	}
	for f, seq := range seqs {
		t.Run("F"+string(rune('1'+f)), func(t *testing.T) {
			ranks := strings.Fields(seq)
			suit := "SHDC"[f : f+1]
			var stock []string
			for _, k := range ranks[1:] {
				stock = append(stock, k+suit)
			}
			stock = append(stock, "5C") // an extra card once the foundation is complete
			found := [4]string{"AC", "2C", "3C", "4C"}
			found[f] = ranks[0] + suit
			g := position(t, "calculation", found, [4]string{}, strings.Join(stock, " "))
			for i, s := range stock[:12] {
				// The next rank up, where it differs, does not fit (but 2 on A does).
				if f > 0 {
					up := rankAfter(mustCard(t, ranks[i]+suit).Rank(), 1)
					wrong := NewCard(up, Hearts)
					if f == 1 {
						wrong = NewCard(up, Diamonds)
					}
					g2 := g
					g2.hand = [4]Card{wrong}
					refuse(t, &g2, PlaceMove(wrong, F(f)), ReasonNoFit)
				}
				play(t, &g, s+">F"+string(rune('1'+f)))
			}
			if g.foundN[f] != 13 || g.found[f].Rank() != King || g.View().Foundations[f].Wants != 0 {
				t.Fatalf("F%d: %d cards, top %v, wants %v", f+1, g.foundN[f], g.found[f], g.View().Foundations[f].Wants)
			}
			refuseText(t, &g, "5C>F"+string(rune('1'+f)), ReasonNoFit)
		})
	}
}

func TestVariantPussInTheCorner(t *testing.T) {
	r := mustVariant(t, "puss-in-the-corner")
	if r.Deck() != 48 || r.Length != 12 {
		t.Fatalf("deck %d, length %d", r.Deck(), r.Length)
	}
	for _, n := range []uint64{1, 2, 18446744073709551615} {
		g := New(r, n)
		var aces []Card
		for _, c := range Deal(n) {
			if c.Rank() == Ace {
				aces = append(aces, c)
			}
		}
		stock := append(turned(&g), stockOrder(&g)...)
		if len(stock) != 44 || slices.ContainsFunc(stock, func(c Card) bool { return c.Rank() == King || c.Rank() == Ace }) {
			t.Fatalf("deal %d: stock of %d cards %v, want 44 without Aces or Kings", n, len(stock), stock)
		}
		if !slices.Equal(stock, deckWithout(n, nil, Ace, King)) || !slices.Equal(g.found[:], aces) {
			t.Fatalf("deal %d: stock %v, foundations %s", n, stock, foundationTops(&g))
		}
		if v := g.View(); v.Target != 48 || v.Score != 4 {
			t.Fatalf("deal %d: target %d, score %d", n, v.Target, v.Score)
		}
	}
	// Foundations end on the Queen, and 48 cards win.
	g := position(t, "puss-in-the-corner", [4]string{"QS", "QH", "QD", "JC"}, [4]string{}, "QC")
	if g.Score() != 47 || g.View().Foundations[0].Wants != 0 || g.View().Foundations[3].Wants != Queen {
		t.Fatalf("score %d, foundations %+v", g.Score(), g.View().Foundations)
	}
	for f := range 3 {
		refuse(t, &g, PlaceMove(mustCard(t, "QC"), F(f)), ReasonNoFit)
	}
	play(t, &g, "QC>F4")
	if g.Status() != Won || g.Score() != 48 {
		t.Fatalf("status %v, score %d; want won 48", g.Status(), g.Score())
	}
}
