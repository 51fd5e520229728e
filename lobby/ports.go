package lobby

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/race"
)

// ComputerFactory makes a computer player of a level (the engine bot's
// level names) with a seed: the race package's.
type ComputerFactory = race.ComputerFactory

// Deps are what the lobby needs from the outside.
type Deps struct {
	Clock  race.Clock
	Log    zerolog.Logger
	Races  *race.Service
	Tokens *Tokens
	// Stores is where the lobby keeps its state: memlobby.NewStores for
	// one instance on its own (Stores says which may be nil).
	Stores Stores
	// Computer makes computer players; nil means no races against the
	// computer (and no offers).
	Computer ComputerFactory
	// DailySecret derives the day's deals (the server's --secret: every
	// instance with the same one deals the same); nil: no day's deal.
	DailySecret []byte
}

// Stores is every store the lobby keeps its state in, so that one value
// says where it all lives: memlobby.NewStores makes the in-memory ones of
// one instance on its own; several instances share redislobby's live
// stores and the database's durable ones (Ratings, Ghosts, Dailies).
// Every store but Courier, Races and Presence is required: New panics
// without one.
type Stores struct {
	// Ratings keeps the standings and race histories; required.
	Ratings Ratings
	// Queue is the quick-play queues; required.
	Queue Queue
	// Challenges is the open challenges; required.
	Challenges Challenges
	// Invites is the private races' invites; required.
	Invites Invites
	// Seats records who is in a lobby race; required.
	Seats Seats
	// Ghosts keeps the ghost challenges and their runs; required.
	Ghosts Ghosts
	// Dailies keeps the days' boards; required.
	Dailies Dailies
	// Rooms keeps the rooms of "race a group"; required.
	Rooms Rooms
	// Arenas keeps the arenas, their entries and points: durable (the
	// SQL store) where the server has a database; required.
	Arenas Arenas
	// Mistakes keeps the players' "My mistakes", the positions they
	// practise (web: POST /api/races/{id}/practice): durable where the
	// server has a database; nil keeps none. The lobby itself does not
	// use it.
	Mistakes Mistakes
	// Courier carries notices to the other instances; nil in memory mode,
	// where every connection is here.
	Courier Courier
	// Races shares the live race list with the other instances; nil in
	// memory mode, where every race is here.
	Races RaceListShare
	// Presence shares the presence counts with the other instances; nil
	// in memory mode counts this instance's players only.
	Presence PresenceShare
}

// PresenceShare shares presence counts between instances.
type PresenceShare interface {
	// Share stores this instance's counts, to be seen until a few
	// heartbeats have passed without a new Share, and returns the sum of
	// the other live instances' counts.
	Share(ctx context.Context, own Presence) (others Presence, err error)
}

// storeTimeout bounds one call to the shared stores: they answer in well
// under a millisecond when they are up.
const storeTimeout = 2 * time.Second

// opCtx bounds a call to the shared stores.
func opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), storeTimeout)
}

// storeFailed is the refusal for a read of the ratings store (what) that
// failed: unavailable, as every storage failure is, unless the store
// refused with a code of its own.
func storeFailed(what string, err error) error {
	if race.IsRefusal(err) {
		return err
	}
	return &race.Error{Code: race.CodeUnavailable, Message: what + " cannot be read now; try again shortly", Err: err}
}

// unavailable is the refusal for a failure of the shared stores: the
// request changed nothing and may be sent again.
func unavailable(err error) error {
	return &race.Error{Code: race.CodeUnavailable, Message: "the lobby is unavailable; try again shortly", Err: fmt.Errorf("lobby: %w", err)}
}
