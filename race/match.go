package race

import (
	"fmt"
)

// maxBestOf bounds a match's length: more rounds tie up two players for an
// hour or more.
const maxBestOf = MaxBestOf

// Match is where a race stands in a best-of-N match: the round it is, and
// the wins so far (draws win nobody a round).
type Match struct {
	Round  int    `json:"round"`  // 1 for the first race
	BestOf int    `json:"bestOf"` // 1 for a single race
	Wins   [2]int `json:"wins"`   // rounds won before this one (after it, in a Result)
	// Over is set in a Result when the match is decided; Winner is the
	// match's winner then, absent for a drawn match.
	Over   bool `json:"over,omitempty"`
	Winner *int `json:"winner,omitempty"`
	// Prev is the previous round's race id.
	Prev string `json:"prev,omitempty"`
}

// NextEvent ("next") announces the next race for the same two players: the
// next round of a best-of-N match, or a rematch. Players take their seats
// in it with "resume" and their token; spectators "watch" it.
type NextEvent struct {
	Race  string `json:"race"` // the race that ended
	Next  string `json:"next"` // the new race's id
	Match Match  `json:"match"`
	Ver   uint64 `json:"ver,omitempty"` // spectators' feed version
}

// EventType is "next".
func (*NextEvent) EventType() string { return "next" }

// RematchEvent ("rematch") tells the other player and spectators that a
// player asks for a rematch.
type RematchEvent struct {
	Race string `json:"race"`
	Seat int    `json:"seat"`
	Ver  uint64 `json:"ver,omitempty"` // spectators' feed version
}

// EventType is "rematch".
func (*RematchEvent) EventType() string { return "rematch" }

// Rematch asks, for seat s, for a new race between the same players on a
// new (secret) deal once this one is over. When both players have asked (a
// computer always agrees) the race is made and everyone gets a NextEvent;
// it returns the new race's id then, and "" before (or while the other
// player's request is making it).
//
// It decides under the race's lock and makes the new race after releasing
// it: making a race takes the Service's lock (see the package's lock
// order).
func (r *Race) Rematch(s int) (string, error) {
	r.mu.Lock()
	if !r.state.Over() {
		r.unlock()
		return "", Errorf(CodeNotOver, "a rematch can be asked for once the race is over")
	}
	if r.next != nil {
		id := r.next.ID()
		r.unlock()
		return id, nil
	}
	if r.hasGhostLocked() {
		r.unlock()
		return "", Errorf(CodeBadOptions, "a recording does not race again: make a ghost challenge of your game instead")
	}
	if r.matchOngoingLocked() {
		r.unlock()
		return "", Errorf(CodeNotOver, "the match goes on: the next round is made for you")
	}
	if !r.rematch[s] {
		r.rematch[s] = true
		r.saveLocked()
		ev := &RematchEvent{Race: r.id, Seat: s}
		for o := range r.seats {
			if o != s {
				r.publishEverywhereLocked(o, ev)
			}
		}
		r.publishWatchLocked(ev)
	}
	for i := range r.seats {
		if !r.rematch[i] && r.seats[i].computer() == nil {
			r.unlock()
			return "", nil
		}
	}
	if r.spawning {
		r.unlock()
		return "", nil // the other player's request is making it
	}
	r.spawning = true
	r.unlock()
	next, err := r.makeNext(Match{Round: 1, BestOf: 1, Prev: r.id})
	if err != nil {
		return "", err
	}
	return next.ID(), nil
}

// matchOngoingLocked reports whether this finished round leaves the match
// undecided, so that the next round follows by itself.
func (r *Race) matchOngoingLocked() bool {
	return r.result != nil && r.result.Match != nil && !r.result.Match.Over
}

// settleMatchLocked adds this round's result to the match.
func (r *Race) settleMatchLocked(res *Result) {
	if r.match.BestOf <= 1 {
		return
	}
	m := r.match
	if res.Winner != nil {
		m.Wins[*res.Winner]++
	}
	need := r.match.BestOf/2 + 1
	switch {
	case res.Outcome == OutcomeAborted:
		m.Over = true
	case m.Wins[0] >= need || m.Wins[1] >= need:
		m.Over = true
	case m.Round >= r.match.BestOf+maxBestOf: // draws lengthen a match, within reason
		m.Over = true
	}
	if m.Over && m.Wins[0] != m.Wins[1] {
		w := 0
		if m.Wins[1] > m.Wins[0] {
			w = 1
		}
		m.Winner = &w
	}
	res.Match = &m
}

// afterEndLocked queues the match's next round when the match goes on: it
// is made once the race's lock is released.
func (r *Race) afterEndLocked() {
	if !r.matchOngoingLocked() || r.spawning || r.next != nil {
		return
	}
	m := *r.result.Match
	m.Round, m.Over, m.Winner, m.Prev = m.Round+1, false, nil, r.id
	r.spawning = true
	r.later = append(r.later, func() {
		if _, err := r.makeNext(m); err != nil {
			r.log.Warn().Err(err).Msg("next round not started")
		}
	})
}

// makeNext makes the next race, with this race's players in the same
// seats (their tokens resume them there), and announces it. It is called
// without the race's lock, by the one request that set spawning: the
// Service makes the race (its lock, and Redis in Redis mode), then the
// race's lock is taken again to record and announce it.
func (r *Race) makeNext(m Match) (*Race, error) {
	r.mu.Lock()
	spawn := r.spawn
	opts := r.opts
	seats := make([]seat, len(r.seats))
	for s := range seats {
		from := &r.seats[s]
		seats[s] = seat{name: from.name, token: from.token, player: from.player, rating: from.rating}
		if c := from.computer(); c != nil {
			seats[s].occ = &computerSeat{Computer: c.Computer} // the same player, with a timer of its own
		}
	}
	r.unlock()
	var next *Race
	var err error = Errorf(CodeInternal, "this race cannot start another")
	if spawn != nil {
		opts.DealNamed, opts.Deal = false, 0 // a new, secret deal
		opts.BestOf = m.BestOf
		// The seats are set before the Service lists the race or saves
		// its record, so that nobody sees it with free seats.
		next, err = spawn(opts, func(n *Race) {
			n.match = m
			for s := range seats {
				from, to := &seats[s], &n.seats[s]
				to.taken, to.name, to.token, to.player, to.rating = true, from.name, from.token, from.player, from.rating
				to.occ = from.occ
				to.connected = from.occ != nil
				if !to.connected { // the player has the grace period to come over
					to.graceEnd = n.clock.Now().Add(n.opts.Grace)
					to.graceT = n.clock.AfterFunc(n.opts.Grace, func() { n.graceOver(s) })
				}
			}
		})
	}
	r.mu.Lock()
	defer r.unlock()
	r.spawning = false
	if err != nil {
		return nil, fmt.Errorf("race %s: next race: %w", r.id, err)
	}
	r.next = next
	r.saveLocked()
	r.log.Info().Str("next", next.ID()).Int("round", m.Round).Msg("next race")
	ev := &NextEvent{Race: r.id, Next: next.ID(), Match: m}
	for s := range r.seats {
		r.publishEverywhereLocked(s, ev)
	}
	r.publishWatchLocked(ev)
	return next, nil
}
