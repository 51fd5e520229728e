package lobby

import (
	"errors"
	"strings"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
)

// queued is a player in a quick-play queue through one of this
// instance's sessions.
type queued struct {
	s       *Session
	variant string
	grade   string // the deal's grade asked for, or ""
	since   time.Time
	offered bool // offered the computer already
}

// Queue puts the player in a variant's quick-play queue (empty: the
// default variant) and pairs at once if it can. A player may wait in one
// queue or with one challenge at a time (CodeAlreadyQueued).
func (s *Session) Queue(variant string) (string, error) { return s.QueueGrade(variant, "") }

// QueueGrade is Queue for races on a secret deal of a grade ("easy",
// "medium", "hard"; "" is any deal, as Queue): players are paired only
// with players who asked for the same variant and grade.
func (s *Session) QueueGrade(variant, grade string) (string, error) {
	if err := (race.Choice{Variant: variant, Grade: grade}).Validate(); err != nil {
		return "", err
	}
	rules, _ := engine.Variant(variant) // validated
	if grade != "" {
		g, _ := engine.ParseGrade(grade) // validated
		grade = g.String()
	}
	key := queueKey(rules.Name, grade)
	l := s.l
	who := s.Player()
	rating := l.rating(rules.Name, who.ID)
	ctx, cancel := opCtx()
	defer cancel()
	if err := l.waiting(ctx, who.ID); err != nil {
		return "", err
	}
	if err := l.notInMass(ctx, who.ID); err != nil {
		return "", err
	}
	// This session is recorded before the shared queue has the player, so
	// that a pairing made at once by another instance finds it. The shared
	// queue does not have them (waiting checked): an entry left here is
	// stale, and replaced.
	q := &queued{s: s, variant: rules.Name, grade: grade, since: l.deps.Clock.Now()}
	l.mu.Lock()
	prev := l.queuedBy[who.ID]
	l.queuedBy[who.ID] = q
	l.mu.Unlock()
	// undo puts the entry back as it was, unless a matched event took it
	// meanwhile (or another tab queued): prev may be the entry a pairing
	// in flight is meant for.
	undo := func() {
		l.mu.Lock()
		if l.queuedBy[who.ID] == q {
			if prev != nil {
				l.queuedBy[who.ID] = prev
			} else {
				delete(l.queuedBy, who.ID)
			}
		}
		l.mu.Unlock()
	}
	if err := l.deps.Stores.Queue.Join(ctx, Seeker{Player: who.ID, Name: who.Name, Variant: key, Rating: rating}); err != nil {
		undo()
		if !race.IsRefusal(err) { // a failure of the shared stores
			err = unavailable(err)
		}
		return "", err
	}
	l.log.Debug().Str("player", who.ID).Str("variant", rules.Name).Float64("rating", rating).Msg("queued")
	l.matchNow()
	return rules.Name, nil
}

// Unqueue takes the player out of their queue (CodeNotQueued if not in
// one, or if they were just paired: their matched event is on its way).
func (s *Session) Unqueue() error {
	l := s.l
	id := s.Player().ID
	l.mu.Lock()
	q := l.queuedBy[id]
	l.mu.Unlock()
	if q == nil {
		return race.Errorf(CodeNotQueued, "you are not in a queue")
	}
	ctx, cancel := opCtx()
	defer cancel()
	left, err := l.deps.Stores.Queue.Leave(ctx, id)
	if err != nil {
		return unavailable(err)
	}
	if !left {
		// Paired: the entry stays, for the matched event to find.
		return race.Errorf(CodeNotQueued, "you are not in a queue: you were just paired")
	}
	l.mu.Lock()
	if l.queuedBy[id] == q {
		delete(l.queuedBy, id)
	}
	l.mu.Unlock()
	return nil
}

// matchNow runs a matchmaking pass and starts the races it pairs.
func (l *Lobby) matchNow() {
	ctx, cancel := opCtx()
	pairs, err := l.deps.Stores.Queue.Pair(ctx)
	cancel()
	if err != nil {
		l.log.Warn().Err(err).Msg("matchmaking pass failed")
	}
	for _, p := range pairs {
		variant, grade := splitQueueKey(p.Variant)
		err := l.start(pairing{
			opts:    race.Options{Variant: variant, Grade: grade, Public: true},
			via:     ViaQuick,
			players: []PlayerRef{{ID: p.A.Player, Name: p.A.Name}, {ID: p.B.Player, Name: p.B.Name}},
			dests:   []dest{{to: ToQueued}, {to: ToQueued}},
			ratings: []float64{p.A.Rating, p.B.Rating},
		})
		if err == nil {
			continue
		}
		// Nobody was told: back to the queue, but for a player racing
		// already (paired elsewhere meanwhile).
		var busy *busyError
		if !errors.As(err, &busy) {
			busy = &busyError{} // logged by start
			l.log.Info().Str("p0", p.A.Player).Str("p1", p.B.Player).Msg("their race not made: they queue again")
		}
		for _, sk := range [2]Seeker{p.A, p.B} {
			if sk.Player != busy.player {
				sk.Variant = p.Variant
				rctx, rcancel := opCtx()
				if err := l.deps.Stores.Queue.Join(rctx, sk); err != nil {
					l.log.Warn().Err(err).Str("player", sk.Player).Msg("not queued again")
				}
				rcancel()
			}
		}
	}
}

// queueKey is the quick-play queue of a variant and a deal's grade: the
// variant's name, then "/" and the grade when there is one. Seekers are
// paired within one queue, so only with the same variant and grade.
func queueKey(variant, grade string) string {
	if grade == "" {
		return variant
	}
	return variant + "/" + grade
}

// splitQueueKey is queueKey's inverse.
func splitQueueKey(key string) (variant, grade string) {
	variant, grade, _ = strings.Cut(key, "/")
	return variant, grade
}
