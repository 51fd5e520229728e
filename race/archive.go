package race

import "context"

// Archived is a finished race as the archive keeps it, forever: its public
// record with both games and every move (what a replay shows), and what
// the followers of its end need (Ended).
type Archived struct {
	Info Info `json:"info"`
	// Ghosts and Tag are Ended's: the recordings seated and the race's tag.
	Ghosts [2]string `json:"ghosts,omitempty"`
	Tag    string    `json:"tag,omitempty"`
}

// Archive keeps every finished race forever (sqlstore: SQLite or
// PostgreSQL), written off the move path once the race is over. An
// archived race is found by Service.Open after it has left the live
// store. Followers of a race's end (the lobby: ratings, the day's board,
// ghost runs) mark it Followed once their work is done, so that a process
// stopped in between finds the work again (Unfollowed) when it starts.
type Archive interface {
	// Put stores a unless a race with its id is stored already (an
	// instance that took a race over may end it again): then it does
	// nothing and returns nil.
	Put(ctx context.Context, a Archived) error
	// Get finds an archived race; ok is false when none has that id.
	Get(ctx context.Context, id string) (a Archived, ok bool, err error)
	// Unfollowed lists at most n archived races not yet Followed, oldest
	// first.
	Unfollowed(ctx context.Context, n int) ([]Archived, error)
	// Followed marks race id's end as followed up.
	Followed(ctx context.Context, id string) error
}
