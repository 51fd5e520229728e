package racetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
)

// ArchiveSuite runs the conformance suite every race.Archive passes (the
// in-memory twin and the SQL one on each database): a race stored once
// however often it is put, an unknown race not found, the unfollowed
// races by age with their cutoff and limit, the followed mark, bad records
// refused, and a long game and awkward text back exactly as stored.
// newArchive makes an empty archive.
func ArchiveSuite(t *testing.T, newArchive func(t *testing.T) race.Archive) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	t.Run("put twice stores once", func(t *testing.T) {
		a, ctx := newArchive(t), t.Context()
		first := Archived("r1", t0)
		if err := a.Put(ctx, first); err != nil {
			t.Fatal(err)
		}
		again := Archived("r1", t0.Add(time.Hour))
		again.Info.Players[0].Name = "someone else"
		again.Followed = true
		if err := a.Put(ctx, again); err != nil {
			t.Fatalf("the same race put again: %v, want nil", err)
		}
		got, ok, err := a.Get(ctx, "r1")
		if err != nil || !ok {
			t.Fatalf("get: %v, %v", ok, err)
		}
		if !reflect.DeepEqual(got, first) {
			t.Errorf("after a second put, got\n%+v\nwant the first\n%+v", got, first)
		}
	})
	t.Run("get unknown", func(t *testing.T) {
		a, ctx := newArchive(t), t.Context()
		if err := a.Put(ctx, Archived("known", t0)); err != nil {
			t.Fatal(err)
		}
		got, ok, err := a.Get(ctx, "unknown")
		if err != nil || ok || got.Info.Race != "" {
			t.Errorf("get of an unknown race: %+v, %v, %v; want nothing, false, nil", got, ok, err)
		}
	})
	t.Run("bad records refused", func(t *testing.T) {
		a, ctx := newArchive(t), t.Context()
		noID := Archived("", t0)
		noResult := Archived("r2", t0)
		noResult.Info.Result = nil
		nulID := Archived("r3\x00", t0)
		for name, bad := range map[string]race.Archived{"no id": noID, "no result": noResult, "NUL in the id": nulID} {
			if err := a.Put(ctx, bad); race.ErrorCode(err) != race.CodeInternal {
				t.Errorf("%s: put gave %v, want %s", name, err, race.CodeInternal)
			}
		}
		if _, ok, err := a.Get(ctx, "r2"); ok || err != nil {
			t.Errorf("a race without a result was stored (%v, %v)", ok, err)
		}
		if list, err := a.Unfollowed(ctx, t0.Add(time.Hour), 10); err != nil || len(list) != 0 {
			t.Errorf("unfollowed after refused puts: %d races, %v", len(list), err)
		}
	})
	t.Run("unfollowed", func(t *testing.T) {
		a, ctx := newArchive(t), t.Context()
		put := func(id string, after time.Duration, followed bool) {
			t.Helper()
			r := Archived(id, t0.Add(after))
			r.Followed = followed
			if err := a.Put(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		put("c", 3*time.Second, false)
		put("b", time.Second, false)
		put("a", time.Second, false) // as old as b: by id
		put("d", 5*time.Second, false)
		put("z", 0, true) // the oldest, but followed
		cases := []struct {
			name   string
			before time.Time
			n      int
			want   string
		}{
			{"all before the cutoff, oldest first", t0.Add(4 * time.Second), 10, "a b c"},
			{"limit", t0.Add(4 * time.Second), 2, "a b"},
			{"the cutoff is strict", t0.Add(time.Second), 10, ""},
			{"everything", t0.Add(time.Hour), 10, "a b c d"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				list, err := a.Unfollowed(ctx, c.before, c.n)
				if err != nil {
					t.Fatal(err)
				}
				if got := ids(list); got != c.want {
					t.Errorf("unfollowed before %s, at most %d: %q, want %q", c.before.Format(time.TimeOnly), c.n, got, c.want)
				}
				for _, r := range list {
					if r.Followed {
						t.Errorf("%s listed as unfollowed, with its mark set", r.Info.Race)
					}
				}
			})
		}
		if _, err := a.Unfollowed(ctx, t0.Add(time.Hour), 0); race.ErrorCode(err) != race.CodeInternal {
			t.Errorf("unfollowed with n 0: %v, want %s", err, race.CodeInternal)
		}
	})
	t.Run("followed", func(t *testing.T) {
		a, ctx := newArchive(t), t.Context()
		for _, id := range []string{"f1", "f2"} {
			if err := a.Put(ctx, Archived(id, t0)); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 { // twice is once
			if err := a.Followed(ctx, "f1"); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Followed(ctx, "never-archived"); err != nil {
			t.Errorf("followed of a race not archived: %v, want nil", err)
		}
		list, err := a.Unfollowed(ctx, t0.Add(time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(list); got != "f2" {
			t.Errorf("unfollowed after f1 was followed: %q, want f2", got)
		}
		got, ok, err := a.Get(ctx, "f1")
		if err != nil || !ok || !got.Followed {
			t.Errorf("get f1: followed %v (%v, %v), want true", got.Followed, ok, err)
		}
		if _, ok, _ := a.Get(ctx, "never-archived"); ok {
			t.Error("followed stored a race that was never archived")
		}
	})
	t.Run("round trip", func(t *testing.T) {
		a, ctx := newArchive(t), t.Context()
		long := LongArchived("long", t0)
		if b, _ := json.Marshal(long); len(b) < 10<<10 {
			t.Fatalf("the long game is %d bytes, not 10 KB", len(b))
		}
		awkward := Archived("awkward", t0.Add(time.Millisecond))
		awkward.Info.Players[0].Name = "nul\x00 'quote\" back\\slash </script> é 漢字 🂡"
		awkward.Info.Players[1].Name = strings.Repeat("x", 40)
		awkward.Tag = "daily:2026-03-01:classic;DROP TABLE races;--"
		awkward.Ghosts = []string{"g\x00host", ""}
		awkward.Info.Moves[0].ID = "id with\nnewline\tand tab"
		for _, want := range []race.Archived{long, awkward} {
			if err := a.Put(ctx, want); err != nil {
				t.Fatalf("put %s: %v", want.Info.Race, err)
			}
			got, ok, err := a.Get(ctx, want.Info.Race)
			if err != nil || !ok {
				t.Fatalf("get %s: %v, %v", want.Info.Race, ok, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s came back as\n%+v\nwant\n%+v", want.Info.Race, got, want)
			}
		}
	})
}

func ids(list []race.Archived) string {
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.Info.Race
	}
	return strings.Join(out, " ")
}

// Archived is a finished race as the archive keeps it, ended at ended (a
// time to the millisecond, in UTC, as a database gives it back): a win
// of seat 1 on a few moves, in a best-of-3 match, on a sealed deal.
func Archived(id string, ended time.Time) race.Archived {
	start := ended.Add(-5 * time.Minute)
	winner, matchWinner := 1, 1
	return race.Archived{
		Info: race.Info{
			Race: id, State: race.Finished, Variant: "classic", Public: true,
			Players: []race.PlayerInfo{
				{Name: "ann", Player: "p-ann", Rating: 1523.5, Taken: true, Connected: true},
				{Name: "bob", Player: "p-bob", Rating: 1490, Taken: true},
			},
			Counts: []race.Counts{
				{Score: 3, Stock: 30, Status: engine.Stuck, Moves: 2},
				{Score: 5, Stock: 28, Status: engine.Playing, Moves: 2, Connected: true},
			},
			Commitment: "c0ffee", CreatedAt: start.Add(-time.Minute), StartAt: &start, TimeLimit: 600000,
			Result: &race.Result{
				Outcome: race.OutcomeWin, Winner: &winner, Reason: race.ReasonPassed,
				Scores: []int{3, 5}, Statuses: []engine.Status{engine.Stuck, engine.Playing}, Rated: true,
				Deal: "18446744073709551615", Salt: "5a17", Commitment: "c0ffee",
				Games: []string{"classic 7: AS>F1 2S>F1", "classic 7: AS>F1 2S>F1 3S>F1"},
				Match: &race.Match{Round: 2, BestOf: 3, Wins: [2]int{0, 2}, Over: true, Winner: &matchWinner, Prev: "before-" + id},
			},
			Moves: []race.MoveRecord{
				{Seat: 0, Seq: 1, Move: "AS>F1", AtMs: 1200, ID: "m1"},
				{Seat: 1, Seq: 1, Move: "AS>F1", AtMs: 1300},
				{Seat: 1, Seq: 2, Move: "2S>F1", AtMs: 2000},
				{Seat: 0, Seq: 2, Move: "resign", AtMs: 3000, ID: "m2"},
			},
		},
		Ghosts: []string{"", "ghost-1"}, Tag: "daily:2026-03-01:classic",
		SealedUntil: ended.Add(12 * time.Hour), EndedAt: ended,
	}
}

// LongArchived is Archived with a long game: hundreds of moves, and game
// texts of kilobytes.
func LongArchived(id string, ended time.Time) race.Archived {
	a := Archived(id, ended)
	a.Info.Moves = nil
	var text [2]strings.Builder
	for i := range 600 {
		s := i % 2
		m := race.MoveRecord{Seat: s, Seq: i/2 + 1, Move: fmt.Sprintf("%dH>W%d", i%9+1, i%4+1), AtMs: int64(i) * 250, ID: fmt.Sprintf("req-%04d", i)}
		a.Info.Moves = append(a.Info.Moves, m)
		text[s].WriteString(" " + m.Move)
	}
	a.Info.Result.Games = []string{"classic 7:" + text[0].String(), "classic 7:" + text[1].String()}
	return a
}
