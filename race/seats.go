package race

// The seats: taking one (a player joining, a seat reserved for a lobby
// player, resuming with a token), leaving, and the grace period of a
// player who is gone.

import (
	"crypto/subtle"
	"time"

	"sirtommy/engine"
)

// opponentOfLocked is seat s's opponent as the protocol names it
// (StateEvent's Opponent): in a race of two, the other seat; in a race
// of more, the other racer with the most cards up, whom s has to beat
// (every racer's counts reach s in OpponentEvents, by seat).
func (r *Race) opponentOfLocked(s int) int {
	if len(r.seats) == MinSeats {
		return 1 - s
	}
	best, o := -1, -1
	for i := range r.seats {
		if i != s && r.seats[i].game.Score() > best {
			best, o = r.seats[i].game.Score(), i
		}
	}
	return o
}

// gamesLocked is a copy of every seat's game, by seat.
func (r *Race) gamesLocked() []engine.Game {
	games := make([]engine.Game, len(r.seats))
	for s := range r.seats {
		games[s] = r.seats[s].game
	}
	return games
}

// publishOthersLocked publishes ev on every seat's topic but s's.
func (r *Race) publishOthersLocked(s int, ev Event) {
	for o := range r.seats {
		if o != s {
			r.publishLocked(o, ev)
		}
	}
}

// Join takes the first free seat for a player called name and subscribes
// sub to it; sub first receives a JoinedEvent (echoing the request id) and
// a StateEvent. When every seat is taken the countdown starts.
func (r *Race) Join(name, id string, sub Subscriber) (Ticket, error) {
	r.mu.Lock()
	defer r.unlock()
	s, st, err := r.takeSeatLocked(name, nil)
	if err != nil {
		return Ticket{}, err
	}
	st.token = NewToken()
	r.log.Info().Int("seat", s).Str("name", st.name).Msg("player joined")
	st.connected = true
	r.maybeCountdownLocked()
	r.saveLocked()
	r.sendLocked(sub, &JoinedEvent{Race: r.id, ID: id, Seat: s, Token: st.token})
	r.attachLocked(s, sub)
	r.publishStateLocked(s)
	return Ticket{Seat: s, Token: st.token}, nil
}

// SeatComputer puts a computer player in the first free seat; it moves
// every c.Pace once the race runs.
func (r *Race) SeatComputer(name string, c Computer) (int, error) {
	if c.Player == nil {
		return 0, Errorf(CodeInternal, "a computer seat needs a player")
	}
	r.mu.Lock()
	defer r.unlock()
	s, st, err := r.takeSeatLocked(name, &computerSeat{Computer: c})
	if err != nil {
		return 0, err
	}
	r.log.Info().Int("seat", s).Str("name", st.name).Str("level", c.Level).Dur("pace", c.Pace).Msg("computer seated")
	r.maybeCountdownLocked()
	r.saveLocked()
	r.publishStateLocked(-1)
	return s, nil
}

// Reservation is who the lobby keeps a seat for.
type Reservation struct {
	Name string
	// Player is the lobby's player id.
	Player string
	// Rating is their rating in the race's variant as the race is made
	// (0: none), shown to everyone beside their name.
	Rating float64
}

// Reserve takes the first free seat for a lobby player who is not
// connected yet (a lobby pairing two players): the seat is theirs, they
// take it with Resume and the ticket's token (which Service.SeatOf finds
// again from any instance), and if they do not come within the grace
// period the race is aborted ("left"). The countdown starts once every
// seat's player is connected.
func (r *Race) Reserve(p Reservation) (Ticket, error) {
	r.mu.Lock()
	defer r.unlock()
	s, st, err := r.takeSeatLocked(p.Name, nil)
	if err != nil {
		return Ticket{}, err
	}
	st.token, st.player, st.rating = NewToken(), p.Player, p.Rating
	st.graceEnd = r.clock.Now().Add(r.opts.Grace)
	st.graceT = r.clock.AfterFunc(r.opts.Grace, func() { r.graceOver(s) })
	r.log.Info().Int("seat", s).Str("name", st.name).Msg("seat reserved")
	r.saveLocked() // so that SeatOf on another instance finds the player
	r.publishStateLocked(-1)
	return Ticket{Seat: s, Token: st.token}, nil
}

// Resume gives the seat whose token this is back to a new connection sub
// of player (the lobby's player id of whoever sent the token; "" for an
// anonymous connection). A seat the lobby reserved is given back only to
// its player: anyone else, anonymous included, is refused with
// CodeNotYourSeat, so that a token shown or stolen is not a seat. The
// seat gets a fresh token and the one given stops working, but for sub
// itself, which may send it again while it holds the seat (the answer
// to its resume lost on the way between instances): sub first receives
// a JoinedEvent with it (echoing the request id), then a StateEvent with
// the exact state. A connection still holding the seat
// gets a ReplacedEvent and loses it.
func (r *Race) Resume(token, player, id string, sub Subscriber) (Ticket, error) {
	r.mu.Lock()
	defer r.unlock()
	s := -1
	for i := range r.seats {
		st := &r.seats[i]
		if sameToken(st.token, token) || st.sub == sub && sub != nil && sameToken(st.spent, token) {
			s = i
		}
	}
	if s < 0 {
		return Ticket{}, Errorf(CodeBadToken, "that token does not resume a seat in this race")
	}
	st := &r.seats[s]
	if st.player != "" && st.player != player {
		return Ticket{}, Errorf(CodeNotYourSeat, "seat %d of race %s is reserved for another player; say hello as that player, or watch the race", s, r.id)
	}
	if r.state.Over() {
		return Ticket{}, Errorf(CodeRaceOver, "the race is %s", r.state)
	}
	if st.sub != nil && st.sub != sub { // the same connection resuming again is not replaced
		r.sendLocked(st.sub, &ReplacedEvent{Race: r.id, Seat: s})
	}
	wasConnected, before := st.connected, r.state
	st.connected = true
	st.spent, st.token = token, NewToken() // the token given is spent
	r.maybeCountdownLocked()               // a kept seat of a next round may complete the race
	r.saveLocked()                         // the new token outlives this instance (Redis mode)
	r.sendLocked(sub, &JoinedEvent{Race: r.id, ID: id, Seat: s, Token: st.token})
	r.attachLocked(s, sub)
	if !wasConnected {
		r.presenceLocked(s, nil)
	}
	if r.state != before {
		r.publishStateLocked(s)
	}
	r.log.Info().Int("seat", s).Msg("player resumed")
	return Ticket{Seat: s, Token: st.token}, nil
}

// sameToken reports whether token is t, a seat's token ("": none), in
// constant time.
func sameToken(t, token string) bool {
	return t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1
}

// Leave is called when connection sub, which held seat s, is gone. The
// player then has the grace period to resume, or forfeits; a player whose
// own game is over forfeits nothing.
func (r *Race) Leave(s int, sub Subscriber) {
	r.mu.Lock()
	defer r.unlock()
	st := &r.seats[s]
	if st.sub != sub {
		return // already replaced by a newer connection
	}
	st.unsub()
	st.sub, st.unsub, st.connected = nil, nil, false
	if r.state.Over() || st.game.Status().Over() {
		// A player whose game is over (stuck, resigned) has nothing left to
		// do: leaving then forfeits nothing.
		r.saveLocked()
		r.presenceLocked(s, nil)
		return
	}
	st.graceEnd = r.clock.Now().Add(r.opts.Grace)
	st.graceT = r.clock.AfterFunc(r.opts.Grace, func() { r.graceOver(s) })
	r.saveLocked()
	r.log.Info().Int("seat", s).Time("graceUntil", st.graceEnd).Msg("player disconnected")
	end := st.graceEnd
	r.presenceLocked(s, &end)
}

// Detach unsubscribes sub from seat s without starting a grace period:
// the race runs elsewhere now, and the connection follows it there.
func (r *Race) Detach(s int, sub Subscriber) {
	r.mu.Lock()
	defer r.unlock()
	st := &r.seats[s]
	if st.sub != sub {
		return
	}
	if st.unsub != nil {
		st.unsub()
	}
	st.sub, st.unsub = nil, nil
}

// freeSeatLocked is the first free seat, or why none can be taken.
func (r *Race) freeSeatLocked() (int, error) {
	if r.state.Over() {
		return -1, Errorf(CodeRaceOver, "the race is %s", r.state)
	}
	for s := range r.seats {
		if !r.seats[s].taken {
			return s, nil
		}
	}
	return -1, Errorf(CodeRaceFull, "every seat is taken")
}

func (r *Race) attachLocked(s int, sub Subscriber) {
	st := &r.seats[s]
	if st.unsub != nil {
		st.unsub()
	}
	if st.graceT != nil {
		st.graceT.Stop()
		st.graceT = nil
	}
	st.sub, st.connected = sub, true
	r.sendLocked(sub, r.snapshotLocked(s))
	st.unsub = r.subscribeLocked(s, sub)
}

func (r *Race) presenceLocked(s int, graceUntil *time.Time) {
	ev := &PresenceEvent{Race: r.id, Seat: s, Connected: r.seats[s].connected, GraceUntil: graceUntil}
	r.publishOthersLocked(s, ev)
	r.publishWatchLocked(ev)
}

// takeoverWaitOver starts the grace period of seat s, held as connected
// since the takeover at from, if no connection has resumed it since.
func (r *Race) takeoverWaitOver(s int, from time.Time) {
	r.mu.Lock()
	defer r.unlock()
	st := &r.seats[s]
	if r.state.Over() || st.sub != nil || !st.connected {
		return // resumed in time, or a stale timer
	}
	st.connected = false
	if st.game.Status().Over() {
		r.saveLocked()
		r.presenceLocked(s, nil)
		return // a player whose game is over forfeits nothing by leaving
	}
	st.graceEnd = from.Add(r.opts.Grace)
	st.graceT = r.clock.AfterFunc(max(st.graceEnd.Sub(r.clock.Now()), 0), func() { r.graceOver(s) })
	r.saveLocked()
	r.log.Info().Int("seat", s).Time("graceUntil", st.graceEnd).Msg("player did not follow the takeover")
	end := st.graceEnd
	r.presenceLocked(s, &end)
}

func (r *Race) graceOver(s int) {
	r.mu.Lock()
	defer r.unlock()
	st := &r.seats[s]
	if r.state.Over() || st.connected || r.clock.Now().Before(st.graceEnd) {
		return // resumed in time, or a stale timer
	}
	r.log.Info().Int("seat", s).Msg("grace period over")
	if r.state == Running {
		r.forfeitLocked(s)
		return
	}
	r.abortLocked(ReasonLeft)
}

// forfeitLocked is seat s's player leaving the race for good. In a race
// of two the race ends and the other wins (ReasonForfeit); in a race of
// more, the player forfeits their own place only: their game is resigned
// where it stands and the others race on.
func (r *Race) forfeitLocked(s int) {
	if len(r.seats) > MinSeats {
		r.log.Info().Int("seat", s).Msg("forfeit: the seat resigns")
		_ = r.resignLocked(s, "") // a refusal (the log down) is logged, and the time limit ends the race
		return
	}
	r.finishLocked(1-s, ReasonForfeit)
}

func clip(name string) string {
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	return name
}

// Ticket is what a player gets for a seat: the seat and the token that
// resumes it after a disconnect. The token is a secret: only its holder
// plays the seat.
type Ticket struct {
	Seat  int
	Token string
}

type seat struct {
	taken bool
	name  string
	token string
	// spent is the token the seat's last resume was given. The connection
	// that resumed (sub) may send it again, its answer lost on the way
	// (an instance whose pub/sub was reconnecting): it gets its seat again
	// with a fresh token. From anyone else it is refused.
	spent     string
	player    string  // the lobby's player id of a reserved seat
	rating    float64 // and their rating as the race was made
	game      engine.Game
	moves     []engine.Move
	last      MoveRecord // the seat's last logged move or resignation
	sub       Subscriber // the connection playing the seat, if any
	unsub     func()
	connected bool
	graceT    Timer
	graceEnd  time.Time
	// occ plays the seat when no person's connection does (nil: a person).
	occ occupant
	// berserk halves the seat's time (berserk.go); berserkT ends its game
	// then.
	berserk  bool
	berserkT Timer
	// held is set once the race counted a move of the seat's that its
	// holder on another instance played (remote.go): a request of the
	// seat's that comes here takes it back first (holdLocked).
	held bool
}

// occupant is whoever plays a seat that a person's connection does not:
// the server plays it (a computer player, computer.go; a recording raced
// again, ghost.go), or nobody does (the empty seat of a solo race). Its
// methods run with the race's lock held.
type occupant interface {
	// play starts or goes on playing seat s of r, which runs: its next
	// move is scheduled.
	play(r *Race, s int)
	// stop stops its timer, if it has one.
	stop()
	// describe sets what the seat's public information says of it.
	describe(p *PlayerInfo)
}

// computer is the seat's computer player, or nil.
func (st *seat) computer() *computerSeat { c, _ := st.occ.(*computerSeat); return c }

// ghost is the recording the seat plays, or nil.
func (st *seat) ghost() *ghostSeat { g, _ := st.occ.(*ghostSeat); return g }

// solo reports whether the seat is the empty one of a solo race.
func (st *seat) solo() bool { _, ok := st.occ.(soloSeat); return ok }

// soloSeat is the empty seat of a solo race (the day's deal): nobody
// plays it; its game stays at the deal.
type soloSeat struct{}

func (soloSeat) play(*Race, int)        {}
func (soloSeat) stop()                  {}
func (soloSeat) describe(p *PlayerInfo) { p.Solo = true }

// takeSeatLocked gives the first free seat to name, played by occ (nil:
// a person), the one way a seat is taken: a person's seat waits for their
// connection (the caller says when it is connected), an occupant's is
// connected from the start.
func (r *Race) takeSeatLocked(name string, occ occupant) (int, *seat, error) {
	s, err := r.freeSeatLocked()
	if err != nil {
		return 0, nil, err
	}
	st := &r.seats[s]
	st.taken, st.name, st.occ, st.connected = true, clip(name), occ, occ != nil
	return s, st, nil
}

// replayRecord plays logged entry m (a move, or "resign") on g as a log
// replays (ApplyRecorded: a log written before the move T replays too),
// and returns the move played (none for a resignation).
func replayRecord(g *engine.Game, m MoveRecord) (mv engine.Move, resigned bool, err error) {
	if m.Move == "resign" {
		g.Resign()
		return mv, true, nil
	}
	if mv, err = engine.ParseMove(m.Move); err == nil {
		err = g.ApplyRecorded(mv)
	}
	return mv, false, err
}

// playLogged plays logged entry m on the seat's game and keeps it as the
// seat's last, and returns what tells the spectators of it.
func (st *seat) playLogged(m MoveRecord) (feedMove, error) {
	mv, resigned, err := replayRecord(&st.game, m)
	if err != nil {
		return feedMove{}, err
	}
	if !resigned {
		st.moves = append(st.moves, mv)
	}
	st.last = m
	return feedMove{seat: m.Seat, seq: m.Seq, move: m.Move, atMs: m.AtMs, resign: resigned, play: mv}, nil
}
