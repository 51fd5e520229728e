package lobbytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby"
)

// ArenasSuite checks a lobby.Arenas: newStores returns two handles on
// one empty store, as two instances of a fleet would hold (the same
// value twice where the store is one process's).
func ArenasSuite(t *testing.T, newStores func(t *testing.T) [2]lobby.Arenas) {
	t.Run("MakeOnce", func(t *testing.T) { arenasMakeOnce(t, newStores(t)) })
	t.Run("GetNone", func(t *testing.T) { arenasGetNone(t, newStores(t)) })
	t.Run("ChangeSeenByTheOther", func(t *testing.T) { arenasChange(t, newStores(t)) })
	t.Run("ChangesBackAndForth", func(t *testing.T) { arenasBackAndForth(t, newStores(t)) })
	t.Run("ResultsWithTheChange", func(t *testing.T) { arenasResults(t, newStores(t)) })
	t.Run("ChangeRefusedLeavesIt", func(t *testing.T) { arenasChangeRefused(t, newStores(t)) })
	t.Run("ChangeNone", func(t *testing.T) { arenasChangeNone(t, newStores(t)) })
	t.Run("ConcurrentChangesLoseNone", func(t *testing.T) { arenasConcurrent(t, newStores(t)) })
	t.Run("CurrentByStartThenID", func(t *testing.T) { arenasCurrent(t, newStores(t)) })
	t.Run("CopiesInAndOut", func(t *testing.T) { arenasCopies(t, newStores(t)) })
}

// arenaStart is when the suite's arenas start: whole seconds in UTC, as
// the lobby makes them.
var arenaStart = time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)

// sampleArena is an arena with every field set: two entries, one with
// counted races, and a race under way, so that a store that drops or shares a
// part of it shows.
func sampleArena(id string) lobby.Arena {
	return lobby.Arena{
		ArenaInfo: lobby.ArenaInfo{ID: id, Name: "Hourly " + id, Variant: "classic", Grade: "easy", TimeLimitMs: 300_000,
			StartAt: arenaStart, EndAt: arenaStart.Add(time.Hour)},
		Entries: []lobby.ArenaEntry{
			{Player: "p1", Name: "Ann", Points: 6, Races: 2, Wins: 2, Berserks: 1, Marks: "24!", Streak: 2, State: lobby.EntryRacing, Race: "r3", Last: "p2",
				Since: arenaStart.Add(10 * time.Minute)},
			{Player: "p2", Name: "Bob", Races: 2, Marks: "00", State: lobby.EntryRacing, Race: "r3", Last: "p1", Since: arenaStart.Add(10 * time.Minute)},
		},
		Races:  []lobby.ArenaRace{{Race: "r3", Players: [2]string{"p1", "p2"}, At: arenaStart.Add(11 * time.Minute)}},
		Played: 3,
	}
}

// sameArena fails t unless got is want as stored: their JSON is the
// arena's stored form (a durable store keeps the JSON), so two arenas
// with the same JSON are the same arena whatever their times' locations.
func sameArena(t *testing.T, what string, got, want lobby.Arena) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// mustGet is arena id, which must be there.
func mustGet(t *testing.T, s lobby.Arenas, id string) lobby.Arena {
	t.Helper()
	a, ok, err := s.Get(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("get arena %s: found %v, %v", id, ok, err)
	}
	return a
}

// mustMake stores a, which must be new.
func mustMake(t *testing.T, s lobby.Arenas, a lobby.Arena) {
	t.Helper()
	if made, err := s.Make(context.Background(), a); err != nil || !made {
		t.Fatalf("make arena %s: made %v, %v", a.ID, made, err)
	}
}

// arenasMakeOnce: the second Make of an id, from either handle, makes
// nothing and changes nothing: the first arena stays, whole.
func arenasMakeOnce(t *testing.T, s [2]lobby.Arenas) {
	ctx := context.Background()
	first := sampleArena("a1")
	mustMake(t, s[0], first)
	second := sampleArena("a1")
	second.Name, second.Entries, second.Played = "Another", nil, 0
	for i := range s {
		if made, err := s[i].Make(ctx, second); err != nil || made {
			t.Fatalf("make a1 again on handle %d: made %v, %v; want not made", i, made, err)
		}
	}
	sameArena(t, "a1 after a second make", mustGet(t, s[1], "a1"), first)
}

// arenasGetNone: no arena under an id never made.
func arenasGetNone(t *testing.T, s [2]lobby.Arenas) {
	mustMake(t, s[0], sampleArena("a1"))
	if a, ok, err := s[1].Get(context.Background(), "nosuch"); err != nil || ok {
		t.Fatalf("get of no arena: %+v, found %v, %v", a, ok, err)
	}
}

// arenasChange: a change is stored, returned, and seen by the other
// handle; the arena's id stays.
func arenasChange(t *testing.T, s [2]lobby.Arenas) {
	ctx := context.Background()
	mustMake(t, s[0], sampleArena("a1"))
	want := sampleArena("a1")
	want.Played = 4
	want.Entries[1].State, want.Entries[1].Race = lobby.EntryWaiting, ""
	want.Entries = append(want.Entries, lobby.ArenaEntry{Player: "p3", Name: "Cleo", State: lobby.EntryWaiting, Since: arenaStart.Add(20 * time.Minute)})
	want.Races = nil
	got, ok, err := s[0].Change(ctx, "a1", func(a *lobby.Arena) error {
		a.Played++
		a.Entries[1].State, a.Entries[1].Race = lobby.EntryWaiting, ""
		a.Entries = append(a.Entries, lobby.ArenaEntry{Player: "p3", Name: "Cleo", State: lobby.EntryWaiting, Since: arenaStart.Add(20 * time.Minute)})
		a.Races = nil
		return nil
	})
	if err != nil || !ok {
		t.Fatalf("change a1: found %v, %v", ok, err)
	}
	sameArena(t, "the changed arena returned", got, want)
	sameArena(t, "the changed arena, read by the other handle", mustGet(t, s[1], "a1"), want)
}

// arenasBackAndForth: each handle, having read the arena, sees the
// other's changes at its next read and builds its own on them (a store
// that keeps what it read, by version, must not hand out an old one).
func arenasBackAndForth(t *testing.T, s [2]lobby.Arenas) {
	ctx := context.Background()
	mustMake(t, s[0], sampleArena("a1"))
	want := sampleArena("a1")
	for round := range 6 {
		me, other := s[round%2], s[1-round%2]
		mustGet(t, me, "a1") // read (and kept) before the other's change
		if _, err := other.Current(ctx, arenaStart); err != nil {
			t.Fatal(err)
		}
		got, ok, err := other.Change(ctx, "a1", func(a *lobby.Arena) error {
			a.Played++
			a.Entries[0].Points += round
			return nil
		})
		if err != nil || !ok {
			t.Fatalf("round %d: change a1: found %v, %v", round, ok, err)
		}
		want.Played++
		want.Entries[0].Points += round
		sameArena(t, fmt.Sprintf("round %d: the change returned", round), got, want)
		sameArena(t, fmt.Sprintf("round %d: read by the handle that did not change it", round), mustGet(t, me, "a1"), want)
		list, err := me.Current(ctx, arenaStart)
		if err != nil || len(list) != 1 {
			t.Fatalf("round %d: current: %d arenas, %v", round, len(list), err)
		}
		sameArena(t, fmt.Sprintf("round %d: listed by the handle that did not change it", round), list[0], want)
	}
}

// arenasResults: the races a change counts (Counted) are the arena's
// results from that change on, in the order counted, each once, listed
// whole or by player by either handle; a refused change adds none; the
// arena comes back without them.
func arenasResults(t *testing.T, s [2]lobby.Arenas) {
	ctx := context.Background()
	mustMake(t, s[0], sampleArena("a1"))
	mustMake(t, s[0], sampleArena("a2"))
	result := func(race, a, b string, pa int) lobby.ArenaResult {
		return lobby.ArenaResult{Race: race, At: arenaStart.Add(20 * time.Minute), Players: [2]string{a, b}, Names: [2]string{a + "'s", b + "'s"},
			Scores: [2]lobby.ArenaScore{{Outcome: lobby.ArenaWin, Points: pa, Fire: pa > 2}, {Outcome: lobby.ArenaLoss}}}
	}
	count := func(h lobby.Arenas, id string, rs ...lobby.ArenaResult) {
		t.Helper()
		got, ok, err := h.Change(ctx, id, func(a *lobby.Arena) error {
			if len(a.Counted) != 0 {
				t.Errorf("change handed %d counted races", len(a.Counted))
			}
			a.Played++
			a.Counted = append(a.Counted, rs...)
			return nil
		})
		if err != nil || !ok {
			t.Fatalf("count in %s: found %v, %v", id, ok, err)
		}
		if len(got.Counted) != 0 {
			t.Errorf("the changed arena came back with %d counted races", len(got.Counted))
		}
	}
	r1, r2, r3, r4 := result("r1", "p1", "p2", 2), result("r2", "p3", "p1", 4), result("r3", "p2", "p3", 2), result("r4", "p1", "p2", 5)
	count(s[0], "a1", r1)
	count(s[1], "a1", r2, r3)
	count(s[0], "a2", r4)
	count(s[1], "a1", r1) // again: ignored
	if _, _, err := s[0].Change(ctx, "a1", func(a *lobby.Arena) error {
		a.Counted = append(a.Counted, r4)
		return errors.New("refused")
	}); err == nil {
		t.Fatal("a refused change came back without its error")
	}
	same := func(what string, got, want []lobby.ArenaResult) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s:\n got %s\nwant %s", what, g, w)
		}
	}
	for i, h := range s {
		all, err := h.Results(ctx, "a1", "")
		if err != nil {
			t.Fatal(err)
		}
		same(fmt.Sprintf("a1's results by handle %d", i), all, []lobby.ArenaResult{r1, r2, r3})
		p1, err := h.Results(ctx, "a1", "p1")
		if err != nil {
			t.Fatal(err)
		}
		same(fmt.Sprintf("p1's results in a1 by handle %d", i), p1, []lobby.ArenaResult{r1, r2})
		other, err := h.Results(ctx, "a2", "")
		if err != nil {
			t.Fatal(err)
		}
		same(fmt.Sprintf("a2's results by handle %d", i), other, []lobby.ArenaResult{r4})
		none, err := h.Results(ctx, "nosuch", "")
		if err != nil || none == nil || len(none) != 0 {
			t.Errorf("the results of no arena: %v, %v; want an empty list", none, err)
		}
	}
	if a := mustGet(t, s[1], "a1"); a.Played != sampleArena("a1").Played+3 {
		t.Errorf("a1 played %d after three changes", a.Played)
	}
}

// arenasChangeRefused: change's error comes back as it was, and what
// change did to its argument before refusing is not stored.
func arenasChangeRefused(t *testing.T, s [2]lobby.Arenas) {
	mustMake(t, s[0], sampleArena("a1"))
	refused := errors.New("no: the arena is over")
	_, ok, err := s[1].Change(context.Background(), "a1", func(a *lobby.Arena) error {
		a.Name = "changed"
		a.Entries[0].Points = 100
		a.Entries = append(a.Entries, lobby.ArenaEntry{Player: "p3"})
		return refused
	})
	if !errors.Is(err, refused) || !ok {
		t.Fatalf("a refused change: found %v, error %v; want found, and the refusal", ok, err)
	}
	sameArena(t, "a1 after a refused change", mustGet(t, s[0], "a1"), sampleArena("a1"))
}

// arenasChangeNone: a change of no arena finds none and never calls
// change.
func arenasChangeNone(t *testing.T, s [2]lobby.Arenas) {
	mustMake(t, s[0], sampleArena("a1"))
	called := false
	_, ok, err := s[1].Change(context.Background(), "nosuch", func(*lobby.Arena) error {
		called = true
		return nil
	})
	if err != nil || ok || called {
		t.Fatalf("change of no arena: found %v, %v, change called %v; want not found, and no call", ok, err, called)
	}
}

// arenaWriters is how many writers change one arena at once: more than
// two instances' worth, so that most tries of a store that retries lose.
const arenaWriters = 16

// arenasConcurrent: writers on both handles each add an entry and count
// a race at once: every one of them is there at the end (no change is
// lost to another read before it was written), and each writer got back
// an arena with its own entry.
func arenasConcurrent(t *testing.T, s [2]lobby.Arenas) {
	ctx := context.Background()
	a := sampleArena("a1")
	a.Entries, a.Races, a.Played = nil, nil, 0
	mustMake(t, s[0], a)
	var wg sync.WaitGroup
	for i := range arenaWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			player := fmt.Sprintf("p%02d", i)
			got, ok, err := s[i%2].Change(ctx, "a1", func(a *lobby.Arena) error {
				a.Entries = append(a.Entries, lobby.ArenaEntry{Player: player, Name: player, State: lobby.EntryWaiting})
				a.Played++
				return nil
			})
			if err != nil || !ok {
				t.Errorf("%s's change: found %v, %v", player, ok, err)
				return
			}
			if !hasEntry(got, player) {
				t.Errorf("%s's change returned an arena without their entry: %+v", player, got.Entries)
			}
		}()
	}
	wg.Wait()
	got := mustGet(t, s[1], "a1")
	if len(got.Entries) != arenaWriters || got.Played != arenaWriters {
		t.Fatalf("after %d changes at once: %d entries, played %d; want %d of each", arenaWriters, len(got.Entries), got.Played, arenaWriters)
	}
	for i := range arenaWriters {
		if p := fmt.Sprintf("p%02d", i); !hasEntry(got, p) {
			t.Errorf("%s's entry was lost", p)
		}
	}
}

func hasEntry(a lobby.Arena, player string) bool {
	for _, e := range a.Entries {
		if e.Player == player {
			return true
		}
	}
	return false
}

// arenasCurrent: Current lists the arenas that end after now (one
// ending a microsecond after it is in, one ending at it is out), by
// start and then id, whichever handle made them; a change of its times
// moves an arena in the list.
func arenasCurrent(t *testing.T, s [2]lobby.Arenas) {
	now := arenaStart.Add(2 * time.Hour)
	at := func(id string, start, end time.Time) lobby.Arena {
		a := sampleArena(id)
		a.StartAt, a.EndAt = start, end
		return a
	}
	arenas := []lobby.Arena{
		at("past", arenaStart, arenaStart.Add(time.Hour)),
		at("at-now", arenaStart.Add(time.Hour), now),
		at("b", now.Add(-time.Hour), now.Add(time.Hour)),
		at("next", now.Add(time.Hour), now.Add(2*time.Hour)),
		at("a", now.Add(-time.Hour), now.Add(time.Hour)),
		at("just", arenaStart, now.Add(time.Microsecond)),
		at("c", now.Add(-90*time.Minute), now.Add(30*time.Minute)),
	}
	for i, a := range arenas {
		mustMake(t, s[i%2], a)
	}
	got, err := s[1].Current(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"just", "c", "a", "b", "next"}
	ids := make([]string, len(got))
	for i, a := range got {
		ids[i] = a.ID
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("current at %s: %v, want %v", now, ids, want)
	}
	sameArena(t, "a current arena", got[2], arenas[4])
	if got, err := s[0].Current(context.Background(), now.Add(24*time.Hour)); err != nil || len(got) != 0 {
		t.Fatalf("current a day later: %d arenas, %v; want none", len(got), err)
	}

	// A change of an arena's times moves it in Current's list: ended
	// early, made longer, started later.
	for id, change := range map[string]func(a *lobby.Arena){
		"next": func(a *lobby.Arena) { a.EndAt = now },
		"past": func(a *lobby.Arena) { a.EndAt = now.Add(3 * time.Hour) },
		"c":    func(a *lobby.Arena) { a.StartAt = now.Add(-30 * time.Minute) },
	} {
		if _, ok, err := s[0].Change(context.Background(), id, func(a *lobby.Arena) error { change(a); return nil }); err != nil || !ok {
			t.Fatalf("change %s: found %v, %v", id, ok, err)
		}
	}
	if got, err = s[1].Current(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	ids = ids[:0]
	for _, a := range got {
		ids = append(ids, a.ID)
	}
	if want := []string{"just", "past", "a", "b", "c"}; fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("current after changes of times: %v, want %v", ids, want)
	}
}

// arenasCopies: an arena handed to the store or got from it shares
// nothing with the stored one: changing its entries or its races, after Make, Get, Change (inside change too) or Current,
// leaves the store's as it was.
func arenasCopies(t *testing.T, s [2]lobby.Arenas) {
	ctx := context.Background()
	want := sampleArena("a1")
	mine := sampleArena("a1")
	mustMake(t, s[0], mine)
	scribble := func(a lobby.Arena) {
		a.Entries[0].Name = "scribbled"
		a.Races[0].Race = "scribbled"
	}
	scribble(mine)
	sameArena(t, "a1 after its maker changed what it made", mustGet(t, s[1], "a1"), want)

	scribble(mustGet(t, s[0], "a1"))
	sameArena(t, "a1 after a reader changed what it read", mustGet(t, s[1], "a1"), want)

	var inside lobby.Arena
	changed, ok, err := s[0].Change(ctx, "a1", func(a *lobby.Arena) error {
		a.Played++
		inside = *a
		return nil
	})
	if err != nil || !ok {
		t.Fatalf("change a1: found %v, %v", ok, err)
	}
	want.Played++
	scribble(inside)
	scribble(changed)
	sameArena(t, "a1 after a writer changed what it changed", mustGet(t, s[1], "a1"), want)

	current, err := s[0].Current(ctx, arenaStart)
	if err != nil || len(current) != 1 {
		t.Fatalf("current: %d arenas, %v; want 1", len(current), err)
	}
	scribble(current[0])
	sameArena(t, "a1 after a lister changed what it listed", mustGet(t, s[1], "a1"), want)
}
