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
	Clock   race.Clock
	Log     zerolog.Logger
	Races   *race.Service
	Tokens  *Tokens
	Ratings Ratings
	// Computer makes computer players; nil means no races against the
	// computer (and no offers).
	Computer ComputerFactory
	// Presence shares presence counts with the other instances on the same
	// store; nil (memory mode) counts this instance's players only.
	Presence PresenceShare
	// Shared is where the queue, challenges, invites, seats and race list
	// live: memlobby.NewShared for one instance on its own, redislobby's
	// stores for several. Every store but Courier and Races is required.
	Shared Shared
	// DailySecret derives the day's deals (the server's --secret: every
	// instance with the same one deals the same); nil: no day's deal.
	DailySecret []byte
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
