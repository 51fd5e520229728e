package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"sirtommy/engine"
)

// outMsg is every message the load client sends.
type outMsg struct {
	V       int    `json:"v"`
	Type    string `json:"type"`
	ID      string `json:"id,omitempty"`
	Race    string `json:"race,omitempty"`
	Move    string `json:"move,omitempty"`
	Variant string `json:"variant,omitempty"`
	Name    string `json:"name,omitempty"`
	Arena   string `json:"arena,omitempty"`
}

// inMsg is the fields of server messages the load client reads.
type inMsg struct {
	Type  string       `json:"type"`
	ID    string       `json:"id"`
	Race  string       `json:"race"`
	Seat  int          `json:"seat"`
	State string       `json:"state"`
	Code  string       `json:"code"`
	Seq   int          `json:"seq"`
	You   *engine.View `json:"you"`
	View  *engine.View `json:"view"`
	// Counts is an object in "opponent" and "board", an array (both
	// seats) in a spectator's "state": decoded by type in decode.
	RawCounts json.RawMessage `json:"counts"`
	Counts    *counts         `json:"-"`
	// pushed marks an "arena" message the server sent unasked.
	pushed bool
}

// counts is the part of a Counts the load client reads.
type counts struct {
	Moves int `json:"moves"`
}

// decodeError is a server message the client could not read.
type decodeError struct {
	msg string
	err error
}

func (e *decodeError) Error() string { return fmt.Sprintf("decode %q: %v", e.msg, e.err) }
func (e *decodeError) Unwrap() error { return e.err }

// serverHead is how the server starts every message (PROTOCOL.md's
// envelope, encoded by the web package in this order).
var serverHead = []byte(`{"v":1,"type":"`)

// peekType reads a server message's type from its envelope without
// decoding the rest, or "" if the message does not start as expected.
func peekType(b []byte) string {
	if !bytes.HasPrefix(b, serverHead) {
		return ""
	}
	rest := b[len(serverHead):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return ""
	}
	return string(rest[:end])
}

// decode reads what the load client needs of a server message. The
// profile of a load run had the client's JSON decoding at 40% of its CPU,
// most of it the lobby message (every live race, each heartbeat, to every
// connection), which the client never reads: messages it does not use are
// only counted by type, and "opponent" is read for its move count alone.
func decode(b []byte) (inMsg, error) {
	switch typ := peekType(b); typ {
	case "lobby", "presence", "board", "welcome", "watching", "queued", "pong":
		return inMsg{Type: typ}, nil
	case "arena": // only counted and timed
		return inMsg{Type: typ, pushed: isArenaPush(b)}, nil
	case "opponent":
		var o struct {
			Seat   int    `json:"seat"` // the mover's
			Counts counts `json:"counts"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return inMsg{}, &decodeError{truncate(b), err}
		}
		return inMsg{Type: typ, Seat: o.Seat, Counts: &o.Counts}, nil
	}
	var m inMsg
	if err := json.Unmarshal(b, &m); err != nil {
		return m, &decodeError{truncate(b), err}
	}
	if m.Type == "opponent" && len(m.RawCounts) > 0 {
		m.Counts = new(counts)
		if err := json.Unmarshal(m.RawCounts, m.Counts); err != nil {
			return m, &decodeError{truncate(b), err}
		}
	}
	m.RawCounts = nil
	return m, nil
}

func truncate(b []byte) string {
	const maxShown = 80 // bytes of a bad message worth showing
	if len(b) > maxShown {
		return string(b[:maxShown]) + "..."
	}
	return string(b)
}

var errConnEnded = errors.New("connection ended")

// player is one bot player's state; only its own goroutine touches it.
type player struct {
	run *run
	c   *wsConn
	bot *engine.Bot
	rng *rand.Rand
	url int // the index of the URL this player dialled, in Config.URLs
	// pair, in Config.Direct runs, hands this player its races; pairIdx
	// is its place among the race's players (not its seat, which join
	// decides).
	pair    *pairing
	pairIdx int

	raceID  string
	seat    int
	track   *raceTrack
	view    engine.View
	running bool
	// The move in flight: its id and when it was sent ("" when none).
	inFlight string
	sentAt   time.Time
	nextID   int
	// lastInFlight is the move in flight when the last race ended: its
	// race-over refusal may come after the final state.
	lastInFlight string
	// In an arena run: when the player joined the arena, whether they
	// were paired since, when their last race ended (zero once paired
	// again), and their leaderboard updates.
	joinedAt time.Time
	rejoinAt time.Time // when to send arena-join again, after unavailable
	paired   bool
	endedAt  time.Time
	follow   arenaFollower
}

// next waits for the next message, or ends with the run or connection.
func (p *player) next(ctx context.Context, tick <-chan time.Time) (inMsg, bool, error) {
	select {
	case m, ok := <-p.c.inbox:
		if !ok {
			return m, false, errConnEnded
		}
		return m, false, nil
	case <-tick:
		return inMsg{}, true, nil
	case id := <-p.pairNext():
		return inMsg{Type: "matched", Race: id, Seat: -1}, false, nil
	case <-ctx.Done():
		return inMsg{}, false, ctx.Err()
	}
}

// pairNext is where a Direct run's next race comes from; nil (never
// ready) when the player queues for quick play.
func (p *player) pairNext() <-chan string {
	if p.pair == nil {
		return nil
	}
	return p.pair.next[p.pairIdx]
}

// again asks for the player's next race: quick play, or in a Direct run
// the pair's next race.
func (p *player) again() error {
	if p.pair != nil {
		p.pair.done <- struct{}{} // room for every player: never blocks
		return nil
	}
	if p.run.arena != nil {
		return nil // the arena pairs them again
	}
	return p.c.send(outMsg{V: 1, Type: "queue", ID: "q", Variant: p.run.cfg.Variant})
}

func (p *player) id() string {
	p.nextID++
	return strconv.Itoa(p.nextID)
}

func (p *player) play(ctx context.Context) error {
	if err := p.c.send(outMsg{V: 1, Type: "hello", ID: "h"}); err != nil {
		return err
	}
	switch {
	case p.run.arena != nil:
		p.joinedAt = time.Now()
		if err := p.joinArena(); err != nil {
			return err
		}
	case p.pair == nil:
		if err := p.c.send(outMsg{V: 1, Type: "queue", ID: "q", Variant: p.run.cfg.Variant}); err != nil {
			return err
		}
	}
	// Each player moves every 1/rate seconds, starting at a random phase
	// so that the players do not move in lockstep.
	period := time.Duration(float64(time.Second) / p.run.cfg.Rate)
	select {
	case <-time.After(time.Duration(p.rng.Int64N(int64(period)))):
	case <-ctx.Done():
		return nil
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	defer p.leaveRace()
	for {
		m, ticked, err := p.next(ctx, tick.C)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if ticked {
			if !p.rejoinAt.IsZero() && time.Now().After(p.rejoinAt) {
				p.rejoinAt = time.Time{}
				if err := p.joinArena(); err != nil {
					return err
				}
			}
			if err := p.tryMove(); err != nil {
				return err
			}
			continue
		}
		if err := p.handle(m); err != nil {
			return err
		}
	}
}

func (p *player) handle(m inMsg) error {
	r := p.run
	switch m.Type {
	case "matched":
		p.pairedAgain()
		p.leaveRace()
		p.raceID, p.seat, p.running, p.inFlight = m.Race, m.Seat, false, ""
		p.track = r.track(m.Race)
		if m.Seat == 0 { // quick play: the seat is known; a Direct run's pairer counts its races
			r.started.Add(1)
			for range r.perRace { // offer the race to spectators; none waiting is fine
				select {
				case r.live <- m.Race:
				default:
				}
			}
		}
		return p.c.send(outMsg{V: 1, Type: "join", ID: "j", Race: m.Race})
	case "joined":
		if m.Race == p.raceID && p.track != nil {
			p.seat = m.Seat
			p.track.joined(m.Seat, p.url)
		}
	case "state":
		if m.Race != p.raceID {
			return nil
		}
		if m.You != nil {
			p.view = *m.You
		}
		switch m.State {
		case "running":
			p.running = true
		case "finished", "aborted":
			p.running, p.lastInFlight, p.inFlight = false, p.inFlight, ""
			p.endedAt = time.Now()
			if m.Seat == 0 {
				if m.State == "finished" {
					r.finished.Add(1)
				} else {
					r.aborted.Add(1)
				}
			}
			p.leaveRace()
			return p.again()
		}
	case "moved":
		if m.ID != p.inFlight || m.ID == "" {
			return nil
		}
		r.own.recordSince(p.sentAt, r.from)
		r.moves.Add(1)
		p.inFlight = ""
		if m.View != nil {
			p.view = *m.View
		}
	case "opponent":
		if p.track != nil && m.Counts != nil {
			if at, where, ok := p.track.seen(m.Seat, p.seat, m.Counts.Moves); ok {
				r.opp.recordSince(at, r.from)
				switch where {
				case placementAcross:
					r.oppCross.recordSince(at, r.from)
				case placementOne:
					r.oppLocal.recordSince(at, r.from)
				}
			}
		}
	case "arena":
		if m.pushed && r.arena != nil {
			p.follow.pushed(r.arena)
		}
	case "error":
		if m.ID == "aj" && m.Code == "unavailable" { // as a client would: again in a second
			r.errs.add(m.Code)
			p.rejoinAt = time.Now().Add(time.Second)
			return nil
		}
		if m.Code == "race-over" && m.ID != "" && (m.ID == p.inFlight || m.ID == p.lastInFlight) {
			// The move crossed the race's end (the opponent won, or the
			// time ran out) on the wire: every player of a fast game
			// may see this, so it is counted apart from errors.
			r.late.Add(1)
			p.inFlight = ""
			return nil
		}
		r.errs.add(m.Code)
		if m.ID != "" && m.ID == p.inFlight {
			p.inFlight = ""
			if m.Code == "illegal-move" { // our reading of the View was wrong: give up this game
				p.inFlight = p.id()
				p.sentAt = time.Now()
				return p.c.send(outMsg{V: 1, Type: "resign", ID: p.inFlight})
			}
		}
	}
	return nil
}

// joinArena asks to join the run's arena (again, after unavailable).
func (p *player) joinArena() error {
	return p.c.send(outMsg{V: 1, Type: "arena-join", ID: "aj", Arena: p.run.arena.id})
}

// pairedAgain times an arena's pairing: the first since the player
// joined, or the next after their race's end.
func (p *player) pairedAgain() {
	a := p.run.arena
	switch {
	case a == nil:
	case !p.paired:
		p.paired = true
		a.first.record(time.Since(p.joinedAt))
	case !p.endedAt.IsZero():
		a.repair.recordSince(p.endedAt, p.run.from)
	}
	p.endedAt = time.Time{}
}

// tryMove sends the bot's next move when the race runs and no move is in
// flight.
func (p *player) tryMove() error {
	if !p.running || p.inFlight != "" || p.view.Status != engine.Playing {
		return nil
	}
	legal := legalFromView(&p.view)
	if len(legal) == 0 {
		return nil // the server will say the game is stuck
	}
	mv, ok := p.bot.Choose(&p.view, legal)
	if !ok {
		mv = legal[0]
	}
	p.inFlight = p.id()
	p.sentAt = time.Now()
	p.track.sentMove(p.seat, p.view.Moves+1, p.sentAt)
	return p.c.send(outMsg{V: 1, Type: "move", ID: p.inFlight, Move: mv.String()})
}

func (p *player) leaveRace() {
	if p.track != nil {
		p.run.untrack(p.raceID)
		p.track = nil
	}
}

// dialNext dials the next of the URLs in turn for a spectator; nil when
// it failed (counted) or the run ended.
func (r *run) dialNext(ctx context.Context, sem chan struct{}) *wsConn {
	c, err := r.dial(ctx, sem, r.cfg.URLs[int(r.nextURL.Add(1))%len(r.cfg.URLs)])
	if err != nil {
		if ctx.Err() == nil {
			r.errs.add("dial-failed")
		}
		return nil
	}
	return c
}

// spectator watches races the players were matched into, one at a time.
func (r *run) spectator(ctx context.Context, sem chan struct{}) {
	c := r.dialNext(ctx, sem)
	if c == nil {
		return
	}
	defer c.close()
	watching := ""
	pick := func() error {
		select {
		case id := <-r.live:
			watching = id
			return c.send(outMsg{V: 1, Type: "watch", ID: "w", Race: id})
		case <-ctx.Done():
			return nil
		}
	}
	if err := pick(); err != nil {
		r.errs.add("client-write")
		return
	}
	for {
		select {
		case m, ok := <-c.inbox:
			if !ok {
				r.connEnded(ctx, c)
				return
			}
			switch m.Type {
			case "board":
				r.boards.Add(1)
			case "error":
				r.errs.add(m.Code)
			case "state":
				if m.Race == watching && (m.State == "finished" || m.State == "aborted") {
					if err := pick(); err != nil {
						r.errs.add("client-write")
						return
					}
				}
			}
		case <-ctx.Done():
			return
		}
	}
}
