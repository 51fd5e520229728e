package race

// A race's life: the countdown once every seat is filled, the start, the
// clock (the time limit, the first-move rule, nobody coming), and the end:
// the referee's decision or an abort, the final state, and the work of the
// end run once the lock is released.

import (
	"context"
	"strconv"

	"sirtommy/engine"
)

// maybeCountdownLocked starts the countdown once every seat is taken and
// its player connected (the seats of a next round are kept for the
// players of the last one until they resume them).
func (r *Race) maybeCountdownLocked() {
	if r.state != Waiting {
		return
	}
	for s := range r.seats {
		if !r.seats[s].connected {
			return
		}
	}
	r.state = Countdown
	r.startAt = r.clock.Now().Add(r.opts.Countdown)
	r.countT = r.clock.AfterFunc(r.opts.Countdown, r.start)
	r.log.Info().Time("startAt", r.startAt).Msg("countdown")
}

func (r *Race) start() {
	r.mu.Lock()
	defer r.unlock()
	if r.state != Countdown {
		return
	}
	r.state = Running
	r.limitT = r.clock.AfterFunc(r.opts.TimeLimit, r.timeUp)
	r.firstT = r.clock.AfterFunc(r.opts.FirstMoveTimeout, r.firstMoveCheck)
	r.armBerserkLocked()
	r.saveLocked()
	r.log.Info().Msg("race started")
	r.publishStateLocked(-1)
	for s := range r.seats {
		if o := r.seats[s].occ; o != nil {
			o.play(r, s)
		}
	}
}

func (r *Race) timeUp() {
	r.mu.Lock()
	defer r.unlock()
	if r.state == Running {
		r.timeUpLocked()
	}
}

func (r *Race) timeUpLocked() { r.finishLocked(r.onTimeLocked()) }

// onTimeLocked is the winner (-1: none) and the reason of a race whose
// time is up, as its games stand.
func (r *Race) onTimeLocked() (winner int, reason Reason) {
	if r.opts.Solo {
		return -1, ReasonTime
	}
	return decideOnTime(r.gameRefsLocked(nil), r.finishedLocked(nil))
}

// firstMoveCheck aborts a running race in which a racer has not moved by
// the first-move deadline. Where a seat may be held on another instance
// (HoldingStore), its first move may be logged and on its way here, or
// lost to a pub/sub lapse: the log is read before the race is aborted
// for it (the holder refuses a first move after the deadline, so the
// read sees every first move it accepted).
func (r *Race) firstMoveCheck() {
	r.mu.Lock()
	defer r.unlock()
	if r.state != Running || r.stopped {
		return
	}
	s, late := r.noFirstMoveLocked()
	if !late {
		return
	}
	if _, holding := r.store.(HoldingStore); holding && !r.firstMovesRead {
		r.firstMovesRead = true
		r.later = append(r.later, func() {
			if err := r.CatchUp(context.Background()); err != nil {
				r.log.Warn().Err(err).Msg("the log not read for first moves before the abort")
			}
			r.firstMoveCheck()
		})
		return
	}
	r.log.Info().Int("seat", s).Msg("no first move in time")
	r.abortLocked(ReasonNoFirstMove)
}

// noFirstMoveLocked is the first seat whose racer has not moved yet, if
// any: ghosts, a solo race's empty seat and a game over before its first
// move are not waited for.
func (r *Race) noFirstMoveLocked() (seat int, late bool) {
	for s := range r.seats {
		if r.seats[s].ghost() == nil && !r.seats[s].solo() && r.seats[s].game.Plies() == 0 && !r.seats[s].game.Status().Over() {
			return s, true
		}
	}
	return -1, false
}

// waitOver aborts a race nobody came to play.
func (r *Race) waitOver() {
	r.mu.Lock()
	defer r.unlock()
	if r.state != Waiting || r.stopped {
		return
	}
	r.log.Info().Dur("waited", r.opts.WaitTimeout).Msg("nobody came: the race expires")
	r.abortLocked(ReasonExpired)
}

// Stop stops the race's timers without ending it: another instance runs
// it now (Redis mode), and this copy must decide nothing.
func (r *Race) Stop() {
	r.mu.Lock()
	defer r.unlock()
	r.stopLocked()
}

// Halted is Stopped without the race's lock: it may be asked while
// another race delivers an event.
func (r *Race) Halted() bool { return r.halted.Load() }

func (r *Race) stopLocked() {
	r.stopped = true
	r.halted.Store(true)
	r.stopTimersLocked()
	r.unlistenRecordsLocked()
}

// stopTimersLocked stops every timer of the race.
func (r *Race) stopTimersLocked() {
	for _, t := range []Timer{r.countT, r.waitT, r.limitT, r.firstT, r.feed.timer, r.decideT, r.watchT} {
		if t != nil {
			t.Stop()
		}
	}
	for s := range r.seats {
		if t := r.seats[s].graceT; t != nil {
			t.Stop()
		}
		if t := r.seats[s].berserkT; t != nil {
			t.Stop()
		}
		if o := r.seats[s].occ; o != nil {
			o.stop()
		}
	}
}

// Abort ends the race without a rated result, for the reason given (for
// instance "shutdown"). It does nothing to a race that is over.
func (r *Race) Abort(reason Reason) {
	r.mu.Lock()
	defer r.unlock()
	if !r.state.Over() {
		r.abortLocked(reason)
	}
}

func (r *Race) abortLocked(reason Reason) {
	r.endLocked(&Result{Outcome: OutcomeAborted, Reason: reason}, Aborted)
}

func (r *Race) finishLocked(winner int, reason Reason) {
	r.endLocked(r.resultLocked(winner, reason), Finished)
}

// resultLocked is the result of a race finished with winner (-1: none)
// for reason, as its games stand.
func (r *Race) resultLocked(winner int, reason Reason) *Result {
	res := &Result{Outcome: OutcomeDraw, Reason: reason, Rated: !r.opts.Unrated && len(r.seats) == MinSeats}
	if winner >= 0 {
		w := winner
		res.Outcome, res.Winner = OutcomeWin, &w
	}
	if r.opts.Solo && (winner < 0 || r.seats[winner].solo()) {
		res.Outcome, res.Winner, res.Rated = OutcomeSolo, nil, false
	}
	if !r.opts.Solo {
		var games [MaxSeats]*engine.Game
		var finished [MaxSeats]int64
		res.Ranking = rank(r.gameRefsLocked(games[:0]), r.finishedLocked(finished[:0]), winner)
	}
	return res
}

func (r *Race) endLocked(res *Result, state State) {
	if r.deciding {
		return // a result is being stored: it ends the race
	}
	r.gamesOfResultLocked(res)
	if r.records != nil {
		// The result is stored once for every instance, by one Redis
		// script: outside the lock, so that nobody else waits for Redis.
		r.deciding = true
		r.later = append(r.later, func() { r.storeResult(res, state) })
		return
	}
	r.endedLocked(res, state)
}

// gamesOfResultLocked sets what res says of each seat's game (score,
// status, record), of the deal and of the match, as they stand.
func (r *Race) gamesOfResultLocked(res *Result) {
	n := len(r.seats)
	res.Scores, res.Statuses, res.Games = make([]int, n), make([]engine.Status, n), make([]string, n)
	for s := range r.seats {
		g := &r.seats[s].game
		res.Scores[s], res.Statuses[s] = g.Score(), g.Status()
		res.Games[s] = engine.RecordOf(g, r.seats[s].moves).String()
	}
	res.Deal = strconv.FormatUint(r.deal, 10)
	if !r.opts.DealNamed {
		res.Salt, res.Commitment, res.Grade = r.salt, r.Commitment(), r.opts.Grade
	}
	if res.Match == nil {
		r.settleMatchLocked(res)
	}
}

// endedLocked ends the race with its result, stored once when the race
// has Records.
func (r *Race) endedLocked(res *Result, state State) {
	r.state = state
	r.stopTimersLocked()
	r.unlistenRecordsLocked() // the log is sealed: no record comes after the end
	r.result, r.endedAt = res, r.clock.Now()
	// The race is over: the spectators' delay protects nothing any more.
	// What it still held back is dropped, not sent in a burst (which would
	// overflow a spectator's send queue after a fast race): the final state
	// below carries both boards as they end.
	r.feed.queue.Clear()
	r.log.Info().Str("state", string(state)).Str("outcome", string(res.Outcome)).Str("reason", string(res.Reason)).
		Ints("scores", res.Scores).Msg("race over")
	r.publishStateLocked(-1)
	r.saveLocked()
	// What follows calls out of the race (the store, the OnEnd hook, the
	// Service): it runs once the lock is released.
	if ret, ok := r.store.(Retainer); ok {
		r.later = append(r.later, func() {
			if err := ret.Finished(context.Background(), r.id); err != nil {
				r.log.Warn().Err(err).Msg("event log retention not set")
			}
		})
	}
	if r.onEnd != nil || r.ended != nil {
		e := r.endedEventLocked()
		if r.ended != nil {
			r.later = append(r.later, func() { r.ended(r, e) })
		} else {
			r.later = append(r.later, func() { r.onEnd(e) })
		}
	}
	r.later = append(r.later, func() { close(r.done) })
	r.afterEndLocked()
}

// endedEventLocked is the race's end as Deps.OnEnd hears of it.
func (r *Race) endedEventLocked() Ended {
	e := Ended{Race: r.id, Variant: r.rules.Name, Tag: r.opts.Tag, Players: r.playersLocked(), Ghosts: make([]string, len(r.seats))}
	if r.result != nil {
		e.Result = *r.result
	}
	for i := range r.seats {
		if g := r.seats[i].ghost(); g != nil {
			e.Ghosts[i] = g.rec.Ref
		}
	}
	return e
}
