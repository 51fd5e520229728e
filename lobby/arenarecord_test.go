package lobby

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"sirtommy/race"
)

// recordStart is the pairing's time in these tests.
var recordStart = time.Date(2026, 1, 1, 15, 10, 0, 0, time.UTC)

// pendingToken is pair k's token of a pairing made at at.
func pendingToken(at time.Time, k int) string {
	return pendingRace + strconv.FormatInt(at.UnixMilli(), 10) + ":code:" + strconv.Itoa(k)
}

// pairedArena is an arena of six whose pool was just paired in three
// pairs (ab, cd, ef), each on its own pending token.
func pairedArena() *Arena {
	a := &Arena{ArenaInfo: ArenaInfo{ID: "a1"}}
	for k, pair := range [][2]string{{"a", "b"}, {"c", "d"}, {"e", "f"}} {
		for _, p := range pair {
			a.Entries = append(a.Entries, ArenaEntry{Player: p, Name: p, State: EntryRacing, Race: pendingToken(recordStart, k)})
		}
	}
	return a
}

// made is pair k's race as makeArenaRace would return it.
func made(k int, race string, err error) arenaMade {
	pairs := [][2]string{{"a", "b"}, {"c", "d"}, {"e", "f"}}
	return arenaMade{players: [2]PlayerRef{{ID: pairs[k][0]}, {ID: pairs[k][1]}}, token: pendingToken(recordStart, k), race: race, err: err}
}

// state is each entry's state and race, in order.
func state(a *Arena) []string {
	var out []string
	for _, e := range a.Entries {
		out = append(out, e.Player+":"+string(e.State)+":"+e.Race)
	}
	return out
}

// TestRecordArenaRaces: one change records a whole pairing: a race made
// is raced by its pair and listed under way; a pair refused because one
// was racing elsewhere has that one paused and the other back in the
// pool; a pair whose race failed goes back to the pool.
func TestRecordArenaRaces(t *testing.T) {
	a := pairedArena()
	later := recordStart.Add(time.Second)
	err := recordArenaRaces(a, []arenaMade{
		made(0, "r1", nil),
		made(1, "", &busyError{player: "d", race: "elsewhere"}),
		made(2, "", errors.New("the stores failed")),
	}, later)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a:racing:r1", "b:racing:r1", "c:waiting:", "d:paused:", "e:waiting:", "f:waiting:"}
	if got := state(a); !slices.Equal(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	if a.Played != 1 || len(a.Races) != 1 || a.Races[0].Race != "r1" || a.Races[0].Players != [2]string{"a", "b"} {
		t.Errorf("played %d, races %+v; want 1, r1 of a and b", a.Played, a.Races)
	}
	if !a.Entries[2].Since.Equal(later) || !a.Entries[4].Since.Equal(later) {
		t.Errorf("back in the pool since %v and %v, want %v", a.Entries[2].Since, a.Entries[4].Since, later)
	}
}

// TestArenaRaceEndedBeforeRecorded: a race that ends before its
// pairing's change records it is counted from its pair's token, and the
// recording after that counts it played without listing it under way
// (or the arena would never be over). Another pair's token does not
// count, nor does the same end twice.
func TestArenaRaceEndedBeforeRecorded(t *testing.T) {
	a := pairedArena()
	ended := recordStart.Add(2 * time.Second)
	winner := 0
	e := race.Ended{Race: "r1", Tag: arenaTag + "a1", Result: race.Result{Outcome: race.OutcomeWin, Winner: &winner},
		Players: []race.PlayerInfo{{Player: "a"}, {Player: "b"}}}
	if err := countArenaRace(a, e, ended); err != nil {
		t.Fatalf("count: %v", err)
	}
	if len(a.Counted) != 1 || a.Counted[0].Race != "r1" || a.Counted[0].Players != [2]string{"a", "b"} ||
		a.Counted[0].Scores[0].Points != arenaWinPoints || a.Counted[0].Scores[1].Outcome != ArenaLoss {
		t.Errorf("counted %+v, want r1: a's win, b's loss", a.Counted)
	}
	if err := countArenaRace(a, e, ended); !errors.Is(err, errArenaSame) {
		t.Errorf("counted twice: %v", err)
	}
	if a.Entries[0].Points != arenaWinPoints || a.Entries[1].Points != 0 || a.Entries[0].Races != 1 || a.Entries[1].Races != 1 {
		t.Errorf("a %+v, b %+v: want a's win counted, b's loss", a.Entries[0], a.Entries[1])
	}
	if err := recordArenaRaces(a, []arenaMade{made(0, "r1", nil), made(1, "r2", nil), made(2, "r3", nil)}, recordStart.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	want := []string{"a:waiting:", "b:waiting:", "c:racing:r2", "d:racing:r2", "e:racing:r3", "f:racing:r3"}
	if got := state(a); !slices.Equal(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	if a.Played != 3 || len(a.Races) != 2 || slices.ContainsFunc(a.Races, func(r ArenaRace) bool { return r.Race == "r1" }) {
		t.Errorf("played %d, under way %+v; want 3 played, r2 and r3 under way", a.Played, a.Races)
	}
	// Players of two different pairs, both pending: not a race of theirs.
	b := pairedArena()
	cross := race.Ended{Race: "rx", Tag: arenaTag + "a1", Result: race.Result{Outcome: race.OutcomeWin, Winner: &winner},
		Players: []race.PlayerInfo{{Player: "a"}, {Player: "c"}}}
	if err := countArenaRace(b, cross, ended); !errors.Is(err, errArenaSame) {
		t.Errorf("a race of two pairs' players counted: %v", err)
	}
}

// TestUndoPending: a pairing whose race was not recorded within
// arenaPendingFor (its maker died) goes back to the pool; a younger one,
// and a race recorded, stay.
func TestUndoPending(t *testing.T) {
	a := pairedArena()
	young := pendingToken(recordStart.Add(50*time.Second), 0)
	a.Entries[2].Race, a.Entries[3].Race = young, young
	a.Entries[4].Race, a.Entries[5].Race = "r3", "r3"
	now := recordStart.Add(arenaPendingFor + time.Second)
	stale := staleEntries(a, now)
	if want := []string{pendingToken(recordStart, 0), pendingToken(recordStart, 0)}; !slices.Equal(stale, want) {
		t.Fatalf("stale %v, want %v", stale, want)
	}
	if err := undoPending(a, stale, now); err != nil {
		t.Fatal(err)
	}
	want := []string{"a:waiting:", "b:waiting:", "c:racing:" + young, "d:racing:" + young, "e:racing:r3", "f:racing:r3"}
	if got := state(a); !slices.Equal(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	if err := undoPending(a, stale, now); !errors.Is(err, errArenaSame) {
		t.Errorf("undone twice: %v", err)
	}
}
