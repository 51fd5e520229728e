package lobbytest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby"
)

// MistakesSuite checks a lobby.Mistakes: newStores returns two handles on
// one empty store (two instances of a fleet on one database).
func MistakesSuite(t *testing.T, newStores func(t *testing.T) [2]lobby.Mistakes) {
	ctx := context.Background()
	// Times to the millisecond, as a durable store keeps them.
	at := func(min int) time.Time { return time.Date(2026, 1, 1, 10, min, 0, 0, time.UTC) }
	mistake := func(player, race string, seat, added int) lobby.Mistake {
		return lobby.Mistake{Player: player, Race: race, Seat: seat, Position: 40 + seat, Variant: "classic", Move: "KS>F1",
			RacedAt: at(added).Add(-time.Minute), AddedAt: at(added)}
	}
	t.Run("once per race and seat", func(t *testing.T) {
		s := newStores(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		added := 0
		for i := range 8 {
			wg.Go(func() {
				ok, err := s[i%2].Add(ctx, mistake("ann", "r1", 0, 1))
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					added++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if added != 1 {
			t.Fatalf("added %d times, want once", added)
		}
		again := mistake("ann", "r1", 0, 5)
		again.Position = 3
		if ok, err := s[1].Add(ctx, again); ok || err != nil {
			t.Fatalf("added again: %v %v", ok, err)
		}
		got, err := s[1].List(ctx, "ann", 10)
		want := mistake("ann", "r1", 0, 1)
		want.Player = "ann"
		if err != nil || len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(want) {
			t.Fatalf("ann's list %+v %v, want %+v", got, err, want)
		}
		if got[0].RacedAt.Location() != time.UTC || !got[0].AddedAt.Equal(at(1)) {
			t.Fatalf("times %v %v", got[0].RacedAt, got[0].AddedAt)
		}
	})
	t.Run("each player's own, latest first", func(t *testing.T) {
		s := newStores(t)
		for _, m := range []lobby.Mistake{
			mistake("ann", "r1", 0, 1), mistake("ann", "r3", 1, 3), mistake("ann", "r2", 0, 2),
			mistake("bob", "r1", 1, 4), mistake("ann", "r2", 1, 2),
		} {
			if ok, err := s[0].Add(ctx, m); !ok || err != nil {
				t.Fatalf("add %+v: %v %v", m, ok, err)
			}
		}
		got, err := s[1].List(ctx, "ann", -1)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, m := range got {
			order = append(order, fmt.Sprintf("%s/%d", m.Race, m.Seat))
		}
		if fmt.Sprint(order) != "[r3/1 r2/0 r2/1 r1/0]" {
			t.Fatalf("ann's list %v, want r3/1 r2/0 r2/1 r1/0", order)
		}
		if got, _ := s[1].List(ctx, "ann", 2); len(got) != 2 || got[0].Race != "r3" {
			t.Fatalf("ann's first two %+v", got)
		}
		if got, _ := s[1].List(ctx, "bob", 10); len(got) != 1 || got[0].Seat != 1 {
			t.Fatalf("bob's list %+v", got)
		}
		if got, err := s[1].List(ctx, "cat", 10); err != nil || got == nil || len(got) != 0 {
			t.Fatalf("cat's list %#v %v, want empty", got, err)
		}
	})
	t.Run("solved once", func(t *testing.T) {
		s := newStores(t)
		if _, err := s[0].Add(ctx, mistake("ann", "r1", 0, 1)); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			player, race string
			seat, pos    int
		}{{"bob", "r1", 0, 40}, {"ann", "r2", 0, 40}, {"ann", "r1", 1, 40}, {"ann", "r1", 0, 39}} {
			if ok, err := s[1].Solve(ctx, c.player, c.race, c.seat, c.pos, at(9)); ok || err != nil {
				t.Fatalf("solved %+v, not in the list: %v %v", c, ok, err)
			}
		}
		if got, _ := s[1].List(ctx, "ann", 10); len(got) != 1 || got[0].SolvedAt != nil {
			t.Fatalf("solved by a wrong call: %+v", got)
		}
		if ok, err := s[1].Solve(ctx, "ann", "r1", 0, 40, at(7)); !ok || err != nil {
			t.Fatalf("solve: %v %v", ok, err)
		}
		if ok, err := s[0].Solve(ctx, "ann", "r1", 0, 40, at(8)); ok || err != nil {
			t.Fatalf("solved twice: %v %v", ok, err)
		}
		got, err := s[0].List(ctx, "ann", 10)
		if err != nil || len(got) != 1 || got[0].SolvedAt == nil || !got[0].SolvedAt.Equal(at(7)) {
			t.Fatalf("ann's list %+v %v, want solved at %v", got, err, at(7))
		}
		if _, err := s[0].Add(ctx, mistake("ann", "r1", 0, 9)); err != nil {
			t.Fatal(err)
		}
		if got, _ := s[0].List(ctx, "ann", 10); got[0].SolvedAt == nil {
			t.Fatal("added again, it was unsolved")
		}
	})
}
