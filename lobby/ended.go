package lobby

import (
	"slices"
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
//
// Once all of a finished race's work is done, the worker marks the race
// followed in the race archive (race.Service.Followed). A process that
// stops in between (a crash, a deploy that did not wait) leaves races
// archived and not followed: the worker sweeps the archive for them when
// the lobby starts and every minute after, and does their work again.
// Every step is idempotent per race (the ratings store records a race
// once, the day's board an attempt once, a ghost's runs a race once, a
// deal seen or a best game kept again changes nothing;
// freeing players who are free again, or in another race, frees nobody
// of that race), so a sweep that does again work that was done, or that
// the live path is doing at the same moment, changes nothing (but for a
// ghost's author, who may be told of the run again): doing it twice is
// harmless, doing it never is what the sweep prevents. The sweep
// takes the races that ended endSweepAfter ago or more, so as not to race
// the live path, which marks a race within moments; at start, every race.

// endWork is one ended race waiting for the worker.
type endWork struct {
	e  race.Ended
	at time.Time // when this instance heard of the end (swept: when it ended)
}

// The sweeps of the archive for races whose end's work was not done.
const (
	// endSweepEvery is the time between two sweeps.
	endSweepEvery = time.Minute
	// endSweepAfter is how long ago a race must have ended for a sweep to
	// take it (but at start): the live path marks it followed well within
	// that, unless the stores are down, when doing it twice is harmless.
	endSweepAfter = 2 * time.Minute
	// endSweepBatch bounds the races one sweep queues; the next sweep
	// takes the next ones. A crash leaves a few races unfollowed.
	endSweepBatch = 100
)

// endQueue is the worker's queue: unbounded, so that the hook never
// waits (a race's end is a few hundred bytes; an outage of minutes at a
// thousand races is a few hundred kilobytes).
type endQueue struct {
	mu      sync.Mutex
	pending []endWork
	ids     map[string]int           // races pending or being done, and how often: the sweep skips them
	waiters map[string]chan struct{} // closed when a race leaves ids (settle waits on them)
	closing bool                     // Close began: no more work; the worker ends once done
	swept   bool                     // the sweep at start is done
	sweep   bool                     // a sweep is due
	sweepT  race.Timer               // sets sweep every endSweepEvery
	wake    chan struct{}            // one-buffered: work or closing
	stop    chan struct{}            // closed when Close stops waiting: retries give up
	done    chan struct{}            // closed when the worker has ended
}

func newEndQueue() *endQueue {
	return &endQueue{ids: make(map[string]int), waiters: make(map[string]chan struct{}), sweep: true, // at start
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// push queues w; the caller holds q.mu.
func (q *endQueue) push(w endWork) {
	q.pending = append(q.pending, w)
	q.ids[w.e.Race]++
}

// finished forgets w, done.
func (q *endQueue) finished(w endWork) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ids[w.e.Race]--; q.ids[w.e.Race] <= 0 {
		delete(q.ids, w.e.Race)
		if ch := q.waiters[w.e.Race]; ch != nil {
			close(ch)
			delete(q.waiters, w.e.Race)
		}
	}
}

// doneOf is closed once race id's end work, pending or being done here,
// is over; nil when none is here (not yet queued, done, or on another
// instance).
func (q *endQueue) doneOf(id string) <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ids[id] == 0 {
		return nil
	}
	ch := q.waiters[id]
	if ch == nil {
		ch = make(chan struct{})
		q.waiters[id] = ch
	}
	return ch
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
// queues for the worker those the lobby made (their seats carry player
// ids), and the other finished ones, which it only marks followed. It
// never waits for a store.
func (l *Lobby) ended(e race.Ended) {
	lobbyRace := isLobbyRace(e)
	if !lobbyRace && e.Result.Outcome == race.OutcomeAborted {
		return // made over the API, and not archived: nothing to do
	}
	w := endWork{e: e, at: l.deps.Clock.Now()}
	q := l.ends
	q.mu.Lock()
	closing := q.closing
	if !closing {
		q.push(w)
	}
	q.mu.Unlock()
	if closing {
		if lobbyRace {
			l.log.Error().Str("race", e.Race).Msg("race ended after the lobby closed: not recorded")
		}
		return
	}
	q.poke()
}

// isLobbyRace reports whether the lobby made race e (its seats carry
// player ids): it has players to free and rate.
func isLobbyRace(e race.Ended) bool {
	for _, p := range e.Players {
		if p.Player != "" {
			return true
		}
	}
	return false
}

// armSweep sets the next sweep endSweepEvery from now, unless the lobby
// is closing.
func (l *Lobby) armSweep() {
	q := l.ends
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closing {
		return
	}
	q.sweepT = l.deps.Clock.AfterFunc(endSweepEvery, func() {
		q.mu.Lock()
		q.sweep = true
		q.mu.Unlock()
		q.poke()
		l.armSweep()
	})
}

// sweepEnds queues again the archived races whose end's work was not all
// done (not followed): those that ended endSweepAfter ago or more, or,
// at start, all. It skips those the queue holds already.
func (l *Lobby) sweepEnds(atStart bool) {
	before := l.deps.Clock.Now()
	if !atStart {
		before = before.Add(-endSweepAfter)
	}
	ctx, cancel := opCtx()
	list, err := l.deps.Races.Unfollowed(ctx, before, endSweepBatch)
	cancel()
	if err != nil {
		l.log.Warn().Err(err).Msg("archive not swept for races whose end was not followed up; the next sweep tries again")
		return
	}
	q := l.ends
	var again []string
	q.mu.Lock()
	for i := range list {
		a := &list[i]
		if q.closing || q.ids[a.Info.Race] > 0 {
			continue
		}
		q.push(endWork{e: a.Ended(), at: a.EndedAt})
		again = append(again, a.Info.Race)
	}
	q.mu.Unlock()
	if len(again) > 0 {
		l.log.Info().Strs("races", again).Msg("races whose end was not followed up: their work is done again")
	}
}

// runEnds is the worker: it does each ended race's work in turn until
// Close, then what is left, until Close stops waiting. It sweeps the
// archive first, and when a sweep is due.
func (l *Lobby) runEnds() {
	q := l.ends
	defer close(q.done)
	l.armSweep()
	for {
		q.mu.Lock()
		for len(q.pending) == 0 && !q.closing && !q.sweep {
			q.mu.Unlock()
			<-q.wake
			q.mu.Lock()
		}
		if q.sweep && !q.closing {
			atStart := !q.swept
			q.sweep, q.swept = false, true
			q.mu.Unlock()
			l.sweepEnds(atStart)
			continue
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
			q.finished(w)
			continue
		default:
		}
		l.afterEnd(w)
		q.finished(w)
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
	if q.sweepT != nil {
		q.sweepT.Stop()
	}
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

// afterEnd records an ended race, then frees its players; once all of a
// finished race's work is done, it marks the race followed. A refusal of
// a step is final (trying again would only repeat it): the work is done
// as far as it can be. A store failure that was not tried again, or the
// lobby closing first, leaves the race unfollowed, for a sweep.
func (l *Lobby) afterEnd(w endWork) {
	e := w.e
	if !isLobbyRace(e) {
		l.followed(e.Race) // made over the API: nobody to free or rate
		return
	}
	var ids []string
	for _, p := range e.Players {
		if p.Player != "" && !p.Computer {
			ids = append(ids, p.Player)
		}
	}
	// Last, once what the race gave them is stored: a mark naming a race
	// that is over tells a player's next request to wait for this work
	// (settle), so that it sees their game (read your own writes).
	free := func() {
		l.retry(e.Race, "players not freed", func() error {
			ctx, cancel := opCtx()
			defer cancel()
			return l.deps.Stores.Seats.Free(ctx, e.Race, ids)
		})
	}
	arena := func() {
		if strings.HasPrefix(e.Tag, arenaTag) {
			l.retry(e.Race, "arena's race not counted", func() error {
				ctx, cancel := opCtx()
				defer cancel()
				return l.arenaEnded(ctx, e, w.at)
			})
		}
	}
	if e.Result.Outcome == race.OutcomeAborted {
		arena() // its players go back to the pool, with no points
		free()
		return
	}
	refs := make([]PlayerRef, len(e.Players))
	for s, p := range e.Players {
		refs[s] = PlayerRef{ID: p.Player, Name: p.Name, Computer: p.Computer, Ghost: p.Ghost, Solo: p.Solo}
	}
	l.retry(e.Race, "deal not marked seen, or best game not kept", func() error {
		return l.seeDeal(e.Race, e.Variant, e.Result, refs)
	})
	l.retry(e.Race, "race not recorded", func() error {
		return l.record(e.Race, e.Variant, refs, e.Result, w.at)
	})
	if len(refs) != race.MinSeats {
		// A room's race: kept in its racers' histories (above), and no
		// more (the day's deal and ghosts are races of two).
		free()
		l.followed(e.Race)
		return
	}
	arena()
	if strings.HasPrefix(e.Tag, dailyTag) {
		l.retry(e.Race, "day's game not recorded", func() error {
			ctx, cancel := opCtx()
			defer cancel()
			return l.dailyEnded(ctx, e, w.at)
		})
	}
	done := true
	if slices.ContainsFunc(e.Ghosts, func(g string) bool { return g != "" }) {
		// Once here: a failure leaves the race unfollowed, and the sweep
		// tries again (the ghosts store records a race's run once).
		ctx, cancel := opCtx()
		err := l.ghostEnded(ctx, e, w.at)
		cancel()
		if err != nil {
			l.log.Error().Err(err).Str("race", e.Race).Msg("ghost race not recorded")
			done = !storeFailure(err)
		}
	}
	free()
	select {
	case <-l.ends.stop:
		done = false // a step may have been given up
	default:
	}
	if done {
		l.followed(e.Race)
	}
}

// followed marks race id's end followed up in the archive, trying again
// while the archive fails.
func (l *Lobby) followed(id string) {
	l.retry(id, "race's end not marked followed", func() error {
		ctx, cancel := opCtx()
		defer cancel()
		return l.deps.Races.Followed(ctx, id)
	})
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
