package fleet

import (
	"sync"
	"sync/atomic"

	"sirtommy/race"
)

// watchGate is feedGate's number for the spectators' topic: no seat's.
const watchGate = -2

// feedGate decides which of the race's topics reach a connection whose
// race runs elsewhere: a seat's topic once the owner has sent the
// connection its race.JoinedEvent for that seat (on the connection's own
// topic, before the seat's snapshot), the spectators' topic once the
// owner has sent a spectator its snapshot. An event published on the
// race's topic before that is in the snapshot, and the owner publishes
// both topics in one order, so nothing is missed and nothing shown twice;
// the other seat's events, which carry that player's cards, never pass.
//
// Once the race runs on this instance (it took it over), the gate passes
// nothing: the connection attaches to the race here and gets a snapshot.
type feedGate struct {
	svc  *race.Service
	race string
	seat atomic.Int32 // the seat whose topic passes; -1: none
	// mine is the connection's seat, as its last joined said (-1: none):
	// it stays while the gate is closed for a re-attachment, so that the
	// answers to the connection's own moves pass (gateTap).
	mine      atomic.Int32
	watch     atomic.Bool // the spectators' topic passes
	spectator atomic.Bool // the connection watches the race
	// owner is the instance the connection's last request went to (nil:
	// none yet): the race's events pass only from it (race.Sourced).
	owner atomic.Pointer[string]

	// An opponent's updates come from the owner and, for a move its
	// holder played here, from the holder (Fleet.Tell): oppMu guards the
	// last one passed of each seat (seen) and whether the final state
	// passed (ended), so that none passes twice, goes back, or comes
	// after the end.
	oppMu sync.Mutex
	opp   [race.MaxSeats]race.Counts
	seen  [race.MaxSeats]bool
	ended bool
}

// fresh reports whether an opponent's update ev may pass: it is newer
// than the last of its seat that did, and the race has not ended.
func (g *feedGate) fresh(ev *race.OpponentEvent) bool {
	if ev.Seat < 0 || ev.Seat >= race.MaxSeats {
		return false
	}
	g.oppMu.Lock()
	defer g.oppMu.Unlock()
	last := g.opp[ev.Seat]
	if g.ended || g.seen[ev.Seat] && (ev.Counts.Moves < last.Moves || ev.Counts == last) {
		return false
	}
	g.opp[ev.Seat], g.seen[ev.Seat] = ev.Counts, true
	return true
}

// passed notes an event that passed the gate: the final state ends the
// opponents' updates.
func (g *feedGate) passed(ev race.Event) {
	if st, ok := ev.(*race.StateEvent); ok && st.Result != nil {
		g.oppMu.Lock()
		g.ended = true
		g.oppMu.Unlock()
	}
}

// from reports whether an event published by instance origin may reach
// the connection: it comes from the instance the connection's requests
// go to.
func (g *feedGate) from(origin string) bool {
	o := g.owner.Load()
	return o == nil || *o == origin
}

func (g *feedGate) init(svc *race.Service, race string) {
	g.svc, g.race = svc, race
	g.seat.Store(-1)
	g.mine.Store(-1)
}

// shut closes the gate until the owner's fresh joined or snapshot
// opens it again (reattachRace); mine stays, for the answers to the
// connection's own moves.
func (g *feedGate) shut() {
	g.seat.Store(-1)
	g.watch.Store(false)
}

// elsewhere reports whether the race runs on another instance. It takes
// the Service's lock, a leaf: Deliver may be called under a race's lock.
func (g *feedGate) elsewhere() bool {
	r, err := g.svc.Get(g.race)
	return err != nil || r.Halted()
}

// connTap receives the connection's own topic: it opens the gate and
// passes everything on.
type connTap struct {
	g   *feedGate
	sub race.Subscriber
}

// DeliverFrom is Deliver for an event from the instance the
// connection's requests go to; it drops any other's.
func (t connTap) DeliverFrom(origin string, ev race.Event) {
	if t.g.from(origin) {
		t.Deliver(ev)
	}
}

// Deliver opens the gate on the owner's joined (a seat) or a spectator's
// snapshot, then passes ev on.
func (t connTap) Deliver(ev race.Event) {
	switch e := ev.(type) {
	case *race.JoinedEvent:
		t.g.seat.Store(int32(e.Seat))
		t.g.mine.Store(int32(e.Seat))
	case *race.StateEvent:
		if t.g.spectator.Load() {
			t.g.watch.Store(true)
		}
	case *race.ReplacedEvent:
		t.g.seat.Store(-1)
		t.g.mine.Store(-1)
	}
	t.g.passed(ev)
	t.sub.Deliver(ev)
}

// gateTap receives one of the race's topics for the connection, passing
// what its gate lets through.
type gateTap struct {
	g    *feedGate
	seat int32 // a seat, or watchGate
	sub  race.Subscriber
}

// DeliverFrom is Deliver for an event from the instance the
// connection's requests go to; it drops any other's.
func (t gateTap) DeliverFrom(origin string, ev race.Event) {
	if t.g.from(origin) {
		t.Deliver(ev)
	}
}

// Deliver passes ev on when the gate is open for the tap's topic, and
// the answer to one of the connection's own moves even while the gate is
// closed for a re-attachment: the snapshot that follows has the move,
// but not the answer its player waits for.
func (t gateTap) Deliver(ev race.Event) {
	open := t.seat == watchGate && t.g.watch.Load() || t.seat != watchGate && t.g.seat.Load() == t.seat
	if !open && t.seat != watchGate && t.g.mine.Load() == t.seat {
		m, ok := ev.(*race.MovedEvent)
		open = ok && m.ID != ""
	}
	if !open || !t.g.elsewhere() {
		return
	}
	if opp, ok := ev.(*race.OpponentEvent); ok && !t.g.fresh(opp) {
		return
	}
	t.g.passed(ev)
	t.sub.Deliver(ev)
}
