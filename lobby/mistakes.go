package lobby

import (
	"context"
	"time"
)

// Mistake is one position of a player's "My mistakes": the last winnable
// position of their game in a finished race, where the move they played
// lost it, kept so that they may come back and find the better move
// (docs/coach.md).
type Mistake struct {
	// Player is whose list it is in.
	Player string `json:"-"`
	// Race and Seat name the game: the player's own seat in the race.
	Race string `json:"race"`
	Seat int    `json:"seat"`
	// Position is the last winnable position: after the game's first
	// Position moves.
	Position int `json:"position"`
	// Variant is the race's; Move is the move played there, which lost
	// the game.
	Variant string `json:"variant"`
	Move    string `json:"move"`
	// RacedAt is when the race was made; AddedAt when the player first
	// opened its practice.
	RacedAt time.Time `json:"racedAt"`
	AddedAt time.Time `json:"addedAt"`
	// SolvedAt is when the player first found a move that keeps the game
	// winnable there; nil until they do.
	SolvedAt *time.Time `json:"solvedAt,omitempty"`
}

// Mistakes keeps each player's "My mistakes": durable (the SQL store)
// where the server has a database.
type Mistakes interface {
	// Add keeps m in m.Player's list, once per race and seat: adding it
	// again changes nothing and reports false.
	Add(ctx context.Context, m Mistake) (bool, error)
	// Solve marks player's mistake of race and seat, at position, solved
	// at t; it reports false, changing nothing, where the list has no such
	// mistake or it is solved already.
	Solve(ctx context.Context, player, race string, seat, position int, t time.Time) (bool, error)
	// List is player's mistakes, the latest added first (ties by race and
	// seat), at most n.
	List(ctx context.Context, player string, n int) ([]Mistake, error)
}
