package lobbytest

import (
	"context"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
)

// GhostsNow is when the ghosts suite runs: its challenges are made then
// (some before). A store that reads a clock to tell whether a challenge
// is still kept must read this time.
var GhostsNow = time.Unix(1_000_000, 0).UTC()

// GhostsSuite checks a lobby.Ghosts: newStores returns two handles on one
// empty store (two instances of a fleet; the same one twice in memory).
func GhostsSuite(t *testing.T, newStores func(t *testing.T) [2]lobby.Ghosts) {
	ctx := context.Background()
	at := GhostsNow
	rec := func(id, author string, made time.Time) lobby.GhostRecord {
		return lobby.GhostRecord{
			GhostInfo: lobby.GhostInfo{ID: id, Kind: lobby.GhostGame, Author: author, Name: "ann", Variant: "classic",
				Made: made, Expires: made.Add(time.Hour), Score: 12},
			Deal: 1<<63 + 5, Recording: race.Ghost{Moves: []race.GhostMove{{Move: "AS>F1", AtMs: 900}}, EndMs: 900}, Source: "R",
		}
	}
	t.Run("put get mine", func(t *testing.T) {
		s := newStores(t)
		for i, id := range []string{"g1", "g2"} {
			if err := s[0].Put(ctx, rec(id, "ann", at.Add(time.Duration(i)*time.Minute)), time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		got, ok, err := s[1].Get(ctx, "g1")
		if err != nil || !ok || got.Deal != 1<<63+5 || len(got.Recording.Moves) != 1 || got.Recording.Moves[0].AtMs != 900 || !got.Made.Equal(at) {
			t.Fatalf("get: %+v %v %v", got, ok, err)
		}
		if _, ok, err := s[1].Get(ctx, "nope"); ok || err != nil {
			t.Fatalf("get unknown: %v %v", ok, err)
		}
		mine, err := s[1].Mine(ctx, "ann")
		if err != nil || len(mine) != 2 || mine[0].ID != "g2" {
			t.Fatalf("mine: %+v %v", mine, err)
		}
	})
	t.Run("expired ones are found while kept", func(t *testing.T) {
		s := newStores(t)
		// Made 90 minutes ago, raceable for an hour, kept for two: past
		// its Expires, still kept. The lobby, not the store, refuses it.
		old := rec("old", "ann", at.Add(-90*time.Minute))
		if err := s[0].Put(ctx, old, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s[1].Get(ctx, "old"); err != nil || !ok || !got.Expires.Equal(old.Expires) {
			t.Fatalf("get an expired challenge: %+v %v %v", got, ok, err)
		}
		if mine, err := s[1].Mine(ctx, "ann"); err != nil || len(mine) != 1 || mine[0].ID != "old" {
			t.Fatalf("mine with an expired challenge: %+v %v", mine, err)
		}
	})
	t.Run("seen once", func(t *testing.T) {
		s := newStores(t)
		if seen, _ := s[0].Seen(ctx, "classic", 7, "bob"); seen {
			t.Fatal("seen before")
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		fresh := 0
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				already, err := s[i%2].See(ctx, "classic", 7, "bob")
				if err != nil {
					t.Error(err)
				}
				if !already {
					mu.Lock()
					fresh++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if fresh != 1 {
			t.Fatalf("%d callers saw the deal first, want 1", fresh)
		}
		if seen, _ := s[1].Seen(ctx, "classic", 7, "bob"); !seen {
			t.Fatal("not seen after See")
		}
		if seen, _ := s[1].Seen(ctx, "strict", 7, "bob"); seen {
			t.Fatal("seen in another variant")
		}
	})
	t.Run("best game", func(t *testing.T) {
		s := newStores(t)
		for i, b := range []lobby.BestGame{{Race: "R1", Seat: 0, Score: 10}, {Race: "R2", Seat: 1, Score: 30}, {Race: "R3", Seat: 0, Score: 30}, {Race: "R4", Score: 5}} {
			if err := s[i%2].KeepBest(ctx, "classic", 9, "ann", b); err != nil {
				t.Fatal(err)
			}
		}
		if b, ok, err := s[0].Best(ctx, "classic", 9, "ann"); err != nil || !ok || b.Race != "R2" || b.Seat != 1 {
			t.Fatalf("best: %+v %v %v", b, ok, err)
		}
		if _, ok, _ := s[1].Best(ctx, "classic", 10, "ann"); ok {
			t.Fatal("a best game on another deal")
		}
	})
	t.Run("runs once", func(t *testing.T) {
		s := newStores(t)
		run := lobby.GhostRun{Ghost: "g1", Author: "ann", Race: "R1", Player: "cat", Outcome: "won", Scores: [2]int{20, 12}, At: at}
		for i := range 2 { // a race ended again after a takeover
			if err := s[i].AddRun(ctx, run); err != nil {
				t.Fatal(err)
			}
		}
		run.Race, run.Outcome = "R2", "lost"
		if err := s[1].AddRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		against, raced, tally, err := s[0].Runs(ctx, "ann", 10)
		if err != nil || len(against) != 2 || len(raced) != 0 || against[0].Race != "R2" || tally.Races != 0 {
			t.Fatalf("ann's runs: %+v %+v %+v %v", against, raced, tally, err)
		}
		_, raced, tally, err = s[1].Runs(ctx, "cat", 1)
		if err != nil || len(raced) != 1 || tally != (lobby.GhostTally{Races: 2, Wins: 1, Losses: 1}) {
			t.Fatalf("cat's runs: %+v %+v %v", raced, tally, err)
		}
	})
}
