package fleet

import (
	"context"
	"errors"

	"sirtommy/race"
)

// Request is a connection's request forwarded to the instance that owns
// the race. Topic is the connection's own bus topic: the owner publishes
// there whatever it would deliver to the connection. Token and Watching
// let an owner that has never seen the connection (it took the race over)
// attach it before it serves the request.
type Request struct {
	Op    Op     `json:"op"`
	Race  string `json:"race"`
	Topic string `json:"topic"`
	Name  string `json:"name,omitempty"`
	ID    string `json:"id,omitempty"`
	Token string `json:"token,omitempty"`
	// Player is the lobby's player id of the connection ("" for none):
	// a reserved seat resumes only for its player.
	Player   string `json:"player,omitempty"`
	Seat     int    `json:"seat"`
	Move     string `json:"move,omitempty"`
	Watching bool   `json:"watching,omitempty"`

	// sending, when set, hears which instance the request goes to
	// (Sending).
	sending func(owner string)
}

// Sending is called before the request is sent to the instance owner:
// from then on the connection takes its race's events from owner alone
// (an instance that ran the race before may deliver old ones late, see
// race.Sourced).
func (r *Request) Sending(owner string) {
	if r.sending != nil {
		r.sending(owner)
	}
}

// Op names a Request.
type Op string

// The requests, each defined once in ops.
const (
	OpJoin    Op = "join"
	OpResume  Op = "resume"
	OpLeave   Op = "leave"
	OpWatch   Op = "watch"
	OpUnwatch Op = "unwatch"
	OpMove    Op = "move"
	OpResign  Op = "resign"
	OpRematch Op = "rematch"
	OpBerserk Op = "berserk"
	OpState   Op = "state"
	OpInfo    Op = "info"
)

// Reply answers a Request.
type Reply struct {
	Err   *WireError `json:"err,omitempty"`
	Seat  int        `json:"seat"`
	Token string     `json:"token,omitempty"`
	Next  string     `json:"next,omitempty"`
	State race.State `json:"state,omitempty"`
	Info  *race.Info `json:"info,omitempty"`
	// local is the error itself when the request was served on this
	// instance: the caller gets it unchanged, wrapped errors and all.
	local error
}

// err is the reply's error.
func (r *Reply) err() error {
	if r.local != nil {
		return r.local
	}
	return r.Err.err()
}

// conn is the connection a request comes from, as the side that serves
// it keeps it: the connection's own proxy when the race runs on its
// instance, the owner's remoteConn when it runs elsewhere.
type conn interface {
	// subscriber is what the race delivers the connection's events to.
	subscriber() race.Subscriber
	// watching ends the connection's watch, if any, and keeps cancel,
	// the end of its new one (nil: none).
	watching(cancel func())
}

// op is one request's definition, the same wherever the race runs: the
// owner serves it for a connection on another instance (Fleet.serve), a
// connection's own proxy when the race runs here (proxy.do).
type op struct {
	run func(ctx context.Context, r *race.Race, req *Request, c conn) *Reply
	// attaches is set for the requests that tie the connection to the
	// race or untie it (join, resume, leave, watch, unwatch): an owner
	// that never saw the connection attaches it first for the others.
	attaches bool
}

// ops are the requests.
var ops = map[Op]op{
	OpJoin: {attaches: true, run: func(_ context.Context, r *race.Race, req *Request, c conn) *Reply {
		t, err := r.Join(req.Name, req.ID, c.subscriber())
		return replyOf(&Reply{Seat: t.Seat, Token: t.Token}, err)
	}},
	OpResume: {attaches: true, run: func(_ context.Context, r *race.Race, req *Request, c conn) *Reply {
		t, err := r.Resume(req.Token, req.Player, req.ID, c.subscriber())
		return replyOf(&Reply{Seat: t.Seat, Token: t.Token}, err)
	}},
	OpLeave: {attaches: true, run: func(_ context.Context, r *race.Race, req *Request, c conn) *Reply {
		r.Leave(req.Seat, c.subscriber())
		return &Reply{}
	}},
	OpWatch: {attaches: true, run: func(_ context.Context, r *race.Race, _ *Request, c conn) *Reply {
		// Watching again (the connection's instance attaches it again: it
		// may have missed events) sends a fresh snapshot.
		c.watching(r.Watch(c.subscriber()))
		return &Reply{}
	}},
	OpUnwatch: {attaches: true, run: func(_ context.Context, _ *race.Race, _ *Request, c conn) *Reply {
		c.watching(nil)
		return &Reply{}
	}},
	OpMove: {run: func(_ context.Context, r *race.Race, req *Request, _ conn) *Reply {
		return replyOf(&Reply{}, r.Move(req.Seat, req.Move, req.ID))
	}},
	OpResign: {run: func(_ context.Context, r *race.Race, req *Request, _ conn) *Reply {
		return replyOf(&Reply{}, r.Resign(req.Seat, req.ID))
	}},
	OpRematch: {run: func(_ context.Context, r *race.Race, req *Request, _ conn) *Reply {
		next, err := r.Rematch(req.Seat)
		return replyOf(&Reply{Next: next}, err)
	}},
	OpBerserk: {run: func(_ context.Context, r *race.Race, req *Request, _ conn) *Reply {
		return replyOf(&Reply{}, r.Berserk(req.Seat))
	}},
	OpState: {run: func(_ context.Context, r *race.Race, _ *Request, _ conn) *Reply {
		return &Reply{State: r.State()}
	}},
	OpInfo: {run: func(ctx context.Context, r *race.Race, _ *Request, _ conn) *Reply {
		in, err := r.Info(ctx)
		return replyOf(&Reply{Info: &in}, err)
	}},
}

// replyOf is rep with err, as the wire carries it and as it is.
func replyOf(rep *Reply, err error) *Reply {
	rep.Err, rep.local = toWire(err), err
	return rep
}

// WireError is a *race.Error as a Reply carries it.
type WireError struct {
	Code    race.Code `json:"code"`
	Reason  string    `json:"reason,omitempty"`
	Message string    `json:"message"`
}

func toWire(err error) *WireError {
	if err == nil {
		return nil
	}
	var e *race.Error
	if errors.As(err, &e) {
		return &WireError{Code: e.Code, Reason: e.Reason, Message: e.Message}
	}
	return &WireError{Code: race.ErrorCode(err), Message: err.Error()}
}

func (w *WireError) err() error {
	if w == nil {
		return nil
	}
	return &race.Error{Code: w.Code, Reason: w.Reason, Message: w.Message}
}

// CodeNotOwner is a Reply's code when the instance asked does not run the
// race (it lost it, or never had it): the caller looks again.
const CodeNotOwner race.Code = "not-owner"
