package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

// TestRestoreFourAtATimeLogWithoutTurns: a four-at-a-time race logged
// before the move T existed (a Redis log taken over during an upgrade)
// restores to the same games: where a logged move places a card of the
// next four, they are turned first, as a game text replays.
func TestRestoreFourAtATimeLogWithoutTurns(t *testing.T) {
	rules, err := engine.Variant("four-at-a-time")
	if err != nil {
		t.Fatal(err)
	}
	const deal = 7
	g := engine.New(rules, deal)
	var logged []race.MoveRecord
	turns := 0
	for g.Status() == engine.Playing && len(logged) < 40 {
		m := racetest.Greedy(&g)
		if err := g.Apply(m); err != nil {
			t.Fatal(err)
		}
		if m.Kind == engine.Turn {
			turns++
			continue // the old log has no T
		}
		logged = append(logged, race.MoveRecord{Seat: 0, Seq: len(logged) + 1, Move: m.String(), AtMs: int64(len(logged)) * 100})
	}
	if turns == 0 {
		t.Fatal("the game turned no four: nothing to test")
	}
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rec := &race.Record{
		ID: "old", Options: race.Options{Variant: rules.Name}, Deal: deal,
		State: race.Running, CreatedAt: clock.Now(), StartAt: clock.Now(),
		Seats: []race.SeatState{{Taken: true, Name: "ann", Token: "a"}, {Taken: true, Name: "bob", Token: "b"}},
	}
	r, err := race.Restore(rec, logged, race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	if err != nil {
		t.Fatalf("restore of a log without T: %v", err)
	}
	defer r.Stop()
	info, err := r.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c := info.Counts[0]; c.Score != g.Score() || c.Stock != g.StockLeft() {
		t.Errorf("restored seat 0 has score %d, stock %d; the game has %d, %d", c.Score, c.Stock, g.Score(), g.StockLeft())
	}
}

// TestRestoredFeedPlaysTheHeldMoves: a public race restored in the middle
// of its spectator delay shows spectators the games as of the delay ago,
// then each held move's board once it is due: the feed plays the moves on
// its own games, so each board must be the seat's game after that move.
func TestRestoredFeedPlaysTheHeldMoves(t *testing.T) {
	rules, err := engine.Variant("classic")
	if err != nil {
		t.Fatal(err)
	}
	const deal, delay = 11, 10 * time.Second
	var logged []race.MoveRecord
	var after [2][]engine.Game // after[s][k]: seat s's game after its move k+1
	for s := range 2 {
		g := engine.New(rules, deal)
		for k := 0; g.Status() == engine.Playing && k < 12; k++ {
			m := racetest.Greedy(&g)
			if err := g.Apply(m); err != nil {
				t.Fatal(err)
			}
			after[s] = append(after[s], g)
			logged = append(logged, race.MoveRecord{Seat: s, Seq: k + 1, Move: m.String(), AtMs: int64(k+1)*1000 + int64(s)*500})
		}
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := racetest.NewClock(start.Add(delay + 5*time.Second)) // moves up to 5 s in are shown
	rec := &race.Record{
		ID: "held", Options: race.Options{Variant: rules.Name, Public: true, SpectatorDelay: delay}, Deal: deal,
		State: race.Running, CreatedAt: start, StartAt: start,
		Seats: []race.SeatState{{Taken: true, Name: "ann", Token: "a"}, {Taken: true, Name: "bob", Token: "b"}},
	}
	r, err := race.Restore(rec, logged, race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	r.Rearm(rec)
	w := &recorder{}
	defer r.Watch(w)()
	st, ok := w.Events()[0].(*race.StateEvent)
	if !ok {
		t.Fatalf("first spectator event %#v", w.Events()[0])
	}
	shown := [2]int{5, 4} // seat 0 moves at 1 s, 2 s, ...; seat 1 half a second later
	for s := range 2 {
		if got, want := st.Counts[s].Moves, after[s][shown[s]-1].Plies(); got != want {
			t.Errorf("seat %d shown with %d plies in the first state, want %d (its moves up to 5 s)", s, got, want)
		}
	}
	for range 20 {
		clock.Advance(time.Second)
	}
	boards := 0
	for _, ev := range w.Events() {
		bd, ok := ev.(*race.BoardEvent)
		if !ok || bd.Reveal {
			continue
		}
		boards++
		g := &after[bd.Seat][bd.Seq-1]
		want := race.Counts{Score: g.Score(), Stock: g.StockLeft(), Status: g.Status(), Moves: g.Plies(), Connected: bd.Counts.Connected}
		if bd.Counts != want {
			t.Errorf("seat %d's board after move %d counts %+v, want %+v", bd.Seat, bd.Seq, bd.Counts, want)
		}
		for p := range bd.View.Waste {
			if got, want := len(bd.View.Waste[p].Cards), len(g.View().Waste[p].Cards); got != want {
				t.Errorf("seat %d's board after move %d has %d cards on waste %d, want %d", bd.Seat, bd.Seq, got, p+1, want)
			}
		}
	}
	if want := len(after[0]) - shown[0] + len(after[1]) - shown[1]; boards != want {
		t.Errorf("%d held boards released, want %d", boards, want)
	}
}
