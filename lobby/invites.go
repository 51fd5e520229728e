package lobby

import (
	"context"
	"strings"
	"time"

	"sirtommy/race"
)

// Invite is a private race waiting for the friend who has its code.
type Invite struct {
	Code    string      `json:"code"`
	Player  string      `json:"player"`
	Name    string      `json:"name"`
	Options RaceOptions `json:"options"`
	Expires time.Time   `json:"expiresAt"`
}

// Invite makes a private race's invite: a code for a friend, valid for
// the lobby's InviteTTL. The race is made when the friend accepts.
func (s *Session) Invite(o RaceOptions) (Invite, error) {
	if _, err := o.check(true); err != nil {
		return Invite{}, err
	}
	l := s.l
	who := s.Player()
	inv := Invite{Code: newCode(), Player: who.ID, Name: who.Name, Options: o, Expires: l.deps.Clock.Now().Add(l.cfg.InviteTTL)}
	ctx, cancel := opCtx()
	defer cancel()
	// Kept twice as long as it works, to say that it expired.
	if err := l.deps.Stores.Invites.Put(ctx, inv, 2*l.cfg.InviteTTL); err != nil {
		return Invite{}, unavailable(err)
	}
	return inv, nil
}

// NormalizeCode makes a typed code comparable: upper case, without spaces
// or dashes, and the letters people confuse with digits read as those.
func NormalizeCode(code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	return strings.NewReplacer("-", "", " ", "", "O", "0", "I", "1", "L", "1").Replace(code)
}

// AcceptInvite starts the private race of an invite: CodeNoSuchInvite
// (also once used), CodeInviteExpired, CodeOwnInvite, CodeInRace or
// CodeInviterAway (the author has no connection on any instance)
// otherwise. Accepting takes the player out of any queue and withdraws
// their own challenge.
func (s *Session) AcceptInvite(code string) error {
	l := s.l
	code = NormalizeCode(code)
	who := s.Player()
	ctx, cancel := opCtx()
	defer cancel()
	inv, ok, err := l.deps.Stores.Invites.Get(ctx, code)
	switch {
	case err != nil:
		return unavailable(err)
	case !ok:
		return race.Errorf(CodeNoSuchInvite, "no invite has code %q", code)
	case !l.deps.Clock.Now().Before(inv.Expires):
		return race.Errorf(CodeInviteExpired, "invite %s expired at %s", code, inv.Expires.Format(time.RFC3339))
	case inv.Player == who.ID:
		return race.Errorf(CodeOwnInvite, "that is your own invite: send it to a friend")
	}
	if err := l.checkRacing(ctx, who.ID); err != nil {
		return err
	}
	if err := l.notInMass(ctx, who.ID); err != nil {
		return err
	}
	if err := l.checkRacing(ctx, inv.Player); err != nil {
		if race.ErrorCode(err) == CodeInRace {
			return race.Errorf(CodeInRace, "%s is racing; try again when they are done", inv.Name)
		}
		return err
	}
	away, err := l.away(ctx, inv.Player)
	if err != nil {
		return unavailable(err)
	}
	if away {
		return race.Errorf(CodeInviterAway, "%s is not connected now; the invite stays valid until %s", inv.Name, inv.Expires.Format(time.RFC3339))
	}
	ids := []string{inv.Player, who.ID}
	busy, err := l.deps.Stores.Seats.Claim(ctx, ids, claimKeep)
	if err != nil {
		return unavailable(err)
	}
	if busy == who.ID {
		return race.Errorf(CodeInRace, "you were just paired: your race is being made")
	} else if busy != "" {
		return race.Errorf(CodeInRace, "%s is racing; try again when they are done", inv.Name)
	}
	took, err := l.deps.Stores.Invites.Take(ctx, code)
	if err != nil || !took {
		_ = l.deps.Stores.Seats.Free(ctx, "", ids)
		if err != nil {
			return unavailable(err)
		}
		return race.Errorf(CodeNoSuchInvite, "no invite has code %q: it was just used", code)
	}
	if l.dropWaiting(s) {
		l.challengesChanged()
	}
	opts, _ := inv.Options.check(true) // checked when made
	err = l.start(pairing{
		opts:    opts,
		via:     ViaInvite,
		code:    code,
		players: []PlayerRef{{ID: inv.Player, Name: inv.Name}, {ID: who.ID, Name: who.Name}},
		dests:   []dest{{to: ToAll}, {s: s}},
		ratings: []float64{l.rating(opts.Variant, inv.Player), l.rating(opts.Variant, who.ID)},
		claimed: true,
	})
	if err != nil { // no race: the invite works again
		keep := inv.Expires.Add(l.cfg.InviteTTL).Sub(l.deps.Clock.Now())
		if perr := l.deps.Stores.Invites.Put(ctx, inv, keep); perr != nil {
			l.log.Warn().Err(perr).Str("invite", code).Msg("invite not restored")
		}
	}
	return err
}

// away reports whether player has no session on any instance.
func (l *Lobby) away(ctx context.Context, player string) (bool, error) {
	l.mu.Lock()
	here := l.online[player] > 0
	l.mu.Unlock()
	if here || l.deps.Stores.Courier == nil {
		return !here, nil
	}
	there, err := l.deps.Stores.Courier.Listening(ctx, player)
	return !there, err
}
