package lobby

import (
	"strings"
	"sync"
	"time"

	"sirtommy/race"
)

// What follows a race's end (freeing its players, its ratings, the day's
// board, a ghost's runs) calls the shared stores, which may be slow or
// away. The race service's end hook runs in the goroutine that ended the
// race (a player's request, a timer), so the hook only queues the race;
// one worker does the rest, in the order the races ended, retrying what
// the stores refused until they answer. Retrying is safe: the ratings
// store records a race once (its race mark), the day's board an attempt
// once, and freeing players twice frees them once.

// endWork is one ended race waiting for the worker.
type endWork struct {
	e  race.Ended
	at time.Time // when this instance heard of the end
}

// endQueue is the worker's queue: unbounded, so that the hook never
// waits (a race's end is a few hundred bytes; an outage of minutes at a
// thousand races is a few hundred kilobytes).
type endQueue struct {
	mu      sync.Mutex
	pending []endWork
	closing bool          // Close began: no more work; the worker ends once done
	wake    chan struct{} // one-buffered: work or closing
	stop    chan struct{} // closed when Close stops waiting: retries give up
	done    chan struct{} // closed when the worker has ended
}

func newEndQueue() *endQueue {
	return &endQueue{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

func (q *endQueue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Retry delays of the end's work while the stores fail: from a tenth of
// a second, doubling, to at most five seconds between tries.
const (
	endRetryFirst = 100 * time.Millisecond
	endRetryMax   = 5 * time.Second
)

// ended is the race service's OnEnd hook: it hears of every race that ends
// on this instance, even one made by an instance that died since, and
// queues those the lobby made (their seats carry player ids) for the
// worker. It never waits for a store.
func (l *Lobby) ended(e race.Ended) {
	lobbyRace := false
	for _, p := range e.Players {
		lobbyRace = lobbyRace || p.Player != ""
	}
	if !lobbyRace {
		return // made over the API: nobody to free or rate
	}
	w := endWork{e: e, at: l.deps.Clock.Now()}
	q := l.ends
	q.mu.Lock()
	closing := q.closing
	if !closing {
		q.pending = append(q.pending, w)
	}
	q.mu.Unlock()
	if closing {
		l.log.Error().Str("race", e.Race).Msg("race ended after the lobby closed: not recorded")
		return
	}
	q.poke()
}

// runEnds is the worker: it does each ended race's work in turn until
// Close, then what is left, until Close stops waiting.
func (l *Lobby) runEnds() {
	q := l.ends
	defer close(q.done)
	for {
		q.mu.Lock()
		for len(q.pending) == 0 && !q.closing {
			q.mu.Unlock()
			<-q.wake
			q.mu.Lock()
		}
		if len(q.pending) == 0 {
			q.mu.Unlock()
			return
		}
		w := q.pending[0]
		q.pending[0] = endWork{}
		q.pending = q.pending[1:]
		q.mu.Unlock()
		select {
		case <-q.stop:
			l.log.Error().Str("race", w.e.Race).Msg("race not recorded: the lobby closed before the stores answered")
			continue
		default:
		}
		l.afterEnd(w)
	}
}

// flushEnds closes the queue and waits up to timeout for the worker to
// finish it; then it makes the worker give up what is left.
func (l *Lobby) flushEnds(timeout time.Duration) {
	q := l.ends
	q.mu.Lock()
	if q.closing {
		q.mu.Unlock()
		<-q.done
		return
	}
	q.closing = true
	q.mu.Unlock()
	q.poke()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-q.done:
	case <-t.C:
		close(q.stop)
		<-q.done
	}
}

// afterEnd frees an ended race's players and records it.
func (l *Lobby) afterEnd(w endWork) {
	e := w.e
	var players [2]PlayerRef
	var ids []string
	for s, p := range e.Players {
		players[s] = PlayerRef{ID: p.Player, Name: p.Name, Computer: p.Computer, Ghost: p.Ghost, Solo: p.Solo}
		if p.Player != "" && !p.Computer {
			ids = append(ids, p.Player)
		}
	}
	// First, so that they may queue again as soon as they can (a player
	// whose marked race is over is freed by their next request anyway).
	l.retry(e.Race, "players not freed", func() error {
		ctx, cancel := opCtx()
		defer cancel()
		return l.sh.Seats.Free(ctx, e.Race, ids)
	})
	if e.Result.Outcome == race.OutcomeAborted {
		return
	}
	l.seeDeal(e.Race, e.Variant, e.Result, players)
	l.retry(e.Race, "race not recorded", func() error {
		return l.record(e.Race, e.Variant, players, e.Result, w.at)
	})
	if strings.HasPrefix(e.Tag, dailyTag) {
		l.retry(e.Race, "day's game not recorded", func() error {
			ctx, cancel := opCtx()
			defer cancel()
			return l.dailyEnded(ctx, e, w.at)
		})
	}
	if e.Ghosts != [2]string{} {
		// Once: a ghost's run is added, not set, so a try that failed
		// after the store took it would count it twice.
		ctx, cancel := opCtx()
		defer cancel()
		if err := l.ghostEnded(ctx, e, w.at); err != nil {
			l.log.Error().Err(err).Str("race", e.Race).Msg("ghost race not recorded")
		}
	}
}

// retry calls f until it succeeds, fails otherwise than by a store
// failure (storeFailure), or Close stops waiting; it reports whether f
// succeeded.
func (l *Lobby) retry(raceID, what string, f func() error) bool {
	delay := endRetryFirst
	for try := 1; ; try++ {
		err := f()
		if err == nil {
			if try > 1 {
				l.log.Info().Str("race", raceID).Int("tries", try).Msg(what + ": done at last")
			}
			return true
		}
		if !storeFailure(err) {
			l.log.Error().Err(err).Str("race", raceID).Msg(what)
			return false
		}
		l.log.Warn().Err(err).Str("race", raceID).Int("try", try).Dur("retryIn", delay).Msg(what + ": the stores failed; trying again")
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-l.ends.stop:
			t.Stop()
			l.log.Error().Err(err).Str("race", raceID).Msg(what + ": the lobby closed before the stores answered")
			return false
		}
		delay = min(2*delay, endRetryMax)
	}
}

// storeFailure reports whether err is a failure of the stores, which may
// pass (an error without a code, or one with CodeUnavailable), not a
// refusal that trying again would only repeat.
func storeFailure(err error) bool {
	return !race.IsRefusal(err) || race.ErrorCode(err) == race.CodeUnavailable
}
