package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// wasteTopFits returns a waste top that fits a foundation, as a move.
func wasteTopFits(g *Game) (Move, bool) {
	for p := range 4 {
		n := g.wasteN[p]
		if n == 0 {
			continue
		}
		c := g.waste[p][n-1]
		for f := range 4 {
			if g.fits(f, c) {
				return PlaceMove(c, F(f)), true
			}
		}
	}
	return Move{}, false
}

// In four-at-a-time the rule text says to "turn four cards at once and
// place all four before you move anything from the waste piles to the
// foundations". Once the four are placed the next four stay face down
// until the player turns them with T; until then waste cards may go up,
// and from the turn until the four are placed they may not. (The engine
// used to turn the next four as soon as the last was placed, so that waste
// moves were made knowing the next hand.)
func TestFourAtATimeWasteMovesBetweenTurns(t *testing.T) {
	rules := mustVariant(t, "four-at-a-time")
	freed, locked, turns := 0, 0, 0
	for deal := range uint64(60) {
		g := New(rules, deal)
		for g.Status() == Playing {
			if m, ok := wasteTopFits(&g); ok && g.StockLeft() > 0 {
				legal := slices.Contains(g.Moves(), m)
				c := g
				err := c.Apply(m)
				if g.handN == 0 {
					freed++
					if !legal || err != nil {
						t.Fatalf("deal %d: %s refused between turns (listed %v): %v", deal, m, legal, err)
					}
				} else {
					locked++
					var ie *IllegalMoveError
					if legal || !errors.As(err, &ie) || ie.Reason != ReasonPlaceTurned {
						t.Fatalf("deal %d: %s with turned cards to place: listed %v, error %v", deal, m, legal, err)
					}
				}
			}
			// T is offered exactly when the hand is placed and the stock
			// is not empty.
			canTurn := slices.Contains(g.Moves(), TurnMove)
			if want := g.handN == 0 && g.StockLeft() > 0; canTurn != want {
				t.Fatalf("deal %d: T offered %v with %d turned and %d in the stock", deal, canTurn, g.handN, g.StockLeft())
			}
			// Play: to a foundation if something fits, else spread the
			// turned cards over the waste piles, else turn.
			ms := g.Moves()
			pick := ms[0]
			for _, x := range ms {
				if x.Kind == Place && x.To.Kind == Foundation {
					pick = x
					break
				}
				if x.Kind == Place && x.To.Kind == Waste && int(x.To.Index) == g.Plies()%4 {
					pick = x
				}
			}
			if pick == TurnMove {
				turns++
			}
			if err := g.Apply(pick); err != nil {
				t.Fatalf("deal %d: %v", deal, err)
			}
		}
	}
	if freed == 0 || locked == 0 || turns == 0 {
		t.Fatalf("the deals never tested every case: %d between turns, %d with cards turned, %d turns", freed, locked, turns)
	}
	t.Logf("%d waste moves between turns, %d refused with cards turned, %d turns", freed, locked, turns)
}

// fourDeal is a four-at-a-time game on deal n with the first four placed
// on the waste piles, W1 to W4: the position between the first two turns.
func fourDeal(t *testing.T, n uint64) Game {
	t.Helper()
	g := New(mustVariant(t, "four-at-a-time"), n)
	d := Deal(n)
	for i, c := range d[:4] {
		play(t, &g, PlaceMove(c, W(i)).String())
	}
	return g
}

// Between two turns the player sees no card of the next four, in the View,
// the Memory, the legal moves or the JSON the server sends; T shows them.
func TestFourAtATimeViewBetweenTurns(t *testing.T) {
	const n = 1 // 7H 9S 4H 8D, then 8H 5C JH 6H
	g := fourDeal(t, n)
	d := Deal(n)
	next := d[4:8]
	for _, v := range []View{g.View(), g.Memory()} {
		if len(v.Turned) != 0 || v.Stock != 48 || v.WasteLocked {
			t.Fatalf("between turns the view shows %v turned, %d in the stock, locked %v; want none, 48, false", v.Turned, v.Stock, v.WasteLocked)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range next {
			if strings.Contains(string(b), `"`+c.String()+`"`) {
				t.Fatalf("between turns the view shows %v of the next four: %s", c, b)
			}
		}
	}
	for _, m := range g.Moves() {
		if slices.Contains(next, m.Card) {
			t.Fatalf("between turns the moves name %v of the next four: %v", m.Card, g.Moves())
		}
	}
	if g.String() == "" || strings.Contains(g.String(), next[0].String()) {
		t.Fatalf("String shows the next card: %s", g.String())
	}
	play(t, &g, "T")
	if v := g.View(); !slices.Equal(v.Turned, next) || v.Stock != 44 || !v.WasteLocked {
		t.Fatalf("after T the view shows %v turned, %d in the stock, locked %v; want %v, 44, true", v.Turned, v.Stock, v.WasteLocked, next)
	}
}

// A waste card may go up between two turns, but not from the turn until
// the four are placed; T is refused while a turned card waits, at the end
// of the stock, and in a variant that turns one card at a time.
func TestFourAtATimeTurnRules(t *testing.T) {
	// A deal whose first four hold an Ace and a Two: the Two can wait on a
	// waste pile.
	n := findDeal(t, 1000, func(n uint64) bool {
		d := Deal(n)
		return slices.ContainsFunc(d[:4], func(c Card) bool { return c.Rank() == Ace }) &&
			slices.ContainsFunc(d[:4], func(c Card) bool { return c.Rank() == 2 })
	})
	g := New(mustVariant(t, "four-at-a-time"), n)
	var ace, two Card
	var others []Card
	d := Deal(n)
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
	twoUp := PlaceMove(two, F(0))
	refuse(t, &g, TurnMove, ReasonPlaceTurned) // the first four are turned and not placed
	play(t, &g, ace.String()+">F1", two.String()+">W1", others[0].String()+">W2")
	refuse(t, &g, TurnMove, ReasonPlaceTurned) // one still to place
	refuse(t, &g, twoUp, ReasonPlaceTurned)
	play(t, &g, others[1].String()+">W3")

	// Between turns: the Two may go up, or wait; T is offered either way.
	if !slices.Contains(g.Moves(), twoUp) || !slices.Contains(g.Moves(), TurnMove) {
		t.Fatalf("between turns %v and T should be offered: %v", twoUp, g.Moves())
	}
	up := g
	play(t, &up, twoUp.String(), "T")
	if up.foundN[0] != 2 || len(turned(&up)) != 4 {
		t.Fatalf("after %v and T: F1 holds %d, %v turned", twoUp, up.foundN[0], turned(&up))
	}

	// Turned first, the Two waits until the next four are placed.
	play(t, &g, "T")
	ie := refuse(t, &g, twoUp, ReasonPlaceTurned)
	if !strings.Contains(ie.Detail, "place all turned cards") {
		t.Errorf("detail %q", ie.Detail)
	}
	next := turned(&g)
	for i, c := range next {
		if i < 3 {
			refuse(t, &g, twoUp, ReasonPlaceTurned)
		}
		play(t, &g, PlaceMove(c, W(1+i%3)).String())
	}
	play(t, &g, twoUp.String())

	// The end of the stock: nothing to turn.
	end := position(t, "four-at-a-time", [4]string{"AS"}, [4]string{"2D"}, "KC QC")
	play(t, &end, "KC>W2", "QC>W3")
	if end.Status() != Playing {
		t.Fatalf("status %v", end.Status())
	}
	refuse(t, &end, TurnMove, ReasonNoTurn)

	// One card at a time, the next is turned by itself.
	classic := New(mustVariant(t, "classic"), 1)
	refuse(t, &classic, TurnMove, ReasonNoTurn)
	play(t, &classic, "7H>W1")
	refuse(t, &classic, TurnMove, ReasonNoTurn)
}

// T turns fewer than four when fewer are left, and is not offered once the
// stock is empty.
func TestFourAtATimeShortLastTurn(t *testing.T) {
	g := position(t, "four-at-a-time", [4]string{"QS"}, [4]string{"2H"}, "KH QH JH TH 9H KS")
	play(t, &g, "KH>W2", "QH>W2", "JH>W2", "TH>W2", "T")
	if got := turned(&g); len(got) != 2 || g.StockLeft() != 0 {
		t.Fatalf("the last turn shows %v with %d left; want 9H KS and none", got, g.StockLeft())
	}
	play(t, &g, "KS>F1", "9H>W3")
	if slices.Contains(g.Moves(), TurnMove) {
		t.Fatalf("T offered with the stock empty: %v", g.Moves())
	}
}

// Game texts of four-at-a-time keep T, and texts from before T existed
// (which turned the next four as the last was placed) replay as the same
// games: T is put in where such a text places a card of the next four.
func TestFourAtATimeTextsWithAndWithoutTurns(t *testing.T) {
	rules := mustVariant(t, "four-at-a-time")
	// Deal 1, 7H 9S 4H 8D 8H 5C JH 6H ..., as such an old text: the first
	// four placed, then the next four, with no T between.
	old := "[Variant \"four-at-a-time\"]\n[Deal \"1\"]\n7H>W1 9S>W2 4H>W3 8D>W4 8H>W1 5C>W2 JH>W3 6H>W4\n"
	rec := mustParse(t, old)
	g, err := rec.Replay()
	if err != nil {
		t.Fatalf("an old text: %v", err)
	}
	want := New(rules, 1)
	play(t, &want, "7H>W1", "9S>W2", "4H>W3", "8D>W4", "T", "8H>W1", "5C>W2", "JH>W3", "6H>W4")
	if g != want {
		t.Fatalf("the old text replays as\n%s\nwant\n%s", g.String(), want.String())
	}
	for deal := range uint64(10) {
		g, moves := PlayBot(rules, deal, NewBot(Medium, deal))
		text := RecordOf(&g, moves).String()
		if !slices.Contains(moves, TurnMove) || !slices.Contains(strings.Fields(text), "T") {
			t.Fatalf("deal %d: the game text has no T:\n%s", deal, text)
		}
		var without []Move
		for _, m := range moves {
			if m != TurnMove {
				without = append(without, m)
			}
		}
		for _, r := range []Record{mustParse(t, text), RecordOf(&g, without)} {
			got, err := mustParse(t, r.String()).Replay()
			if err != nil || got != g {
				t.Fatalf("deal %d: %d moves replay as %s, %v; want %s", deal, len(r.Moves), got.String(), err, g.String())
			}
		}
	}
	// A text that places a card still in the stock is refused as before.
	bad := "[Variant \"four-at-a-time\"]\n[Deal \"1\"]\n7H>W1 9S>W2 4H>W3 8D>W4 5H>W1\n"
	if _, err := mustParse(t, bad).Replay(); err == nil || !strings.Contains(err.Error(), "move 5") {
		t.Fatalf("a text placing a card of the stock: %v", err)
	}
}

// The solver's lines in four-at-a-time turn with T and replay under the
// rules, as game texts too: the search's, the SAT stage's, and the
// played-out line of a position that cannot be won.
func TestFourAtATimeSolverLinesReplay(t *testing.T) {
	rules := mustVariant(t, "four-at-a-time")
	check := func(name string, g Game, line []Move, want Status) {
		t.Helper()
		turns := 0
		for i, m := range line {
			if m == TurnMove {
				turns++
				if g.handN != 0 {
					t.Fatalf("%s: move %d turns with %d cards turned", name, i+1, g.handN)
				}
			}
			if err := g.Apply(m); err != nil {
				t.Fatalf("%s: move %d (%v): %v", name, i+1, m, err)
			}
		}
		if g.Status() != want || turns == 0 {
			t.Fatalf("%s: the line ends %v after %d turns; want %v", name, g.Status(), turns, want)
		}
	}
	for _, tc := range []struct {
		deal      uint64
		maxNodes  int64
		searchSAT bool
	}{{1, 200_000, false}, {2, 200_000, false}, {3, 5_000, true}} {
		sol := Solve(rules, tc.deal, SolveOptions{MaxNodes: tc.maxNodes, SkipBestScore: true})
		name := fmt.Sprintf("deal %d", tc.deal)
		if sol.Outcome != Winnable || sol.SAT != tc.searchSAT {
			t.Fatalf("%s: %v (SAT %v), want won (SAT %v)", name, sol.Outcome, sol.SAT, tc.searchSAT)
		}
		check(name, New(rules, tc.deal), sol.Line, Won)
		rec, err := LineRecord(rules, tc.deal, sol.Line)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g, err := mustParse(t, rec.String()).Replay(); err != nil || g.Status() != Won {
			t.Fatalf("%s: the game text replays to %v, %v", name, g.Status(), err)
		}
	}
	// A lost end position between two turns: the best line is played out
	// to the end, turning as it goes.
	rng := rand.New(rand.NewPCG(5, 6))
	lost := 0
	for range 200 {
		g := endgame(t, rules, rng, 24, 16)
		if g.handN != 0 || g.StockLeft() < 8 {
			continue
		}
		sol := SolveGame(&g, SolveOptions{MaxNodes: 200_000})
		if sol.Outcome != Lost {
			continue
		}
		lost++
		check("a lost position", g, sol.Line, Stuck)
		if lost == 3 {
			break
		}
	}
	if lost == 0 {
		t.Fatal("no lost position between two turns among the cases")
	}
}
