package lobby

// The arena's rules, as lichess's arena has them, apart from any store
// or clock: what a race is worth, the standings, and who is paired with
// whom.

import (
	"cmp"
	"slices"
	"strconv"
)

// What a race is worth in an arena: a win 2, a draw 1, a loss 0; both
// doubled while the player is on fire (two wins in a row before the
// race, until a race is not won); a win with berserk (half one's own
// time) a point more.
const (
	arenaWinPoints    = 2
	arenaDrawPoints   = 1
	arenaFireFactor   = 2
	arenaBerserkBonus = 1
	// arenaFireAfter is the wins in a row that set a player on fire.
	arenaFireAfter = 2
)

// scoreRace is what a race ended with out for the entry's player is
// worth to them as they stand before it; berserk is their choice of half
// the time in it, a point more for a win.
func scoreRace(e *ArenaEntry, out ArenaOutcome, berserk bool) ArenaScore {
	s := ArenaScore{Outcome: out, Fire: e.OnFire(), Berserk: berserk}
	switch out {
	case ArenaWin:
		s.Points = arenaWinPoints
	case ArenaDraw:
		s.Points = arenaDrawPoints
	}
	if s.Fire {
		s.Points *= arenaFireFactor
	}
	if berserk && out == ArenaWin {
		s.Points += arenaBerserkBonus
	}
	return s
}

// count adds a race's score to the entry: its counts and marks, its
// points and its streak (a win adds one, anything else ends it).
func (e *ArenaEntry) count(s ArenaScore) {
	e.mark(s)
	if s.Outcome == ArenaWin {
		e.Streak++
	} else {
		e.Streak = 0
	}
}

// mark adds a race's score to the entry's points, counts and marks.
func (e *ArenaEntry) mark(s ArenaScore) {
	e.Points += s.Points
	e.Races++
	if s.Outcome == ArenaWin {
		e.Wins++
	}
	if s.Berserk {
		e.Berserks++
	}
	e.Marks += strconv.Itoa(s.Points)
	if s.Fire {
		e.Marks += "!"
	}
}

// standingsOrder orders an arena's entries for its leaderboard: most
// points first; among equals, fewer races (the same points from fewer
// races is the better run), then who joined first (their order in
// Entries, which SortStableFunc keeps).
func standingsOrder(a, b *ArenaEntry) int {
	if c := cmp.Compare(b.Points, a.Points); c != 0 {
		return c
	}
	return cmp.Compare(a.Races, b.Races)
}

// standings are the indexes of a's entries in leaderboard order.
func standings(a *Arena) []int {
	idx := make([]int, len(a.Entries))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return standingsOrder(&a.Entries[x], &a.Entries[y]) })
	return idx
}

// pairArena chooses the arena's next races among the entries waiting in
// its pool that can race now (ready reports it of a player): in
// leaderboard order, each is paired with the closest after them who is
// not the opponent of their last race, so that players of like
// standing meet and nobody meets the same opponent twice in a row. A
// player left without an opponent waits for the next pairing. It
// returns the pairs as indexes of a.Entries.
func pairArena(a *Arena, ready func(player string) bool) [][2]int {
	var pool []int
	for _, i := range standings(a) {
		if e := &a.Entries[i]; e.State == EntryWaiting && ready(e.Player) {
			pool = append(pool, i)
		}
	}
	var pairs [][2]int
	for len(pool) > 1 {
		first := &a.Entries[pool[0]]
		j := slices.IndexFunc(pool[1:], func(i int) bool {
			o := &a.Entries[i]
			return o.Player != first.Last && first.Player != o.Last
		})
		if j < 0 {
			pool = pool[1:] // only their last opponent is left to them: they wait
			continue
		}
		j++
		pairs = append(pairs, [2]int{pool[0], pool[j]})
		pool = slices.Delete(pool, j, j+1)[1:]
	}
	return pairs
}
