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
		Seats: [2]race.SeatState{{Taken: true, Name: "ann", Token: "a"}, {Taken: true, Name: "bob", Token: "b"}},
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
