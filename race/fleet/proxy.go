package fleet

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"sirtommy/race"
)

// callTimeout bounds one request forwarded to a race's owner: it answers
// in a millisecond or two; past this the request is refused as
// unavailable, and the race taken over only if its lease is gone.
const callTimeout = 2 * time.Second

var _ race.Handle = (*proxy)(nil)

// proxy is the Handle of every connection in Redis mode. Each request
// goes to the race where it runs now: here (the connection attached to it
// as a resume or a watch would) or, forwarded, on the instance that owns
// it. When that instance dies, the next request once its lease has run
// out takes the race over here; when the race changes hands, the
// connection follows it (attach.go).
type proxy struct {
	f     *Fleet
	id    string
	topic string

	// mu guards the fields below; it is never held across a round trip
	// to Redis or another instance (call).
	mu  sync.Mutex
	sub race.Subscriber // the connection, through its tokenSpy once it plays
	// While the race runs elsewhere: the subscriptions of listen (the
	// connection's topic, and the race's topics it follows through gate).
	unsubs  []func()
	onTopic bool // the connection's own topic is subscribed
	onSeats bool // the seats' topics are
	// seatUnsubs end the subscriptions to each seat's topic (nil: none);
	// once the connection's seat is known the others are ended. Before,
	// every seat a race may have is followed: the connection does not
	// know its race's seat count, and a topic nobody publishes on costs
	// a subscription only.
	seatUnsubs [race.MaxSeats]func()
	onWatch    bool // the spectators' topic is
	// seatSub is the subscriber of the seats' topics while they are
	// subscribed (nil: not), for the updates a seat's holder here tells
	// the connection (Fleet.Tell): read without mu.
	seatSub  atomic.Pointer[race.Subscriber]
	gate     feedGate
	attached *race.Race // the local race the connection is attached to
	cancelW  func()     // attached's Watch cancel
	token    tokenBox   // the seat's latest token
	who      string     // the lobby's player id of the connection
	seat     int
	player   bool
	watched  bool
	// seatHere is set while the connection is its seat's subscriber on
	// attached: a race that ended before the connection could resume it
	// here never delivers it the seat's events.
	seatHere bool
	// following is set while the fleet lists the connection among its
	// race's (follow).
	following bool
	// reattaching is set while the connection is attached again
	// (reattach), reattachAgain when another cause came meanwhile.
	reattaching, reattachAgain bool

	// held plays the connection's seat here while its race runs on
	// another instance (race.HeldSeat, opened at the seat's first move
	// then; held.go); holdMu orders its opening and its moves, and is
	// taken before mu, never under it. noHold is set once the seat was
	// shut out of holding (taken back, or resumed elsewhere): its moves
	// go to the owner from then on.
	holdMu sync.Mutex
	held   atomic.Pointer[race.HeldSeat]
	noHold atomic.Bool
}

// follow lists the connection among its race's connections here, once:
// every connection, seated or watching, is attached again when its race
// changes hands (attach.go). Called with p.mu held.
func (p *proxy) follow() {
	if !p.following {
		p.following = true
		p.f.follow(p)
	}
}

// unfollow takes the connection off its race's connections. Called with
// p.mu held.
func (p *proxy) unfollow() {
	if p.following {
		p.following = false
		p.f.unfollow(p)
	}
}

// tokenSpy stands for a player's connection: it passes every event on,
// and keeps the token of each race.JoinedEvent so that the proxy resumes the
// seat with the token that works now (a resume spends the one before).
type tokenSpy struct {
	p   *proxy
	sub race.Subscriber
}

// Deliver keeps a race.JoinedEvent's token and passes ev on: a state
// of the seat held here with the holder's view when the owner's has not
// counted its last moves yet (held.go).
func (t *tokenSpy) Deliver(ev race.Event) {
	switch e := ev.(type) {
	case *race.JoinedEvent:
		if e.Race == t.p.id {
			t.p.token.set(e.Token)
		}
	case *race.StateEvent:
		ev = t.p.heldView(e)
	}
	t.sub.Deliver(ev)
}

// playerSub is the connection's subscriber for a seat: sub behind a
// tokenSpy, made once per connection. Called with p.mu held.
func (p *proxy) playerSub(sub race.Subscriber) race.Subscriber {
	if spy, ok := p.sub.(*tokenSpy); ok && spy.sub == sub {
		return spy
	}
	return &tokenSpy{p: p, sub: sub}
}

// ID is the race's id.
func (p *proxy) ID() string { return p.id }

// here returns the race when this instance runs it, attaching the
// connection to it first when it was attached elsewhere. Called with p.mu
// held.
func (p *proxy) here() *race.Race {
	r, err := p.f.svc.Get(p.id)
	if err != nil || r.Stopped() {
		p.detach()
		return nil
	}
	if r == p.attached {
		return r
	}
	p.detach()
	p.attached = r
	p.unlisten()
	switch {
	case p.player && p.sub != nil:
		_, err := r.Resume(p.token.get(), p.who, "", p.sub)
		if err != nil {
			p.f.deps.Log.Debug().Err(err).Str("race", p.id).Msg("reattach")
		}
		p.seatHere = err == nil
	case p.watched && p.sub != nil:
		p.cancelW = r.Watch(p.sub)
	}
	return r
}

// detach takes the connection off a local race that no longer runs here,
// so that it gets the race's events only from where the race runs now.
func (p *proxy) detach() {
	if p.cancelW != nil {
		p.cancelW()
	}
	if p.attached != nil && p.player && p.sub != nil {
		p.attached.Detach(p.seat, p.sub)
	}
	p.attached, p.cancelW, p.seatHere = nil, nil, false
}

// listen subscribes the connection, while its race runs elsewhere, to its
// own topic (what the owner sends this connection alone: its replies'
// joined and snapshot, replaced) and to the race's topics it follows,
// seats for a player, the spectators' topic for a spectator, and waits
// until the subscriptions are live, so that the owner's first event
// reaches it. The owner publishes each event once on the race's topic;
// every instance with connections to the race subscribes to it once
// (the Bus shares a channel's subscription) and delivers it to each of
// them here: a remote connection costs the owner nothing per event.
func (p *proxy) listen(seats, watch bool) (added bool) {
	if p.sub == nil {
		return false
	}
	bus := p.f.bus
	if !p.onTopic {
		p.unsubs = append(p.unsubs, bus.Subscribe(p.topic, connTap{g: &p.gate, sub: p.sub}))
		p.onTopic, added = true, true
	}
	if seats && !p.onSeats {
		for s := range p.seatUnsubs {
			p.seatUnsubs[s] = bus.Subscribe(race.SeatTopic(p.id, s), gateTap{g: &p.gate, seat: int32(s), sub: p.sub})
		}
		sub := p.sub
		p.seatSub.Store(&sub)
		p.onSeats, added = true, true
	}
	if watch && !p.onWatch {
		p.gate.spectator.Store(true)
		p.unsubs = append(p.unsubs, bus.Subscribe(race.WatchTopic(p.id), gateTap{g: &p.gate, seat: watchGate, sub: p.sub}))
		p.onWatch, added = true, true
	}
	return added
}

// sync waits until the bus's subscriptions made so far are live, so that
// the owner's first event after a request reaches the connection. It
// takes no lock: it waits for Redis.
func (p *proxy) sync() {
	if sy, ok := p.f.bus.(Syncer); ok {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		_ = sy.Sync(ctx)
	}
}

// unlisten ends listen's subscriptions: the race runs here now (the
// connection is attached to it), or the connection is done with it.
func (p *proxy) unlisten() {
	for _, f := range p.unsubs {
		f()
	}
	for s, f := range p.seatUnsubs {
		if f != nil {
			f()
			p.seatUnsubs[s] = nil
		}
	}
	p.unsubs, p.onTopic, p.onSeats, p.onWatch = nil, false, false, false
	p.seatSub.Store(nil)
}

// seated ends the subscriptions to the topics of the seats other than s,
// once the owner has given the connection seat s: before the seat was
// known every seat's was followed, but the other seats' events (those
// players' cards) never pass the gate, and each cost this instance a
// decode.
func (p *proxy) seated(s int) {
	for o, f := range p.seatUnsubs {
		if o != s && f != nil {
			f()
			p.seatUnsubs[o] = nil
		}
	}
}

// call forwards req to the race's owner, taking the race over when it
// has none (its lease gone), or reading it from its record when it is
// over; when the race runs here it returns (nil, race, nil). It holds
// p.mu only to look where the race runs and attach or listen (prepare),
// never across a round trip: the forward, the bus's sync and a takeover
// wait for Redis.
func (p *proxy) call(req *Request) (*Reply, *race.Race, error) {
	req.Race, req.Topic = p.id, p.topic
	req.sending = func(owner string) { p.gate.owner.Store(&owner) }
	for range 3 {
		r, added := p.prepare(req)
		if r != nil {
			return nil, r, nil
		}
		if added {
			p.sync()
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		rep, err := p.f.fwd.call(ctx, req)
		cancel()
		if err == nil && (rep.Err == nil || rep.Err.Code != CodeNotOwner) {
			return rep, nil, nil
		}
		if err != nil && !errors.Is(err, ErrNoOwner) && !errors.Is(err, ErrOwnerIsMe) && !errors.Is(err, ErrOwnerChanged) {
			return nil, nil, &race.Error{Code: race.CodeUnavailable, Message: "the race's instance cannot be reached; try again shortly", Err: err}
		}
		// The race has no live owner (or it is this instance, or the
		// instance asked lost it): take it over when its lease is free,
		// read it when it is over, else look again.
		ctx, cancel = context.WithTimeout(context.Background(), clusterTimeout)
		_, err = p.f.takeOver(ctx, p.id)
		if errors.Is(err, ErrOver) {
			_, err = p.f.openOver(ctx, p.id)
		}
		cancel()
		if err != nil {
			return nil, nil, &race.Error{Code: race.CodeUnavailable, Message: "the race cannot be taken over now; try again shortly", Err: err}
		}
	}
	return nil, nil, race.Errorf(race.CodeUnavailable, "the race's owner keeps changing; try again shortly")
}

// prepare looks where the race runs, under p.mu: here, it attaches the
// connection to it and returns it; elsewhere, it listens for the race's
// events there (added: something was subscribed) and fills req with what
// an owner that never saw the connection needs to attach it.
func (p *proxy) prepare(req *Request) (r *race.Race, added bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.here(); r != nil {
		return r, false
	}
	if p.player && req.Op != OpResume { // a resume carries its own token
		req.Token, req.Player = p.token.get(), p.who
	}
	req.Watching = p.watched
	if req.Op == OpUnwatch {
		return nil, false // the connection stops listening
	}
	return nil, p.listen(p.player || req.Op == OpJoin || req.Op == OpResume, p.watched || req.Op == OpWatch)
}

// do serves req on the race: here, as the owner would (the request's
// one definition is in ops), or forwarded to the race's owner.
func (p *proxy) do(ctx context.Context, req *Request) *Reply {
	rep, r, err := p.call(req)
	switch {
	case r != nil && (req.Op == OpMove || req.Op == OpResign) && !p.isSeatHere() && r.State().Over():
		// The race ended as its owner went, before this connection could
		// resume it here: a request sent again would be answered by the
		// seat's event, which reaches only the seat's subscriber. The
		// connection has the final state (attachAgain).
		return replyOf(&Reply{}, race.Errorf(race.CodeRaceOver, "the race is over"))
	case r != nil:
		rep := ops[req.Op].run(ctx, r, req, p)
		if (req.Op == OpJoin || req.Op == OpResume) && rep.local == nil {
			p.mu.Lock()
			p.seatHere = true
			p.mu.Unlock()
		}
		return rep
	case err != nil:
		return replyOf(&Reply{}, err)
	}
	return rep
}

var _ conn = (*proxy)(nil)

// subscriber is the connection's subscriber.
func (p *proxy) subscriber() race.Subscriber {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sub
}

// watching ends the connection's watch of the race here, if any, and
// keeps cancel.
func (p *proxy) watching(cancel func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancelW != nil {
		p.cancelW()
	}
	p.cancelW = cancel
}

// isSeatHere reads seatHere.
func (p *proxy) isSeatHere() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seatHere
}

// State is where the race stands.
func (p *proxy) State() race.State {
	rep := p.do(context.Background(), &Request{Op: OpState})
	if rep.local != nil {
		return race.Running // unknown: not over, so the connection keeps its role
	}
	return rep.State
}

// Join takes a free seat.
func (p *proxy) Join(name, id string, sub race.Subscriber) (race.Ticket, error) {
	p.setPlayerSub(sub)
	rep := p.do(context.Background(), &Request{Op: OpJoin, Name: name, ID: id})
	if err := rep.err(); err != nil {
		return race.Ticket{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.player, p.seat = true, rep.Seat
	p.token.set(rep.Token)
	p.seated(rep.Seat)
	p.follow()
	return race.Ticket{Seat: rep.Seat, Token: rep.Token}, nil
}

// Resume takes a seat back, for the lobby's player who (or "").
func (p *proxy) Resume(token, who, id string, sub race.Subscriber) (race.Ticket, error) {
	p.setPlayerSub(sub)
	rep := p.do(context.Background(), &Request{Op: OpResume, Token: token, Player: who, ID: id})
	if err := rep.err(); err != nil {
		return race.Ticket{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.player, p.who, p.seat = true, who, rep.Seat
	p.token.set(rep.Token)
	p.seated(rep.Seat)
	p.follow()
	return race.Ticket{Seat: rep.Seat, Token: rep.Token}, nil
}

// setPlayerSub makes sub, behind its tokenSpy, the connection's
// subscriber.
func (p *proxy) setPlayerSub(sub race.Subscriber) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sub = p.playerSub(sub)
}

// setSub makes sub the connection's subscriber.
func (p *proxy) setSub(sub race.Subscriber) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sub = sub
}

// Leave gives the seat up (the grace period starts where the race runs).
func (p *proxy) Leave(s int, _ race.Subscriber) {
	p.dropHeld()
	p.do(context.Background(), &Request{Op: OpLeave, Seat: s}) // here, the seat's subscriber is the connection's tokenSpy
	p.mu.Lock()
	defer p.mu.Unlock()
	p.player, p.seatHere = false, false
	p.gate.seat.Store(-1)
	p.unlisten()
	if !p.watched {
		p.unfollow()
	}
}

// Watch subscribes a spectator.
func (p *proxy) Watch(sub race.Subscriber) (cancel func()) {
	p.setSub(sub)
	if err := p.do(context.Background(), &Request{Op: OpWatch}).err(); err != nil {
		p.f.deps.Log.Warn().Err(err).Str("race", p.id).Msg("watch")
	}
	p.mu.Lock()
	p.watched = true
	p.follow()
	p.mu.Unlock()
	var once sync.Once
	return func() { once.Do(p.unwatch) }
}

// unwatch ends the spectator's watch, here or at the race's owner.
func (p *proxy) unwatch() {
	p.mu.Lock()
	p.watched = false
	if !p.player {
		p.unfollow()
	}
	watching := p.cancelW != nil || p.onTopic
	p.mu.Unlock()
	if watching {
		p.do(context.Background(), &Request{Op: OpUnwatch})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gate.watch.Store(false)
	p.gate.spectator.Store(false)
	p.unlisten()
}

// Move plays a move: on the seat's holder here while the race runs
// elsewhere (held.go), else where the race runs.
func (p *proxy) Move(s int, text, id string) error {
	if done, err := p.moveHeld(s, text, id); done {
		return err
	}
	return p.do(context.Background(), &Request{Op: OpMove, Seat: s, Move: text, ID: id}).err()
}

// Resign resigns, where the race runs: its owner takes the seat back
// from the holder here first.
func (p *proxy) Resign(s int, id string) error {
	p.dropHeld()
	return p.do(context.Background(), &Request{Op: OpResign, Seat: s, ID: id}).err()
}

// Rematch asks for a rematch.
func (p *proxy) Rematch(s int) (string, error) {
	p.dropHeld()
	rep := p.do(context.Background(), &Request{Op: OpRematch, Seat: s})
	return rep.Next, rep.err()
}

// Berserk halves seat s's time, wherever the race runs; the seat's next
// move here opens its holder again, which learns of it from the record.
func (p *proxy) Berserk(s int) error {
	p.dropHeld()
	return p.do(context.Background(), &Request{Op: OpBerserk, Seat: s}).err()
}

// Info is the race's public record.
func (p *proxy) Info(ctx context.Context) (race.Info, error) {
	rep := p.do(ctx, &Request{Op: OpInfo})
	if err := rep.err(); err != nil || rep.Info == nil {
		return race.Info{}, err
	}
	return *rep.Info, nil
}
