package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// tracker is the test's own account of the cards on each foundation, kept
// from the moves played, since a Game keeps only the top cards.
type tracker struct {
	found [4][]Card
}

// track starts a tracker for a game fresh from New.
func track(g *Game) tracker {
	var tr tracker
	for f := range 4 {
		if g.foundN[f] == 1 {
			tr.found[f] = []Card{g.found[f]}
		}
	}
	return tr
}

// observe records a move that was applied.
func (tr *tracker) observe(m Move) {
	if m.Kind == Place && m.To.Kind == Foundation {
		tr.found[m.To.Index] = append(tr.found[m.To.Index], m.Card)
	}
}

// checkInvariants checks everything that must hold in any reachable
// position. It returns an error rather than failing so that the fuzz
// targets can use it too.
func checkInvariants(g *Game, tr *tracker) error {
	r := g.rules
	// Foundations: valid sequences, matching the game's tops and counts.
	score := 0
	for f := range 4 {
		seq := tr.found[f]
		if int(g.foundN[f]) != len(seq) {
			return fmt.Errorf("F%d holds %d cards, the moves put %d there", f+1, g.foundN[f], len(seq))
		}
		if len(seq) == 0 {
			if g.found[f] != NoCard {
				return fmt.Errorf("empty F%d has top %v", f+1, g.found[f])
			}
			continue
		}
		if g.found[f] != seq[len(seq)-1] {
			return fmt.Errorf("F%d top is %v, the moves put %v last", f+1, g.found[f], seq[len(seq)-1])
		}
		if len(seq) > r.Length {
			return fmt.Errorf("F%d holds %d cards, more than %d", f+1, len(seq), r.Length)
		}
		if seq[0].Rank() != r.Start[f] {
			return fmt.Errorf("F%d starts with %v, want rank %v", f+1, seq[0], r.Start[f])
		}
		for i := 1; i < len(seq); i++ {
			want := (int(seq[i-1].Rank())+r.Step[f]-1)%13 + 1
			if int(seq[i].Rank()) != want {
				return fmt.Errorf("F%d: %v on %v (step %d)", f+1, seq[i], seq[i-1], r.Step[f])
			}
			if r.InSuit && seq[i].Suit() != seq[0].Suit() {
				return fmt.Errorf("F%d: %v on %v in suit", f+1, seq[i], seq[i-1])
			}
		}
		score += len(seq)
	}
	if g.Score() != score {
		return fmt.Errorf("score %d, foundations hold %d", g.Score(), score)
	}
	// Every card in play exactly once: stock, turned, waste and foundations.
	var all []Card
	all = append(all, g.stock[g.next:g.stockN]...)
	handN := 0
	for _, c := range g.hand {
		if c != NoCard {
			all = append(all, c)
			handN++
		}
	}
	if handN != int(g.handN) {
		return fmt.Errorf("%d turned cards, handN %d", handN, g.handN)
	}
	for p := range 4 {
		all = append(all, g.waste[p][:g.wasteN[p]]...)
	}
	for f := range 4 {
		all = append(all, tr.found[f]...)
	}
	if len(all) != r.Deck() {
		return fmt.Errorf("%d cards in play, want %d", len(all), r.Deck())
	}
	var seen [52]bool
	for _, c := range all {
		if !c.Valid() || r.removed(c.Rank()) {
			return fmt.Errorf("card %#x in play", uint8(c))
		}
		if seen[c.Index()] {
			return fmt.Errorf("%v is in play twice", c)
		}
		seen[c.Index()] = true
	}
	if handN == 0 && g.StockLeft() > 0 && r.Turn == 1 {
		return fmt.Errorf("nothing turned with %d cards in the stock", g.StockLeft())
	}
	if locked := r.Turn > 1 && handN > 0; g.wasteLocked() != locked || g.View().WasteLocked != locked {
		return fmt.Errorf("waste locked %v with %d turned", g.wasteLocked(), handN)
	}
	if turn := r.Turn > 1 && handN == 0 && g.StockLeft() > 0 && g.Status() == Playing; slices.Contains(g.Moves(), TurnMove) != turn {
		return fmt.Errorf("T offered %v with %d turned and %d in the stock", !turn, handN, g.StockLeft())
	}
	// What the player sees agrees with the game.
	view, mem := g.View(), g.Memory()
	for _, v := range []View{view, mem} {
		if v.Stock != g.StockLeft() || v.Score != score || v.Target != r.Deck() || v.Status != g.Status() || v.Moves != g.Plies() {
			return fmt.Errorf("view %+v disagrees with the game", v)
		}
		if !slices.Equal(v.Turned, all[g.StockLeft():g.StockLeft()+handN]) {
			return fmt.Errorf("view shows %v turned", v.Turned)
		}
		for f := range 4 {
			if fv := v.Foundations[f]; fv.Count != int(g.foundN[f]) || fv.Top != g.found[f] {
				return fmt.Errorf("view F%d %+v", f+1, fv)
			}
		}
	}
	for p := range 4 {
		pile := g.waste[p][:g.wasteN[p]]
		if !slices.Equal(mem.Waste[p].Cards, pile) || mem.Waste[p].Count != len(pile) || view.Waste[p].Count != len(pile) {
			return fmt.Errorf("W%d is %v; memory %+v, view %+v", p+1, pile, mem.Waste[p], view.Waste[p])
		}
		want := pile
		if r.HiddenWaste && len(pile) > 1 {
			want = pile[len(pile)-1:]
		}
		if !slices.Equal(view.Waste[p].Cards, want) {
			return fmt.Errorf("view W%d shows %v of %v", p+1, view.Waste[p].Cards, pile)
		}
	}
	// Status.
	if (g.Status() == Won) != (score == r.Deck()) {
		return fmt.Errorf("status %v with %d of %d cards up", g.Status(), score, r.Deck())
	}
	moves := g.Moves()
	switch g.Status() {
	case Playing:
		if len(moves) == 0 {
			return fmt.Errorf("playing with no legal move")
		}
	case Stuck:
		if g.StockLeft() > 0 || handN > 0 {
			return fmt.Errorf("stuck with %d in the stock and %d turned", g.StockLeft(), handN)
		}
		if err := noFoundationReachable(g); err != nil {
			return err
		}
	}
	if g.Status().Over() && len(moves) > 0 {
		return fmt.Errorf("%v game offers %v", g.Status(), moves)
	}
	return nil
}

// noFoundationReachable checks a stuck game: played on as if it were not
// finished, no sequence of moves (searched up to a bound) puts a card on a
// foundation, and no redeal is left.
func noFoundationReachable(stuck *Game) error {
	start := *stuck
	start.status = Playing
	seen := map[Game]bool{start: true}
	todo := []Game{start}
	for len(todo) > 0 && len(seen) < 2000 {
		g := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, m := range g.Moves() {
			if m.Kind == Redeal || m.To.Kind == Foundation {
				return fmt.Errorf("stuck, but %v is possible", m)
			}
			next := g
			if err := next.Apply(m); err != nil {
				return fmt.Errorf("stuck search: %v offered but refused: %v", m, err)
			}
			next.status = Playing
			if !seen[next] {
				seen[next] = true
				todo = append(todo, next)
			}
		}
	}
	return nil
}

// checkMoves checks that every listed move applies and that moves not
// listed, among candidates built from every card the game shows (and a few
// it does not), are refused without changing anything.
func checkMoves(g *Game, rng *rand.Rand) error {
	legal := g.AppendMoves(make([]Move, 0, 64))
	for i, m := range legal {
		if slices.Contains(legal[:i], m) {
			return fmt.Errorf("%v listed twice", m)
		}
		c := *g
		if err := c.Apply(m); err != nil {
			return fmt.Errorf("listed move %v refused: %v", m, err)
		}
		if c.Plies() != g.Plies()+1 {
			return fmt.Errorf("%v did not count as a move", m)
		}
	}
	var cards []Card
	for _, c := range g.hand {
		if c != NoCard {
			cards = append(cards, c)
		}
	}
	for p := range 4 {
		pile := g.waste[p][:g.wasteN[p]]
		cards = append(cards, pile[max(len(pile)-2, 0):]...) // the top and the card below
	}
	for f := range 4 {
		if g.foundN[f] > 0 {
			cards = append(cards, g.found[f])
		}
	}
	if g.next < g.stockN {
		cards = append(cards, g.stock[g.next])
	}
	cards = append(cards, CardAt(rng.IntN(52)))
	cand := []Move{RedealMove, {Kind: Place, Card: NoCard, To: F(0)}}
	for _, c := range cards {
		for i := range 4 {
			cand = append(cand, PlaceMove(c, F(i)), PlaceMove(c, W(i)))
		}
	}
	for _, m := range cand {
		if slices.Contains(legal, m) {
			continue
		}
		c := *g
		err := c.Apply(m)
		ie, ok := err.(*IllegalMoveError)
		if !ok {
			return fmt.Errorf("unlisted move %v: Apply gave %v, want an *IllegalMoveError", m, err)
		}
		if c != *g {
			return fmt.Errorf("refused move %v (%v) changed the game", m, ie.Reason)
		}
	}
	return nil
}

// randomMove picks a legal move, a foundation move half the time when there
// is one, so that games get somewhere.
func randomMove(g *Game, rng *rand.Rand, buf []Move) Move {
	moves := g.AppendMoves(buf[:0])
	if rng.IntN(2) == 0 {
		var up []Move
		for _, m := range moves {
			if m.Kind == Redeal || m.To.Kind == Foundation {
				up = append(up, m)
			}
		}
		if len(up) > 0 {
			return up[rng.IntN(len(up))]
		}
	}
	return moves[rng.IntN(len(moves))]
}

// TestRandomPlay plays random legal games of every variant on many deals,
// checking the invariants after every move, the legal moves at every
// position, and that each game's record replays to the same game.
func TestRandomPlay(t *testing.T) {
	deals, full := 60, 5 // deals per variant; deals whose every position gets checkMoves
	if testing.Short() {
		deals, full = 10, 2
	}
	for _, r := range Variants() {
		t.Run(r.Name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(len(r.Name)), 0x5eed))
			statuses := map[Status]int{}
			var buf [64]Move
			for i := range deals {
				n := rng.Uint64()
				if i < 3 {
					n = uint64(i) // deals 0, 1, 2 always
				}
				g := New(r, n)
				tr := track(&g)
				var moves []Move
				resignAt := -1
				if i%7 == 3 {
					resignAt = rng.IntN(60)
				}
				for g.Status() == Playing {
					if err := checkInvariants(&g, &tr); err != nil {
						t.Fatalf("deal %d after %v: %v", n, moves, err)
					}
					if i < full || rng.IntN(16) == 0 {
						if err := checkMoves(&g, rng); err != nil {
							t.Fatalf("deal %d after %v: %v", n, moves, err)
						}
					}
					if len(moves) == resignAt || len(moves) >= 2000 {
						g.Resign()
						break
					}
					m := randomMove(&g, rng, buf[:])
					if err := g.Apply(m); err != nil {
						t.Fatalf("deal %d after %v: listed move %v refused: %v", n, moves, m, err)
					}
					tr.observe(m)
					moves = append(moves, m)
				}
				if err := checkInvariants(&g, &tr); err != nil {
					t.Fatalf("deal %d at the end (%v) after %v: %v", n, g.Status(), moves, err)
				}
				if err := checkMoves(&g, rng); err != nil {
					t.Fatalf("deal %d at the end: %v", n, err)
				}
				statuses[g.Status()]++
				checkReplay(t, &g, moves)
			}
			if statuses[Stuck] == 0 || statuses[Resigned] == 0 {
				t.Errorf("games ended %v: want some stuck and some resigned", statuses)
			}
			t.Logf("%s: %v", r.Name, statuses)
		})
	}
}

// checkReplay writes the game's record, reads it back and replays it: the
// same record and exactly the same game must come out.
func checkReplay(t *testing.T, g *Game, moves []Move) {
	t.Helper()
	rec := RecordOf(g, moves)
	text := rec.String()
	back, err := ParseRecord(text)
	if err != nil {
		t.Fatalf("ParseRecord of\n%s: %v", text, err)
	}
	if !reflect.DeepEqual(back, rec) {
		t.Fatalf("record read back differs:\n got %+v\nwant %+v", back, rec)
	}
	final, err := back.Replay()
	if err != nil {
		t.Fatalf("Replay of\n%s: %v", text, err)
	}
	if final != *g {
		t.Fatalf("Replay of\n%s ends in a different game:\n got %s\nwant %s", text, final.String(), g.String())
	}
}

// TestWinsHappen plays many random classic-family games to check that the
// invariants also hold at a win, which random play rarely reaches: the
// easiest variants are used, with a greedy policy.
func TestWinsHappen(t *testing.T) {
	wins := 0
	for _, name := range []string{"strategy", "puss-in-the-corner", "aces-out"} {
		r := mustVariant(t, name)
		rng := rand.New(rand.NewPCG(7, 7))
		for n := range uint64(300) {
			g := New(r, n)
			tr := track(&g)
			var moves []Move
			for g.Status() == Playing && len(moves) < 3000 {
				m := greedyMove(&g, rng)
				if err := g.Apply(m); err != nil {
					t.Fatalf("%s deal %d: %v", name, n, err)
				}
				tr.observe(m)
				moves = append(moves, m)
			}
			if g.Status() == Won {
				wins++
				if err := checkInvariants(&g, &tr); err != nil {
					t.Fatalf("%s deal %d won: %v", name, n, err)
				}
				checkReplay(t, &g, moves)
			}
		}
	}
	if wins == 0 {
		t.Fatal("no win in 900 greedy games")
	}
	t.Logf("%d wins", wins)
}

// greedyMove plays to a foundation when it can; otherwise it puts a turned
// card on the waste pile whose top is highest (or an empty one), or moves
// at random.
func greedyMove(g *Game, rng *rand.Rand) Move {
	moves := g.Moves()
	for _, m := range moves {
		if m.Kind == Place && m.To.Kind == Foundation {
			return m
		}
	}
	for _, c := range g.hand {
		if c == NoCard {
			continue
		}
		best, bestScore := -1, -1000
		for p := range 4 {
			s := 100 // an empty pile is best
			if top := wasteTop(g, p); top != NoCard {
				s = int(top.Rank())
				if top.Rank() < c.Rank() {
					s -= 20 // burying a lower card is worst
				}
			}
			if s > bestScore {
				best, bestScore = p, s
			}
		}
		return PlaceMove(c, W(best))
	}
	return moves[rng.IntN(len(moves))]
}
