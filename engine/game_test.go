package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// foundationMoves lists the legal moves of card c to a foundation.
func foundationMoves(g *Game, c Card) []string {
	var out []string
	for _, m := range g.Moves() {
		if m.Kind == Place && m.Card == c && m.To.Kind == Foundation {
			out = append(out, m.To.String())
		}
	}
	return out
}

// TestWorkedExample plays the example under "Playing" in the first rule text.
func TestWorkedExample(t *testing.T) {
	// "The foundations show 4, 2 and A." A waste pile has a 3 on top.
	g := position(t, "classic", [4]string{"4S", "2H", "AD", ""}, [4]string{"9C 3C"}, "3D JH 5H 2S KC")
	if g.Score() != 7 {
		t.Fatalf("score %d, want 4+2+1", g.Score())
	}
	steps := []struct {
		card  string
		fits  []string // the foundations that take it
		place string
		then  []string // further moves it allows
		tops  string   // foundation tops after
	}{
		// "You turn a 3: it goes on the 2."
		{"3D", []string{"F2"}, "3D>F2", nil, "4S 3D AD --"},
		// "Next comes a J: no foundation wants it, so it goes on an empty waste pile."
		{"JH", nil, "JH>W2", nil, "4S 3D AD --"},
		// "Then a 5: it goes on the 4."
		{"5H", []string{"F1"}, "5H>F1", nil, "5H 3D AD --"},
		// "Then a 2: put it on the A – and the top card of a waste pile is a 3,
		// so that goes on the new 2 as well."
		{"2S", []string{"F3"}, "2S>F3", []string{"3C>F3"}, "5H 3D 3C --"},
	}
	for _, s := range steps {
		c := mustCard(t, s.card)
		if got := turned(&g); !slices.Equal(got, []Card{c}) {
			t.Fatalf("turned %v, want %v", got, c)
		}
		if got := foundationMoves(&g, c); !slices.Equal(got, s.fits) {
			t.Fatalf("%v fits %v, want %v", c, got, s.fits)
		}
		play(t, &g, s.place)
		for _, m := range s.then {
			if !hasMove(t, &g, m) {
				t.Fatalf("after %s, %s is not offered: %v", s.place, m, g.Moves())
			}
			play(t, &g, m)
		}
		if got := foundationTops(&g); got != s.tops {
			t.Fatalf("after %s: foundations %s, want %s", s.place, got, s.tops)
		}
	}
	if g.Score() != 11 || wasteTop(&g, 0) != mustCard(t, "9C") || wasteTop(&g, 1) != mustCard(t, "JH") {
		t.Fatalf("score %d, W1 top %v, W2 top %v", g.Score(), wasteTop(&g, 0), wasteTop(&g, 1))
	}
	if g.Status() != Playing || g.Plies() != 5 || g.View().Moves != 5 {
		t.Fatalf("status %v after %d moves", g.Status(), g.Plies())
	}
}

func TestStatusTransitions(t *testing.T) {
	tests := []struct {
		name   string
		game   func(t *testing.T) Game
		moves  []string
		before Status // after all moves but the last
		after  Status
		score  int
	}{
		{"won from the stock", func(t *testing.T) Game {
			return position(t, "classic", [4]string{"QS", "QH", "QD", "QC"}, [4]string{}, "KS KH KD KC")
		}, []string{"KS>F1", "KH>F2", "KD>F3", "KC>F4"}, Playing, Won, 52},
		{"won from the waste", func(t *testing.T) Game {
			return position(t, "classic", [4]string{"KS", "KH", "JD", "QC"}, [4]string{"KD QD"}, "KC")
		}, []string{"KC>F4", "QD>F3", "KD>F3"}, Playing, Won, 52},
		{"stuck", func(t *testing.T) Game {
			return position(t, "classic", [4]string{"2S"}, [4]string{"KC"}, "9D JS")
		}, []string{"9D>W1", "JS>W2"}, Playing, Stuck, 2},
		{"stuck after a foundation move", func(t *testing.T) Game {
			return position(t, "classic", [4]string{"2S"}, [4]string{"KC 3H"}, "JS")
		}, []string{"JS>W2", "3H>F1"}, Playing, Stuck, 3},
		{"playing while a waste top fits", func(t *testing.T) Game {
			return position(t, "classic", [4]string{"2S"}, [4]string{"3H"}, "JS")
		}, []string{"JS>W2"}, Playing, Playing, 2},
		{"playing while the stock lasts", func(t *testing.T) Game {
			return position(t, "classic", [4]string{"2S", "2H", "2D", "2C"}, [4]string{}, "KS KH KD KC")
		}, []string{"KS>W1", "KH>W1", "KD>W1"}, Playing, Playing, 8},
		{"puss-in-the-corner won at 48", func(t *testing.T) Game {
			return position(t, "puss-in-the-corner", [4]string{"QS", "QH", "QD", "JC"}, [4]string{}, "QC")
		}, []string{"QC>F4"}, Playing, Won, 48},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.game(t)
			play(t, &g, tt.moves[:len(tt.moves)-1]...)
			if g.Status() != tt.before {
				t.Fatalf("before the last move: %v, want %v", g.Status(), tt.before)
			}
			play(t, &g, tt.moves[len(tt.moves)-1])
			if g.Status() != tt.after || g.Score() != tt.score {
				t.Fatalf("status %v score %d, want %v %d", g.Status(), g.Score(), tt.after, tt.score)
			}
			if v := g.View(); v.Status != tt.after || v.Score != tt.score {
				t.Fatalf("View says %v %d", v.Status, v.Score)
			}
			if !tt.after.Over() {
				if len(g.Moves()) == 0 {
					t.Fatal("playing with no legal move")
				}
				return
			}
			if ms := g.Moves(); len(ms) != 0 {
				t.Fatalf("a finished game offers %v", ms)
			}
			refuseText(t, &g, tt.moves[0], ReasonGameOver)
			refuseText(t, &g, "R", ReasonGameOver)
			g.Resign()
			if g.Status() != tt.after {
				t.Fatalf("Resign changed a %v game to %v", tt.after, g.Status())
			}
		})
	}
}

func TestResign(t *testing.T) {
	g := New(mustVariant(t, "classic"), 1)
	play(t, &g, "7H>W1", "9S>W2")
	g.Resign()
	if g.Status() != Resigned || !g.Status().Over() || g.Score() != 0 || g.Plies() != 2 {
		t.Fatalf("after Resign: %v, score %d, plies %d", g.Status(), g.Score(), g.Plies())
	}
	before := g
	g.Resign()
	if g != before {
		t.Fatal("a second Resign changed the game")
	}
	if len(g.Moves()) != 0 || len(g.AppendMoves(nil)) != 0 {
		t.Fatal("a resigned game offers moves")
	}
	refuseText(t, &g, "4H>W1", ReasonGameOver)
}

// TestIllegalMoves produces every reason for refusing a move and checks each
// time that the game is exactly as it was.
func TestIllegalMoves(t *testing.T) {
	const n = 1 // 7H 9S 4H 8D 8H ...
	deal := func(variant string, moves ...string) func(t *testing.T) Game {
		return func(t *testing.T) Game {
			g := New(mustVariant(t, variant), n)
			play(t, &g, moves...)
			return g
		}
	}
	tests := []struct {
		name   string
		game   func(t *testing.T) Game
		move   Move
		reason Reason
	}{
		{"resigned", func(t *testing.T) Game { g := deal("classic")(t); g.Resign(); return g }, mustMove(t, "7H>W1"), ReasonGameOver},
		{"stuck", func(t *testing.T) Game {
			g := position(t, "classic", [4]string{"2S"}, [4]string{"KC"}, "JS")
			play(t, &g, "JS>W2")
			return g
		}, mustMove(t, "JS>W1"), ReasonGameOver},
		{"won", func(t *testing.T) Game {
			g := position(t, "classic", [4]string{"KS", "KH", "KD", "QC"}, [4]string{}, "KC")
			play(t, &g, "KC>F4")
			return g
		}, mustMove(t, "KC>W1"), ReasonGameOver},
		{"card still in the stock", deal("classic"), mustMove(t, "9S>W1"), ReasonNotAvailable},
		{"card buried in a waste pile", deal("classic", "7H>W1", "9S>W1"), mustMove(t, "7H>W2"), ReasonNotAvailable},
		{"card buried, to a foundation", deal("classic", "7H>W1", "9S>W1"), mustMove(t, "7H>F1"), ReasonNotAvailable},
		{"card on a foundation", deal("aces-out"), mustMove(t, "AH>W1"), ReasonNotAvailable},
		{"no fit on an empty foundation", deal("classic"), mustMove(t, "7H>F1"), ReasonNoFit},
		{"no fit on a foundation", deal("aces-out"), mustMove(t, "7H>F2"), ReasonNoFit},
		{"no fit from the waste", func(t *testing.T) Game {
			return position(t, "classic", [4]string{"2S"}, [4]string{"4H"}, "JS")
		}, mustMove(t, "4H>F1"), ReasonNoFit},
		{"no fit on a complete foundation", func(t *testing.T) Game {
			return position(t, "classic", [4]string{"KS"}, [4]string{}, "AH")
		}, mustMove(t, "AH>F1"), ReasonNoFit},
		{"four at a time", func(t *testing.T) Game {
			// 2H could go up before the four were turned, but not now.
			g := position(t, "four-at-a-time", [4]string{"AS"}, [4]string{"2H"}, "KC QC JC TC 9C")
			play(t, &g, "KC>W2")
			return g
		}, mustMove(t, "2H>F1"), ReasonPlaceTurned},
		{"turn with cards turned", func(t *testing.T) Game {
			return position(t, "four-at-a-time", [4]string{"AS"}, [4]string{"2H"}, "KC QC JC TC 9C")
		}, TurnMove, ReasonPlaceTurned},
		{"turn with the stock empty", func(t *testing.T) Game {
			g := position(t, "four-at-a-time", [4]string{"AS"}, [4]string{"2H"}, "KC")
			play(t, &g, "KC>W2")
			return g
		}, TurnMove, ReasonNoTurn},
		{"turn in classic", deal("classic"), TurnMove, ReasonNoTurn},
		{"waste to waste in classic", deal("classic", "7H>W1", "9S>W2"), mustMove(t, "7H>W2"), ReasonWasteToWaste},
		{"waste to empty waste in classic", deal("classic", "7H>W1", "9S>W2"), mustMove(t, "7H>W3"), ReasonWasteToWaste},
		{"same pile in strategy", deal("strategy", "7H>W1", "9S>W2"), mustMove(t, "7H>W1"), ReasonSamePile},
		{"empty pile in strategy", deal("strategy", "7H>W1", "9S>W2"), mustMove(t, "7H>W3"), ReasonEmptyWaste},
		{"redeal in classic", deal("classic"), RedealMove, ReasonNoRedeal},
		{"redeal with a stock", deal("redeal", "7H>W1"), RedealMove, ReasonNoRedeal},
		{"redeal with a card turned", func(t *testing.T) Game {
			return position(t, "redeal", [4]string{}, [4]string{"KC"}, "JS")
		}, RedealMove, ReasonNoRedeal},
		{"no card", deal("classic"), Move{Kind: Place, To: W(0)}, ReasonBadMove},
		{"invalid card", deal("classic"), Move{Kind: Place, Card: 0xff, To: W(0)}, ReasonBadMove},
		{"rank 14", deal("classic"), Move{Kind: Place, Card: NewCard(14, Hearts), To: W(0)}, ReasonBadMove},
		{"pile 5", deal("classic"), Move{Kind: Place, Card: mustCard(t, "7H"), To: Pile{Waste, 4}}, ReasonBadMove},
		{"foundation 9", deal("classic"), Move{Kind: Place, Card: mustCard(t, "7H"), To: Pile{Foundation, 8}}, ReasonBadMove},
		{"no pile", deal("classic"), Move{Kind: Place, Card: mustCard(t, "7H")}, ReasonBadMove},
		{"pile kind 3", deal("classic"), Move{Kind: Place, Card: mustCard(t, "7H"), To: Pile{3, 0}}, ReasonBadMove},
		{"move kind 7", deal("classic"), Move{Kind: 7, Card: mustCard(t, "7H"), To: W(0)}, ReasonBadMove},
	}
	seen := map[Reason]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.game(t)
			refuse(t, &g, tt.move, tt.reason)
			seen[tt.reason] = true
		})
	}
	for r := ReasonGameOver; r <= ReasonNoTurn; r++ {
		if !seen[r] {
			t.Errorf("no test produces %v", r)
		}
	}
}

func TestReasonCodes(t *testing.T) {
	codes := map[string]bool{}
	for r := ReasonGameOver; r <= ReasonNoTurn; r++ {
		s := r.String()
		if s == "unknown" || codes[s] {
			t.Errorf("Reason(%d) has code %q", r, s)
		}
		codes[s] = true
	}
	for _, r := range []Reason{0, ReasonNoTurn + 1, 255} {
		if r.String() != "unknown" {
			t.Errorf("Reason(%d) = %q", r, r.String())
		}
	}
}

func TestStatusText(t *testing.T) {
	for _, s := range []Status{Playing, Won, Stuck, Resigned} {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var u Status = 99
		if err := u.UnmarshalText(b); err != nil || u != s {
			t.Errorf("%v round trip gave %v, %v", s, u, err)
		}
		if s.Over() != (s != Playing) {
			t.Errorf("%v.Over() = %v", s, s.Over())
		}
	}
	if Status(9).String() != "unknown" {
		t.Errorf("Status(9) = %q", Status(9).String())
	}
	var u Status
	if err := u.UnmarshalText([]byte("Won")); err == nil {
		t.Error(`UnmarshalText("Won") accepted it`)
	}
}

// TestGameIsAValue checks that a copy is a separate game, as the solver and
// the bots expect.
func TestGameIsAValue(t *testing.T) {
	g := New(mustVariant(t, "redeal"), 1)
	play(t, &g, "7H>W1")
	orig := g
	c := g
	play(t, &c, "9S>W1", "4H>W2")
	c.Resign()
	if g != orig {
		t.Fatal("moves on a copy changed the original")
	}
	one, again := New(g.Rules(), 1), New(g.Rules(), 1)
	if New(g.Rules(), 1) == New(g.Rules(), 2) || one != again {
		t.Fatal("New is not a function of the rules and the deal")
	}
	if g.DealNumber() != 1 || g.Rules().Name != "redeal" {
		t.Fatalf("DealNumber %d, Rules %s", g.DealNumber(), g.Rules().Name)
	}
}

// TestPliesDoNotWrap: in strategy a card can shuttle between two waste piles
// for ever, so the move count must not wrap round at 2^16.
func TestPliesDoNotWrap(t *testing.T) {
	g := New(mustVariant(t, "strategy"), 1) // 7H 9S 4H 8D ...
	play(t, &g, "7H>W1", "9S>W2", "4H>W3")
	there, back := mustMove(t, "4H>W1"), mustMove(t, "4H>W2")
	const shuttles = 1<<16 + 5
	for i := range shuttles {
		m := there
		if i%2 == 1 {
			m = back
		}
		if err := g.Apply(m); err != nil {
			t.Fatalf("shuttle %d: %v", i, err)
		}
	}
	if want := 3 + shuttles; g.Plies() != want || g.View().Moves != want {
		t.Fatalf("Plies() = %d, View().Moves = %d; want %d", g.Plies(), g.View().Moves, want)
	}
}

// TestTakes checks takes against fits for every card and foundation at
// positions of random games of every variant.
func TestTakes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var buf [64]Move
	for _, r := range Variants() {
		for deal := range uint64(20) {
			g := New(r, deal)
			for g.Status() == Playing {
				want, mask := g.takes()
				for i := range 52 {
					c := CardAt(i)
					for f := range 4 {
						if got := c&mask[f] == want[f]; got != g.fits(f, c) {
							t.Fatalf("%s deal %d: takes says %v for %v on F%d, fits %v", r.Name, deal, got, c, f+1, !got)
						}
					}
				}
				if err := g.Apply(randomMove(&g, rng, buf[:])); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// A View's card slices share one array but not their room: appending to
// one leaves the others as they were, and a View's cards are its own,
// not the game's.
func TestViewSlicesAreApart(t *testing.T) {
	g := New(mustVariant(t, "classic"), 7)
	for _, p := range []int{0, 1, 1, 2} {
		if err := g.Apply(PlaceMove(g.hand[0], W(p))); err != nil {
			t.Fatal(err)
		}
	}
	v := g.View()
	want := g.View()
	_ = append(v.Turned, Card(1), Card(2))
	for p := range 3 {
		_ = append(v.Waste[p].Cards, Card(3))
	}
	v.Waste[1].Cards[0] = Card(4)
	if !slices.Equal(v.Turned, want.Turned) || !slices.Equal(v.Waste[2].Cards, want.Waste[2].Cards) ||
		!slices.Equal(v.Waste[0].Cards, want.Waste[0].Cards) {
		t.Fatalf("an append to one slice of the view changed another: %v, want %v", v, want)
	}
	if again := g.View(); !slices.Equal(again.Waste[1].Cards, want.Waste[1].Cards) {
		t.Fatalf("writing to a view changed the game: %v", again.Waste[1].Cards)
	}
}
