package web_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/web"
)

// findDeal returns a deal on which the two strategies end stuck with
// scores that satisfy ok.
func findDeal(t *testing.T, a, b func(*engine.Game) engine.Move, ok func(sa, sb int) bool) uint64 {
	t.Helper()
	for d := uint64(1); d < 2000; d++ {
		ga, gb := newGame(d), newGame(d)
		for ga.Status() == engine.Playing {
			_ = ga.Apply(a(&ga))
		}
		for gb.Status() == engine.Playing {
			_ = gb.Apply(b(&gb))
		}
		if ga.Status() == engine.Stuck && gb.Status() == engine.Stuck && ok(ga.Score(), gb.Score()) {
			return d
		}
	}
	t.Fatal("no deal found")
	return 0
}

func TestTwoClientsRaceToTheEnd(t *testing.T) {
	e := newEnv(t, nil)
	deal := findDeal(t, racetest.Greedy, racetest.Dumb, func(sa, sb int) bool { return sa > sb+3 })
	id, a, b := e.startRace(deal)
	ga, gb := newGame(deal), newGame(deal)
	// Interleave: each plays one move in turn while both can.
	for ga.Status() == engine.Playing || gb.Status() == engine.Playing {
		if a.finished() || b.finished() {
			break
		}
		if ga.Status() == engine.Playing {
			a.play(&ga, racetest.Greedy, func() bool { return ga.Plies() > gb.Plies() })
		}
		if gb.Status() == engine.Playing && !b.finished() {
			b.play(&gb, racetest.Dumb, func() bool { return gb.Plies() > ga.Plies() })
		}
	}
	ra, rb := a.result(), b.result()
	if !reflect.DeepEqual(ra, rb) {
		t.Fatalf("players got different results:\n%+v\n%+v", ra, rb)
	}
	if ra.Winner == nil || *ra.Winner != a.seat || ra.Outcome != "win" {
		t.Fatalf("result %+v, want ann (seat %d) to win", ra, a.seat)
	}
	if ra.Deal != strconv.FormatUint(deal, 10) {
		t.Errorf("deal %s, want %d", ra.Deal, deal)
	}
	// The replay: game texts that replay to the scores, and every move.
	in := e.info(id)
	if in.Result == nil || in.State != race.Finished {
		t.Fatalf("info %+v", in)
	}
	total := 0
	for s, text := range in.Result.Games {
		rec, err := engine.ParseRecord(text)
		if err != nil {
			t.Fatal(err)
		}
		g, err := rec.Replay()
		if err != nil {
			t.Fatalf("game %d does not replay: %v\n%s", s, err, text)
		}
		if g.Score() != in.Result.Scores[s] {
			t.Errorf("game %d replays to %d, result says %d", s, g.Score(), in.Result.Scores[s])
		}
		total += len(rec.Moves)
	}
	if len(in.Moves) != total {
		t.Errorf("replay has %d moves, game texts %d", len(in.Moves), total)
	}
	// A move after the end is refused.
	a.expectError(map[string]any{"type": "move", "move": "AS>F1"}, race.CodeRaceOver)
}

func TestOneStuckOtherWinsByCount(t *testing.T) {
	e := newEnv(t, nil)
	deal := findDeal(t, racetest.Dumb, racetest.Greedy, func(sa, sb int) bool { return sb > sa+1 && sa > 0 })
	_, a, b := e.startRace(deal)
	ga, gb := newGame(deal), newGame(deal)
	a.play(&ga, racetest.Dumb, nil)
	if ga.Status() != engine.Stuck {
		t.Fatalf("ann is %s", ga.Status())
	}
	b.untilType("opponent")
	b.play(&gb, racetest.Greedy, nil)
	r := b.result()
	if r.Winner == nil || *r.Winner != b.seat || r.Reason != "passed" || r.Scores[b.seat] != r.Scores[a.seat]+1 {
		t.Fatalf("result %+v: want bob to win as soon as he passed ann", r)
	}
	if ra := a.result(); !reflect.DeepEqual(ra, r) {
		t.Fatalf("results differ")
	}
}

func TestDrawOnEqualCards(t *testing.T) {
	e := newEnv(t, nil)
	deal := findDeal(t, racetest.Greedy, racetest.Greedy, func(sa, sb int) bool { return true })
	_, a, b := e.startRace(deal)
	ga, gb := newGame(deal), newGame(deal)
	a.play(&ga, racetest.Greedy, nil)
	b.play(&gb, racetest.Greedy, nil)
	r := a.result()
	if r.Outcome != "draw" || r.Winner != nil || r.Reason != "equal-cards" {
		t.Fatalf("result %+v, want a draw", r)
	}
}

func TestTimeoutAbortAndForfeit(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		e := newEnv(t, nil)
		_, a, b := e.startRace(11)
		ga, gb := newGame(11), newGame(11)
		a.play(&ga, racetest.Greedy, func() bool { return ga.Score() >= 1 })
		b.move(engine.PlaceMove(gb.View().Turned[0], engine.W(0)), "x")
		e.clock.Advance(race.DefaultTimeLimit)
		r := b.result()
		if r.Reason != "time" || r.Winner == nil || *r.Winner != a.seat {
			t.Fatalf("result %+v, want ann on time", r)
		}
	})
	t.Run("abort", func(t *testing.T) {
		e := newEnv(t, nil)
		_, a, b := e.startRace(11)
		ga := newGame(11)
		a.move(racetest.Greedy(&ga), "x")
		e.clock.Advance(race.DefaultFirstMoveTimeout)
		m := b.untilState(race.Aborted)
		if m.Result.Reason != "no-first-move" || m.Result.Rated {
			t.Fatalf("result %+v", m.Result)
		}
	})
	t.Run("forfeit", func(t *testing.T) {
		e := newEnv(t, nil)
		_, a, b := e.startRace(11)
		ga, gb := newGame(11), newGame(11)
		a.move(racetest.Greedy(&ga), "x")
		b.move(racetest.Greedy(&gb), "y")
		b.ws.Close()
		p := a.untilType("presence")
		if !strings.Contains(string(p.raw), `"connected":false`) || !strings.Contains(string(p.raw), "graceUntil") {
			t.Fatalf("presence %s", p.raw)
		}
		e.clock.Advance(race.DefaultGrace)
		r := a.result()
		if r.Reason != "forfeit" || r.Winner == nil || *r.Winner != a.seat {
			t.Fatalf("result %+v, want ann by forfeit", r)
		}
	})
}

func TestDisconnectAndResumeRestoresExactState(t *testing.T) {
	e := newEnv(t, nil)
	id, a, b := e.startRace(21)
	ga, gb := newGame(21), newGame(21)
	a.play(&ga, racetest.Greedy, func() bool { return ga.Plies() >= 8 })
	b.play(&gb, racetest.Greedy, func() bool { return gb.Plies() >= 3 })
	a.ws.Close()
	b.untilType("presence")
	e.clock.Advance(race.DefaultGrace / 2)

	a2 := e.dial()
	a2.send(map[string]any{"type": "resume", "race": id, "token": a.tok, "id": "r"})
	j := a2.untilType("joined")
	st := a2.untilType("state")
	if *j.Seat != a.seat || st.You == nil {
		t.Fatalf("resumed seat %v state %s", j.Seat, st.raw)
	}
	want, _ := json.Marshal(ga.View())
	got, _ := json.Marshal(st.You)
	if string(got) != string(want) {
		t.Fatalf("resumed view\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(string(st.raw), `"opponent":{"score":`+strconv.Itoa(gb.Score())) {
		t.Errorf("opponent counts missing in %s", st.raw)
	}
	b.until(func(m msg) bool { return m.Type == "presence" && strings.Contains(string(m.raw), `"connected":true`) })
	// Play on after the grace period would have ended: no forfeit.
	e.clock.Advance(race.DefaultGrace)
	a2.play(&ga, racetest.Greedy, func() bool { return ga.Plies() >= 10 })
	if e.info(id).State != race.Running {
		t.Fatal("race ended though the player resumed in time")
	}
	// Another race's token, and a token of a finished race.
	other := e.create(`{}`)
	c := e.dial()
	c.expectError(map[string]any{"type": "resume", "race": other, "token": a.tok}, race.CodeBadToken)
	e.clock.Advance(race.DefaultTimeLimit)
	a2.result()
	c.expectError(map[string]any{"type": "resume", "race": id, "token": b.tok}, race.CodeRaceOver)
}

func TestSpectatorSeesEveryUpdateInOrder(t *testing.T) {
	e := newEnv(t, nil)
	id := e.create(`{"deal":"31"}`)
	w := e.dial()
	w.send(map[string]any{"type": "watch", "race": id})
	first := w.untilType("state")
	if first.Boards == nil {
		t.Fatalf("no boards in %s", first.raw)
	}
	a, b := e.dial(), e.dial()
	a.join(id, "ann")
	b.join(id, "bob")
	e.clock.Advance(race.DefaultCountdown)
	a.untilState(race.Running)
	b.untilState(race.Running)
	ga, gb := newGame(31), newGame(31)
	for !a.finished() && !b.finished() && (ga.Status() == engine.Playing || gb.Status() == engine.Playing) {
		if ga.Status() == engine.Playing {
			a.play(&ga, racetest.Greedy, func() bool { return ga.Plies() > gb.Plies() })
		}
		if gb.Status() == engine.Playing && !a.finished() && !b.finished() {
			b.play(&gb, racetest.Dumb, func() bool { return gb.Plies() > ga.Plies() })
		}
	}
	a.result()
	final := w.until(func(m msg) bool { return m.Type == "state" && m.Result != nil })
	seq := [2]int{}
	for _, m := range w.all {
		if m.Type != "board" || strings.Contains(string(m.raw), `"reveal":true`) {
			continue // a reveal shows a seat's board again, at the same seq
		}
		s := *m.Seat
		if m.Seq != seq[s]+1 {
			t.Fatalf("seat %d: board seq %d after %d", s, m.Seq, seq[s])
		}
		seq[s] = m.Seq
	}
	for s := range 2 {
		if want := [2]int{ga.Plies(), gb.Plies()}[s]; seq[s] != want {
			t.Errorf("spectator saw %d moves of seat %d, want %d", seq[s], s, want)
		}
	}
	if final.State != race.Finished {
		t.Errorf("final state %s", final.State)
	}
	w.expectError(map[string]any{"type": "move", "move": "AS>F1"}, "spectator-cannot-move")
}

// TestPlayerSeesNoUnturnedCard records every message a player receives in
// a race against an opponent who plays far ahead, and checks each card in
// them against the cards the player has turned in their own game.
func TestPlayerSeesNoUnturnedCard(t *testing.T) {
	e := newEnv(t, nil)
	const deal = 41
	_, a, b := e.startRace(deal)
	order := engine.Deal(deal)
	seen := map[engine.Card]bool{}
	ga, gb := newGame(deal), newGame(deal)
	turned := func() {
		for _, c := range order[:52-ga.StockLeft()] {
			seen[c] = true
		}
	}
	turned()
	check := func(from int) {
		for _, m := range a.all[from:] {
			if m.Type == "state" && m.Result != nil {
				return // the race is over: the deal is revealed on purpose
			}
			for _, c := range cardsIn(t, m.raw) {
				if !seen[c] {
					t.Fatalf("ann got %s before turning it, in %s", c, m.raw)
				}
			}
		}
	}
	// Bob plays twenty moves before Ann's first: Ann hears of each.
	b.play(&gb, racetest.Greedy, func() bool { return gb.Plies() >= 20 })
	for range 20 {
		a.untilType("opponent")
	}
	check(0)
	for ga.Status() == engine.Playing && !a.finished() {
		mv := racetest.Greedy(&ga)
		if err := ga.Apply(mv); err != nil {
			t.Fatal(err)
		}
		turned()
		from := len(a.all)
		a.move(mv, "m")
		check(from)
	}
	if len(a.all) < 20 {
		t.Fatalf("only %d messages checked", len(a.all))
	}
}

// cardsIn returns every card named in a message: string values that are a
// card, or the card of a move.
func cardsIn(t *testing.T, raw []byte) []engine.Card {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var out []engine.Card
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		case string:
			s, _, _ := strings.Cut(x, ">")
			if c, err := engine.ParseCard(s); err == nil {
				out = append(out, c)
			}
		}
	}
	walk(v)
	return out
}

func TestRematchOnTheSameConnections(t *testing.T) {
	e := newEnv(t, nil)
	id, a, b := e.startRace(11)
	a.expectError(map[string]any{"type": "rematch"}, race.CodeNotOver)
	ga, gb := newGame(11), newGame(11)
	a.move(racetest.Greedy(&ga), "x")
	b.move(racetest.Greedy(&gb), "y")
	e.clock.Advance(race.DefaultTimeLimit)
	a.result()
	b.result()
	a.send(map[string]any{"type": "rematch"})
	b.untilType("rematch")
	b.send(map[string]any{"type": "rematch"})
	na, nb := a.untilType("next"), b.untilType("next")
	var next struct{ Next string }
	_ = json.Unmarshal(na.raw, &next)
	if next.Next == "" || next.Next == id || !strings.Contains(string(nb.raw), next.Next) {
		t.Fatalf("next %s / %s", na.raw, nb.raw)
	}
	for _, c := range []*client{a, b} {
		c.send(map[string]any{"type": "resume", "race": next.Next, "token": c.tok})
		c.untilType("joined")
	}
	a.untilState(race.Countdown)
	e.clock.Advance(race.DefaultCountdown)
	st := a.untilState(race.Running)
	if !strings.Contains(string(st.raw), `"commitment"`) || strings.Contains(string(st.raw), `"deal"`) {
		t.Errorf("the rematch's deal is not secret: %s", st.raw)
	}
}

func TestPublicRaceSpectatorsAreDelayed(t *testing.T) {
	e := newEnv(t, func(d *web.Deps) { d.SpectatorDelay = 10 * time.Second })
	id := e.create(`{"public":true}`)
	w := e.dial()
	w.send(map[string]any{"type": "watch", "race": id})
	w.untilType("state")
	a, b := e.dial(), e.dial()
	a.join(id, "ann")
	b.join(id, "bob")
	e.clock.Advance(race.DefaultCountdown)
	st := a.untilState(race.Running)
	b.untilState(race.Running)
	if !strings.Contains(string(st.raw), `"commitment"`) || strings.Contains(string(st.raw), `"deal"`) {
		t.Fatalf("a public race's deal is not secret: %s", st.raw)
	}
	a.move(engine.PlaceMove(st.You.Turned[0], engine.W(0)), "x")
	// The spectator sees the move only after the delay: a ping sent now is
	// answered before any board.
	w.send(map[string]any{"type": "ping", "id": "p"})
	for m := w.read(); m.Type != "pong"; m = w.read() {
		if m.Type == "board" {
			t.Fatalf("board before the delay: %s", m.raw)
		}
	}
	e.clock.Advance(10*time.Second + race.FeedSlack)
	m := w.untilType("board")
	if *m.Seat != a.seat || m.Seq != 1 {
		t.Fatalf("board %s", m.raw)
	}
}
