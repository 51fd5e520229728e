package race

// Fan-out: who receives a race's events, and how they reach them.

import "slices"

// fanout is who receives a race's events, by topic: its seats' (0 to n-1
// for n seats) and its spectators' (n: watch). On a bus that relays events to
// other instances (Bus.Relays: Redis mode) every event goes on the bus,
// and to other instances too only while a connection there follows its
// topic (publish's elsewhere). On any other bus the race's own
// connections are all a topic has, and the fan-out delivers to them
// itself (own): looking them up on the bus for every event was a
// twentieth of a one-instance server's CPU (docs/performance.md). Either
// way a subscriber that can queue (Queuer) has the event queued, and the
// race's unlock writes it (take) once its lock is released, so that no
// socket write holds the lock (on a relaying bus, through ownEvents). Its
// methods run with the race's lock held.
type fanout struct {
	bus    Bus
	relays bool
	id     string
	// topics are the topics' names, made once rather than on every
	// publish.
	topics []string
	own    [][]Subscriber
	// flushes are the subscribers whose queued events are still to be
	// written (Queuer.Flush), in the order they were first queued.
	flushes []Queuer
}

// newFanout is the fan-out of race id, of seats seats, on bus.
func newFanout(id string, bus Bus, seats int) fanout {
	return fanout{bus: bus, relays: bus != nil && bus.Relays(), id: id, own: make([][]Subscriber, seats+1)}
}

// watch is the watch topic's index: after the seats'.
func (f *fanout) watch() int { return len(f.own) - 1 }

// topic is topic i's name.
func (f *fanout) topic(i int) string {
	if f.topics == nil {
		f.topics = make([]string, len(f.own))
		for s := range f.watch() {
			f.topics[s] = SeatTopic(f.id, s)
		}
		f.topics[f.watch()] = WatchTopic(f.id)
	}
	return f.topics[i]
}

// publish sends ev on topic i: to other instances too only if elsewhere
// (a connection there follows the topic).
func (f *fanout) publish(i int, ev Event, elsewhere bool) {
	switch {
	case !f.relays:
		for _, sub := range f.own[i] {
			f.send(sub, ev)
		}
	case elsewhere:
		f.bus.Publish(f.topic(i), ev)
	default:
		f.bus.PublishLocal(f.topic(i), ev)
	}
}

// send hands ev to sub: queued, for the race's unlock to write, where sub
// can (Queuer); delivered otherwise.
func (f *fanout) send(sub Subscriber, ev Event) {
	if q, ok := sub.(Queuer); ok {
		if q.Queue(ev) {
			f.flushes = append(f.flushes, q)
		}
		return
	}
	sub.Deliver(ev)
}

// take hands the subscribers with queued events to room (for unlock to
// write once the lock is released) and forgets them.
func (f *fanout) take(room []Queuer) []Queuer {
	room = append(room, f.flushes...)
	clear(f.flushes)
	f.flushes = f.flushes[:0]
	return room
}

// subscribe subscribes sub, a connection on this instance, to topic i:
// on the bus where it relays events, or among the race's own
// subscribers. cancel must be called with the race's lock held.
func (f *fanout) subscribe(i int, sub Subscriber) (cancel func()) {
	if f.relays {
		return f.bus.Subscribe(f.topic(i), ownEvents{sub: sub, fan: f})
	}
	f.own[i] = append(f.own[i], sub)
	return func() {
		if k := slices.Index(f.own[i], sub); k >= 0 {
			f.own[i] = slices.Delete(f.own[i], k, k+1)
		}
	}
}

// publishLocked publishes ev on the race's topic i (a seat, or
// fanout.watch): to other instances too only while a connection there
// follows it.
func (r *Race) publishLocked(i int, ev Event) { r.fan.publish(i, ev, r.followedElsewhereLocked(i)) }

// publishEverywhereLocked publishes ev on the race's topic i, to other
// instances whether or not a connection there follows it yet.
func (r *Race) publishEverywhereLocked(i int, ev Event) { r.fan.publish(i, ev, true) }

// sendLocked hands ev to sub alone (fanout.send).
func (r *Race) sendLocked(sub Subscriber, ev Event) { r.fan.send(sub, ev) }

// followedElsewhereLocked reports whether a connection on another
// instance follows the race's topic i: the seat's connection is remote,
// or a spectator is.
func (r *Race) followedElsewhereLocked(i int) bool {
	if i == r.fan.watch() {
		return r.remoteSpectators > 0
	}
	return isRemote(r.seats[i].sub)
}

// isRemote reports whether sub stands for a connection on another
// instance.
func isRemote(sub Subscriber) bool {
	rs, ok := sub.(Remote)
	return ok && rs.Remote()
}

// subscribeLocked subscribes sub to the race's topic i, unless it stands
// for a connection on another instance, which follows the topic from
// there (see Remote). cancel must be called with the race's lock held.
func (r *Race) subscribeLocked(i int, sub Subscriber) (cancel func()) {
	if isRemote(sub) {
		return func() {}
	}
	return r.fan.subscribe(i, sub)
}

// ownEvents passes a connection on the race's own instance only the
// events that instance published: the race's, never an old copy's on
// another instance (see Sourced). The bus hands it those from inside the
// race's publish, with the race's lock held, so it sends them as the
// race's own subscribers get theirs (fanout.send): queued where the
// connection can queue, and written by the race's unlock, so that no
// socket write holds the lock in Redis mode either.
type ownEvents struct {
	sub Subscriber
	fan *fanout
}

// Deliver passes ev on (a bus that does not know where events come from
// has only this instance's).
func (o ownEvents) Deliver(ev Event) { o.fan.send(o.sub, ev) }

// DeliverFrom passes ev on when this instance published it.
func (o ownEvents) DeliverFrom(origin string, ev Event) {
	if origin == "" {
		o.fan.send(o.sub, ev)
	}
}

// unlock releases the race's lock, then writes the events queued under
// it (flushes) and runs the work queued under it (later), in the order
// they were queued, in the caller's goroutine. Every locked section that
// may publish an event, end the race or make its next one unlocks with
// it.
func (r *Race) unlock() {
	later := r.later
	r.later = nil
	// The writes queued under the lock go first, as they were queued, so
	// that a race's last events reach the clients before its end's work.
	var room [4]Queuer
	flushes := r.fan.take(room[:0])
	r.mu.Unlock()
	for _, q := range flushes {
		q.Flush()
	}
	for _, f := range later {
		f()
	}
}

// publishStateLocked sends each audience but seat except (-1: none) its
// StateEvent.
func (r *Race) publishStateLocked(except int) {
	for s := range r.seats {
		if s != except {
			r.publishEverywhereLocked(s, r.snapshotLocked(s))
		}
	}
	// The spectators' state gets its boards when the feed reaches it.
	r.publishWatchLocked(r.snapshotLocked(-1))
}
