package lobby

import (
	"context"
	"fmt"
	"time"

	"sirtommy/race"
)

// claimKeep is how long a pairing's claim on its players lasts if the
// instance making the race dies before it is made.
const claimKeep = time.Minute

// checkRacing refuses a player who is in a lobby race not over: nobody plays
// two at once.
func (l *Lobby) checkRacing(ctx context.Context, player string) error {
	id, racing, err := l.settle(ctx, player)
	if err != nil {
		return unavailable(err)
	}
	if racing {
		return inRace(id)
	}
	return nil
}

// over reports whether race id is over, wherever it runs.
func (l *Lobby) over(ctx context.Context, id string) bool {
	h, err := l.deps.Races.Open(ctx, id)
	if err != nil {
		return race.ErrorCode(err) == race.CodeNoSuchRace
	}
	return h.State().Over()
}

// inRace is the refusal for a player in race id ("" while it is made).
func inRace(id string) error {
	if id == "" {
		return race.Errorf(CodeInRace, "you were just paired: your race is being made")
	}
	return race.Errorf(CodeInRace, "you are in race %s until it is over", id)
}

// busyError is a pairing refused because a player is racing already.
type busyError struct{ player, race string }

func (e *busyError) Error() string { return fmt.Sprintf("lobby: %s is in race %q", e.player, e.race) }

// keepFor is how long a race's seats and its players' marks are kept
// when its end is never seen (its instance died): longer than any race
// with these options lasts.
func (l *Lobby) keepFor(o race.Options) time.Duration {
	limit, bestOf, grace := o.TimeLimit, o.BestOf, l.cfg.Grace
	if limit <= 0 {
		limit = race.DefaultTimeLimit
	}
	if bestOf <= 0 {
		bestOf = 1
	}
	if grace <= 0 {
		grace = race.DefaultGrace
	}
	return time.Duration(bestOf)*(limit+time.Minute) + 2*grace + 10*time.Minute
}

// AuthorizeSeat decides who takes a seat in a race: the holder of a valid
// player token (CodeNotIdentified without one). In races the lobby made
// (their record keeps each seat's player, so any instance knows), only
// the players it paired, each in their own seat: it
// returns that seat's resume token (CodeNotYourSeat for anyone else). In
// other races (made over the API), any free seat under the player's
// display name.
func (l *Lobby) AuthorizeSeat(playerToken, raceID, name string) (displayName, seatToken string, err error) {
	if playerToken == "" {
		ctx, cancel := opCtx()
		defer cancel()
		if _, reserved, err := l.deps.Races.SeatOf(ctx, raceID, ""); err == nil && reserved {
			return "", "", race.Errorf(CodeNotYourSeat, "the seats of race %s are reserved for players of the lobby; say hello as one of them, or watch it", raceID)
		}
		return "", "", race.Errorf(CodeNotIdentified, "say hello with your player token first")
	}
	who, err := l.deps.Tokens.Verify(playerToken)
	if err != nil {
		return "", "", err
	}
	ctx, cancel := opCtx()
	defer cancel()
	token, reserved, err := l.deps.Races.SeatOf(ctx, raceID, who.ID)
	switch {
	case err != nil:
		return "", "", err
	case reserved && token == "":
		return "", "", race.Errorf(CodeNotYourSeat, "the seats of race %s are reserved for other players; watch it instead", raceID)
	}
	return who.Name, token, nil
}
