package race

import (
	"context"
	"strings"
	"time"
)

// Archived is a finished race as the archive keeps it, forever: its public
// record with both games and every move (what a replay shows), and what
// the followers of its end need (Ended).
type Archived struct {
	// Info is the race's final public record, whole: the result with its
	// deal, salt and both games, and every move, even while the deal is
	// sealed (SealedUntil: Service.Open shows it sealed until then).
	// Spectators is 0.
	Info Info `json:"info"`
	// Ghosts and Tag are Ended's: the recordings seated and the race's tag.
	Ghosts []string `json:"ghosts,omitempty"`
	Tag    string   `json:"tag,omitempty"`
	// SealedUntil is the race's Options.SealedUntil (the day's deal):
	// until then its deal, games and moves are not shown.
	SealedUntil time.Time `json:"sealedUntil,omitzero"`
	// EndedAt is when the race ended; for a race the archiver recovered
	// from the live store (ArchiveLedger), when it was recovered.
	EndedAt time.Time `json:"endedAt"`
	// Followed reports whether the followers of the race's end have done
	// their work (Archive.Followed). It is the archive's own mark, kept
	// beside the record rather than in it: Put stores it as given.
	Followed bool `json:"-"`
}

// Ended is the end the race reported to Deps.OnEnd, made again from the
// archive: the lobby's sweep does the work of a race's end again from it
// when a process stopped before that work was done.
func (a *Archived) Ended() Ended {
	e := Ended{Race: a.Info.Race, Variant: a.Info.Variant, Players: a.Info.Players, Ghosts: make([]string, len(a.Info.Players)), Tag: a.Tag}
	copy(e.Ghosts, a.Ghosts) // by seat, as the race's own (an archive may have left them out)
	if a.Info.Result != nil {
		e.Result = *a.Info.Result
	}
	return e
}

// Archive keeps every finished race forever (sqlstore: SQLite or
// PostgreSQL; memrace.Archive in tests), written off the move path once
// the race is over (the Service's archiver). An archived race is found by
// Service.Open after it has left the live store. Followers of a race's end
// (the lobby: ratings, the day's board, ghost runs) mark it Followed once
// their work is done, so that a process stopped in between finds the work
// again (Unfollowed) when it starts.
//
// Races aborted are not archived: they have no result to rate or replay
// (an invite nobody used, a player who never moved), and the archive is
// kept forever.
type Archive interface {
	// Put stores a, with a.Followed as its mark, unless a race with its id
	// is stored already (an instance that took a race over may end it
	// again): then it does nothing and returns nil. A record without an id
	// or a result is refused with an error, and nothing is stored.
	Put(ctx context.Context, a Archived) error
	// Get finds an archived race; ok is false when none has that id.
	Get(ctx context.Context, id string) (a Archived, ok bool, err error)
	// Unfollowed lists at most n (n > 0) archived races not yet Followed
	// that ended before before, oldest first (by EndedAt, then id).
	Unfollowed(ctx context.Context, before time.Time, n int) ([]Archived, error)
	// Followed marks race id's end as followed up. A race not archived is
	// not marked, and that is no error: the Service makes a race Put
	// after its Followed stored followed already.
	Followed(ctx context.Context, id string) error
}

// ArchiveLedger is implemented by Records that keep, for every race they
// decided as Finished, a mark until it is archived (redisrace.Cluster: a
// sorted set beside its results). An instance that dies between a race's
// result and its archiving leaves the mark behind, and any Service's
// archiver sweeps it: it rebuilds the race from its record and moves,
// archives it and drops the mark. A live store that outlives its
// processes (SQLite race stores) implements it too; one in memory dies
// with its races and needs none.
type ArchiveLedger interface {
	// Unarchived lists at most n (n > 0) races marked before before,
	// oldest first.
	Unarchived(ctx context.Context, before time.Time, n int) ([]string, error)
	// Archived drops race id's mark: it is archived (or nothing is left
	// of it to archive). Dropping a mark that is not there does nothing.
	Archived(ctx context.Context, id string) error
}

// Check refuses a record an Archive must not store: one without an id or
// a result, or with a NUL byte in its id or variant, which an archive
// keeps in columns of their own (CodeInternal: the archiver made it
// wrong; nothing is stored).
func (a *Archived) Check() error {
	switch {
	case a.Info.Race == "":
		return Errorf(CodeInternal, "archive: a race without an id is not stored")
	case strings.ContainsRune(a.Info.Race, 0) || strings.ContainsRune(a.Info.Variant, 0):
		return Errorf(CodeInternal, "archive: race %q of variant %q: a NUL byte in an id or variant", a.Info.Race, a.Info.Variant)
	case a.Info.Result == nil:
		return Errorf(CodeInternal, "archive: race %s has no result: only finished races are stored", a.Info.Race)
	}
	return nil
}

// CheckBatch refuses a batch size n that is not above 0 (CodeInternal).
func CheckBatch(n int) error {
	if n <= 0 {
		return Errorf(CodeInternal, "archive: at most n races are listed, and n must be above 0, not %d", n)
	}
	return nil
}
