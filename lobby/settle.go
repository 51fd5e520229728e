package lobby

import (
	"context"
	"time"
)

// A race's players are told its result before the lobby's work on its end
// (their ratings, the day's board, a ghost's runs) is done: that work
// runs in the end worker (ended.go), on the instance that ran the race,
// and frees the players' seat marks last. So a mark that names a race
// which is over says that work is pending, here or on another instance.
// A player's next request waits for it (settle), so that it sees what
// the race just gave them: read your own writes, on one instance or
// several, whatever the store.

const (
	// settleWait bounds how long a request waits for the end's work of
	// its player's race. The work takes milliseconds when the stores
	// answer; when they do not (or the instance that ran the race died
	// and a sweep will redo it), the request goes on without it.
	settleWait = 3 * time.Second
	// settlePoll is how often a request waiting for another instance's
	// work (or for the end to reach this instance's worker) looks again.
	settlePoll = 10 * time.Millisecond
)

// seatMark is a player's seat mark as settle leaves it.
type seatMark struct {
	race   string // the race named ("" while it is made)
	marked bool   // the player is marked at all
	over   bool   // the race named is over: its end's work did not finish within settleWait
}

// settle waits, for at most settleWait or until ctx ends, until the
// end's work of the race player's mark names is done, when that race is
// over; it returns the mark as it then stands.
func (l *Lobby) settle(ctx context.Context, player string) (seatMark, error) {
	var deadline <-chan time.Time
	var m seatMark
	for {
		id, ok, err := l.sh.Seats.Racing(ctx, player)
		if err != nil {
			return seatMark{}, err
		}
		if !ok || id == "" {
			return seatMark{race: id, marked: ok}, nil
		}
		if id != m.race || !m.over {
			m = seatMark{race: id, marked: true, over: l.over(ctx, id)}
		}
		if !m.over {
			return m, nil // racing
		}
		if deadline == nil {
			t := time.NewTimer(settleWait)
			defer t.Stop()
			deadline = t.C
		}
		if !l.awaitEnd(ctx, id, deadline) {
			l.log.Warn().Str("player", player).Str("race", id).Msg("the end of the player's race is not followed up yet; answering without it")
			return m, nil
		}
	}
}

// awaitEnd waits until race id's end work here is done or, when none is
// here, for settlePoll; it reports false once deadline or ctx has passed.
func (l *Lobby) awaitEnd(ctx context.Context, id string, deadline <-chan time.Time) bool {
	done := l.ends.doneOf(id)
	if done == nil {
		t := time.NewTimer(settlePoll)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-deadline:
		case <-ctx.Done():
		}
		return false
	}
	select {
	case <-done:
		return true
	case <-deadline:
	case <-ctx.Done():
	}
	return false
}
