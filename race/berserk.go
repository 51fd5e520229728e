package race

// Berserk (lichess's arena): in a race that allows it (Options.Berserk),
// a racer may halve their own time during the countdown, for an extra
// point in the arena if they win. Their game ends when half the time
// limit is up: the race resigns it then, in its log like a resignation,
// with the request id BerserkTimeID, and the referee ranks it by its
// cards as any game that is out.

import (
	"fmt"
	"time"
)

// BerserkTimeID is the request id of the resignation the race logs when
// a berserk racer's time is up (their MovedEvent carries it).
const BerserkTimeID = "berserk-time"

// Berserk halves seat s's own time: refused (CodeNoBerserk) in a race
// that does not allow it, and (CodeBerserkLate) once the countdown is
// over. Asked again, it changes nothing.
func (r *Race) Berserk(s int) error {
	r.mu.Lock()
	defer r.unlock()
	switch {
	case !r.opts.Berserk:
		return Errorf(CodeNoBerserk, "this race has no berserk: an arena's races have")
	case r.state != Countdown:
		return Errorf(CodeBerserkLate, "berserk is chosen in the countdown; the race is %s", r.state)
	case s < 0 || s >= len(r.seats) || r.seats[s].occ != nil:
		return Errorf(CodeBadOptions, "seat %d cannot go berserk", s)
	}
	st := &r.seats[s]
	if st.berserk {
		return nil
	}
	st.berserk = true
	r.log.Info().Int("seat", s).Msg("berserk")
	r.saveLocked()
	r.publishStateLocked(-1)
	return nil
}

// berserkEndLocked is when a berserk racer's time is up.
func (r *Race) berserkEndLocked() time.Time { return r.startAt.Add(r.opts.TimeLimit / 2) }

// armBerserkLocked sets the timers of the berserk racers still playing,
// as the race starts or is restored running.
func (r *Race) armBerserkLocked() {
	for s := range r.seats {
		st := &r.seats[s]
		if !st.berserk || st.game.Status().Over() {
			continue
		}
		if st.berserkT != nil {
			st.berserkT.Stop()
		}
		st.berserkT = r.clock.AfterFunc(max(0, r.berserkEndLocked().Sub(r.clock.Now())), func() { r.berserkUp(s) })
	}
}

func (r *Race) berserkUp(s int) {
	r.mu.Lock()
	defer r.unlock()
	if r.state == Running && !r.stopped {
		r.berserkUpLocked(s)
	}
}

// berserkUpLocked ends seat s's game when its berserk time is up, and
// reports whether it is (the game is over then, or could not be ended:
// the log refused the resignation, and the move asking is refused too).
func (r *Race) berserkUpLocked(s int) bool {
	st := &r.seats[s]
	if !st.berserk || r.clock.Now().Before(r.berserkEndLocked()) {
		return false
	}
	if st.game.Status().Over() {
		return true
	}
	if err := r.resignLocked(s, BerserkTimeID); err != nil {
		r.log.Warn().Err(fmt.Errorf("berserk time: %w", err)).Int("seat", s).Msg("berserk racer's game not ended; the next move or the time limit does")
	}
	return true
}
