package lobby

import (
	"context"
	"errors"
	"fmt"

	"sirtommy/race"
)

// dest is where a player's matched event goes: a session here, or a
// notice to whichever instance holds the session meant.
type dest struct {
	s   *Session
	to  Recipient
	ref string
}

// Via is how a race was made: a pairing's way, sent to its players as
// the matched event's "via" and logged. Its values are the protocol's
// (PROTOCOL.md), so they never change.
type Via string

// The ways the lobby makes a race.
const (
	// ViaQuick pairs two players of a quick-play queue.
	ViaQuick Via = "quick"
	// ViaComputer seats a queued player against the computer.
	ViaComputer Via = "computer"
	// ViaInvite is a private race, made when the friend accepts its invite.
	ViaInvite Via = "invite"
	// ViaChallenge is an open challenge's race, made when someone accepts it.
	ViaChallenge Via = "challenge"
	// ViaGhost races a ghost challenge's recorded game.
	ViaGhost Via = "ghost"
	// ViaDaily is a solo race at the day's deal.
	ViaDaily Via = "daily"
	// ViaDailyGhost races the recorded game of the day's leader.
	ViaDailyGhost Via = "daily-ghost"
	// ViaRoom is a room's race, started by its host for its members.
	ViaRoom Via = "room"
	// ViaMass is a variant's public mass race, started for everyone who
	// joined it from the lobby.
	ViaMass Via = "mass"
)

// pairing is a race the lobby makes: its players by seat (two, but for a
// room's), where each is told, and their ratings (none: 0).
type pairing struct {
	opts    race.Options
	via     Via
	code    string
	players []PlayerRef
	dests   []dest
	ratings []float64
	bot     race.Computer
	ghost   *race.Ghost // the recording a Ghost player plays
	claimed bool        // the players are claimed in Seats already
	// made, if set, is told the race's id once its players are.
	made func(raceID string)
}

// rating is seat s's rating as the race is made (0: none).
func (p *pairing) rating(s int) float64 {
	if s < len(p.ratings) {
		return p.ratings[s]
	}
	return 0
}

// many reports whether the pairing is a race of more than two.
func (p *pairing) many() bool { return len(p.players) > race.MinSeats }

// humans are the ids of the pairing's players who are not the computer.
func (p *pairing) humans() []string {
	var out []string
	for _, pl := range p.players {
		if pl.ID != "" && !pl.Computer {
			out = append(out, pl.ID)
		}
	}
	return out
}

// start claims the pairing's players (unless claimed already), makes its
// race, reserves both seats and tells both players, one right after the
// other. On an error nothing is left claimed.
func (l *Lobby) start(p pairing) (err error) {
	ctx, cancel := opCtx()
	defer cancel()
	ids := p.humans()
	defer func() {
		// A failure is logged as one on every path that makes a race
		// (quick play, the computer, invites, challenges, ghosts, the
		// day's deal); a refusal of the request (a recording that does
		// not replay, a player racing already) is not.
		var busy *busyError
		if err != nil && !errors.As(err, &busy) && (storeFailure(err) || race.ErrorCode(err) == race.CodeInternal) {
			l.log.Error().Err(err).Str("via", string(p.via)).Strs("players", ids).Msg("race not made")
		}
	}()
	if !p.claimed {
		busy, err := l.deps.Stores.Seats.Claim(ctx, ids, claimKeep)
		if err != nil {
			return unavailable(err)
		}
		if busy != "" {
			id, _, _ := l.deps.Stores.Seats.Racing(ctx, busy)
			return &busyError{player: busy, race: id}
		}
	}
	err = l.startRace(ctx, p)
	if err != nil {
		if ferr := l.deps.Stores.Seats.Free(ctx, "", ids); ferr != nil {
			l.log.Warn().Err(ferr).Msg("claim not freed; it lapses")
		}
	}
	if p.via == ViaChallenge {
		l.challengesChanged() // the challenge is no longer open
	}
	return err
}

func (l *Lobby) startRace(ctx context.Context, p pairing) error {
	p.opts.SpectatorDelay, p.opts.Grace = l.cfg.SpectatorDelay, l.cfg.Grace
	p.opts.Seats = len(p.players)
	variant := p.opts.Variant
	rc, err := l.deps.Races.Create(p.opts)
	if err != nil {
		return fmt.Errorf("lobby: create race: %w", err)
	}
	for s := range p.players {
		if p.players[s].Computer {
			if _, err := rc.SeatComputer(p.players[s].Name, p.bot); err != nil {
				rc.Abort(race.ReasonLeft)
				return fmt.Errorf("lobby: seat computer: %w", err)
			}
			continue
		}
		if p.players[s].Solo {
			continue // the race's empty seat
		}
		if p.players[s].Ghost {
			if _, err := rc.SeatGhost(p.players[s].Name, *p.ghost); err != nil {
				rc.Abort(race.ReasonLeft)
				if race.IsRefusal(err) {
					return err // a recording that does not replay: bad-ghost
				}
				return fmt.Errorf("lobby: seat ghost: %w", err)
			}
			continue
		}
		if _, err := rc.Reserve(race.Reservation{Name: p.players[s].Name, Player: p.players[s].ID, Rating: p.rating(s)}); err != nil {
			rc.Abort(race.ReasonLeft)
			return fmt.Errorf("lobby: reserve seat: %w", err)
		}
	}
	// The players' marks name the race before anyone is told of it.
	if err := l.deps.Stores.Seats.Assign(ctx, rc.ID(), p.humans(), l.keepFor(p.opts)); err != nil {
		rc.Abort(race.ReasonLeft)
		return unavailable(err)
	}
	now := l.deps.Clock.Now()
	rated := !p.opts.Unrated && !p.many() && !p.players[0].Computer && !p.players[1].Computer
	for s := range p.players {
		if p.players[s].Computer || p.players[s].Ghost || p.players[s].Solo {
			continue
		}
		ev := &MatchedEvent{Race: rc.ID(), Seat: s, Variant: variant, Via: string(p.via), Rated: rated, At: now}
		switch p.via {
		case ViaInvite:
			ev.Invite = p.code
		case ViaChallenge:
			ev.Challenge = p.code
		case ViaGhost:
			ev.Ghost = p.code
		case ViaRoom:
			ev.Room = p.code
		case ViaArena:
			ev.Arena = p.code
		}
		if p.many() {
			ev.Players = p.players
		} else {
			o := 1 - s
			ev.Opponent = p.players[o]
			if !p.players[o].Computer && !p.players[o].Ghost && p.rating(o) != 0 {
				r := p.rating(o)
				ev.Rating = &r
			}
		}
		d := p.dests[s]
		if d.s != nil {
			d.s.sub.Deliver(ev)
			continue
		}
		l.tell(Notice{Player: p.players[s].ID, To: d.to, Ref: d.ref, Matched: ev})
	}
	l.log.Info().Str("race", rc.ID()).Str("via", string(p.via)).Strs("players", p.humans()).Msg("paired")
	if p.made != nil {
		p.made(rc.ID())
	}
	return nil
}
