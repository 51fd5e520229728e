package lobby

// Arenas: for a fixed time, everyone who joined races back to back; a
// player whose race ends goes back to the arena's pool and is paired
// again with the waiting player closest in the standings (never the one
// they just raced), and every race's points pile up on the arena's
// leaderboard (lichess's arena: win 2, draw 1, loss 0, doubled on a
// streak). This file holds the arena as stored and its store; the
// scoring and the pairing (arenarules.go) are pure functions; the
// lobby's side (arena.go) joins, pairs and counts.

import (
	"context"
	"slices"
	"time"

	"sirtommy/race"
)

// The refusals of arenas.
const (
	CodeNoSuchArena race.Code = "no-such-arena" // no arena has that id
	CodeArenaOver   race.Code = "arena-over"    // joining an arena whose time is up
	CodeInArena     race.Code = "in-arena"      // joining an arena one is in already, or racing elsewhere while in one
	CodeNotInArena  race.Code = "not-in-arena"  // pausing an arena one is not in
)

// EntryState is where an arena's player stands.
type EntryState string

// The states of an arena's player.
const (
	// EntryWaiting is in the pool: paired at the next pairing.
	EntryWaiting EntryState = "waiting"
	// EntryRacing is in one of the arena's races (Race names it, or is
	// pendingRace while it is made).
	EntryRacing EntryState = "racing"
	// EntryPaused is out of the pool (paused, or gone): their points stay,
	// and joining again puts them back.
	EntryPaused EntryState = "paused"
)

// ArenaInfo is what an arena is: its name, its races' rules and its
// time. The stored arena, the arena's message and the lobby's list all
// carry it.
type ArenaInfo struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Variant, Grade and TimeLimitMs are every race's: its secret deals
	// are of Grade where the variant's deals are graded ("" any deal).
	Variant     string `json:"variant"`
	Grade       string `json:"grade,omitempty"`
	TimeLimitMs int64  `json:"timeLimitMs"`
	// StartAt is when pairing begins; EndAt when it stops (races under
	// way then finish and count).
	StartAt time.Time `json:"startAt"`
	EndAt   time.Time `json:"endAt"`
}

// Arena is an arena as stored: what it is, every player's entry and its
// races under way. Its size grows with its players, not with its races:
// each race's scores are kept apart (Counted, ArenaResult), so that a
// change of an arena of a thousand players writes a few hundred
// kilobytes however long it has run.
type Arena struct {
	ArenaInfo
	// Entries are the players who joined, in the order they came.
	Entries []ArenaEntry `json:"entries"`
	// Races are the arena's races under way.
	Races []ArenaRace `json:"races,omitempty"`
	// Played counts the races started.
	Played int `json:"played"`
	// Counted are the races a change counted: the store adds them to the
	// arena's results (Arenas.Results) with the change, atomically, and
	// hands the arena back without them.
	Counted []ArenaResult `json:"-"`
}

// Clone is a copy of a that shares no slice with it.
func (a Arena) Clone() Arena {
	a.Entries = slices.Clone(a.Entries)
	for i := range a.Entries {
		a.Entries[i].Sheet = slices.Clone(a.Entries[i].Sheet)
	}
	a.Races = slices.Clone(a.Races)
	a.Counted = slices.Clone(a.Counted)
	return a
}

// Upgrade folds the score sheets of an arena stored before its results
// were kept apart (Sheet) into its entries' counts. The stores call it
// on every arena they read; it changes nothing of one stored since.
func (a *Arena) Upgrade() {
	for i := range a.Entries {
		e := &a.Entries[i]
		points := e.Points // the sheet's sum already
		for _, s := range e.Sheet {
			e.mark(s)
		}
		e.Points, e.Sheet = points, nil
	}
}

// ArenaEntry is one player's part in an arena.
type ArenaEntry struct {
	Player string `json:"player"`
	Name   string `json:"name"`
	// Points are the sum of their races' points.
	Points int `json:"points"`
	// Races, Wins and Berserks count their races counted, won, and
	// raced with half their time.
	Races    int `json:"races,omitempty"`
	Wins     int `json:"wins,omitempty"`
	Berserks int `json:"berserks,omitempty"`
	// Marks is each counted race's points in order, a digit each, "!"
	// after one that counted double (the leaderboard's sheet).
	Marks string `json:"marks,omitempty"`
	// Sheet is each race's score as arenas stored before their results
	// were kept apart: read only, folded by Upgrade.
	Sheet []ArenaScore `json:"sheet,omitempty"`
	// Streak counts the wins in a row up to now: from two on, the next
	// race's points are doubled (OnFire).
	Streak int        `json:"streak"`
	State  EntryState `json:"state"`
	// Race is the race they are in while EntryRacing.
	Race string `json:"race,omitempty"`
	// PauseAfter pauses them when their race ends (paused while racing).
	PauseAfter bool `json:"pauseAfter,omitempty"`
	// Last is the opponent of their last race: never paired again at once.
	Last string `json:"last,omitempty"`
	// Since is when they last came into the pool (a join or a race's
	// end).
	Since time.Time `json:"since"`
}

// OnFire reports whether the entry's next race counts double.
func (e *ArenaEntry) OnFire() bool { return e.Streak >= arenaFireAfter }

// ArenaScore is one race's part in a player's points.
type ArenaScore struct {
	// Race is set in the sheets of arenas stored before ArenaResult.
	Race    string       `json:"race,omitempty"`
	Outcome ArenaOutcome `json:"outcome"`
	// Fire is set when the race counted double (a streak before it).
	Fire    bool `json:"fire,omitempty"`
	Berserk bool `json:"berserk,omitempty"`
	Points  int  `json:"points"`
}

// ArenaResult is one counted race of an arena: its two players and
// their scores, by seat.
type ArenaResult struct {
	Race    string        `json:"race"`
	At      time.Time     `json:"at"` // when it was counted
	Players [2]string     `json:"players"`
	Names   [2]string     `json:"names"`
	Scores  [2]ArenaScore `json:"scores"`
}

// ArenaOutcome is a race's outcome for one of its players.
type ArenaOutcome string

// The outcomes of an arena's race for a player.
const (
	ArenaWin  ArenaOutcome = "win"
	ArenaDraw ArenaOutcome = "draw"
	ArenaLoss ArenaOutcome = "loss"
)

// ArenaRace is one of an arena's races under way.
type ArenaRace struct {
	Race    string    `json:"race"`
	Players [2]string `json:"players"`
	At      time.Time `json:"at"`
}

// Arenas keeps the arenas: in the durable store (sqlstore: SQLite, or
// the PostgreSQL a fleet shares), or in memory (memlobby).
type Arenas interface {
	// Make stores a new arena unless one has its id already: made is
	// false then, and nothing changed.
	Make(ctx context.Context, a Arena) (made bool, err error)
	// Get finds arena id.
	Get(ctx context.Context, id string) (a Arena, ok bool, err error)
	// Change applies change to arena id and stores the result,
	// atomically: when several instances change an arena at once, each
	// change sees the one before (change may be called again with the
	// newer arena: it must only change its argument). An error of change
	// leaves the arena as it was and is returned. ok is false when there
	// is no such arena.
	Change(ctx context.Context, id string, change func(*Arena) error) (a Arena, ok bool, err error)
	// Current lists the arenas that end after now, by start, then id.
	Current(ctx context.Context, now time.Time) ([]Arena, error)
	// Results lists arena id's counted races (Arena.Counted), in the
	// order they were counted; with player, only theirs. A race is
	// counted once: counted again, it is ignored.
	Results(ctx context.Context, id, player string) ([]ArenaResult, error)
}
