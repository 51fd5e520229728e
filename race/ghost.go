package race

import (
	"context"
	"fmt"
	"time"

	"sirtommy/engine"
)

// CodeBadGhost refuses a recording that does not replay: a move the
// engine refuses on the deal, or offsets that go back in time or past the
// time limit. A forged recording is refused with it and seats nothing.
const CodeBadGhost Code = "bad-ghost"

// GhostMove is one entry of a recorded game: a move in notation (or
// "resign") and its offset from the start of the race it was played in
// (the event log's atMs).
type GhostMove struct {
	Move string `json:"move"`
	AtMs int64  `json:"atMs"`
}

// Ghost is a recorded game raced again: a seat that plays the recorded
// moves on its own engine at their recorded offsets from the start, like
// a computer with a schedule. Its opponent sees its counts only, as of any
// opponent; the referee decides as in any race.
type Ghost struct {
	Moves []GhostMove `json:"moves"`
	// EndMs is the offset at which the recorded game stopped (its race
	// ended): a recording still playing then is out, as a player who
	// resigned, so that the referee can compare cards without waiting for
	// the time limit. 0: at its last move.
	EndMs int64 `json:"endMs,omitempty"`
	// Ref is the caller's name for the recording (the lobby's challenge
	// id), handed back in Ended.Ghosts when the race ends.
	Ref string `json:"ref,omitempty"`
}

// GhostOf is the recording of seat s's game in a finished race's public
// record (its moves, atMs included). The race's end is its last move, or
// the time limit when it ended on time.
func GhostOf(in Info, s int) (Ghost, error) {
	if !in.State.Over() || in.Result == nil {
		return Ghost{}, Errorf(CodeNotOver, "race %s is not over: only a finished game can be raced again", in.Race)
	}
	if s < 0 || s >= len(in.Players) {
		return Ghost{}, Errorf(CodeBadOptions, "seat must be from 0 to %d, not %d", len(in.Players)-1, s)
	}
	var g Ghost
	for _, m := range in.Moves {
		g.EndMs = max(g.EndMs, m.AtMs)
		if m.Seat == s {
			g.Moves = append(g.Moves, GhostMove{Move: m.Move, AtMs: m.AtMs})
		}
	}
	if in.Result.Reason == ReasonTime {
		g.EndMs = in.TimeLimit
	}
	return g, nil
}

// check replays the recording on deal under rules and refuses it with
// CodeBadGhost unless every move is legal in turn at an offset that does
// not go back, within the time limit.
func (g *Ghost) check(rules *engine.Rules, deal uint64, limit time.Duration) error {
	game := engine.New(rules, deal)
	last := int64(0)
	for i, m := range g.Moves {
		if m.AtMs < last || m.AtMs > limit.Milliseconds() {
			return Errorf(CodeBadGhost, "the recording's move %d is at %d ms, out of order or past the time limit", i+1, m.AtMs)
		}
		last = m.AtMs
		if game.Status().Over() {
			return Errorf(CodeBadGhost, "the recording's move %d comes after its game ended", i+1)
		}
		if m.Move == "resign" {
			game.Resign()
			continue
		}
		mv, err := engine.ParseMove(m.Move)
		if err == nil {
			err = game.Apply(mv) // as the race will apply it
		}
		if err != nil {
			return &Error{Code: CodeBadGhost, Message: fmt.Sprintf("the recording's move %d (%q) does not replay on its deal", i+1, m.Move), Err: err}
		}
	}
	if g.EndMs < last {
		g.EndMs = last
	}
	return nil
}

// SeatGhost puts a recorded game in the first free seat, shown as name
// and marked as a recording (PlayerInfo.Ghost). The race must be on the
// recording's deal: Options.DealFixed (kept secret behind a fresh
// commitment) or DealNamed. A recording that does not replay on the deal
// is refused with CodeBadGhost.
func (r *Race) SeatGhost(name string, g Ghost) (int, error) {
	if !r.opts.DealFixed && !r.opts.DealNamed {
		return 0, Errorf(CodeInternal, "a ghost races on its own deal: the race must fix it")
	}
	g.Moves = append([]GhostMove(nil), g.Moves...)
	if err := g.check(r.rules, r.deal, r.opts.TimeLimit); err != nil {
		return 0, err
	}
	r.mu.Lock()
	defer r.unlock()
	s, st, err := r.takeSeatLocked(name, &ghostSeat{rec: &g})
	if err != nil {
		return 0, err
	}
	r.log.Info().Int("seat", s).Str("name", st.name).Int("moves", len(g.Moves)).Msg("ghost seated")
	r.maybeCountdownLocked()
	r.saveLocked()
	r.publishStateLocked(-1)
	return s, nil
}

// ghostSeat is a seat a recording plays (an occupant): each recorded move
// at its offset from the start.
type ghostSeat struct {
	rec   *Ghost
	next  int   // the recording's next entry
	timer Timer // that plays it
}

// play arms the recording for its next move, or for its end.
func (g *ghostSeat) play(r *Race, s int) {
	g.stop()
	if r.state != Running || r.seats[s].game.Status().Over() {
		return
	}
	due := g.rec.EndMs
	if g.next < len(g.rec.Moves) {
		due = g.rec.Moves[g.next].AtMs
	}
	wait := max(r.startAt.Add(time.Duration(due)*time.Millisecond).Sub(r.clock.Now()), 0)
	g.timer = r.clock.AfterFunc(wait, func() { r.ghostMove(s) })
}

func (g *ghostSeat) stop() {
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
}

func (g *ghostSeat) describe(p *PlayerInfo) { p.Ghost = true }

// ghostMove plays seat s's next recorded move; past the last one, a game
// still playing is out.
func (r *Race) ghostMove(s int) {
	r.mu.Lock()
	defer r.unlock()
	st := &r.seats[s]
	g := st.ghost()
	if r.stopped || r.state != Running || g == nil || st.game.Status().Over() {
		return
	}
	if g.next >= len(g.rec.Moves) {
		r.log.Debug().Int("seat", s).Msg("the recording is over; the ghost is out")
		_ = r.resignLocked(s, "")
		return
	}
	m := g.rec.Moves[g.next]
	g.next++
	var err error
	if m.Move == "resign" {
		err = r.resignLocked(s, "")
	} else {
		var mv engine.Move
		if mv, err = engine.ParseMove(m.Move); err == nil {
			err = r.moveLocked(s, mv, notation(mv, m.Move), "")
		}
	}
	if err != nil {
		// Checked when seated: only storage fails here. The ghost tries
		// the same move again shortly.
		r.log.Warn().Err(err).Int("seat", s).Str("move", m.Move).Msg("ghost move not recorded")
		if ErrorCode(err) == CodeUnavailable && !r.stopped {
			g.next--
			g.timer = r.clock.AfterFunc(decideRetry, func() { r.ghostMove(s) })
		}
		return
	}
	if r.state == Running {
		g.play(r, s)
	}
}

// sealedLocked reports whether the deal is still sealed (Options.SealedUntil).
func (r *Race) sealedLocked() bool {
	return !r.opts.SealedUntil.IsZero() && r.clock.Now().Before(r.opts.SealedUntil)
}

// resultOutLocked is the result as it may be shown now: while the deal is
// sealed, without the deal, its salt or the game texts.
func (r *Race) resultOutLocked() *Result {
	if r.result == nil || !r.sealedLocked() {
		return r.result
	}
	res := *r.result
	res.Deal, res.Salt, res.Games = "", "", make([]string, len(res.Games))
	return &res
}

// Log is the race's event log, every move with its offset, for the
// server's own use (the day's board keeps its leader's recording): unlike
// Info it is not held back while the deal is sealed.
func (r *Race) Log(ctx context.Context) ([]MoveRecord, error) {
	return r.store.Moves(ctx, r.id)
}

// hasGhostLocked reports whether a recording sits in one of the seats.
func (r *Race) hasGhostLocked() bool {
	for s := range r.seats {
		if r.seats[s].ghost() != nil {
			return true
		}
	}
	return false
}
