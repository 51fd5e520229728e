package race_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// TestSpectatorsSeeOnlyTurnedCardsInEveryVariant plays a race of every
// variant with one racer far ahead, without and with a spectator delay.
// After every move, each event a spectator got is checked against the
// deal and the racers' games (the oracle in racetest, written apart from
// the race's rule), and, without a delay, the spectator's boards must be
// the racers' boards with exactly the cards not every racer still playing
// has turned face down: nothing more hidden, nothing less.
func TestSpectatorsSeeOnlyTurnedCardsInEveryVariant(t *testing.T) {
	for _, rules := range engine.Variants() {
		for _, delay := range []time.Duration{0, 3 * time.Second} {
			t.Run(fmt.Sprint(rules.Name, " delay ", delay), func(t *testing.T) {
				const deal = 11
				opts := race.Options{Variant: rules.Name, Deal: deal, DealNamed: true, Public: delay > 0, SpectatorDelay: delay}
				f := newRace(t, opts)
				w := &recorder{}
				defer f.race.Watch(w)()
				f.seatBoth(t)
				sight, err := racetest.NewSight(rules.Name, deal)
				if err != nil {
					t.Fatal(err)
				}
				games := []engine.Game{engine.New(rules, deal), engine.New(rules, deal)}
				var boards [2]*engine.View
				checked, hidden, redealt := 0, 0, false
				check := func() {
					t.Helper()
					evs := w.Events()
					for _, ev := range evs[checked:] {
						raw, err := json.Marshal(ev)
						if err != nil {
							t.Fatal(err)
						}
						if st, ok := ev.(*race.StateEvent); ok && st.State.Over() {
							checked = len(evs)
							return
						}
						if err := sight.Check(raw, games); err != nil {
							t.Fatal(err)
						}
						switch e := ev.(type) {
						case *race.StateEvent:
							boards = [2]*engine.View{&e.Boards[0], &e.Boards[1]}
						case *race.BoardEvent:
							boards[e.Seat] = &e.View
						}
					}
					checked = len(evs)
					if delay > 0 || boards[0] == nil {
						return
					}
					for s := range 2 {
						got, want := fmt.Sprint(*boards[s]), fmt.Sprint(sight.Mask(games[s].View(), games))
						if got != want {
							t.Fatalf("seat %d shown as\n%s\nwant\n%s", s, got, want)
						}
						if got != fmt.Sprint(games[s].View()) {
							hidden++
						}
					}
				}
				move := func(s int) bool {
					t.Helper()
					g := &games[s]
					if g.Status() != engine.Playing || f.race.State() != race.Running {
						return false
					}
					m := racetest.Greedy(g)
					if err := f.race.Move(s, m.String(), ""); err != nil {
						t.Fatalf("seat %d move %s: %v", s, m, err)
					}
					if err := g.Apply(m); err != nil {
						t.Fatal(err)
					}
					if m.String() == "R" {
						redealt = true
					}
					check()
					return true
				}
				check()
				for i := 0; f.race.State() == race.Running && i < 200; i++ {
					moved := false
					for range 8 {
						moved = move(0) || moved
					}
					if i%3 == 0 || !moved {
						moved = move(1) || moved
					}
					f.clock.Advance(time.Second)
					check()
					if !moved {
						break
					}
				}
				if f.race.State() == race.Running {
					f.clock.Advance(time.Hour) // the time limit
				}
				if !f.race.State().Over() {
					t.Fatalf("race %s", f.race.State())
				}
				final, ok := w.Last().(*race.StateEvent)
				if !ok || final.Boards == nil {
					t.Fatalf("last spectator event %#v", w.Last())
				}
				for s := range 2 {
					if got, want := fmt.Sprint(final.Boards[s]), fmt.Sprint(games[s].View()); got != want {
						t.Errorf("the final state shows seat %d as\n%s\nwant every card face up\n%s", s, got, want)
					}
				}
				if delay == 0 && hidden == 0 {
					t.Error("no card was ever hidden: nothing tested")
				}
				if rules.Redeals > 0 && !redealt {
					t.Logf("%s: nobody redealt", rules.Name)
				}
			})
		}
	}
}

// TestUnwatchedFeedRunsWithoutTimers: in memory mode a public race nobody
// watches sets no timer for its spectators' feed, whose delay still holds:
// a spectator who comes gets the boards as of the moves that are due, not
// the later ones, and from then on each move reaches them after the delay.
func TestUnwatchedFeedRunsWithoutTimers(t *testing.T) {
	const deal, delay = 11, 3 * time.Second
	f := newRace(t, race.Options{Deal: deal, DealNamed: true, Public: true, SpectatorDelay: delay})
	f.seatBoth(t)
	rules, _ := engine.Variant("classic")
	g := engine.New(rules, deal)
	move := func() {
		t.Helper()
		m := racetest.Greedy(&g)
		if err := f.race.Move(0, m.String(), ""); err != nil {
			t.Fatal(err)
		}
		if err := g.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Advance(delay) // the start's events reach the feed
	timers := f.clock.Pending()
	for range 3 {
		move()
		f.clock.Advance(time.Second)
	}
	if got := f.clock.Pending(); got != timers {
		t.Errorf("%d timers pending after moves nobody watches, want %d as before them", got, timers)
	}
	f.clock.Advance(delay - 2*time.Second) // the first two moves are due, the third is not
	w := &recorder{}
	defer f.race.Watch(w)()
	st, ok := w.Events()[0].(*race.StateEvent)
	if !ok || st.Boards == nil {
		t.Fatalf("the spectator's first event is %#v, want a state with boards", w.Events()[0])
	}
	if got := st.Boards[0].Moves; got != 2 {
		t.Errorf("the spectator's board shows %d moves, want the 2 due", got)
	}
	f.clock.Advance(time.Second) // the third is due now
	move()
	var boards []int
	for _, ev := range w.Events()[1:] {
		if b, ok := ev.(*race.BoardEvent); ok && b.Seat == 0 {
			boards = append(boards, b.Seq)
		}
	}
	if len(boards) != 1 || boards[0] != 3 {
		t.Errorf("boards of seqs %v reached the spectator, want only the third's (the fourth is not due)", boards)
	}
	f.clock.Advance(delay + race.FeedSlack)
	if last, ok := w.Last().(*race.BoardEvent); !ok || last.Seq != 4 {
		t.Errorf("the spectator's last event is %#v, want the fourth move's board", w.Last())
	}
}
