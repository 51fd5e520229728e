package lobbytest

import (
	"context"
	"sync"
	"testing"

	"sirtommy/engine"
	"sirtommy/lobby"
)

// DailiesSuite checks a lobby.Dailies: newStores returns two handles on
// one empty store.
func DailiesSuite(t *testing.T, newStores func(t *testing.T) [2]lobby.Dailies) {
	ctx := context.Background()
	t.Run("one attempt", func(t *testing.T) {
		s := newStores(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := s[i%2].Begin(ctx, "2026-01-01", "classic", "ann")
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					won++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d attempts began, want 1", won)
		}
		if ok, _ := s[1].Begun(ctx, "2026-01-01", "classic", "ann"); !ok {
			t.Fatal("not begun")
		}
		if ok, _ := s[1].Begun(ctx, "2026-01-02", "classic", "ann"); ok {
			t.Fatal("begun the next day")
		}
		if err := s[0].Undo(ctx, "2026-01-01", "classic", "ann"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := s[1].Begin(ctx, "2026-01-01", "classic", "ann"); !ok {
			t.Fatal("an undone attempt cannot begin again")
		}
	})
	t.Run("board order", func(t *testing.T) {
		s := newStores(t)
		for i, e := range []lobby.DailyEntry{
			{Player: "slow-win", Won: true, Status: engine.Won, Score: 52, TimeMs: 90_000},
			{Player: "fast-win", Won: true, Status: engine.Won, Score: 52, TimeMs: 60_000},
			{Player: "many", Score: 40, TimeMs: 100_000, Game: "text"},
			{Player: "few", Score: 10, TimeMs: 10_000},
			{Player: "many-slow", Score: 40, TimeMs: 200_000},
		} {
			e.Day, e.Variant, e.Name = "2026-01-01", "classic", e.Player
			if err := s[i%2].Finish(ctx, e); err != nil {
				t.Fatal(err)
			}
			if err := s[(i+1)%2].Finish(ctx, e); err != nil { // recorded once
				t.Fatal(err)
			}
		}
		board, total, err := s[0].Board(ctx, "2026-01-01", "classic", 10)
		if err != nil || total != 5 {
			t.Fatalf("board: %v %d", err, total)
		}
		want := []string{"fast-win", "slow-win", "many", "many-slow", "few"}
		for i, e := range board {
			if e.Player != want[i] || e.Rank != i+1 {
				t.Fatalf("board %d: %s rank %d, want %s", i, e.Player, e.Rank, want[i])
			}
		}
		e, ok, err := s[1].Entry(ctx, "2026-01-01", "classic", "many")
		if err != nil || !ok || e.Rank != 3 || e.Game != "text" {
			t.Fatalf("entry: %+v %v %v", e, ok, err)
		}
		if _, ok, _ := s[1].Entry(ctx, "2026-01-01", "classic", "nobody"); ok {
			t.Fatal("an entry for nobody")
		}
		h, err := s[1].History(ctx, "few", 10)
		if err != nil || len(h) != 1 || h[0].Score != 10 {
			t.Fatalf("history: %+v %v", h, err)
		}
	})
}
