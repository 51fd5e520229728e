package lobby

import (
	"sirtommy/race"
)

// keepChallenges tells the shared store that this instance's challenges
// are still open (their sessions are here).
func (l *Lobby) keepChallenges() {
	l.mu.Lock()
	ids := make([]string, 0, len(l.challenges))
	for id := range l.challenges {
		ids = append(ids, id)
	}
	l.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := opCtx()
	defer cancel()
	if err := l.deps.Stores.Challenges.Keep(ctx, ids); err != nil {
		l.log.Warn().Err(err).Msg("challenges not kept")
	}
}

// Challenge opens a challenge that anyone in the lobby may accept; it is
// listed until accepted, withdrawn, or its session leaves. Its race is
// public, and rated when the options ask for it.
func (s *Session) Challenge(o RaceOptions) (ChallengeInfo, error) {
	if _, err := o.check(false); err != nil {
		return ChallengeInfo{}, err
	}
	l := s.l
	who := s.Player()
	rating := l.rating(o.Variant, who.ID)
	ctx, cancel := opCtx()
	defer cancel()
	if err := l.waiting(ctx, who.ID); err != nil {
		return ChallengeInfo{}, err
	}
	if err := l.notInMass(ctx, who.ID); err != nil {
		return ChallengeInfo{}, err
	}
	c := ChallengeInfo{ID: newCode(), Player: who.ID, Name: who.Name, Rating: rating, Variant: o.Variant,
		TimeLimitSeconds: *o.TimeLimitSeconds, BestOf: *o.BestOf, Rated: o.Rated, Grade: o.Grade, Since: l.deps.Clock.Now()}
	// Recorded here first, so that an acceptance on another instance at
	// once finds the session to tell.
	l.mu.Lock()
	l.challenges[c.ID] = s
	l.mu.Unlock()
	if err := l.deps.Stores.Challenges.Open(ctx, c); err != nil {
		l.mu.Lock()
		delete(l.challenges, c.ID)
		l.mu.Unlock()
		if !race.IsRefusal(err) { // a failure of the shared stores
			err = unavailable(err)
		}
		return ChallengeInfo{}, err
	}
	l.challengesChanged()
	return c, nil
}

// forgetChallengesLocked forgets the challenges s opened here and returns
// their ids, for the caller to withdraw from the shared store: from then
// on an acceptance's matched event no longer finds s.
func (l *Lobby) forgetChallengesLocked(s *Session) []string {
	var ids []string
	for id, cs := range l.challenges {
		if cs == s {
			delete(l.challenges, id)
			ids = append(ids, id)
		}
	}
	return ids
}

// CancelChallenge withdraws the session's open challenge.
func (s *Session) CancelChallenge() error {
	l := s.l
	l.mu.Lock()
	ids := l.forgetChallengesLocked(s)
	l.mu.Unlock()
	ctx, cancel := opCtx()
	defer cancel()
	found := false
	for _, id := range ids {
		_, ok, err := l.deps.Stores.Challenges.Take(ctx, id)
		if err != nil {
			l.mu.Lock()
			l.challenges[id] = s
			l.mu.Unlock()
			return unavailable(err)
		}
		found = found || ok
	}
	if !found {
		return race.Errorf(CodeNoSuchChallenge, "you have no open challenge")
	}
	l.challengesChanged()
	return nil
}

// AcceptChallenge starts the race of an open challenge against its
// author: CodeNoSuchChallenge or CodeOwnChallenge otherwise. Accepting
// takes the player out of any queue and withdraws their own challenge.
func (s *Session) AcceptChallenge(id string) error {
	l := s.l
	who := s.Player()
	id = NormalizeCode(id)
	ctx, cancel := opCtx()
	defer cancel()
	switch c, ok, err := l.deps.Stores.Challenges.Get(ctx, id); {
	case err != nil:
		return unavailable(err)
	case !ok:
		return race.Errorf(CodeNoSuchChallenge, "no open challenge has id %q", id)
	case c.Player == who.ID:
		return race.Errorf(CodeOwnChallenge, "you cannot accept your own challenge")
	}
	if err := l.checkRacing(ctx, who.ID); err != nil {
		return err
	}
	if err := l.notInMass(ctx, who.ID); err != nil {
		return err
	}
	c, ok, err := l.deps.Stores.Challenges.Take(ctx, id)
	if err != nil {
		return unavailable(err)
	}
	if !ok {
		return race.Errorf(CodeNoSuchChallenge, "no open challenge has id %q: it was just taken", id)
	}
	busy, err := l.deps.Stores.Seats.Claim(ctx, []string{c.Player, who.ID}, claimKeep)
	if err == nil && busy == who.ID {
		err = inRace("")
	}
	if err != nil {
		// Back on the list: the author is still waiting.
		if oerr := l.deps.Stores.Challenges.Open(ctx, c); oerr != nil {
			l.log.Warn().Err(oerr).Str("challenge", c.ID).Msg("challenge not reopened")
		}
		if !race.IsRefusal(err) { // a failure of the shared stores
			err = unavailable(err)
		}
		return err
	}
	if busy != "" { // the author went racing: the challenge is gone
		l.challengesChanged()
		return race.Errorf(CodeNoSuchChallenge, "no open challenge has id %q: %s is racing", id, c.Name)
	}
	l.dropWaiting(s)
	o := RaceOptions{Choice: race.Choice{Variant: c.Variant, TimeLimitSeconds: &c.TimeLimitSeconds, BestOf: &c.BestOf, Grade: c.Grade}, Rated: c.Rated}
	opts, _ := o.check(false) // checked when opened
	opts.Public = true
	return l.start(pairing{
		opts:    opts,
		via:     ViaChallenge,
		code:    c.ID,
		players: []PlayerRef{{ID: c.Player, Name: c.Name}, {ID: who.ID, Name: who.Name}},
		dests:   []dest{{to: ToChallenger, ref: c.ID}, {s: s}},
		ratings: []float64{c.Rating, l.rating(c.Variant, who.ID)},
		claimed: true,
	})
}

// challengesChanged shows a change of the open challenges at once: here,
// and on the other instances (through the courier).
func (l *Lobby) challengesChanged() {
	l.Publish()
	if c := l.deps.Stores.Courier; c != nil {
		ctx, cancel := opCtx()
		defer cancel()
		if err := c.Changed(ctx); err != nil {
			l.log.Warn().Err(err).Msg("challenge change not announced; the others see it on their heartbeat")
		}
	}
}
