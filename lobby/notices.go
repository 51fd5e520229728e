package lobby

import (
	"sirtommy/race"
)

// tell delivers a notice to the player's sessions here, and through the
// courier to the instance that holds them when they are not here (to
// every instance, for ToAll).
func (l *Lobby) tell(n Notice) {
	here := l.receive(n, l.deps.Stores.Courier == nil)
	if here && n.To != ToAll {
		return
	}
	c := l.deps.Stores.Courier
	if c == nil {
		return
	}
	ctx, cancel := opCtx()
	defer cancel()
	reached, err := c.Send(ctx, n)
	// For ToAll, sessions here count: the player with every session on
	// this instance was reached, though no other instance holds one.
	if err != nil || (!reached && !here) {
		l.log.Warn().Err(err).Str("player", n.Player).Str("to", string(n.To)).Msg("matched event reached nobody")
	}
}

// receive delivers a notice to the sessions here it is meant for and
// reports whether there were any. The player is racing now: this
// instance's record of their queuing goes. When every session is here
// (alone: no courier) and the one that queued is not (it queued again in
// the moment its pairing was made), all their sessions get it.
func (l *Lobby) receive(n Notice, alone bool) bool {
	if n.Ghost != nil || n.Room != nil {
		var ev race.Event = n.Ghost
		if n.Room != nil {
			ev = n.Room
		}
		l.mu.Lock()
		subs := l.subsOfLocked(n.Player)
		l.mu.Unlock()
		for _, sub := range subs {
			sub.Deliver(ev)
		}
		return len(subs) > 0
	}
	if n.Matched == nil {
		return false
	}
	var subs []race.Subscriber
	l.mu.Lock()
	q := l.queuedBy[n.Player]
	delete(l.queuedBy, n.Player)
	switch n.To {
	case ToQueued:
		if q != nil {
			subs = append(subs, q.s.sub)
		} else if alone {
			subs = l.subsOfLocked(n.Player)
		}
	case ToChallenger:
		if s := l.challenges[n.Ref]; s != nil {
			delete(l.challenges, n.Ref)
			subs = append(subs, s.sub)
		}
	case ToAll:
		subs = l.subsOfLocked(n.Player)
	}
	l.mu.Unlock()
	for _, sub := range subs {
		sub.Deliver(n.Matched)
	}
	l.log.Debug().Str("player", n.Player).Str("to", string(n.To)).Str("race", n.Matched.Race).Int("sessions", len(subs)).Msg("matched event delivered")
	return len(subs) > 0
}

// subsOfLocked are where a player's sessions receive events.
func (l *Lobby) subsOfLocked(player string) []race.Subscriber {
	var out []race.Subscriber
	for s := range l.sessions {
		if s.who.ID == player {
			out = append(out, s.sub)
		}
	}
	return out
}
