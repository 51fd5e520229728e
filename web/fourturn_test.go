package web_test

import (
	"net/http"
	"slices"
	"strconv"
	"testing"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// TestFourAtATimeRaceWithTurns plays a four-at-a-time race over real
// websockets: between two turns the player's view shows no card of the
// next four, a waste card may go up, T (sent as a move like any other)
// turns the next four, after which a waste card is refused until they are
// placed, and so is T itself. No message to the player names a card she
// has not turned.
func TestFourAtATimeRaceWithTurns(t *testing.T) {
	rules, err := engine.Variant("four-at-a-time")
	if err != nil {
		t.Fatal(err)
	}
	// A deal on which the greedy player moves a waste card up between two
	// turns.
	deal := uint64(0)
	for n := uint64(1); n < 200 && deal == 0; n++ {
		g := engine.New(rules, n)
		for g.Status() == engine.Playing && deal == 0 {
			mv := racetest.Greedy(&g)
			if len(g.View().Turned) == 0 && mv.Kind == engine.Place && g.StockLeft() > 0 {
				deal = n
			}
			if err := g.Apply(mv); err != nil {
				t.Fatal(err)
			}
		}
	}
	if deal == 0 {
		t.Fatal("no deal below 200 has waste moves between turns")
	}

	e := newEnv(t, nil)
	id, a, b := e.startRaceOf(deal, "four-at-a-time")

	order := engine.Deal(deal)
	g := engine.New(rules, deal)
	check := func(from int) {
		t.Helper()
		seen := order[:52-g.StockLeft()]
		for _, m := range a.all[from:] {
			if m.Type == "state" && m.Result != nil {
				return // the race is over: the deal is revealed on purpose
			}
			for _, c := range cardsIn(t, m.raw) {
				if !slices.Contains(seen, c) {
					t.Fatalf("ann got %s before turning it, in %s", c, m.raw)
				}
			}
		}
	}
	turns, between, refused := 0, 0, 0
	for i := 0; g.Status() == engine.Playing && !a.finished(); i++ {
		from := len(a.all)
		mv := racetest.Greedy(&g)
		id := "m" + strconv.Itoa(i)
		waiting := len(g.View().Turned) == 0 && g.StockLeft() > 0
		if waiting && mv.Kind == engine.Place && refused == 0 {
			// Turn first instead: then the waste card, and T again, are
			// refused until the four are placed.
			if !a.move(engine.TurnMove, id) {
				t.Fatal("the race ended")
			}
			if err := g.Apply(engine.TurnMove); err != nil {
				t.Fatal(err)
			}
			turns++
			check(from)
			for _, m := range []engine.Move{mv, engine.TurnMove} {
				got := a.expectError(map[string]any{"type": "move", "move": m.String(), "id": "x" + strconv.Itoa(i)}, race.CodeIllegalMove)
				if got.Reason != engine.ReasonPlaceTurned.String() {
					t.Fatalf("%s after T: reason %q, want %q (%s)", m, got.Reason, engine.ReasonPlaceTurned, got.raw)
				}
				refused++
			}
			continue
		}
		if waiting && mv.Kind == engine.Place {
			between++ // a waste card going up before T, legal
		}
		if err := g.Apply(mv); err != nil {
			t.Fatal(err)
		}
		if mv == engine.TurnMove {
			turns++
		}
		if !a.move(mv, id) {
			break
		}
		check(from)
		last := a.all[len(a.all)-1]
		if v := last.View; v != nil {
			if v.Stock != g.StockLeft() || !slices.Equal(v.Turned, g.View().Turned) || v.WasteLocked != g.View().WasteLocked {
				t.Fatalf("after %s the server's view is %s; the engine's %s", mv, last.raw, g.String())
			}
		}
	}
	if turns < 10 || between == 0 || refused != 2 {
		t.Fatalf("the race made %d turns, %d waste moves between turns, %d moves refused after T", turns, between, refused)
	}
	t.Logf("deal %d: %d turns, %d waste moves between turns", deal, turns, between)

	// Once the race is over, the solution page's game text turns with T
	// and replays.
	if !a.finished() {
		b.send(map[string]any{"type": "resign"})
		if g.Status() == engine.Playing {
			a.send(map[string]any{"type": "resign"})
		}
	}
	a.result()
	status, body := e.solution(id)
	if status != http.StatusOK || body.Result != "won" {
		t.Fatalf("solution: %d %+v", status, body)
	}
	rec, err := engine.ParseRecord(body.Game)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rec.Moves, engine.TurnMove) {
		t.Fatalf("the solution's game has no T:\n%s", body.Game)
	}
	if won, err := rec.Replay(); err != nil || won.Status() != engine.Won {
		t.Fatalf("the solution's game replays to %v, %v", won.Status(), err)
	}
}
