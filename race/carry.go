package race

import (
	"context"
	"errors"

	"sirtommy/engine"
)

// Carried is an event encoded for the bus's channel of a topic, for the
// race's log to publish as it appends a move (CarryingStore).
type Carried struct {
	Channel string
	Payload []byte
}

// Carrier is a Bus whose events for other instances can ride on the
// race's append to its log, where the two share a server (redisrace on
// one Redis): a move across instances is then one round trip to Redis,
// where its append and the bus's message were two (docs/performance.md).
type Carrier interface {
	// Carry encodes ev for the other instances' subscribers of topic. ok
	// is false while any event published before, on any topic, is still
	// on its way: one carried now could pass it, and a connection's events
	// on its own topic and on its seat's must keep their order.
	Carry(topic string, ev Event) (c Carried, ok bool)
}

// CarryingStore is a Store whose append also publishes events, once the
// move is in the log. published reports whether the move's events went
// out: by this call, or, when the log had the move already (a request sent
// again after its answer was lost), by the call that appended it.
type CarryingStore interface {
	AppendCarrying(ctx context.Context, raceID string, m MoveRecord, events []Carried) (published bool, err error)
}

// moveEvents is what a move (or resignation) tells the players: its
// seat's moved event, and the others' opponent update. carried marks the
// topics whose event the log's append published to other instances
// already.
type moveEvents struct {
	moved   *MovedEvent
	opp     *OpponentEvent
	carried []bool
}

// moveEventsLocked are the events of seat s's move rec, its game now g.
func (r *Race) moveEventsLocked(s int, rec MoveRecord, g *engine.Game) moveEvents {
	return moveEvents{
		moved: &MovedEvent{Race: r.id, ID: rec.ID, Seat: s, Seq: rec.Seq, Move: rec.Move, AtMs: rec.AtMs, View: g.View()},
		opp:   opponentEvent(r.id, s, g, r.seats[s].connected),
	}
}

// carryLocked encodes the events of ev that go to other instances (on the
// topics of seats followed elsewhere) for the log's append to publish,
// where the bus and the store can (Carrier, CarryingStore): all of them,
// or none when the bus cannot carry one of them now (they then go by the
// bus, as a move's events always did). Whether the append published them
// is the store's to say: a move sent again may have been published by the
// append that logged it first.
func (r *Race) carryLocked(s int, ev *moveEvents) []Carried {
	c, ok := r.fan.bus.(Carrier)
	if !ok || !r.fan.relays {
		return nil
	}
	if _, ok := r.store.(CarryingStore); !ok {
		return nil
	}
	var out []Carried
	for i := range r.seats {
		if !r.followedElsewhereLocked(i) {
			continue
		}
		var e Event = ev.opp
		if i == s {
			e = ev.moved
		}
		cr, ok := c.Carry(r.fan.topic(i), e)
		if !ok {
			return nil // the bus sends them all, after what it holds
		}
		out = append(out, cr)
	}
	return out
}

// appendLocked appends rec to the race's log, publishing carried with it,
// and marks in ev the topics whose events are out.
func (r *Race) appendLocked(rec MoveRecord, carried []Carried, ev *moveEvents) error {
	cs, ok := r.store.(CarryingStore)
	if !ok || !r.fan.relays {
		return r.moveLog.Append(context.Background(), rec)
	}
	published, err := cs.AppendCarrying(context.Background(), r.id, rec, carried)
	if err != nil || !published {
		return err
	}
	ev.carried = make([]bool, len(r.seats))
	for i := range r.seats {
		ev.carried[i] = r.followedElsewhereLocked(i)
	}
	return nil
}

// publishMoveLocked publishes a move's event on seat i's topic: to this
// instance's subscribers only when the log's append carried it to the
// others.
func (r *Race) publishMoveLocked(i int, ev Event, carried []bool) {
	if carried != nil && carried[i] {
		r.fan.publish(i, ev, false)
		return
	}
	r.publishLocked(i, ev)
}

// opponentEvent is the update the opponents of seat s of race id get
// when its game is g, its player connected or not.
func opponentEvent(id string, s int, g *engine.Game, connected bool) *OpponentEvent {
	return &OpponentEvent{Race: id, Seat: s, Counts: countsOf(g, connected)}
}

// countsOf is the Counts of game g, whose player is connected or not.
func countsOf(g *engine.Game, connected bool) Counts {
	return Counts{Score: g.Score(), Stock: g.StockLeft(), Status: g.Status(), Moves: g.Plies(), Connected: connected}
}

// takeBackLocked reports whether err refused an append of seat s's move
// because an instance holds the seat (HeldSeat), and the seat was taken
// back (holdLocked), for the request to be played again.
func (r *Race) takeBackLocked(s int, err error) bool {
	if r.takingBack || !errors.Is(err, ErrNotHolder) {
		return false
	}
	return r.holdLocked(s) == nil
}

// holdLocked gives seat s back to this instance, the race's owner, from
// its holder on another instance (HeldSeat), and counts the moves the
// holder logged, those still on their way here included: a request of
// the seat's (a resignation, a move forwarded) or the race's own timers
// came here, and the owner plays what comes to it. It reads the log with
// the race's lock held: this happens once a seat at most, when its
// player stops playing it from another instance.
func (r *Race) holdLocked(s int) error {
	hs, ok := r.store.(HoldingStore)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordsTimeout)
	defer cancel()
	err := hs.ReleaseSeat(ctx, r.id, s)
	var moves []MoveRecord
	if err == nil {
		moves, err = r.store.Moves(ctx, r.id)
	}
	if err == nil {
		_, err = r.applyRecordsLocked(moves, nil)
	}
	if err != nil {
		r.log.Warn().Err(err).Int("seat", s).Msg("seat not taken back from its holder")
		return err
	}
	r.seats[s].held = false
	r.log.Info().Int("seat", s).Msg("seat taken back from its holder")
	return nil
}
