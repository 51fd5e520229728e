package race

// Computer players: a seat the server plays itself, one move every pace.

import (
	"time"

	"sirtommy/engine"
)

// ComputerFactory makes a computer player of a level (the engine bot's
// names) from a seed.
type ComputerFactory func(level string, seed uint64) (Player, error)

// Computer is a computer player for a seat: the player, and the level and
// seed that make it again when its race moves to another instance (Level
// empty: it cannot be made again).
type Computer struct {
	Player Player
	Level  string
	Seed   uint64
	// Pace is its time per move.
	Pace time.Duration
}

// Player is a computer player: given what it may know of its game (the
// engine's Memory view) and the legal moves, it picks one, or reports false
// to resign. The engine's Bot implements it.
type Player interface {
	Choose(v *engine.View, legal []engine.Move) (engine.Move, bool)
}

// computerSeat is a seat a computer player plays (an occupant): one move
// every Pace while the race runs.
type computerSeat struct {
	Computer
	timer Timer // its next move
}

func (c *computerSeat) play(r *Race, s int) {
	c.stop()
	c.timer = r.clock.AfterFunc(c.Pace, func() { r.botMove(s) })
}

func (c *computerSeat) stop() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}

func (c *computerSeat) describe(p *PlayerInfo) { p.Computer, p.Level = true, c.Level }

func (r *Race) botMove(s int) {
	r.mu.Lock()
	st := &r.seats[s]
	c := st.computer()
	if r.state != Running || st.game.Status().Over() || r.stopped || c == nil {
		r.unlock()
		return
	}
	var buf [64]engine.Move
	legal := st.game.AppendMoves(buf[:0])
	v := st.game.Memory()
	moves, computer := len(st.moves), c.Player
	r.unlock()
	// The computer thinks outside the lock: the expert level takes up to a
	// few hundred milliseconds a move, which must not hold up the other
	// player's moves. Only this timer moves the computer's seat, and the
	// next is scheduled once this move is made, so the seat's game cannot
	// change meanwhile; the race can end or move to another instance.
	m, ok := computer.Choose(&v, legal)
	r.mu.Lock()
	defer r.unlock()
	if r.state != Running || st.game.Status().Over() || r.stopped || len(st.moves) != moves {
		return
	}
	if !ok {
		_ = r.resignLocked(s, "")
		return
	}
	if err := r.moveLocked(s, m, m.String(), ""); err != nil {
		r.log.Error().Err(err).Int("seat", s).Msg("computer player chose a refused move; it resigns")
		_ = r.resignLocked(s, "")
	}
}
