package lobby

// Mass races: in each variant one public race is open to whoever joins
// from the lobby. Its countdown starts once MassMin have joined; when it
// ends (at once when race.MaxSeats have joined) the race starts with
// everyone in it, and the next one opens. Kept as a room without a host
// (rooms.go) under the variant's code, so that every instance sees the
// same one; the heartbeat of whichever instance finds it due starts it,
// once (the store's change empties it for one of them only).

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
)

const (
	// MassMin is how many must join a mass race for its countdown to
	// start: a crowd, not a duel (quick play is for two).
	MassMin = 3
	// MassWait is the countdown: time for more to join.
	MassWait = 15 * time.Second
)

// The refusals of mass races.
const (
	// CodeNotInMass refuses leave-mass while not in a mass race.
	CodeNotInMass race.Code = "not-in-mass"
	// CodeInMass refuses queueing, opening a challenge and accepting one
	// or an invite while in an open mass race: its start would pair the
	// player twice.
	CodeInMass race.Code = "in-mass"
)

// MassRace is a variant's open mass race, as the lobby lists it.
type MassRace struct {
	Variant string `json:"variant"`
	Joined  int    `json:"joined"`
	Seats   int    `json:"seats"`
	// StartAt is when it starts, once MassMin have joined.
	StartAt *time.Time `json:"startAt,omitempty"`
	// Members are who joined, in the order they came: public, as the
	// race they start is, and how each tab of a player (on any instance)
	// tells that its player is in it.
	Members []PlayerRef `json:"members"`
}

// massCode is the store's code of variant's mass race: never a room's
// (rooms' codes have no colon).
func massCode(variant string) string { return "mass:" + variant }

// massOf is r as the lobby lists it.
func massOf(variant string, r Room) MassRace {
	return MassRace{Variant: variant, Joined: len(r.Members), Seats: race.MaxSeats, StartAt: r.StartAt, Members: slices.Clone(r.Members)}
}

// JoinMass puts the session's player in variant's open mass race (out
// of another variant's they were in: one at a time): refused while they
// are queued, have a challenge open or are racing, and with
// race.CodeRaceFull when it is full (it starts at the next heartbeat; the
// next one opens then). Joining again changes nothing.
func (s *Session) JoinMass(variant string) (MassRace, error) {
	rules, err := engine.Variant(variant)
	if err != nil {
		return MassRace{}, &race.Error{Code: race.CodeBadOptions, Message: err.Error(), Err: err}
	}
	l := s.l
	who := s.Player()
	ctx, cancel := opCtx()
	defer cancel()
	if err := l.waiting(ctx, who.ID); err != nil {
		return MassRace{}, err
	}
	// The race they are in, joined from this tab or another.
	before, err := l.massOfPlayer(ctx, who.ID)
	if err != nil {
		return MassRace{}, err
	}
	if before != "" && before != rules.Name {
		if err := l.leaveMass(before, who.ID); err != nil {
			return MassRace{}, err
		}
	}
	code, now := massCode(rules.Name), l.deps.Clock.Now()
	join := func(r *Room) error {
		if r.member(who.ID) {
			return nil
		}
		if len(r.Members) >= race.MaxSeats {
			return race.Errorf(race.CodeRaceFull, "the %s mass race is full and about to start; the next opens then", rules.Name)
		}
		r.Members = append(r.Members, PlayerRef{ID: who.ID, Name: who.Name})
		switch {
		case len(r.Members) == race.MaxSeats:
			r.StartAt = &now
		case len(r.Members) >= MassMin && r.StartAt == nil:
			at := now.Add(MassWait)
			r.StartAt = &at
		}
		return nil
	}
	for range 3 {
		r, ok, err := l.deps.Stores.Rooms.Change(ctx, code, RoomTTL, join)
		switch {
		case race.IsRefusal(err):
			return MassRace{}, err
		case err != nil:
			return MassRace{}, unavailable(err)
		case ok:
			l.noteMass(rules.Name, r)
			return massOf(rules.Name, r), nil
		}
		// None open: open one with this player in it (or, if another
		// opened one meanwhile, join that).
		r = Room{Code: code, Members: []PlayerRef{{ID: who.ID, Name: who.Name}}, Options: RaceOptions{Choice: race.Choice{Variant: rules.Name}}, Made: now}
		made, err := l.deps.Stores.Rooms.Make(ctx, r, RoomTTL)
		if err != nil {
			return MassRace{}, unavailable(err)
		}
		if made {
			l.noteMass(rules.Name, r)
			return massOf(rules.Name, r), nil
		}
	}
	return MassRace{}, race.Errorf(race.CodeUnavailable, "the mass race keeps changing; try again")
}

// openMass is a variant's open mass race as the store has it.
type openMass struct {
	variant string
	room    Room
}

// openMasses reads every variant's open mass race from the store in one
// round trip (the variants with none are left out), in the order of
// engine.VariantNames: every instance does on every heartbeat, and a GET
// per variant was most of an idle fleet's Redis commands (docs/redis.md).
func (l *Lobby) openMasses(ctx context.Context) ([]openMass, error) {
	variants := engine.VariantNames()
	codes := make([]string, len(variants))
	for i, v := range variants {
		codes[i] = massCode(v)
	}
	rooms, err := l.deps.Stores.Rooms.GetMany(ctx, codes)
	if err != nil {
		return nil, err
	}
	var open []openMass
	for i, v := range variants {
		if r, ok := rooms[codes[i]]; ok {
			open = append(open, openMass{v, r})
		}
	}
	return open, nil
}

// massOfPlayer is the variant of the open mass race player is in, ""
// for none. It asks the store, not the sessions: the player may have
// joined from another tab, or through another instance.
func (l *Lobby) massOfPlayer(ctx context.Context, player string) (string, error) {
	open, err := l.openMasses(ctx)
	if err != nil {
		return "", unavailable(err)
	}
	for _, m := range open {
		if m.room.member(player) {
			return m.variant, nil
		}
	}
	return "", nil
}

// notInMass refuses (CodeInMass) a player in an open mass race: a race
// of two started for them elsewhere would leave the mass race starting
// with a racer who is racing already.
func (l *Lobby) notInMass(ctx context.Context, player string) error {
	variant, err := l.massOfPlayer(ctx, player)
	if err != nil {
		return err
	}
	if variant != "" {
		return race.Errorf(CodeInMass, "you are in the %s mass race; leave it first", variant)
	}
	return nil
}

// noteMass keeps variant's mass race, as it is now, in the lobby's list
// and shows the lobby the change.
func (l *Lobby) noteMass(variant string, r Room) {
	l.mu.Lock()
	l.noteMassLocked(variant, r)
	l.mu.Unlock()
	l.Publish()
}

// noteMassLocked keeps variant's mass race as the lobby lists it.
func (l *Lobby) noteMassLocked(variant string, r Room) {
	l.masses = slices.DeleteFunc(slices.Clone(l.masses), func(m MassRace) bool { return m.Variant == variant })
	if len(r.Members) > 0 {
		l.masses = append(l.masses, massOf(variant, r))
		slices.SortFunc(l.masses, func(a, b MassRace) int { return strings.Compare(a.Variant, b.Variant) })
	}
}

// LeaveMass takes the session's player out of the mass race they joined,
// from this tab or another (CodeNotInMass when none); below MassMin its
// countdown stops.
func (s *Session) LeaveMass() error {
	l := s.l
	who := s.Player()
	ctx, cancel := opCtx()
	variant, err := l.massOfPlayer(ctx, who.ID)
	cancel()
	if err != nil {
		return err
	}
	if variant == "" {
		return race.Errorf(CodeNotInMass, "you are in no mass race")
	}
	return l.leaveMass(variant, who.ID)
}

// leaveMassIfGone takes player out of the mass race they are in once
// they have no session left on any instance: nobody would take their
// seat. A tab closed while another is open leaves them in, for that one
// to leave or race.
func (l *Lobby) leaveMassIfGone(player string) {
	ctx, cancel := opCtx()
	defer cancel()
	gone, err := l.away(ctx, player)
	if err == nil && gone {
		var variant string
		if variant, err = l.massOfPlayer(ctx, player); err == nil && variant != "" {
			err = l.leaveMass(variant, player)
		}
	}
	if err != nil {
		l.log.Warn().Err(err).Str("player", player).Msg("not taken out of the mass race: it starts without them if they are not back")
	}
}

// leaveMass takes player out of variant's mass race.
func (l *Lobby) leaveMass(variant, player string) error {
	ctx, cancel := opCtx()
	defer cancel()
	r, ok, err := l.deps.Stores.Rooms.Change(ctx, massCode(variant), RoomTTL, func(r *Room) error {
		r.Members = slices.DeleteFunc(r.Members, func(p PlayerRef) bool { return p.ID == player })
		if len(r.Members) < MassMin {
			r.StartAt = nil
		}
		return nil
	})
	if err != nil {
		return unavailable(err)
	}
	if ok {
		l.mu.Lock()
		l.noteMassLocked(variant, r)
		l.mu.Unlock()
		l.Publish()
	}
	return nil
}

// errNotDue leaves a mass race that is not due as it is.
var errNotDue = errors.New("lobby: the mass race is not due")

// startMasses, on the heartbeat, reads every variant's mass race (in one
// round trip) for the lobby's list and starts those that are due: the
// store's change takes the members out (deleting it) for one instance
// only.
func (l *Lobby) startMasses() {
	now := l.deps.Clock.Now()
	ctx, cancel := opCtx()
	open, err := l.openMasses(ctx)
	cancel()
	if err != nil {
		// The list stays as it was; the next beat reads again.
		l.log.Warn().Err(err).Msg("mass races not read")
		return
	}
	var listed []MassRace
	for _, m := range open {
		variant, r := m.variant, m.room
		if r.StartAt == nil || now.Before(*r.StartAt) {
			listed = append(listed, massOf(variant, r))
			continue
		}
		var taken []PlayerRef
		ctx, cancel := opCtx()
		_, ok, err := l.deps.Stores.Rooms.Change(ctx, massCode(variant), RoomTTL, func(r *Room) error {
			if r.StartAt == nil || now.Before(*r.StartAt) {
				return errNotDue
			}
			taken, r.Members = r.Members, nil
			return nil
		})
		cancel()
		if err != nil || !ok || len(taken) == 0 {
			continue // another instance took it, or it changed: the next beat sees
		}
		l.startMass(variant, taken)
	}
	l.mu.Lock()
	l.masses = listed
	l.mu.Unlock()
}

// startMass starts variant's mass race for members: those racing
// elsewhere are left out; with fewer than two left, those go back to
// wait for the next.
func (l *Lobby) startMass(variant string, members []PlayerRef) {
	ctx, cancel := opCtx()
	defer cancel()
	free := members[:0:0]
	for _, m := range members {
		if err := l.checkRacing(ctx, m.ID); err == nil {
			free = append(free, m)
		}
	}
	if len(free) < race.MinSeats {
		for _, m := range free {
			r := Room{Code: massCode(variant), Members: []PlayerRef{m}, Options: RaceOptions{Choice: race.Choice{Variant: variant}}, Made: l.deps.Clock.Now()}
			if made, err := l.deps.Stores.Rooms.Make(ctx, r, RoomTTL); err != nil || !made {
				_, _, _ = l.deps.Stores.Rooms.Change(ctx, massCode(variant), RoomTTL, func(r *Room) error {
					if !r.member(m.ID) && len(r.Members) < race.MaxSeats {
						r.Members = append(r.Members, m)
					}
					return nil
				})
			}
		}
		return
	}
	dests := make([]dest, len(free))
	for i := range dests {
		dests[i] = dest{to: ToAll}
	}
	opts := race.Options{Variant: variant, Public: true, Unrated: true}
	err := l.start(pairing{opts: opts, via: ViaMass, code: variant, players: free, dests: dests})
	if err != nil {
		l.log.Warn().Err(err).Str("variant", variant).Int("racers", len(free)).Msg("mass race not started")
	}
}
