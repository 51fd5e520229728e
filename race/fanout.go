package race

// Fan-out: who receives a race's events. A race delivers to the
// connections on its own instance itself (own), queued under its lock and
// written once it is released (unlock); in Redis mode the bus relays a
// topic to other instances only while a connection there follows it.

import "slices"

// watchTopicIndex is the watch topic's place in Race.topics.
const watchTopicIndex = 2

// topicLocked is seat i's topic (0 or 1), or the watch topic
// (watchTopicIndex).
func (r *Race) topicLocked(i int) string {
	if r.topics[i] == "" {
		r.topics = [3]string{SeatTopic(r.id, 0), SeatTopic(r.id, 1), WatchTopic(r.id)}
	}
	return r.topics[i]
}

// publishLocked publishes ev on the race's topic i (a seat, or
// watchTopicIndex): to other instances too only while a connection there
// follows it (see LocalPublisher).
func (r *Race) publishLocked(i int, ev Event) {
	if r.relay == nil {
		r.deliverLocked(i, ev)
		return
	}
	topic := r.topicLocked(i)
	if !r.followedElsewhereLocked(i) {
		r.relay.PublishLocal(topic, ev)
		return
	}
	r.bus.Publish(topic, ev)
}

// publishEverywhereLocked publishes ev on the race's topic i, to other
// instances whether or not a connection there follows it yet.
func (r *Race) publishEverywhereLocked(i int, ev Event) {
	if r.relay == nil {
		r.deliverLocked(i, ev)
		return
	}
	r.bus.Publish(r.topicLocked(i), ev)
}

// deliverLocked hands ev to the race's own subscribers of topic i (own):
// queued, for unlock to write, where the subscriber can (Queuer).
func (r *Race) deliverLocked(i int, ev Event) {
	for _, sub := range r.own[i] {
		r.sendLocked(sub, ev)
	}
}

// sendLocked hands ev to sub: queued, for unlock to write, where sub can
// (Queuer); delivered otherwise.
func (r *Race) sendLocked(sub Subscriber, ev Event) {
	if q, ok := sub.(Queuer); ok {
		if q.Queue(ev) {
			r.flushes = append(r.flushes, q)
		}
		return
	}
	sub.Deliver(ev)
}

// followedElsewhereLocked reports whether a connection on another
// instance follows the race's topic i: the seat's connection is remote,
// or a spectator is.
func (r *Race) followedElsewhereLocked(i int) bool {
	if i == watchTopicIndex {
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
// there (see Remote): on the bus where it relays events, or among the
// race's own subscribers. cancel must be called with the race's lock
// held.
func (r *Race) subscribeLocked(i int, sub Subscriber) (cancel func()) {
	if isRemote(sub) {
		return func() {}
	}
	if r.relay != nil {
		return r.bus.Subscribe(r.topicLocked(i), ownEvents{sub})
	}
	r.own[i] = append(r.own[i], sub)
	return func() {
		if k := slices.Index(r.own[i], sub); k >= 0 {
			r.own[i] = slices.Delete(r.own[i], k, k+1)
		}
	}
}

// ownEvents passes a connection on the race's own instance only the
// events that instance published: the race's, never an old copy's on
// another instance (see Sourced).
type ownEvents struct{ sub Subscriber }

// Deliver passes ev on (a bus that does not know where events come from
// has only this instance's).
func (o ownEvents) Deliver(ev Event) { o.sub.Deliver(ev) }

// DeliverFrom passes ev on when this instance published it.
func (o ownEvents) DeliverFrom(origin string, ev Event) {
	if origin == "" {
		o.sub.Deliver(ev)
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
	flushes := append(room[:0], r.flushes...)
	clear(r.flushes)
	r.flushes = r.flushes[:0]
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
	for s := range 2 {
		if s != except {
			r.publishEverywhereLocked(s, r.snapshotLocked(s))
		}
	}
	// The spectators' state gets its boards when the feed reaches it.
	r.publishWatchLocked(r.snapshotLocked(-1))
}
