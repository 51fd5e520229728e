package race

import (
	"testing"

	"sirtommy/engine"
)

// TestFeedShowsWhatEveryRacerStillPlayingTurned drives the feed type
// alone over three seats: a spectator sees a card once every racer still
// playing has turned it, a racer who is out stops holding the others'
// cards back, and a sealed deal shows nothing of the stock.
func TestFeedShowsWhatEveryRacerStillPlayingTurned(t *testing.T) {
	rules, _ := engine.Variant("classic")
	const deal = 11
	stock, _ := engine.Layout(rules, deal)
	games := []engine.Game{engine.New(rules, deal), engine.New(rules, deal), engine.New(rules, deal)}
	var f feed
	f.reset(newSight(rules, deal), games, make([]MoveRecord, 3), []bool{true, true, true}, &StateEvent{State: Running}, 0)
	// Seat s places its turned cards on the waste, n of them.
	place := func(s, n int) {
		t.Helper()
		for range n {
			g := &f.games[s]
			m := engine.PlaceMove(g.View().Turned[0], engine.W(0))
			if err := f.play(&feedMove{seat: s, play: m, move: m.String()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	place(0, 5)
	place(1, 3)
	place(2, 4)
	// Seat 1 has turned the fewest: 3 placed, the 4th showing.
	if got, want := f.revealLimit(false), f.sight.turned(&f.games[1]); got != want || want != 4 {
		t.Fatalf("reveal limit %d, want %d (seat 1's turned cards, 4)", got, want)
	}
	v := f.view(0, false)
	shown := v.Waste[0].Cards
	for k, c := range shown {
		if hidden := k >= 4; (c == engine.Hidden) != hidden {
			t.Errorf("seat 0's waste card %d (stock %s): shown as %s", k, stock[k], c)
		}
	}
	if !f.hid[0] {
		t.Error("seat 0's board hid cards but is not marked so")
	}
	if got := f.notation(stock[4].String()+">W1", false); got != "??>W1" {
		t.Errorf("a hidden card's move shown as %q", got)
	}
	// Seat 1 is out: seat 2 (4 placed, the 5th showing) holds back now.
	f.games[1].Resign()
	if got := f.revealLimit(false); got != 5 {
		t.Fatalf("reveal limit %d with seat 1 out, want 5", got)
	}
	if !f.holds(0, 4, 5) || f.holds(1, 4, 5) {
		t.Error("holds: seat 0 holds stock card 4 and seat 1 does not")
	}
	// Sealed: nothing of the stock, even once the race is over.
	if got := f.revealLimit(true); got != 0 {
		t.Errorf("reveal limit %d while sealed, want 0", got)
	}
	f.state = &StateEvent{State: Finished}
	for k, c := range f.view(0, true).Waste[0].Cards {
		if c != engine.Hidden {
			t.Errorf("sealed finished race: seat 0's waste card %d shown as %s", k, c)
		}
	}
	for k, c := range f.view(0, false).Waste[0].Cards {
		if c != stock[k] {
			t.Errorf("finished race: seat 0's waste card %d shown as %s, want %s", k, c, stock[k])
		}
	}
}
