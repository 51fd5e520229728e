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

// remoteConn is the owner's bookkeeping of one remote connection.
type remoteConn struct {
	sub     *remoteSub
	race    *race.Race
	seat    int
	player  bool
	unwatch func()
}

// serve answers a request forwarded by another instance.
func (f *Fleet) serve(req *Request) *Reply {
	r, err := f.svc.Get(req.Race)
	if err != nil || r.Stopped() {
		return &Reply{Err: &WireError{Code: CodeNotOwner, Message: "this instance does not run the race"}}
	}
	f.remoteMu.Lock()
	rc := f.remotes[req.Topic]
	if rc == nil {
		rc = &remoteConn{sub: &remoteSub{bus: f.bus, topic: req.Topic}, race: r}
		f.remotes[req.Topic] = rc
	}
	f.remoteMu.Unlock()
	// An owner that took the race over attaches the connection first.
	switch {
	case req.Op == OpJoin || req.Op == OpResume || req.Op == OpWatch || req.Op == OpLeave || req.Op == OpUnwatch:
	case req.Token != "" && !rc.player:
		// The race sends the connection its seat's new token in "joined".
		if t, err := r.Resume(req.Token, req.Player, "", rc.sub); err == nil {
			rc.player, rc.seat = true, t.Seat
		}
	case req.Watching && rc.unwatch == nil:
		rc.unwatch = r.Watch(rc.sub)
	}
	rep := &Reply{}
	switch req.Op {
	case OpWatch:
		// Watched already (the connection's instance attaches it again:
		// it may have missed events): watching again sends a fresh
		// snapshot.
		if rc.unwatch != nil {
			rc.unwatch()
		}
		rc.unwatch = r.Watch(rc.sub)
	case OpUnwatch:
		f.dropRemote(req.Topic)
	case OpLeave:
		if rc.player {
			req.Seat = rc.seat
			rep = ops[OpLeave](context.Background(), r, req, rc.sub)
		}
		f.dropRemote(req.Topic)
	default:
		do, ok := ops[req.Op]
		if !ok {
			rep.Err = &WireError{Code: race.CodeInternal, Message: "unknown request " + string(req.Op)}
			break
		}
		rep = do(context.Background(), r, req, rc.sub)
		if errors.Is(rep.local, race.ErrNotOwner) {
			// The race's log refused the write: another instance owns
			// the race now, and the request, not applied, goes there.
			rep = &Reply{Err: &WireError{Code: CodeNotOwner, Message: "another instance runs the race now"}}
		}
		if (req.Op == OpJoin || req.Op == OpResume) && rep.Err == nil {
			rc.player, rc.seat = true, rep.Seat
		}
	}
	if !rc.player && rc.unwatch == nil {
		f.dropRemote(req.Topic) // a one-off request (info, state): nothing to keep
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
