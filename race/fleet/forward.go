package fleet

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	fastjson "github.com/segmentio/encoding/json"

	"sirtommy/race"
)

// Wire carries frames of bytes between the instances: each instance has
// an inbox, named by the instance. What a frame holds is the fleet's
// (forwarder); the wire only carries it. redisrace.Cluster is one: Redis
// pub/sub, classic on one Redis and sharded on a Redis Cluster.
type Wire interface {
	// Send delivers frame, a JSON value, to instance to's inbox. heard is
	// false when the wire knows that nobody listens there now (the
	// owner's pub/sub connection may be reconnecting): the frame is lost.
	Send(ctx context.Context, to string, frame []byte) (heard bool, err error)
	// Listen hands fn every frame sent to this instance, each sender's
	// in the order sent, until the wire is closed. It is called once.
	Listen(fn func(frame []byte))
}

// Forwarding sizes and pauses.
const (
	// requestWorkers serve the requests forwarded here, each
	// connection's on the same one (by its topic), so that one
	// connection's requests are served in order while different races
	// proceed in parallel; each queues workerQueue requests before the
	// inbox waits for it.
	requestWorkers = 16
	workerQueue    = 256
	// outboxQueue is how many envelopes may wait for the outbox; frameMax
	// is the most one frame carries. Under load one frame carries every
	// request and reply waiting for the same instance: one pub/sub
	// message for many.
	outboxQueue = 4 << 10
	frameMax    = 256
	// frameLinger is how long the outbox waits for more envelopes for a
	// frame that has fewer than frameFew: at a few thousand moves a
	// second one frame in flight leaves the outbox mostly idle, and
	// without it nearly every envelope went in a message of its own.
	frameLinger = 200 * time.Microsecond
	frameFew    = 4
	// forwardRetry is the pause before a request that reached nobody is
	// sent again: the owner's lease is live, so its inbox is only being
	// subscribed again.
	forwardRetry = 50 * time.Millisecond
	// ownerMemory is how long a race's owner, once seen, is trusted
	// before its lease is read again: a request to an instance that no
	// longer owns the race is answered not-owner (or not heard) and
	// forgets it at once, so this bounds only the memory of races no
	// longer forwarded for (forgetOwners).
	ownerMemory = 10 * time.Second
)

// envelope is one request (N numbers it for its caller) or the reply to
// request N.
type envelope struct {
	N   uint64   `json:"n"`
	Req *Request `json:"req,omitempty"`
	Rep *Reply   `json:"rep,omitempty"`
}

// frame is what the Wire carries: envelopes from one instance to another.
type frame struct {
	From string     `json:"from"`
	M    []envelope `json:"m"`
}

// outgoing is an envelope waiting for the outbox; sent, for a request,
// hears whether the frame carrying it was heard.
type outgoing struct {
	to   string
	env  envelope
	sent chan<- sendResult
}

type sendResult struct {
	heard bool
	err   error
}

// inbound is a request forwarded here, waiting for its worker.
type inbound struct {
	from string
	n    uint64
	req  *Request
}

// seenOwner is a race's owner as last seen, and until when it is
// trusted.
type seenOwner struct {
	owner string
	until time.Time
}

// forwarder forwards this instance's requests to the owners of their
// races over the Wire and waits for the replies, and serves the requests
// other instances forward here: the one path of a request between
// instances. The answer to a request always comes back on the Wire, in a
// frame of its own instance's.
type forwarder struct {
	wire   Wire
	leases Leases
	me     string
	clock  race.Clock
	log    zerolog.Logger
	serve  func(*Request) *Reply

	owners sync.Map // race id -> seenOwner
	next   atomic.Uint64

	mu      sync.Mutex
	pending map[uint64]chan *Reply

	work [requestWorkers]chan inbound
	out  chan outgoing

	ctx context.Context
}

// newForwarder starts the forwarder's workers and outbox until ctx ends,
// and listens on the wire.
func newForwarder(ctx context.Context, c Cluster, serve func(*Request) *Reply, deps race.Deps) *forwarder {
	f := &forwarder{wire: c, leases: c, me: c.Instance(), clock: deps.Clock, log: deps.Log, serve: serve,
		pending: make(map[uint64]chan *Reply), out: make(chan outgoing, outboxQueue), ctx: ctx}
	for i := range f.work {
		f.work[i] = make(chan inbound, workerQueue)
		go f.worker(f.work[i])
	}
	go f.outbox()
	c.Listen(f.receive)
	return f
}

// call forwards req to its race's owner and waits for the reply. It
// fails with ErrNoOwner (wrapped) when the race has no lease, with
// ErrOwnerChanged when the owner did not answer and another instance
// holds the lease now, and with ErrOwnerIsMe when this instance holds
// it. Whether the owner is gone is its lease's to say, never the wire's:
// a request nobody heard is sent again while the lease names that owner,
// until ctx is done.
func (f *forwarder) call(ctx context.Context, req *Request) (*Reply, error) {
	rep, err := f.callOnce(ctx, req)
	if err != nil || rep.Err != nil && rep.Err.Code == CodeNotOwner {
		f.owners.Delete(req.Race) // look the owner up again next time
	}
	return rep, err
}

func (f *forwarder) callOnce(ctx context.Context, req *Request) (*Reply, error) {
	now := f.clock.Now()
	var owner string
	o, known := f.owners.Load(req.Race)
	if known = known && now.Before(o.(seenOwner).until); known {
		owner = o.(seenOwner).owner
	} else {
		var err error
		if owner, err = f.leaseOf(ctx, req.Race); err != nil {
			return nil, err
		}
		f.owners.Store(req.Race, seenOwner{owner, now.Add(ownerMemory)})
	}
	n := f.next.Add(1)
	ch := make(chan *Reply, 1)
	f.mu.Lock()
	f.pending[n] = ch
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.pending, n)
		f.mu.Unlock()
	}()
	for {
		if owner == f.me {
			return nil, fmt.Errorf("race %s: %w", req.Race, ErrOwnerIsMe)
		}
		req.Sending(owner)
		heard, err := f.send(ctx, owner, envelope{N: n, Req: req})
		if err != nil {
			return nil, fmt.Errorf("race %s: forward: %w", req.Race, err)
		}
		if heard {
			return f.await(ctx, req, owner, ch)
		}
		lease, err := f.leaseOf(ctx, req.Race)
		if err != nil {
			return nil, fmt.Errorf("race %s: owner %s does not listen: %w", req.Race, owner, err)
		}
		if lease != owner {
			owner = lease
			f.owners.Store(req.Race, seenOwner{owner, f.clock.Now().Add(ownerMemory)})
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("race %s: owner %s does not listen, and its lease is live: %w", req.Race, owner, race.ErrUnavailable)
		case <-f.ctx.Done():
			return nil, errClosing
		case <-time.After(forwardRetry):
		}
	}
}

// errClosing is a forward cut short because this instance is closing.
var errClosing = fmt.Errorf("instance closing: %w", errors.Join(race.ErrUnavailable, ErrClosed))

// leaseOf reads which instance owns race id; it fails with ErrNoOwner
// (wrapped) when the race has no lease.
func (f *forwarder) leaseOf(ctx context.Context, id string) (string, error) {
	owners, err := f.leases.Owners(ctx, []string{id})
	if err != nil {
		return "", fmt.Errorf("race %s: owner: %w", id, err)
	}
	if owners[id] == "" {
		return "", fmt.Errorf("race %s: %w", id, ErrNoOwner)
	}
	return owners[id], nil
}

// remember takes owners, read from the leases, as the races' owners.
func (f *forwarder) remember(owners map[string]string) {
	until := f.clock.Now().Add(ownerMemory)
	for id, o := range owners {
		if o == "" {
			f.owners.Delete(id)
		} else {
			f.owners.Store(id, seenOwner{o, until})
		}
	}
}

// forgetOwners drops the owners seen longer ago than ownerMemory.
func (f *forwarder) forgetOwners() {
	now := f.clock.Now()
	f.owners.Range(func(k, v any) bool {
		if !now.Before(v.(seenOwner).until) {
			f.owners.Delete(k)
		}
		return true
	})
}

// await waits for the reply to request req on ch. An owner that does
// not answer in time is taken for gone only once its lease is; when the
// lease names another instance now, the request is to be sent there.
func (f *forwarder) await(ctx context.Context, req *Request, owner string, ch chan *Reply) (*Reply, error) {
	select {
	case rep := <-ch:
		return rep, nil
	case <-ctx.Done():
	case <-f.ctx.Done():
		return nil, errClosing
	}
	lctx, cancel := context.WithTimeout(f.ctx, clusterTimeout)
	defer cancel()
	lease, err := f.leaseOf(lctx, req.Race)
	switch {
	case errors.Is(err, ErrNoOwner):
		return nil, fmt.Errorf("race %s: owner %s did not answer and its lease is gone: %w", req.Race, owner, ErrNoOwner)
	case err == nil && lease != owner:
		return nil, fmt.Errorf("race %s: owner %s did not answer and %s holds the lease now: %w", req.Race, owner, lease, ErrOwnerChanged)
	}
	return nil, fmt.Errorf("race %s: owner %s did not answer: %w", req.Race, owner, race.ErrUnavailable)
}

// send queues env for instance to and waits until the frame carrying it
// was sent.
func (f *forwarder) send(ctx context.Context, to string, env envelope) (bool, error) {
	sent := make(chan sendResult, 1)
	select {
	case f.out <- outgoing{to: to, env: env, sent: sent}:
	case <-ctx.Done():
		return false, race.ErrUnavailable
	case <-f.ctx.Done():
		return false, errClosing
	}
	select {
	case r := <-sent:
		return r.heard, r.err
	case <-ctx.Done():
		return false, race.ErrUnavailable
	case <-f.ctx.Done():
		return false, errClosing
	}
}

// outbox sends the queued envelopes: as many as are waiting, up to
// frameMax, in one frame per instance, so that a busy instance sends one
// message for many requests or replies, and nobody waits for the wire
// longer than one frame's send.
func (f *forwarder) outbox() {
	batch := make([]outgoing, 0, frameMax)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	for {
		select {
		case <-f.ctx.Done():
			return
		case o := <-f.out:
			batch = append(batch[:0], o)
		}
		batch = f.takeWaiting(batch)
		if len(batch) < frameFew {
			var ok bool
			if batch, ok = f.linger(batch, linger); !ok {
				return
			}
		}
		groups := byInstance(batch)
		if len(groups) == 1 {
			f.sendFrame(groups[0])
		} else {
			var wg sync.WaitGroup
			for _, g := range groups {
				wg.Go(func() { f.sendFrame(g) })
			}
			wg.Wait()
		}
		clear(batch) // let the requests and replies go
	}
}

// takeWaiting adds to batch the envelopes waiting, up to frameMax.
func (f *forwarder) takeWaiting(batch []outgoing) []outgoing {
	for len(batch) < frameMax {
		select {
		case o := <-f.out:
			batch = append(batch, o)
		default:
			return batch
		}
	}
	return batch
}

// linger adds to batch the envelopes that come within frameLinger, up
// to frameMax, on timer t (stopped); ok is false if the forwarder closed
// meanwhile.
func (f *forwarder) linger(batch []outgoing, t *time.Timer) (_ []outgoing, ok bool) {
	t.Reset(frameLinger)
	defer t.Stop()
	for len(batch) < frameMax {
		select {
		case o := <-f.out:
			batch = append(batch, o)
		case <-t.C:
			return batch, true
		case <-f.ctx.Done():
			return batch, false
		}
	}
	return batch, true
}

// byInstance splits batch by destination, keeping each one's order.
func byInstance(batch []outgoing) [][]outgoing {
	if len(batch) == 1 {
		return [][]outgoing{batch}
	}
	var groups [][]outgoing
	index := make(map[string]int, 2)
	for _, o := range batch {
		i, ok := index[o.to]
		if !ok {
			i = len(groups)
			index[o.to] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], o)
	}
	return groups
}

// sendFrame sends envelopes for one instance in one frame and tells
// their callers whether it was heard.
func (f *forwarder) sendFrame(group []outgoing) {
	fr := frame{From: f.me, M: make([]envelope, len(group))}
	for i, o := range group {
		fr.M[i] = o.env
	}
	var res sendResult
	b, err := appendFrame(make([]byte, 0, 256*len(group)), &fr)
	if err != nil {
		res.err = fmt.Errorf("encode frame: %w", err)
	} else {
		ctx, cancel := context.WithTimeout(f.ctx, clusterTimeout)
		res.heard, res.err = f.wire.Send(ctx, group[0].to, b)
		cancel()
	}
	if res.err != nil {
		f.log.Warn().Err(res.err).Str("to", group[0].to).Int("envelopes", len(group)).Msg("frame not sent")
	}
	for _, o := range group {
		if o.sent != nil {
			o.sent <- res
		}
	}
}

// readFrame reads a frame appendFrame wrote, by segmentio's decoder:
// encoding/json's rules at a fraction of its cost, and an instance reads
// a frame for every request forwarded to it and every reply.
func readFrame(b []byte) (frame, error) {
	var fr frame
	err := fastjson.Unmarshal(b, &fr)
	return fr, err
}

// receive takes a frame off the wire: each reply to its caller, each
// request to its connection's worker.
func (f *forwarder) receive(b []byte) {
	fr, err := readFrame(b)
	if err != nil {
		f.log.Warn().Err(err).Msg("frame unreadable")
		return
	}
	for _, e := range fr.M {
		switch {
		case e.Rep != nil:
			f.mu.Lock()
			ch := f.pending[e.N]
			f.mu.Unlock()
			if ch != nil {
				select {
				case ch <- e.Rep:
				default: // a reply to a request answered already
				}
			}
		case e.Req != nil:
			h := fnv.New32a()
			_, _ = h.Write([]byte(e.Req.Topic))
			select {
			case f.work[h.Sum32()%requestWorkers] <- inbound{from: fr.From, n: e.N, req: e.Req}:
			case <-f.ctx.Done():
				return
			}
		}
	}
}

// worker serves the requests of its connections in order, and sends each
// reply back to the instance that asked.
func (f *forwarder) worker(in <-chan inbound) {
	for {
		select {
		case <-f.ctx.Done():
			return
		case r := <-in:
			rep := f.serve(r.req)
			select {
			case f.out <- outgoing{to: r.from, env: envelope{N: r.n, Rep: rep}}:
			case <-f.ctx.Done():
				return
			}
		}
	}
}
