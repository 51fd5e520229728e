package lobby

// Rooms ("race a group"): a host makes a room with a code and a link,
// friends join it by the code, and the host starts a race of everyone in
// it (2 to 10) on one secret deal; once it is over the host starts the
// next, with whoever is in the room then. A room's races are unrated.

import (
	"context"
	"slices"
	"time"

	"sirtommy/race"
)

// The refusals of rooms.
const (
	CodeNoSuchRoom race.Code = "no-such-room" // no room has that code (or it emptied and expired)
	CodeNotHost    race.Code = "not-host"     // starting a room's race while not its host
	CodeTooFew     race.Code = "too-few"      // starting a room's race with fewer than two in it
	CodeNotInRoom  race.Code = "not-in-room"  // starting or leaving a room one is not in
)

// RoomTTL is how long a room lasts after its last change: a room nobody
// touched for that long is gone.
const RoomTTL = 2 * time.Hour

// Room is a group who race together.
type Room struct {
	Code string `json:"code"`
	// Host is the player who starts its races: who made it, or the one
	// who joined first of those still in it once they left.
	Host string `json:"host"`
	// Members are everyone in it, in the order they came, the host
	// among them; at most race.MaxSeats.
	Members []PlayerRef `json:"members"`
	// Options are the races' (their seats are the members at each start;
	// never rated).
	Options RaceOptions `json:"options"`
	// Race is the room's last race, "" before the first.
	Race string `json:"race,omitempty"`
	// Races counts the races started.
	Races int       `json:"races"`
	Made  time.Time `json:"madeAt"`
	// StartAt is when a mass race's countdown ends (mass.go); absent
	// for a room, and for a mass race with too few joined.
	StartAt *time.Time `json:"startAt,omitempty"`
}

// member reports whether player is in the room.
func (r *Room) member(player string) bool {
	return slices.ContainsFunc(r.Members, func(p PlayerRef) bool { return p.ID == player })
}

// RoomEvent ("room") is a room as it is now, sent to every member at each
// change (someone came or left, a race started), and as the reply to
// room, join-room and leave-room.
type RoomEvent struct {
	Room Room `json:"room"`
	// Left is set, for the one who left, when the room is no longer
	// theirs.
	Left bool `json:"left,omitempty"`
}

// EventType is "room".
func (*RoomEvent) EventType() string { return "room" }

var _ race.Event = (*RoomEvent)(nil)

// Rooms keeps the rooms; shared by the instances in Redis mode.
type Rooms interface {
	// Put stores a new room, to be found until keep has passed.
	Put(ctx context.Context, r Room, keep time.Duration) error
	// Make stores r as Put does unless a room has its code already:
	// made is false then, and nothing changed.
	Make(ctx context.Context, r Room, keep time.Duration) (made bool, err error)
	// Get finds room code (normalized).
	Get(ctx context.Context, code string) (r Room, ok bool, err error)
	// GetMany finds the rooms of codes (normalized) as Get does, in one
	// round trip to a shared store: every lobby instance's heartbeat reads
	// every variant's mass race. The codes of no room are left out.
	GetMany(ctx context.Context, codes []string) (map[string]Room, error)
	// Change applies change to room code and stores the result for keep,
	// atomically: when several instances change a room at once, each
	// change sees the one before. An error of change leaves the room as
	// it was and is returned; a room left with no members is deleted. ok
	// is false when there is no such room.
	Change(ctx context.Context, code string, keep time.Duration, change func(*Room) error) (r Room, ok bool, err error)
}

// roomOptions checks a room's race options: a race of its members, so
// no seat count of its own, and unrated.
func roomOptions(o RaceOptions) (RaceOptions, race.Options, error) {
	o.Seats, o.Rated = nil, false
	c := o.Choice
	opts, err := c.Options()
	if err != nil {
		return o, race.Options{}, err
	}
	if opts.BestOf > 1 {
		return o, race.Options{}, race.Errorf(race.CodeBadOptions, "bestOf: a room's race is one race; a match is between two")
	}
	opts.Unrated = true
	limit := int(opts.TimeLimit / time.Second)
	o.Variant, o.TimeLimitSeconds, o.BestOf, o.Grade = opts.Variant, &limit, nil, opts.Grade
	return o, opts, nil
}

// MakeRoom makes a room hosted by the session's player, with the races'
// options; they are its first member.
func (s *Session) MakeRoom(o RaceOptions) (Room, error) {
	o, _, err := roomOptions(o)
	if err != nil {
		return Room{}, err
	}
	l := s.l
	who := s.Player()
	r := Room{Code: newCode(), Host: who.ID, Members: []PlayerRef{{ID: who.ID, Name: who.Name}}, Options: o, Made: l.deps.Clock.Now()}
	ctx, cancel := opCtx()
	defer cancel()
	if err := l.deps.Stores.Rooms.Put(ctx, r, RoomTTL); err != nil {
		return Room{}, unavailable(err)
	}
	return r, nil
}

// JoinRoom puts the session's player in room code (once: joining again
// changes nothing) and tells every member: CodeNoSuchRoom, or
// race.CodeRaceFull when it holds race.MaxSeats already. A race under
// way goes on without them: they race from the next start.
func (s *Session) JoinRoom(code string) (Room, error) {
	who := s.Player()
	return s.l.changeRoom(code, func(r *Room) error {
		if r.member(who.ID) {
			return nil
		}
		if len(r.Members) >= race.MaxSeats {
			return race.Errorf(race.CodeRaceFull, "room %s is full: %d racers", r.Code, race.MaxSeats)
		}
		r.Members = append(r.Members, PlayerRef{ID: who.ID, Name: who.Name})
		return nil
	}, "")
}

// LeaveRoom takes the session's player out of room code (CodeNotInRoom
// when they are not in it); the host's part goes to the member who came
// first after them. A race under way is theirs still.
func (s *Session) LeaveRoom(code string) (Room, error) {
	who := s.Player()
	return s.l.changeRoom(code, func(r *Room) error {
		i := slices.IndexFunc(r.Members, func(p PlayerRef) bool { return p.ID == who.ID })
		if i < 0 {
			return race.Errorf(CodeNotInRoom, "you are not in room %s", r.Code)
		}
		r.Members = slices.Delete(r.Members, i, i+1)
		if r.Host == who.ID && len(r.Members) > 0 {
			r.Host = r.Members[0].ID
		}
		return nil
	}, who.ID)
}

// StartRoom starts a race of everyone in room code, for its host only
// (CodeNotHost; CodeNotInRoom for a stranger), with two in it at least
// (CodeTooFew), nobody of them racing elsewhere (CodeInRace naming who):
// each member's seat is kept for them, and each is told "matched" with
// the room's code and every racer.
func (s *Session) StartRoom(code string) error {
	l := s.l
	who := s.Player()
	ctx, cancel := opCtx()
	defer cancel()
	r, ok, err := l.deps.Stores.Rooms.Get(ctx, NormalizeCode(code))
	switch {
	case err != nil:
		return unavailable(err)
	case !ok:
		return race.Errorf(CodeNoSuchRoom, "no room has code %q", code)
	case !r.member(who.ID):
		return race.Errorf(CodeNotInRoom, "you are not in room %s", r.Code)
	case r.Host != who.ID:
		return race.Errorf(CodeNotHost, "only the room's host starts its races")
	case len(r.Members) < race.MinSeats:
		return race.Errorf(CodeTooFew, "a race needs %d racers at least; room %s has %d", race.MinSeats, r.Code, len(r.Members))
	}
	_, opts, err := roomOptions(r.Options)
	if err != nil {
		return err // checked when made
	}
	ids := make([]string, len(r.Members))
	for i, m := range r.Members {
		ids[i] = m.ID
		// A member's last race may be over with its end's work under
		// way: settled first, as any request of theirs would be.
		if err := l.checkRacing(ctx, m.ID); err != nil {
			if race.ErrorCode(err) == CodeInRace {
				return race.Errorf(CodeInRace, "%s is in a race not over; start again when they are done", m.Name)
			}
			return err
		}
	}
	busy, err := l.deps.Stores.Seats.Claim(ctx, ids, claimKeep)
	if err != nil {
		return unavailable(err)
	}
	if busy != "" {
		name := busy
		if i := slices.Index(ids, busy); i >= 0 {
			name = r.Members[i].Name
		}
		return race.Errorf(CodeInRace, "%s is in a race not over; start again when they are done", name)
	}
	dests := make([]dest, len(r.Members))
	for i := range dests {
		dests[i] = dest{to: ToAll}
	}
	var raceID string
	p := pairing{opts: opts, via: ViaRoom, code: r.Code, players: slices.Clone(r.Members), dests: dests, claimed: true,
		made: func(id string) { raceID = id }}
	if err := l.start(p); err != nil {
		return err
	}
	// The matched events are out; the room notes its race, and its
	// members see the room as it is now.
	_, err = l.changeRoom(r.Code, func(r *Room) error {
		r.Race, r.Races = raceID, r.Races+1
		return nil
	}, "")
	if err != nil {
		l.log.Warn().Err(err).Str("room", r.Code).Msg("the room's race not noted in it")
	}
	return nil
}

// changeRoom changes room code and tells its members (and left, the one
// who left, if any) the room as it is now.
func (l *Lobby) changeRoom(code string, change func(*Room) error, left string) (Room, error) {
	ctx, cancel := opCtx()
	defer cancel()
	code = NormalizeCode(code)
	r, ok, err := l.deps.Stores.Rooms.Change(ctx, code, RoomTTL, change)
	switch {
	case race.IsRefusal(err):
		return Room{}, err
	case err != nil:
		return Room{}, unavailable(err)
	case !ok:
		return Room{}, race.Errorf(CodeNoSuchRoom, "no room has code %q", code)
	}
	for _, m := range r.Members {
		l.tell(Notice{Player: m.ID, To: ToAll, Room: &RoomEvent{Room: r}})
	}
	if left != "" {
		l.tell(Notice{Player: left, To: ToAll, Room: &RoomEvent{Room: r, Left: true}})
	}
	return r, nil
}
