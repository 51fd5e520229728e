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
// several, whatever the store. Work that does not finish in time (the
// stores fail, the instance that ran the race died) frees the player
// and the request goes on without it; the end worker, or a sweep of the
// archive, does it later.

const (
	// settleWait bounds how long a request waits for the end's work of
	// its player's race. The work takes milliseconds when the stores
	// answer; when they do not (or the instance that ran the race died
	// and a sweep will redo it), the request goes on without it. Half of
	// storeTimeout, the budget of the lobby's requests, so that freeing
	// the player and the request's own work still fit in it.
	settleWait = storeTimeout / 2
	// settlePoll is how often a request waiting for another instance's
	// work (or for the end to reach this instance's worker) looks again.
	settlePoll = 10 * time.Millisecond
)

// settle waits, for at most settleWait or until ctx ends, until the
// end's work of the race player's mark names is done, when that race is
// over. It returns the race the player is in, as Seats.Racing does: a
// race whose end's work did not finish in time frees the player (they
// may play on; the end worker or a sweep records that race later).
func (l *Lobby) settle(ctx context.Context, player string) (raceID string, racing bool, err error) {
	var deadline <-chan time.Time
	checked := "" // the race last found over
	for {
		id, ok, err := l.deps.Stores.Seats.Racing(ctx, player)
		if err != nil || !ok || id == "" {
			return id, ok, err
		}
		if id != checked {
			if !l.over(ctx, id) {
				return id, true, nil
			}
			checked = id
		}
		if deadline == nil {
			t := time.NewTimer(settleWait)
			defer t.Stop()
			deadline = t.C
		}
		if !l.awaitEnd(ctx, id, deadline) {
			if err := ctx.Err(); err != nil {
				return "", false, err
			}
			l.log.Warn().Str("player", player).Str("race", id).Msg("the end of the player's race is not followed up yet: freed, and answered without it")
			if err := l.deps.Stores.Seats.Free(ctx, id, []string{player}); err != nil {
				return "", false, err
			}
			return "", false, nil
		}
	}
}

// settleRead is settle for a read of what player's races gave them: the
// shared marks failing must not fail a read of the durable store, which
// then answers as it stands.
func (l *Lobby) settleRead(ctx context.Context, player string) {
	if _, _, err := l.settle(ctx, player); err != nil {
		l.log.Warn().Err(err).Str("player", player).Msg("the player's seat mark is unreadable: answering without waiting for their last race's end")
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
