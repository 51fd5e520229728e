package race

// The owner's side of a seat-played move (held.go): the moves that the
// holders of the race's seats on other instances played and logged are
// counted here as they arrive, so that the opponents, the spectators
// and the referee hear of them as of the owner's own.

import (
	"context"
	"fmt"

	"sirtommy/engine"
)

// ApplyRemote counts moves that the holders of the race's seats on other
// instances played and logged (HeldSeat), each seat's in its log order:
// the opponents get their update, the spectators their board when the
// feed reaches it, and the referee decides. A move counted already is
// skipped, so the same records may come again (the log read after a
// gap). gap reports a record past one not counted yet (a message lost on
// the way, or one sent before this instance subscribed): the caller then
// reads the race's log and passes it all. A record the seat's game
// cannot take is an error: the log and this copy disagree.
func (r *Race) ApplyRemote(recs ...MoveRecord) (gap bool, err error) {
	// One record a lock: the events of each are written before the next
	// (a log read after a lapse may hold many, and a connection's send
	// queue would overflow with all of their events at once).
	for i := range recs {
		g, err := r.applyRecord(recs[i], nil)
		gap = gap || g
		if err != nil {
			return gap, err
		}
	}
	return gap, nil
}

// applyRecord is ApplyRemote of one record, sent by its holder (a
// RecordEvent) with the seats it told of the move itself (told).
func (r *Race) applyRecord(rec MoveRecord, told []int) (gap bool, err error) {
	r.mu.Lock()
	defer r.unlock()
	return r.applyRecordsLocked([]MoveRecord{rec}, told)
}

// applyRecordsLocked is ApplyRemote with the race's lock held; told are
// the seats the holder of recs' seat told of them (a RecordEvent's).
func (r *Race) applyRecordsLocked(recs []MoveRecord, told []int) (gap bool, err error) {
	for _, rec := range recs {
		if r.stopped || r.state.Over() {
			return false, nil // the end counted what came before the log's seal
		}
		if rec.Seat < 0 || rec.Seat >= len(r.seats) {
			return gap, fmt.Errorf("race %s: remote move %+v: no such seat", r.id, rec)
		}
		st := &r.seats[rec.Seat]
		switch want := len(st.moves) + 1; {
		case rec.Seq < want || st.game.Status() == engine.Resigned:
			continue
		case rec.Seq > want:
			gap = true
			continue
		}
		if err := r.applyRemoteLocked(st, rec, told); err != nil {
			return gap, err
		}
	}
	return gap, nil
}

// applyRemoteLocked applies rec, the next logged move of seat st, and
// tells everyone but the seat's own connection (its holder answered it)
// and, on other instances, the seats told (the holder told their
// connections on its instance: HeldSeat.Move).
func (r *Race) applyRemoteLocked(st *seat, rec MoveRecord, told []int) error {
	fm, err := st.playLogged(rec)
	if err != nil {
		return fmt.Errorf("race %s: remote move %+v: %w", r.id, rec, err)
	}
	st.held = true
	ev := moveEvents{opp: opponentEvent(r.id, rec.Seat, &st.game, st.connected)}
	for _, o := range told {
		if o >= 0 && o < len(r.seats) && o != rec.Seat {
			if ev.carried == nil {
				ev.carried = make([]bool, len(r.seats))
			}
			ev.carried[o] = true
		}
	}
	r.afterChangeLocked(fm, ev)
	return nil
}

// Sealer is a Store whose log a race's end can seal (redisrace.Store):
// no move is logged after it, whichever instance plays it.
type Sealer interface {
	// Seal ends race raceID's log for why, and returns what sealed it and
	// each of its seats' last seq then.
	Seal(ctx context.Context, raceID, why string, seats int) (sealedBy string, last []int, err error)
}

// countHeld is the end of a race whose store can seal its log (Redis
// mode, where a seat may be held on another instance), before its result
// res is stored: the log is sealed, every move logged before the seal is
// counted (those on their way here included: the log is read when a
// seat's last seq is above what the race counted), and the result is
// decided again from the games as they stand then. A race whose store
// cannot seal keeps res as it is.
func (r *Race) countHeld(res *Result, state State) (*Result, error) {
	sealer, ok := r.store.(Sealer)
	if !ok {
		return res, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordsTimeout)
	defer cancel()
	_, last, err := sealer.Seal(ctx, r.id, string(res.Reason), len(r.seats))
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	behind := false
	for s := range r.seats {
		behind = behind || r.countedLocked(s) < last[s]
	}
	if !behind {
		r.unlock()
		return res, nil
	}
	r.unlock()
	moves, err := r.store.Moves(ctx, r.id)
	if err != nil {
		return nil, err
	}
	if _, err := r.ApplyRemote(moves...); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.unlock()
	return r.decideAgainLocked(res, state), nil
}

// countedLocked is seat s's last seq the race has counted.
func (r *Race) countedLocked(s int) int {
	st := &r.seats[s]
	n := len(st.moves)
	if st.game.Status() == engine.Resigned {
		n++ // a resignation is the seat's last entry
	}
	return n
}

// decideAgainLocked is the result of a race that ended with res, decided
// again from the games as they stand now: the referee's or the time
// limit's verdict may change with moves counted since; a forfeit or an
// abort stays what it was, with the games as they stand.
func (r *Race) decideAgainLocked(res *Result, state State) *Result {
	if state == Finished && res.Reason != ReasonForfeit {
		switch w, why, done := r.refereeLocked(); {
		case done:
			res = r.resultLocked(w, why)
		case !r.clock.Now().Before(r.startAt.Add(r.opts.TimeLimit)):
			res = r.resultLocked(r.onTimeLocked())
		}
	}
	r.gamesOfResultLocked(res)
	return res
}

// listenRecordsLocked subscribes a live race whose seats may be held on
// other instances (a bus that relays events, a HoldingStore: Redis mode)
// to its records topic, where their holders send the moves they play.
func (r *Race) listenRecordsLocked() {
	if _, ok := r.store.(HoldingStore); !ok || !r.fan.relays || r.state.Over() || r.recordsOff != nil {
		return
	}
	r.recordsOff = r.fan.bus.Subscribe(RecordsTopic(r.id), recordsTap{r: r})
}

// unlistenRecordsLocked ends listenRecordsLocked's subscription.
func (r *Race) unlistenRecordsLocked() {
	if r.recordsOff != nil {
		r.recordsOff()
		r.recordsOff = nil
	}
}

// recordsTap hears the race's records topic.
type recordsTap struct{ r *Race }

// Deliver counts a record (ApplyRemote), and reads the log when one
// before it is missing.
func (t recordsTap) Deliver(ev Event) {
	rec, ok := ev.(*RecordEvent)
	if !ok {
		return
	}
	gap, err := t.r.applyRecord(rec.Record, rec.Told)
	if err != nil {
		t.r.log.Error().Err(err).Msg("a held seat's move not counted")
	}
	if gap {
		t.r.catchUpSoon()
	}
}

// catchUpSoon reads the race's log for the records it missed, on a
// goroutine of its own, unless a read is under way.
func (r *Race) catchUpSoon() {
	if !r.catchingUp.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer r.catchingUp.Store(false)
		if err := r.CatchUp(context.Background()); err != nil {
			r.log.Warn().Err(err).Msg("the log not read for the held seats' moves")
		}
	}()
}

// CatchUp counts every move in the race's log that the holders of its
// seats on other instances played and it has not counted: a record lost
// on the way (a pub/sub lapse) or sent before the race listened for them
// (a takeover). The fleet calls it after both.
func (r *Race) CatchUp(ctx context.Context) error {
	if _, ok := r.store.(HoldingStore); !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, recordsTimeout)
	defer cancel()
	moves, err := r.store.Moves(ctx, r.id)
	if err != nil {
		return err
	}
	_, err = r.ApplyRemote(moves...)
	return err
}

// HeldElsewhere reports whether a seat of the race is played by its
// holder on another instance, as far as the race has heard.
func (r *Race) HeldElsewhere() bool {
	r.mu.Lock()
	defer r.unlock()
	for s := range r.seats {
		if r.seats[s].held {
			return true
		}
	}
	return false
}
