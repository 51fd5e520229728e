package race

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// callTimeout bounds one request forwarded to a race's owner: it answers
// in a millisecond or two; past this the owner is taken as gone.
const callTimeout = 2 * time.Second

// Handle is what a connection holds of a race: the race itself when this
// instance runs it, or a proxy that forwards every request to the instance
// that does (Redis mode). Both behave alike; Race documents the methods.
type Handle interface {
	ID() string
	State() State
	Join(name, id string, sub Subscriber) (Ticket, error)
	Resume(token, player, id string, sub Subscriber) (Ticket, error)
	Leave(s int, sub Subscriber)
	Watch(sub Subscriber) (cancel func())
	Move(s int, text, id string) error
	Resign(s int, id string) error
	Rematch(s int) (string, error)
	Info(ctx context.Context) (Info, error)
}

var (
	_ Handle = (*Race)(nil)
	_ Handle = (*proxy)(nil)
)

// Request is a connection's request forwarded to the instance that owns
// the race. Topic is the connection's own bus topic: the owner publishes
// there whatever it would deliver to the connection. Token and Watching
// let an owner that has never seen the connection (it took the race over)
// attach it before it serves the request.
type Request struct {
	Op    string `json:"op"` // join resume leave watch unwatch move resign rematch state info
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
}

// Reply answers a Request.
type Reply struct {
	Err   *WireError `json:"err,omitempty"`
	Seat  int        `json:"seat"`
	Token string     `json:"token,omitempty"`
	Next  string     `json:"next,omitempty"`
	State State      `json:"state,omitempty"`
	Info  *Info      `json:"info,omitempty"`
}

// WireError is an *Error as a Reply carries it.
type WireError struct {
	Code    Code   `json:"code"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
}

func toWire(err error) *WireError {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return &WireError{Code: e.Code, Reason: e.Reason, Message: e.Message}
	}
	return &WireError{Code: ErrorCode(err), Message: err.Error()}
}

func (w *WireError) err() error {
	if w == nil {
		return nil
	}
	return &Error{Code: w.Code, Reason: w.Reason, Message: w.Message}
}

// OwnerEvent announces, on a race's OwnerTopic, that an instance took the
// race over (Redis mode). The spectators' connections on every instance
// watch it again there: the new owner never saw them, and would send them
// nothing. It is not a protocol message.
type OwnerEvent struct {
	Race  string `json:"race"`
	Owner string `json:"owner"`
}

// EventType is "owner".
func (*OwnerEvent) EventType() string { return "owner" }

// OwnerTopic is the topic that announces a race's new owner.
func OwnerTopic(raceID string) string { return raceID + "/owner" }

// Syncer is implemented by buses whose subscriptions take effect later
// (redisrace.Bus): Sync waits until the ones made so far are live.
type Syncer interface {
	Sync(ctx context.Context) error
}

// remoteSub stands, on the owner, for a connection on another instance:
// what the race delivers to it goes to the connection's topic.
type remoteSub struct {
	bus   Bus
	topic string
}

// Deliver publishes ev on the connection's topic.
func (s *remoteSub) Deliver(ev Event) { s.bus.Publish(s.topic, ev) }

// Remote is true: the connection's instance follows the race's topics.
func (*remoteSub) Remote() bool { return true }

// remoteConn is the owner's bookkeeping of one remote connection.
type remoteConn struct {
	sub     *remoteSub
	race    *Race
	seat    int
	player  bool
	unwatch func()
}

// Open finds a race for a connection. In memory mode it is the race
// itself. In Redis mode it is a proxy that takes each request to wherever
// the race runs (here, or forwarded to its owner, or here again after
// taking it over from a dead owner); a finished race is rebuilt here for
// its record.
func (s *Service) Open(ctx context.Context, id string) (Handle, error) {
	r, err := s.Get(id)
	switch {
	case s.deps.Cluster == nil && err != nil:
		return nil, err
	case s.deps.Cluster == nil || err == nil && r.State().Over():
		return r, nil
	case err == nil:
		return s.newProxy(id), nil
	}
	ctx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()
	rec, ok, err := s.deps.Cluster.Load(ctx, id)
	if err != nil {
		return nil, &Error{Code: CodeUnavailable, Message: "the race's record cannot be read now; try again shortly", Err: err}
	}
	if !ok {
		return nil, Errorf(CodeNoSuchRace, "no race has id %q", id)
	}
	if rec.State.Over() {
		return s.restoreOver(ctx, rec)
	}
	return s.newProxy(id), nil
}

// newProxy is a connection's Handle of live race id, not yet attached.
func (s *Service) newProxy(id string) *proxy {
	p := &proxy{svc: s, id: id, topic: s.connTopic(id)}
	p.gate.init(s, id)
	return p
}

func (s *Service) connTopic(raceID string) string {
	return raceID + "/conn/" + s.deps.Cluster.Instance() + "/" + strconv.FormatUint(s.nextConn.Add(1), 10)
}

// restoreOver rebuilds a finished race here for its record and replay.
func (s *Service) restoreOver(ctx context.Context, rec *Record) (*Race, error) {
	moves, err := s.deps.Store.Moves(ctx, rec.ID)
	if err != nil {
		return nil, &Error{Code: CodeUnavailable, Message: "the race's log cannot be read now", Err: err}
	}
	r, err := Restore(rec, moves, s.deps)
	if err != nil {
		return nil, &Error{Code: CodeInternal, Message: "the race could not be rebuilt", Err: err}
	}
	r.released.Store(true) // a copy for reading: this instance holds no lease on it
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.races[rec.ID]; ok {
		return old, nil
	}
	s.races[rec.ID] = r
	return r, nil
}

// takeOver makes this instance the owner of live race id when it has none
// (or its owner, gone, is dead) and rebuilds it here. It returns nil, nil
// when another instance owns the race.
func (s *Service) takeOver(ctx context.Context, id, gone string) (*Race, error) {
	s.adoptMu.Lock()
	defer s.adoptMu.Unlock()
	if r, err := s.Get(id); err == nil {
		return r, nil
	}
	s.mu.Lock()
	draining := s.draining
	s.mu.Unlock()
	if draining {
		return nil, nil // shutting down: the other instances take it
	}
	c := s.deps.Cluster
	ok, err := c.Claim(ctx, id, gone)
	if err != nil || !ok {
		return nil, err
	}
	rec, found, err := c.Load(ctx, id)
	if err == nil && !found {
		err = errors.New("race record vanished")
	}
	if err != nil {
		_ = c.Release(ctx, id)
		return nil, err
	}
	moves, err := s.deps.Store.Moves(ctx, id)
	if err != nil {
		_ = c.Release(ctx, id)
		return nil, err
	}
	r, err := Restore(rec, moves, s.deps)
	if err != nil {
		_ = c.Release(ctx, id)
		return nil, err
	}
	r.spawn = s.create
	s.mu.Lock()
	if s.draining { // Drain began meanwhile and will not hand this race over
		s.mu.Unlock()
		_ = c.Handover(ctx, id)
		return nil, nil
	}
	s.races[id] = r
	s.mu.Unlock()
	if !r.state.Over() {
		r.mu.Lock()
		r.rearmLocked(rec)
		r.unlock()
	}
	s.deps.Log.Info().Str("race", id).Str("from", gone).Int("moves", len(moves)).Msg("race taken over")
	s.deps.Bus.Publish(OwnerTopic(id), &OwnerEvent{Race: id, Owner: c.Instance()})
	return r, nil
}

// serveRequest answers a request forwarded by another instance.
func (s *Service) serveRequest(req *Request) *Reply {
	r, err := s.Get(req.Race)
	if err != nil || r.isStopped() {
		return &Reply{Err: &WireError{Code: codeNotOwner, Message: "this instance does not run the race"}}
	}
	s.remoteMu.Lock()
	rc := s.remotes[req.Topic]
	if rc == nil {
		rc = &remoteConn{sub: &remoteSub{bus: s.deps.Bus, topic: req.Topic}, race: r}
		s.remotes[req.Topic] = rc
	}
	s.remoteMu.Unlock()
	// An owner that took the race over attaches the connection first.
	switch {
	case req.Op == "join" || req.Op == "resume" || req.Op == "watch" || req.Op == "leave" || req.Op == "unwatch":
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
	case "join":
		t, err := r.Join(req.Name, req.ID, rc.sub)
		rep.Err, rep.Seat, rep.Token = toWire(err), t.Seat, t.Token
		if err == nil {
			rc.player, rc.seat = true, t.Seat
		}
	case "resume":
		t, err := r.Resume(req.Token, req.Player, req.ID, rc.sub)
		rep.Err, rep.Seat, rep.Token = toWire(err), t.Seat, t.Token
		if err == nil {
			rc.player, rc.seat = true, t.Seat
		}
	case "leave":
		if rc.player {
			r.Leave(rc.seat, rc.sub)
		}
		s.dropRemote(req.Topic)
	case "watch":
		if rc.unwatch == nil {
			rc.unwatch = r.Watch(rc.sub)
		}
	case "unwatch":
		s.dropRemote(req.Topic)
	case "move":
		rep.Err = toWire(r.Move(req.Seat, req.Move, req.ID))
	case "resign":
		rep.Err = toWire(r.Resign(req.Seat, req.ID))
	case "rematch":
		next, err := r.Rematch(req.Seat)
		rep.Err, rep.Next = toWire(err), next
	case "state":
		rep.State = r.State()
	case "info":
		in, err := r.Info(context.Background())
		rep.Err, rep.Info = toWire(err), &in
	default:
		rep.Err = &WireError{Code: CodeInternal, Message: "unknown request " + req.Op}
	}
	if !rc.player && rc.unwatch == nil {
		s.dropRemote(req.Topic) // a one-off request (info, state): nothing to keep
	}
	return rep
}

// pruneRemotes forgets the connections of other instances to races that
// are over (their instance may have died without saying goodbye).
func (s *Service) pruneRemotes() {
	s.remoteMu.Lock()
	races := make(map[string]*Race, len(s.remotes))
	for topic, rc := range s.remotes {
		races[topic] = rc.race
	}
	s.remoteMu.Unlock()
	// The races are read without remoteMu, a leaf of the lock order.
	for topic, r := range races {
		if r.State().Over() {
			s.dropRemote(topic)
		}
	}
}

func (s *Service) dropRemote(topic string) {
	s.remoteMu.Lock()
	rc := s.remotes[topic]
	delete(s.remotes, topic)
	s.remoteMu.Unlock()
	if rc != nil && rc.unwatch != nil {
		rc.unwatch()
	}
}

// codeNotOwner is a Reply's code when the instance asked does not run the
// race (it lost it, or never had it): the caller looks again.
const codeNotOwner Code = "not-owner"

// proxy is the Handle of every connection in Redis mode. Each request
// goes to the race where it runs now: here (the connection attached to it
// as a resume or a watch would) or, forwarded, on the instance that owns
// it. When that instance dies, the next request takes the race over here;
// when this instance loses a race, the next request follows it.
type proxy struct {
	svc   *Service
	id    string
	topic string

	mu  sync.Mutex
	sub Subscriber // the connection, through its tokenSpy once it plays
	// While the race runs elsewhere: the subscriptions of listen (the
	// connection's topic, and the race's topics it follows through gate).
	unsubs   []func()
	onTopic  bool // the connection's own topic is subscribed
	onSeats  bool // the seats' topics are
	onWatch  bool // the spectators' topic is
	gate     feedGate
	attached *Race    // the local race the connection is attached to
	cancelW  func()   // attached's Watch cancel
	token    tokenBox // the seat's latest token
	who      string   // the lobby's player id of the connection
	seat     int
	player   bool
	watched  bool
	// unsubOwner ends the connection's subscription to the race's
	// OwnerTopic.
	unsubOwner func()
}

// ownerSub is a connection's proxy listening for a new owner of its race.
type ownerSub struct{ p *proxy }

// Deliver attaches the connection again where the race runs now, on its
// own goroutine: Deliver must not block, and the proxy's lock may be held
// by a request.
//
// It closes the connection's feed gate first: what the new owner publishes
// on the race's topics before it has sent the connection its fresh
// snapshot is in that snapshot, and must not reach the connection twice.
func (o ownerSub) Deliver(ev Event) {
	if _, ok := ev.(*OwnerEvent); ok {
		o.p.gate.seat.Store(-1)
		o.p.gate.watch.Store(false)
		go o.p.reattach()
	}
}

// followOwner subscribes the proxy to its race's OwnerTopic, once: every
// connection, seated or watching, hears of a takeover without sending a
// request. Called with p.mu held.
func (p *proxy) followOwner() {
	if p.unsubOwner == nil {
		p.unsubOwner = p.svc.deps.Bus.Subscribe(OwnerTopic(p.id), ownerSub{p})
	}
}

// reattach attaches the connection again after the race was taken over
// (its owner died, drained or lost its lease): a player resumes the seat
// with its latest token, a spectator watches again. The new owner never
// saw the connection; now it has it, the seat is connected there (its
// grace period, armed by the takeover, stops) and the connection gets a
// fresh joined and state, or a spectator's state one epoch on.
func (p *proxy) reattach() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sub == nil || !p.player && !p.watched {
		return
	}
	var err error
	if p.player {
		var rep *Reply
		var r *Race
		rep, r, err = p.call(&Request{Op: "resume", Token: p.token.get(), Player: p.who})
		if r != nil && r.State().Over() {
			err = Errorf(CodeRaceOver, "the race is over") // here() could not resume it
		}
		if err == nil && rep != nil {
			if err = rep.Err.err(); err == nil {
				p.token.set(rep.Token)
			}
		}
	} else {
		var r *Race
		_, r, err = p.call(&Request{Op: "watch"})
		if r != nil && p.cancelW == nil {
			p.cancelW = r.Watch(p.sub)
		}
	}
	if ErrorCode(err) == CodeRaceOver {
		// The race ended as its owner went (the result stored, the final
		// state perhaps never published): the connection gets the final
		// state from the stored record.
		p.sendFinal()
		return
	}
	if err != nil {
		p.svc.deps.Log.Warn().Err(err).Str("race", p.id).Bool("player", p.player).Msg("attach again after a takeover")
	}
}

// sendFinal delivers the finished race's final state to the connection,
// as the race's record has it: a player's view of its seat, or a
// spectator's. Called with p.mu held.
func (p *proxy) sendFinal() {
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	h, err := p.svc.Open(ctx, p.id)
	r, ok := h.(*Race)
	if err != nil || !ok {
		p.svc.deps.Log.Warn().Err(err).Str("race", p.id).Msg("final state after a takeover not sent")
		return
	}
	p.sub.Deliver(r.finalFor(p.seat, p.player))
}

// tokenBox is the seat's latest token, which the race that runs it sends
// in "joined" whenever the connection resumes it (here or forwarded). Its
// lock is a leaf: Deliver takes it under a race's lock.
type tokenBox struct {
	mu  sync.Mutex
	tok string
}

func (b *tokenBox) get() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tok
}

func (b *tokenBox) set(t string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tok = t
}

// tokenSpy stands for a player's connection: it passes every event on,
// and keeps the token of each JoinedEvent so that the proxy resumes the
// seat with the token that works now (a resume spends the one before).
type tokenSpy struct {
	p   *proxy
	sub Subscriber
}

// Deliver keeps a JoinedEvent's token and passes ev on.
func (t *tokenSpy) Deliver(ev Event) {
	if j, ok := ev.(*JoinedEvent); ok && j.Race == t.p.id {
		t.p.token.set(j.Token)
	}
	t.sub.Deliver(ev)
}

// playerSub is the connection's subscriber for a seat: sub behind a
// tokenSpy, made once per connection.
func (p *proxy) playerSub(sub Subscriber) Subscriber {
	if spy, ok := p.sub.(*tokenSpy); ok && spy.sub == sub {
		return spy
	}
	return &tokenSpy{p: p, sub: sub}
}

// ID is the race's id.
func (p *proxy) ID() string { return p.id }

// here returns the race when this instance runs it, attaching the
// connection to it first when it was attached elsewhere.
func (p *proxy) here() *Race {
	r, err := p.svc.Get(p.id)
	if err != nil || r.isStopped() {
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
		if _, err := r.Resume(p.token.get(), p.who, "", p.sub); err != nil {
			p.svc.deps.Log.Debug().Err(err).Str("race", p.id).Msg("reattach")
		}
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
		p.attached.detach(p.seat, p.sub)
	}
	p.attached, p.cancelW = nil, nil
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
func (p *proxy) listen(seats, watch bool) {
	if p.sub == nil {
		return
	}
	bus := p.svc.deps.Bus
	added := false
	if !p.onTopic {
		p.unsubs = append(p.unsubs, bus.Subscribe(p.topic, connTap{g: &p.gate, sub: p.sub}))
		p.onTopic, added = true, true
	}
	if seats && !p.onSeats {
		for s := range 2 {
			p.unsubs = append(p.unsubs, bus.Subscribe(SeatTopic(p.id, s), gateTap{g: &p.gate, seat: int32(s), sub: p.sub}))
		}
		p.onSeats, added = true, true
	}
	if watch && !p.onWatch {
		p.gate.spectator.Store(true)
		p.unsubs = append(p.unsubs, bus.Subscribe(WatchTopic(p.id), gateTap{g: &p.gate, seat: watchGate, sub: p.sub}))
		p.onWatch, added = true, true
	}
	if sy, ok := bus.(Syncer); ok && added {
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
	p.unsubs, p.onTopic, p.onSeats, p.onWatch = nil, false, false, false
}

// watchGate is feedGate's number for the spectators' topic.
const watchGate = 2

// feedGate decides which of the race's topics reach a connection whose
// race runs elsewhere: a seat's topic once the owner has sent the
// connection its JoinedEvent for that seat (on the connection's own
// topic, before the seat's snapshot), the spectators' topic once the
// owner has sent a spectator its snapshot. An event published on the
// race's topic before that is in the snapshot, and the owner publishes
// both topics in one order, so nothing is missed and nothing shown twice;
// the other seat's events, which carry that player's cards, never pass.
//
// Once the race runs on this instance (it took it over), the gate passes
// nothing: the connection attaches to the race here and gets a snapshot.
type feedGate struct {
	svc       *Service
	race      string
	seat      atomic.Int32 // the seat whose topic passes; -1: none
	watch     atomic.Bool  // the spectators' topic passes
	spectator atomic.Bool  // the connection watches the race
}

func (g *feedGate) init(svc *Service, race string) {
	g.svc, g.race = svc, race
	g.seat.Store(-1)
}

// elsewhere reports whether the race runs on another instance. It takes
// the Service's lock, a leaf: Deliver may be called under a race's lock.
func (g *feedGate) elsewhere() bool {
	r, err := g.svc.Get(g.race)
	return err != nil || r.halted.Load()
}

// connTap receives the connection's own topic: it opens the gate and
// passes everything on.
type connTap struct {
	g   *feedGate
	sub Subscriber
}

// Deliver opens the gate on the owner's joined (a seat) or a spectator's
// snapshot, then passes ev on.
func (t connTap) Deliver(ev Event) {
	switch e := ev.(type) {
	case *JoinedEvent:
		t.g.seat.Store(int32(e.Seat))
	case *StateEvent:
		if t.g.spectator.Load() {
			t.g.watch.Store(true)
		}
	case *ReplacedEvent:
		t.g.seat.Store(-1)
	}
	t.sub.Deliver(ev)
}

// gateTap receives one of the race's topics for the connection, passing
// what its gate lets through.
type gateTap struct {
	g    *feedGate
	seat int32 // 0 or 1, or watchGate
	sub  Subscriber
}

// Deliver passes ev on when the gate is open for the tap's topic.
func (t gateTap) Deliver(ev Event) {
	open := t.seat == watchGate && t.g.watch.Load() || t.seat != watchGate && t.g.seat.Load() == t.seat
	if open && t.g.elsewhere() {
		t.sub.Deliver(ev)
	}
}

// call forwards req to the race's owner, taking the race over when the
// owner is gone; when the race runs here it returns (nil, race, nil).
func (p *proxy) call(req *Request) (*Reply, *Race, error) {
	req.Race, req.Topic = p.id, p.topic
	if p.player && req.Op != "resume" { // a resume carries its own token
		req.Token, req.Player = p.token.get(), p.who
	}
	req.Watching = p.watched
	for range 3 {
		if r := p.here(); r != nil {
			return nil, r, nil
		}
		p.listen(p.player || req.Op == "join" || req.Op == "resume", p.watched || req.Op == "watch")
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		rep, _, err := p.svc.deps.Cluster.Call(ctx, req)
		cancel()
		if err == nil && (rep.Err == nil || rep.Err.Code != codeNotOwner) {
			return rep, nil, nil
		}
		var gone string
		var ge *GoneError
		if errors.As(err, &ge) {
			gone = ge.Owner
		}
		if err != nil && !errors.Is(err, ErrNoOwner) && !errors.Is(err, ErrOwnerIsMe) {
			return nil, nil, &Error{Code: CodeUnavailable, Message: "the race's instance cannot be reached; try again shortly", Err: err}
		}
		ctx, cancel = context.WithTimeout(context.Background(), clusterTimeout)
		_, err = p.svc.takeOver(ctx, p.id, gone)
		cancel()
		if err != nil {
			return nil, nil, &Error{Code: CodeUnavailable, Message: "the race cannot be taken over now; try again shortly", Err: err}
		}
	}
	return nil, nil, Errorf(CodeUnavailable, "the race's owner keeps changing; try again shortly")
}

// State is where the race stands.
func (p *proxy) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	rep, r, err := p.call(&Request{Op: "state"})
	switch {
	case r != nil:
		return r.State()
	case err != nil:
		return Running // unknown: not over, so the connection keeps its role
	}
	return rep.State
}

// Join takes a free seat.
func (p *proxy) Join(name, id string, sub Subscriber) (Ticket, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sub = p.playerSub(sub)
	sub = p.sub
	rep, r, err := p.call(&Request{Op: "join", Name: name, ID: id})
	var t Ticket
	switch {
	case r != nil:
		t, err = r.Join(name, id, sub)
	case err == nil:
		err = rep.Err.err()
		t = Ticket{Seat: rep.Seat, Token: rep.Token}
	}
	if err != nil {
		return Ticket{}, err
	}
	p.player, p.seat = true, t.Seat
	p.token.set(t.Token)
	p.followOwner()
	return t, nil
}

// Resume takes a seat back, for the lobby's player who (or "").
func (p *proxy) Resume(token, who, id string, sub Subscriber) (Ticket, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sub = p.playerSub(sub)
	sub = p.sub
	rep, r, err := p.call(&Request{Op: "resume", Token: token, Player: who, ID: id})
	var t Ticket
	switch {
	case r != nil:
		t, err = r.Resume(token, who, id, sub)
	case err == nil:
		t, err = Ticket{Seat: rep.Seat, Token: rep.Token}, rep.Err.err()
	}
	if err != nil {
		return Ticket{}, err
	}
	p.player, p.who, p.seat = true, who, t.Seat
	p.token.set(t.Token)
	p.followOwner()
	return t, nil
}

// Leave gives the seat up (the grace period starts where the race runs).
func (p *proxy) Leave(s int, sub Subscriber) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, r, _ := p.call(&Request{Op: "leave", Seat: s}); r != nil {
		r.Leave(s, p.sub) // the seat's subscriber is the connection's tokenSpy
	}
	p.player = false
	p.gate.seat.Store(-1)
	p.unlisten()
	if p.unsubOwner != nil && !p.watched {
		p.unsubOwner()
		p.unsubOwner = nil
	}
}

// Watch subscribes a spectator.
func (p *proxy) Watch(sub Subscriber) (cancel func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sub = sub
	_, r, err := p.call(&Request{Op: "watch"})
	if r != nil && p.cancelW == nil {
		p.cancelW = r.Watch(sub)
	}
	if err != nil {
		p.svc.deps.Log.Warn().Err(err).Str("race", p.id).Msg("watch")
	}
	p.watched = true
	p.followOwner()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.watched = false
			if p.unsubOwner != nil && !p.player {
				p.unsubOwner()
				p.unsubOwner = nil
			}
			if p.cancelW != nil {
				p.cancelW()
				p.cancelW = nil
			} else if p.onTopic {
				_, _, _ = p.call(&Request{Op: "unwatch"})
			}
			p.gate.watch.Store(false)
			p.gate.spectator.Store(false)
			p.unlisten()
		})
	}
}

// Move plays a move.
func (p *proxy) Move(s int, text, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	rep, r, err := p.call(&Request{Op: "move", Seat: s, Move: text, ID: id})
	if r != nil {
		return r.Move(s, text, id)
	}
	if err != nil {
		return err
	}
	return rep.Err.err()
}

// Resign resigns.
func (p *proxy) Resign(s int, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	rep, r, err := p.call(&Request{Op: "resign", Seat: s, ID: id})
	if r != nil {
		return r.Resign(s, id)
	}
	if err != nil {
		return err
	}
	return rep.Err.err()
}

// Rematch asks for a rematch.
func (p *proxy) Rematch(s int) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rep, r, err := p.call(&Request{Op: "rematch", Seat: s})
	if r != nil {
		return r.Rematch(s)
	}
	if err != nil {
		return "", err
	}
	return rep.Next, rep.Err.err()
}

// Info is the race's public record.
func (p *proxy) Info(ctx context.Context) (Info, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rep, r, err := p.call(&Request{Op: "info"})
	if r != nil {
		return r.Info(ctx)
	}
	if err == nil {
		err = rep.Err.err()
	}
	if err != nil || rep.Info == nil {
		return Info{}, err
	}
	return *rep.Info, nil
}

// Run keeps this instance's races owned (Redis mode): every period it
// renews their leases, lets go of races it lost, and takes over live races
// whose owner died, so that their timers run somewhere. The period is real
// time, like the leases' expiry in Redis. It returns when ctx is done;
// without a Cluster it returns at once.
//
// Renewal runs on its own goroutine, apart from releasing finished races
// and adopting orphans: under load those take seconds (a Redis round trip
// each, and a rebuild per adopted race), and a renewal waiting behind them
// let leases run out, so that the instances took each other's races.
func (s *Service) Run(ctx context.Context, every time.Duration) {
	if s.deps.Cluster == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick(ctx, every, s.renew)
	}()
	tick(ctx, every, s.housekeep)
	<-done
}

// tick calls f every period until ctx is done.
func tick(ctx context.Context, every time.Duration, f func(context.Context)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f(ctx)
	}
}

// renew extends the leases of the races run here and not yet released
// (a finished race keeps its lease until housekeep releases it), in one
// pipeline, and stops the races another instance owns now. It reads no
// race's state: that would wait for a race's lock, held during its
// Redis writes.
func (s *Service) renew(ctx context.Context) {
	c := s.deps.Cluster
	var live []string
	for _, r := range s.snapshot() {
		if !r.released.Load() {
			live = append(live, r.id)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()
	lost, err := c.Renew(cctx, live)
	if err != nil {
		s.deps.Log.Warn().Err(err).Msg("leases not renewed")
		return
	}
	for _, id := range lost {
		s.mu.Lock()
		r := s.races[id]
		s.mu.Unlock()
		if r == nil || r.released.Load() {
			continue // released meanwhile: finished, not lost
		}
		if ok, err := c.Claim(cctx, id, ""); err == nil && ok {
			continue // the lease had only expired (Redis was away): kept
		}
		s.deps.Log.Warn().Str("race", id).Msg("lease lost: another instance runs the race now")
		s.mu.Lock()
		if s.races[id] == r {
			delete(s.races, id)
		}
		s.mu.Unlock()
		r.Stop()
	}
}

// housekeep releases the leases of finished races and takes over live
// races whose lease ran out.
func (s *Service) housekeep(ctx context.Context) {
	c := s.deps.Cluster
	s.pruneRemotes()
	for _, r := range s.snapshot() {
		if r.State().Over() && r.released.CompareAndSwap(false, true) {
			cctx, cancel := context.WithTimeout(ctx, clusterTimeout)
			_ = c.Release(cctx, r.id)
			cancel()
		}
	}
	cctx, cancel := context.WithTimeout(ctx, clusterTimeout)
	orphans, err := c.Orphans(cctx)
	cancel()
	if err != nil {
		return
	}
	for _, id := range orphans {
		cctx, cancel := context.WithTimeout(ctx, clusterTimeout)
		if _, err := s.takeOver(cctx, id, ""); err != nil {
			s.deps.Log.Warn().Err(err).Str("race", id).Msg("orphan not taken over")
		}
		cancel()
	}
}
