package fleet

// A seat played on its connection's instance while its race runs on
// another (docs/redis.md, "Seat-played moves"): the connection's moves
// are checked, logged and answered here by a race.HeldSeat, which sends
// each to the race's owner, and cross Redis once.

import (
	"context"
	"errors"
	"slices"

	"sirtommy/race"
)

// HoldSeats has this instance play the seats of its connections to races
// that run on other instances (race.HeldSeat), where the store can hold
// seats (race.HoldingStore); off, their moves are forwarded to the races'
// owners. Call it before the fleet serves connections.
func (f *Fleet) HoldSeats(on bool) {
	_, ok := f.deps.Store.(race.HoldingStore)
	f.holdSeats = on && ok
}

// moveHeld plays move text, with request id id, for seat s on the seat's
// holder here, opening it at the seat's first move while the race runs
// elsewhere, and hands the connection its answer. done is false when the
// move goes where the race runs instead: the race runs here, the seat
// cannot be held now (the race not running yet by its record, Redis
// away), or the seat was taken back from this instance (its owner plays
// it from then on).
func (p *proxy) moveHeld(s int, text, id string) (done bool, err error) {
	if !p.f.holdSeats || p.noHold.Load() {
		return false, nil
	}
	p.holdMu.Lock()
	defer p.holdMu.Unlock()
	h := p.heldSeat(s)
	if h == nil {
		return false, nil
	}
	moved, err := h.Move(text, id)
	if errors.Is(err, race.ErrNotHolder) {
		p.noHold.Store(true)
		p.held.CompareAndSwap(h, nil)
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if sub := p.subscriber(); sub != nil {
		sub.Deliver(moved)
	}
	return true, nil
}

// heldSeat is the holder of seat s here, opened if need be, or nil when
// the seat is not played here: the connection does not hold seat s, or
// the race runs on this instance (its own copy plays every seat). Called
// with holdMu held.
func (p *proxy) heldSeat(s int) *race.HeldSeat {
	if r, err := p.f.svc.Get(p.id); err == nil && !r.Halted() {
		p.held.Store(nil)
		return nil
	}
	if h := p.held.Load(); h != nil && h.Seat() == s {
		return h
	}
	p.mu.Lock()
	mine := p.player && p.seat == s && p.sub != nil
	p.mu.Unlock()
	if !mine {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	rec, found, err := p.f.cluster.Load(ctx, p.id)
	if err != nil || !found || rec.State != race.Running {
		return nil // its owner answers
	}
	moves := func(ctx context.Context) ([]race.MoveRecord, error) { return p.f.deps.Store.Moves(ctx, p.id) }
	h, err := race.OpenHeld(ctx, rec, s, moves, p.f.deps)
	if err != nil {
		p.f.deps.Log.Debug().Err(err).Str("race", p.id).Int("seat", s).Msg("seat not held here")
		return nil
	}
	h.TellHere(p.f)
	p.held.Store(h)
	return h
}

// dropHeld closes the seat's holder here, if any: a request other than a
// move goes to the race's owner, which takes the seat back (and a berserk
// racer's holder must learn of it from the record).
func (p *proxy) dropHeld() { p.held.Store(nil) }

// heldView is ev, a state for the connection, with its seat's view as
// the holder here has it when the owner's has not counted the holder's
// last moves yet (they are on their way to it): the holder has the
// seat's game as the log does.
func (p *proxy) heldView(ev *race.StateEvent) race.Event {
	h := p.held.Load()
	if h == nil || ev.Seat == nil || *ev.Seat != h.Seat() || ev.You == nil {
		return ev
	}
	v, ok := h.ViewAhead(ev.You.Moves)
	if !ok {
		return ev
	}
	cp := *ev
	cp.You = &v
	return &cp
}

var _ race.Teller = (*Fleet)(nil)

// Listening lists the seats of race id, other than seat, whose
// connection here takes the race's events from its owner now (its gate
// open for its seat), for a move of seat's played here to tell them
// itself (race.HeldSeat).
func (f *Fleet) Listening(id string, seat int) []int {
	var out []int
	f.eachSeatTap(id, func(p *proxy, s int, _ race.Subscriber) {
		if s != seat {
			out = append(out, s)
		}
	})
	return out
}

// Tell hands ev, the update of a move played here, to the connection
// here of each of seats, through its seat's gate: not to one shut for a
// re-attachment meanwhile (its fresh snapshot has the move).
func (f *Fleet) Tell(id string, seats []int, ev *race.OpponentEvent) {
	type tap struct {
		p   *proxy
		s   int
		sub race.Subscriber
	}
	var room [race.MaxSeats]tap
	taps := room[:0]
	f.eachSeatTap(id, func(p *proxy, s int, sub race.Subscriber) {
		if slices.Contains(seats, s) {
			taps = append(taps, tap{p, s, sub})
		}
	})
	// Outside connsMu: a delivery may write to the connection.
	for _, t := range taps {
		gateTap{g: &t.p.gate, seat: int32(t.s), sub: t.sub}.Deliver(ev)
	}
}

// eachSeatTap calls fn, with connsMu held, for each connection here to
// race id whose gate is open for a seat, with that seat and the
// subscriber of its seat's topic.
func (f *Fleet) eachSeatTap(id string, fn func(p *proxy, seat int, sub race.Subscriber)) {
	f.connsMu.Lock()
	defer f.connsMu.Unlock()
	rc := f.conns[id]
	if rc == nil {
		return
	}
	for p := range rc.proxies {
		s := int(p.gate.seat.Load())
		sub := p.seatSub.Load()
		if s >= 0 && sub != nil {
			fn(p, s, *sub)
		}
	}
}
