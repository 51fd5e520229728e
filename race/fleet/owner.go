package fleet

import (
	"context"
	"errors"

	"sirtommy/race"
)

// OwnerEvent announces, on a race's OwnerTopic, that an instance took the
// race over. The connections on every instance attach to it again there:
// the new owner never saw them, and would send them nothing. It is not a
// protocol message.
type OwnerEvent struct {
	Race  string `json:"race"`
	Owner string `json:"owner"`
}

// EventType is "owner".
func (*OwnerEvent) EventType() string { return "owner" }

// OwnerTopic is the topic that announces a race's new owner.
func OwnerTopic(raceID string) string { return raceID + "/owner" }

// remoteSub stands, on the owner, for a connection on another instance:
// what the race delivers to it goes to the connection's topic.
type remoteSub struct {
	bus   race.Bus
	topic string
}

// Deliver publishes ev on the connection's topic.
func (s *remoteSub) Deliver(ev race.Event) { s.bus.Publish(s.topic, ev) }

// Remote is true: the connection's instance follows the race's topics.
func (*remoteSub) Remote() bool { return true }

// remoteConn is the owner's bookkeeping of one remote connection. Its
// requests are served on one worker at a time (forwarder), in order.
type remoteConn struct {
	sub     *remoteSub
	race    *race.Race
	seat    int
	player  bool
	unwatch func()
}

var _ conn = (*remoteConn)(nil)

func (rc *remoteConn) subscriber() race.Subscriber { return rc.sub }

func (rc *remoteConn) watching(cancel func()) {
	if rc.unwatch != nil {
		rc.unwatch()
	}
	rc.unwatch = cancel
}

// attach ties a connection the owner has not seen (it took the race over)
// to the race before a request that does not do so itself: a player
// resumes its seat with the request's token (the race sends it its new
// one in "joined"), a spectator watches.
func (rc *remoteConn) attach(r *race.Race, req *Request) {
	switch {
	case req.Token != "" && !rc.player:
		if t, err := r.Resume(req.Token, req.Player, "", rc.sub); err == nil {
			rc.player, rc.seat = true, t.Seat
		}
	case req.Watching && rc.unwatch == nil:
		rc.unwatch = r.Watch(rc.sub)
	}
}

// serve answers a request forwarded by another instance, as ops defines
// it, keeping what the owner knows of the connection.
func (f *Fleet) serve(req *Request) *Reply {
	r, err := f.svc.Get(req.Race)
	if err != nil || r.Stopped() {
		return &Reply{Err: &WireError{Code: CodeNotOwner, Message: "this instance does not run the race"}}
	}
	o, ok := ops[req.Op]
	if !ok {
		return &Reply{Err: &WireError{Code: race.CodeInternal, Message: "unknown request " + string(req.Op)}}
	}
	f.remoteMu.Lock()
	rc := f.remotes[req.Topic]
	if rc == nil {
		rc = &remoteConn{sub: &remoteSub{bus: f.bus, topic: req.Topic}, race: r}
		f.remotes[req.Topic] = rc
	}
	f.remoteMu.Unlock()
	if !o.attaches {
		rc.attach(r, req)
	}
	rep := &Reply{}
	switch {
	case req.Op == OpLeave && !rc.player: // nothing to leave
	case req.Op == OpLeave:
		req.Seat = rc.seat
		fallthrough
	default:
		rep = o.run(context.Background(), r, req, rc)
	}
	switch {
	case errors.Is(rep.local, race.ErrNotOwner):
		// The race's log refused the write: another instance owns the
		// race now, and the request, not applied, goes there.
		rep = &Reply{Err: &WireError{Code: CodeNotOwner, Message: "another instance runs the race now"}}
	case rep.Err != nil:
	case req.Op == OpJoin || req.Op == OpResume:
		rc.player, rc.seat = true, rep.Seat
	case req.Op == OpLeave:
		rc.player = false
	}
	if !rc.player && rc.unwatch == nil {
		f.dropRemote(req.Topic) // nothing to keep: a one-off request, or the connection left
	}
	return rep
}

// pruneRemotes forgets the connections of other instances to races that
// are over (their instance may have died without saying goodbye).
func (f *Fleet) pruneRemotes() {
	f.remoteMu.Lock()
	races := make(map[string]*race.Race, len(f.remotes))
	for topic, rc := range f.remotes {
		races[topic] = rc.race
	}
	f.remoteMu.Unlock()
	// The races are read without remoteMu, a leaf of the lock order.
	for topic, r := range races {
		if r.State().Over() {
			f.dropRemote(topic)
		}
	}
}

func (f *Fleet) dropRemote(topic string) {
	f.remoteMu.Lock()
	rc := f.remotes[topic]
	delete(f.remotes, topic)
	f.remoteMu.Unlock()
	if rc != nil && rc.unwatch != nil {
		rc.unwatch()
	}
}
