package race

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
)

// recordsTimeout bounds one call to the Records: a healthy Redis answers
// in under a millisecond.
const recordsTimeout = 2 * time.Second

// decideRetry is how soon a race whose result could not be stored (Redis
// down) tries again.
const decideRetry = time.Second

// Record is everything about a race but its moves: enough, with the event
// log, for any instance to rebuild the race (Restore). Races save it at
// every change of seats, presence and state when Records are set.
type Record struct {
	ID        string      `json:"id"`
	Options   Options     `json:"options"`
	Deal      uint64      `json:"deal,string"`
	Salt      string      `json:"salt,omitempty"`
	State     State       `json:"state"`
	CreatedAt time.Time   `json:"createdAt"`
	StartAt   time.Time   `json:"startAt"`
	Result    *Result     `json:"result,omitempty"`
	Match     Match       `json:"match"`
	Next      string      `json:"next,omitempty"`
	Rematch   []bool      `json:"rematch"`
	Seats     []SeatState `json:"seats"`
	// Epoch counts the instances that rebuilt the race to run it: the
	// spectators' feed versions of each are above the one's before.
	Epoch uint64 `json:"epoch,omitempty"`
}

// SeatState is a seat in a Record.
type SeatState struct {
	Taken  bool    `json:"taken"`
	Name   string  `json:"name,omitempty"`
	Token  string  `json:"token,omitempty"`
	Player string  `json:"player,omitempty"`
	Rating float64 `json:"rating,omitempty"`
	// Computer seats keep the level, seed and pace that make their player
	// again on another instance.
	Computer bool   `json:"computer,omitempty"`
	Level    string `json:"level,omitempty"`
	Seed     uint64 `json:"seed,omitempty,string"`
	PaceMs   int64  `json:"paceMs,omitempty"`
	// Ghost is a recorded game's seat: its recording, played on from
	// where the event log has it on another instance.
	Ghost     *Ghost    `json:"ghost,omitempty"`
	Connected bool      `json:"connected"`
	GraceEnd  time.Time `json:"graceEnd"`
	// Berserk is the seat's choice of half its time (Race.Berserk).
	Berserk bool `json:"berserk,omitempty"`
}

// Records keeps races' records and decides each race's result once
// across instances (Redis mode: redisrace.Cluster). In memory mode
// Deps.Records is nil and none of this happens. Which instance runs a race
// (its lease) and how requests reach it are race/fleet's.
type Records interface {
	// Save writes the race's record.
	Save(ctx context.Context, rec *Record) error
	// Load reads a record; ok is false when no race has that id.
	Load(ctx context.Context, id string) (rec *Record, ok bool, err error)
	// Decide stores res as the race's result unless one is stored
	// already, and returns the stored one: the result is decided once
	// however many instances try.
	Decide(ctx context.Context, id string, res *Result, state State) (*Result, State, error)
}

// recordLocked is the race's record now.
func (r *Race) recordLocked() *Record {
	rec := &Record{
		ID: r.id, Options: r.opts, Deal: r.deal, Salt: r.salt, State: r.state,
		CreatedAt: r.createdAt, StartAt: r.startAt, Result: r.result, Match: r.match,
		Epoch: r.epoch,
	}
	rec.Rematch, rec.Seats = slices.Clone(r.rematch), make([]SeatState, len(r.seats))
	if r.next != nil {
		rec.Next = r.next.id
	}
	for s := range r.seats {
		st := &r.seats[s]
		rec.Seats[s] = SeatState{Taken: st.taken, Name: st.name, Token: st.token, Player: st.player, Rating: st.rating,
			Connected: st.connected, GraceEnd: st.graceEnd, Berserk: st.berserk}
		if c := st.computer(); c != nil {
			rec.Seats[s].Computer, rec.Seats[s].Level, rec.Seats[s].Seed, rec.Seats[s].PaceMs = true, c.Level, c.Seed, c.Pace.Milliseconds()
		}
		if g := st.ghost(); g != nil {
			rec.Seats[s].Ghost = g.rec
		}
	}
	return rec
}

// saveLocked queues the record for the race's writer when the race has
// Records, and has the caller wait, once the lock is released, until it
// is written: the save leaves the race's lock, the order of saves stays.
func (r *Race) saveLocked() {
	if r.writer == nil {
		return
	}
	n := r.writer.put(r.recordLocked())
	r.later = append(r.later, func() { r.writer.wait(n) })
}

// FlushRecords waits until every record of the race queued so far is
// saved: the fleet calls it before handing a stopped race over, so that
// the next owner reads the race as it stood here.
func (r *Race) FlushRecords() {
	if r.writer != nil {
		r.writer.flush()
	}
}

// writerFor is the record writer of a race with records, nil without.
func writerFor(records Records, log zerolog.Logger) *recordWriter {
	if records == nil {
		return nil
	}
	return newRecordWriter(records, log)
}

// storeResult stores the result once across instances, outside the race's
// lock (endLocked queues it while the race is deciding: its moves are
// refused, its timers end nothing), then ends the race with the result
// stored, another instance's if it decided first. When the result cannot
// be stored (Redis down) it tries again in decideRetry; when another
// instance runs the race now, this copy stops.
func (r *Race) storeResult(res *Result, state State) {
	counted, err := r.countHeld(res, state)
	var stored *Result
	st := state
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), recordsTimeout)
		stored, st, err = r.records.Decide(ctx, r.id, counted, state)
		cancel()
	}
	r.mu.Lock()
	defer r.unlock()
	if r.stopped {
		return
	}
	if errors.Is(err, ErrNotOwner) {
		r.log.Warn().Err(err).Msg("another instance runs the race now; this copy stops")
		r.stopLocked()
		return
	}
	if err != nil {
		r.log.Error().Err(err).Str("reason", string(res.Reason)).Msg("result not stored; trying again")
		if r.decideT != nil {
			r.decideT.Stop()
		}
		r.decideT = r.clock.AfterFunc(decideRetry, func() { r.storeResult(res, state) })
		return
	}
	if stored.Reason != res.Reason || st != state {
		r.log.Info().Str("stored", string(stored.Reason)).Str("mine", string(res.Reason)).Msg("another instance decided the race")
	}
	r.deciding = false
	r.endedLocked(stored, st)
}

// Restore rebuilds a race from its record and its event log: the deal is
// dealt again and every logged move replayed through the engine. The race
// has no timers yet: the Service that adopts a live race starts them from
// the record's deadlines (a seat whose connection was elsewhere gets the
// grace period to resume).
func Restore(rec *Record, moves []MoveRecord, d Deps) (*Race, error) {
	opts := rec.Options
	opts.fill()
	rules, err := engine.Variant(opts.Variant)
	if err != nil {
		return nil, fmt.Errorf("race %s: restore: %w", rec.ID, err)
	}
	if len(rec.Seats) != opts.Seats {
		return nil, fmt.Errorf("race %s: restore: the record holds %d seats of a race of %d", rec.ID, len(rec.Seats), opts.Seats)
	}
	rematch := make([]bool, len(rec.Seats))
	copy(rematch, rec.Rematch)
	r := &Race{
		id: rec.ID, opts: opts, rules: rules, deal: rec.Deal, salt: rec.Salt,
		seats: make([]seat, len(rec.Seats)), rematch: rematch,
		clock: d.Clock, store: d.Store, fan: newFanout(rec.ID, d.Bus, len(rec.Seats)), records: d.Records, archive: d.Archive, onEnd: d.OnEnd, ended: d.ended,
		log:   d.Log.With().Str("race", rec.ID).Logger(),
		done:  make(chan struct{}),
		state: rec.State, createdAt: rec.CreatedAt, startAt: rec.StartAt,
		result: rec.Result, match: rec.Match,
	}
	r.writer = writerFor(d.Records, r.log)
	r.moveLog = openLog(d.Store, rec.ID)
	r.commit()
	if r.match.BestOf == 0 {
		r.match = Match{Round: 1, BestOf: opts.BestOf}
	}
	for s := range r.seats {
		st, sr := &r.seats[s], rec.Seats[s]
		st.taken, st.name, st.token, st.player, st.rating = sr.Taken, sr.Name, sr.Token, sr.Player, sr.Rating
		st.berserk = sr.Berserk
		st.game = engine.New(rules, r.deal)
		switch {
		case sr.Ghost != nil:
			st.occ = &ghostSeat{rec: sr.Ghost}
		case opts.Solo && s == 0:
			st.occ = soloSeat{}
		}
		if !sr.Computer {
			st.connected = sr.Connected // as the feed starts; Rearm decides what holds
		}
		if st.solo() {
			st.connected = true
		}
		if sr.Computer && sr.Level != "" && d.Computers != nil {
			p, err := d.Computers(sr.Level, sr.Seed)
			if err != nil {
				r.log.Warn().Err(err).Int("seat", s).Str("level", sr.Level).Msg("computer player not made again; it is out")
			} else {
				st.occ = &computerSeat{Computer: Computer{Player: p, Level: sr.Level, Seed: sr.Seed, Pace: time.Duration(sr.PaceMs) * time.Millisecond}}
			}
		}
	}
	// Spectators of a public race see the games as they were the
	// spectator delay ago: their feed starts from the games as of then,
	// and the moves since wait in the delay queue for their time (the
	// Service's rearm starts its timer).
	behind := r.opts.SpectatorDelay > 0 && !r.state.Over() && !r.startAt.IsZero()
	cutMs := r.clock.Now().Sub(r.startAt.Add(r.opts.SpectatorDelay)).Milliseconds()
	spec := r.gamesLocked()
	specLast := make([]MoveRecord, len(r.seats))
	for _, m := range moves {
		if m.Seat < 0 || m.Seat >= len(r.seats) {
			return nil, fmt.Errorf("race %s: restore: move %+v: no such seat", rec.ID, m)
		}
		st := &r.seats[m.Seat]
		if g := st.ghost(); g != nil {
			g.next++ // the log has this entry of the recording
		}
		fm, err := st.playLogged(m)
		if err != nil {
			return nil, fmt.Errorf("race %s: restore: seat %d move %d %q: %w", rec.ID, m.Seat, m.Seq, m.Move, err)
		}
		switch {
		case !behind || m.AtMs <= cutMs:
			spec[m.Seat], specLast[m.Seat] = st.game, m
		default:
			// The feed's game of the seat plays it when it is due.
			r.feed.delay(feedItem{move: fm}, r.startAt.Add(r.opts.SpectatorDelay+m.At()))
		}
	}
	// The feed starts again one epoch on: the spectators' versions go on
	// growing on this instance (see fair.go).
	r.initFeedLocked(spec, specLast, rec.Epoch+1)
	if r.state.Over() {
		r.endedAt = r.clock.Now()
		close(r.done)
	}
	r.listenRecordsLocked()
	return r, nil
}

// Rearm starts a restored race's timers from its record, and asks the
// referee at once: the instance before may have died between a deciding
// move and its decision. The fleet calls it on the race it took over,
// once it is listed.
func (r *Race) Rearm(rec *Record) {
	r.mu.Lock()
	defer r.unlock()
	r.rearmLocked(rec)
}

func (r *Race) rearmLocked(rec *Record) {
	now := r.clock.Now()
	until := func(t time.Time) time.Duration { return max(t.Sub(now), 0) }
	for s := range r.seats {
		st := &r.seats[s]
		if st.occ != nil {
			// Made again by Restore: it plays on from here.
			st.connected = true
			continue
		}
		if !st.taken || rec.Seats[s].Computer {
			// A computer seat whose player could not be made again is out,
			// as though it had left.
			if rec.Seats[s].Computer {
				st.connected = false
				st.graceEnd = now
				st.graceT = r.clock.AfterFunc(0, func() { r.graceOver(s) })
			}
			continue
		}
		if rec.Seats[s].Connected && !r.state.Over() {
			// Whoever was connected was connected to another instance, and
			// is shown as still connected while their connection follows the
			// race here (TakeoverWait); only then does the grace period start.
			st.connected = true
			st.graceT = r.clock.AfterFunc(min(TakeoverWait, r.opts.Grace), func() { r.takeoverWaitOver(s, now) })
			continue
		}
		st.connected = false
		if st.game.Status().Over() {
			continue // a player whose game is over forfeits nothing by leaving
		}
		// A player who had left resumes here or forfeits when their grace
		// period ends.
		end := rec.Seats[s].GraceEnd
		if end.IsZero() {
			end = now.Add(r.opts.Grace)
		}
		st.graceEnd = end
		st.graceT = r.clock.AfterFunc(until(end), func() { r.graceOver(s) })
	}
	r.armFeedLocked(now)
	switch r.state {
	case Waiting:
		r.waitT = r.clock.AfterFunc(until(r.createdAt.Add(r.opts.WaitTimeout)), r.waitOver)
	case Countdown:
		r.countT = r.clock.AfterFunc(until(r.startAt), r.start)
	case Running:
		r.limitT = r.clock.AfterFunc(until(r.startAt.Add(r.opts.TimeLimit)), r.timeUp)
		r.firstT = r.clock.AfterFunc(until(r.startAt.Add(r.opts.FirstMoveTimeout)), r.firstMoveCheck)
		r.armBerserkLocked()
		for s := range r.seats {
			if o := r.seats[s].occ; o != nil && !r.seats[s].game.Status().Over() {
				o.play(r, s)
			}
		}
		if w, reason, done := r.refereeLocked(); done {
			r.finishLocked(w, reason)
			return
		}
	}
	r.saveLocked()
	r.log.Info().Str("state", string(r.state)).Msg("race restored")
}
