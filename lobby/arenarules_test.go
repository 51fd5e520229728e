package lobby

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestArenaScoring: a win is 2, a draw 1, a loss 0; after two wins in a
// row wins and draws count double until a race is not won (lichess's
// arena).
func TestArenaScoring(t *testing.T) {
	W, D, L := ArenaWin, ArenaDraw, ArenaLoss
	for _, tc := range []struct {
		races  []ArenaOutcome
		points []int // each race's
		streak int
	}{
		{[]ArenaOutcome{W, W, W, W}, []int{2, 2, 4, 4}, 4},
		{[]ArenaOutcome{W, W, D, W}, []int{2, 2, 2, 2}, 1},
		{[]ArenaOutcome{W, W, L, W, W, W}, []int{2, 2, 0, 2, 2, 4}, 3},
		{[]ArenaOutcome{D, D, W, L}, []int{1, 1, 2, 0}, 0},
		{[]ArenaOutcome{W, D, W, W, D}, []int{2, 1, 2, 2, 2}, 0},
	} {
		t.Run(fmt.Sprint(tc.races), func(t *testing.T) {
			var e ArenaEntry
			var got []int
			for _, out := range tc.races {
				s := scoreRace(&e, out, false)
				e.count(s)
				got = append(got, s.Points)
			}
			want := 0
			for _, p := range tc.points {
				want += p
			}
			if !slices.Equal(got, tc.points) || e.Points != want || e.Streak != tc.streak || e.Races != len(tc.races) || len(e.Marks) < len(tc.races) {
				t.Errorf("points %v (total %d, streak %d), want %v (total %d, streak %d)", got, e.Points, e.Streak, tc.points, want, tc.streak)
			}
		})
	}
}

// TestArenaBerserk: a win with berserk is a point more, on fire too; a
// draw or a loss with berserk is worth what it is without.
func TestArenaBerserk(t *testing.T) {
	for _, tc := range []struct {
		streak int
		out    ArenaOutcome
		points int
	}{
		{0, ArenaWin, 3}, {2, ArenaWin, 5}, {0, ArenaDraw, 1}, {2, ArenaDraw, 2}, {3, ArenaLoss, 0},
	} {
		e := ArenaEntry{Streak: tc.streak}
		if s := scoreRace(&e, tc.out, true); s.Points != tc.points || !s.Berserk {
			t.Errorf("streak %d, %s with berserk: %+v, want %d points", tc.streak, tc.out, s, tc.points)
		}
	}
}

// TestArenaUpgrade: an arena stored with score sheets keeps its points
// and gets its counts and marks from them.
func TestArenaUpgrade(t *testing.T) {
	a := Arena{Entries: []ArenaEntry{{Player: "a", Points: 8, Streak: 1, Sheet: []ArenaScore{
		{Race: "r1", Outcome: ArenaWin, Points: 2}, {Race: "r2", Outcome: ArenaWin, Points: 2},
		{Race: "r3", Outcome: ArenaLoss, Fire: true}, {Race: "r4", Outcome: ArenaWin, Berserk: true, Points: 3},
	}}}}
	a.Upgrade()
	e := a.Entries[0]
	if e.Points != 8 || e.Races != 4 || e.Wins != 3 || e.Berserks != 1 || e.Marks != "220!3" || e.Sheet != nil || e.Streak != 1 {
		t.Errorf("upgraded %+v", e)
	}
	a.Upgrade()
	if a.Entries[0].Marks != "220!3" || a.Entries[0].Races != 4 {
		t.Errorf("upgraded twice: %+v", a.Entries[0])
	}
}

// TestArenaPairing: the waiting players who can race are paired in
// leaderboard order, each with the closest after them who was not their
// last opponent; the paused, the racing and those who cannot race now
// wait; an odd one out waits.
func TestArenaPairing(t *testing.T) {
	entry := func(p string, points int, state EntryState, last string) ArenaEntry {
		return ArenaEntry{Player: p, Points: points, State: state, Last: last}
	}
	all := func(string) bool { return true }
	for _, tc := range []struct {
		name    string
		entries []ArenaEntry
		ready   func(string) bool
		want    [][2]string
	}{
		{"by standings", []ArenaEntry{
			entry("a", 0, EntryWaiting, ""), entry("b", 6, EntryWaiting, ""), entry("c", 2, EntryWaiting, ""), entry("d", 4, EntryWaiting, ""),
		}, all, [][2]string{{"b", "d"}, {"c", "a"}}},
		{"never the last opponent again", []ArenaEntry{
			entry("a", 4, EntryWaiting, "b"), entry("b", 4, EntryWaiting, "a"), entry("c", 2, EntryWaiting, "d"), entry("d", 2, EntryWaiting, "c"),
		}, all, [][2]string{{"a", "c"}, {"b", "d"}}},
		{"only the last opponent left: they wait", []ArenaEntry{
			entry("a", 4, EntryWaiting, "b"), entry("b", 2, EntryWaiting, "a"),
		}, all, nil},
		{"the paused, the racing and the away wait", []ArenaEntry{
			entry("a", 9, EntryPaused, ""), entry("b", 8, EntryRacing, ""), entry("c", 7, EntryWaiting, ""),
			entry("d", 6, EntryWaiting, ""), entry("e", 5, EntryWaiting, ""), entry("f", 4, EntryWaiting, ""),
		}, func(p string) bool { return p != "d" }, [][2]string{{"c", "e"}}},
		{"an odd one out", []ArenaEntry{
			entry("a", 0, EntryWaiting, ""), entry("b", 0, EntryWaiting, ""), entry("c", 0, EntryWaiting, ""),
		}, all, [][2]string{{"a", "b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Arena{Entries: tc.entries}
			var got [][2]string
			for _, p := range pairArena(a, tc.ready) {
				got = append(got, [2]string{a.Entries[p[0]].Player, a.Entries[p[1]].Player})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("pairs %v, want %v", got, tc.want)
			}
		})
	}
}

// TestArenaSpecRanges: an arena's duration and its races' options out of
// range are refused, naming the range.
func TestArenaSpecRanges(t *testing.T) {
	ok := ArenaSpec{Name: "Hourly", Variant: "classic", TimeLimit: 300e9, Duration: 60 * 60e9}
	if _, err := ok.check(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		change func(*ArenaSpec)
		names  string
	}{
		{func(s *ArenaSpec) { s.Duration = 4 * 60e9 }, "from 5 to 180 minutes"},
		{func(s *ArenaSpec) { s.Duration = 181 * 60e9 }, "from 5 to 180 minutes"},
		{func(s *ArenaSpec) { s.TimeLimit = 0 }, "timeLimitSeconds must be from 1 to 3600"},
		{func(s *ArenaSpec) { s.Variant = "klondike" }, `variant "klondike" is unknown`},
		{func(s *ArenaSpec) { s.Name = " " }, "needs a name"},
	} {
		s := ok
		tc.change(&s)
		if _, err := s.check(); err == nil || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("%+v: %v, want a refusal naming %q", s, err, tc.names)
		}
	}
}

// TestParseArenaSchedules: the server's --arenas, and its refusals.
func TestParseArenaSchedules(t *testing.T) {
	got, err := ParseArenaSchedules("Hourly classic, classic, 5m, 55m, 1h; Hard hour, classic, 5m, 30m, 1h, hard;")
	if err != nil || len(got) != 2 || got[0].Spec.Duration != 55*60e9 || got[0].Every != 60*60e9 || got[1].Spec.Grade != "hard" {
		t.Fatalf("%+v, %v", got, err)
	}
	for _, bad := range []string{"x", "A, classic, 5m, 4m, 1h", "A, classic, 5m, 55m, 30m", "A, nope, 5m, 55m, 1h", "A, classic, 5q, 55m, 1h", "A, in-suit, 5m, 55m, 1h, easy"} {
		if _, err := ParseArenaSchedules(bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
}
