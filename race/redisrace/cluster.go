package redisrace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/fleet"
)

// Lease timing.
const (
	// LeaseTTL is how long an instance owns a race without renewing: a
	// dead instance's races are taken over this long after its last
	// renewal at the latest (sooner when a player's request finds it
	// gone).
	LeaseTTL = 3 * time.Second
	// RenewEvery is how often an instance renews its leases and looks for
	// orphans: three renewals per lease, so one slow round loses nothing.
	RenewEvery = LeaseTTL / 3
)

// The lease scripts touch the race's own keys only (its lease, and for a
// claim its record), which share its Redis Cluster slot: the live set (in
// another slot) is written beside them, never in them.

// claimScript takes race KEYS[1]'s lease for ARGV[1] when it is free or
// is ARGV[1]'s already; ARGV[2] is the lease in ms. It returns 1 when
// ARGV[1] owns the race, 0 when another instance does, and 2 when the
// race's record KEYS[2] says it is over (state ARGV[3] or ARGV[4]): a
// finished race is never taken over. (A race whose result is stored but
// whose record is not over yet did not finish ending, its owner gone in
// between: the next owner ends it, with the stored result.) Whether an
// owner is gone is its lease's to say, never a request's: a live lease
// is never taken.
var claimScript = redis.NewScript(`
local rec = redis.call('GET', KEYS[2])
if rec then
  local ok, r = pcall(cjson.decode, rec)
  if ok and type(r) == 'table' and (r.state == ARGV[3] or r.state == ARGV[4]) then return 2 end
end
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// renewScript extends ARGV[1]'s lease KEYS[1] by ARGV[2] ms; it returns 0
// when another instance owns the race now.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// releaseScript drops ARGV[1]'s lease.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`)

// saveScript writes record KEYS[1] = ARGV[1] with expiry ARGV[2] seconds
// unless another instance than ARGV[3] owns the race (lease KEYS[2]).
var saveScript = redis.NewScript(`
local o = redis.call('GET', KEYS[2])
if o and o ~= ARGV[3] then return redis.error_reply('NOTOWNER ' .. o) end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
`)

// handoverScript drops ARGV[1]'s lease KEYS[1] (Handover then scores the
// race 0 in the live set, so that the next instance to look adopts it).
var handoverScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`)

// decideScript stores KEYS[1]'s result ARGV[1] unless one is there, and
// returns the stored one; ARGV[2] is the retention in seconds. An instance
// (ARGV[3]) that no longer owns the race (lease KEYS[2]) decides nothing.
var decideScript = redis.NewScript(`
local o = redis.call('GET', KEYS[2])
if o and o ~= ARGV[3] and redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('NOTOWNER ' .. o)
end
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2])
return redis.call('GET', KEYS[1])
`)

// Request workers: forwarded requests run on this many goroutines, each
// connection's on the same one (by a hash of its topic), so that one
// connection's moves are applied in order while different races proceed
// in parallel; each worker queues this many requests before the inbox
// waits for it.
const (
	requestWorkers = 16
	workerQueue    = 256
)

// outboxQueue is how many inbox messages (forwarded requests and their
// replies) may wait for the outbox goroutine, which sends them in
// pipelines (publishBatches). A worker handing its reply over waits only
// when the queue is full, not for a Redis round trip per reply.
const outboxQueue = 4 << 10

// ClusterOptions configure a Cluster.
type ClusterOptions struct {
	Keys Keys
	// Instance names this instance; it must be unique (a random token).
	Instance string
	// Retention is how long a finished race's record stays; zero means
	// DefaultRetention.
	Retention time.Duration
	Clock     race.Clock
	Log       zerolog.Logger
	// Leases, when set, is the client Renew uses: a connection of its
	// own, so that renewals do not queue behind the requests' commands for
	// the main client's pool. Nil: the main client.
	Leases redis.UniversalClient
	// Bus, on a Redis Cluster, carries the instances' inboxes by sharded
	// pub/sub (each inbox on one node, followed there across a
	// resharding), where classic PUBLISH would go to every node. Nil, or
	// on one Redis: the inbox is a classic channel.
	Bus *Bus
	// Extensions, when set, is shared with the instance's Store: Renew
	// skips the races whose moves have just extended their leases. Nil:
	// every race is renewed every round.
	Extensions *Extensions
}

// Cluster is a fleet.Cluster in Redis: records as JSON strings, results
// set once with SET NX, leases as keys with an expiry plus a sorted set
// of live races by lease end, and requests forwarded over pub/sub to the
// owner's inbox channel.
type Cluster struct {
	rdb  redis.UniversalClient
	o    ClusterOptions
	log  zerolog.Logger
	ps   *redis.PubSub
	next atomic.Uint64

	// owners is the owner last seen of each race a request was forwarded
	// for (race id to instance); Forget drops a race's.
	owners sync.Map

	mu      sync.Mutex
	pending map[uint64]chan *fleet.Reply
	handler func(*fleet.Request) *fleet.Reply

	work [requestWorkers]chan *envelope
	// outbox holds the inbox messages (forwarded requests and replies)
	// waiting for the outbox goroutine, which sends them in pipelines.
	outbox chan message

	// bus carries the inboxes on a Redis Cluster (ClusterOptions.Bus);
	// nil when ps does.
	bus     *Bus
	unInbox func()

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ fleet.Cluster = (*Cluster)(nil)

// envelope is one message in an instance's inbox: a request (with where
// to reply) or a reply.
type envelope struct {
	N       uint64         `json:"n"`
	From    string         `json:"from,omitempty"`
	Request *fleet.Request `json:"req,omitempty"`
	Reply   *fleet.Reply   `json:"rep,omitempty"`
}

// NewCluster starts a Cluster: it listens on this instance's inbox until
// Close.
func NewCluster(ctx context.Context, rdb redis.UniversalClient, o ClusterOptions) (*Cluster, error) {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	cctx, cancel := context.WithCancel(context.Background())
	c := &Cluster{rdb: rdb, o: o, log: o.Log, pending: make(map[uint64]chan *fleet.Reply), ctx: cctx, cancel: cancel}
	// The workers' queues exist before the inbox is read: a request may
	// be waiting there already (an instance that listens again).
	for i := range c.work {
		c.work[i] = make(chan *envelope, workerQueue)
	}
	if _, onCluster := rdb.(*redis.ClusterClient); onCluster && o.Bus != nil {
		c.bus = o.Bus
		c.unInbox = c.bus.Subscribe(inboxTopic(o.Instance), inboxSub{c})
		if err := c.bus.Sync(ctx); err != nil { // subscribed on the inbox's node
			cancel()
			c.unInbox()
			return nil, fmt.Errorf("subscribe to the instance inbox: %w", classify(err))
		}
	} else {
		c.ps = rdb.Subscribe(ctx, o.Keys.Inbox(o.Instance))
		if _, err := c.ps.Receive(ctx); err != nil { // the subscription's confirmation
			cancel()
			_ = c.ps.Close()
			return nil, fmt.Errorf("subscribe to the instance inbox: %w", classify(err))
		}
		c.wg.Add(2)
		c.outbox = make(chan message, outboxQueue)
		go c.receiveLoop()
		go c.outboxLoop()
	}
	c.wg.Add(requestWorkers)
	for i := range c.work {
		go c.worker(c.work[i])
	}
	return c, nil
}

// Close stops listening.
func (c *Cluster) Close() error {
	c.cancel()
	var err error
	if c.ps != nil {
		err = c.ps.Close()
	} else {
		c.unInbox()
	}
	c.wg.Wait()
	return err
}

// Instance names this instance.
func (c *Cluster) Instance() string { return c.o.Instance }

// Serve sets the handler of forwarded requests.
func (c *Cluster) Serve(h func(*fleet.Request) *fleet.Reply) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handler = h
}

func (c *Cluster) nowMs() int64 { return c.o.Clock.Now().UnixMilli() }

// Save writes the record; a finished race's record keeps for the
// retention period, a live one for LiveTTL.
func (c *Cluster) Save(ctx context.Context, rec *race.Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("race %s: encode record: %w", rec.ID, err)
	}
	ttl := LiveTTL
	if rec.State.Over() {
		ttl = c.o.Retention
	}
	keys := []string{c.o.Keys.Meta(rec.ID), c.o.Keys.Owner(rec.ID)}
	if err := saveScript.Run(ctx, c.rdb, keys, b, int64(ttl/time.Second), c.o.Instance).Err(); err != nil {
		return fmt.Errorf("race %s: save record: %w", rec.ID, classify(err))
	}
	return nil
}

// Load reads a record.
func (c *Cluster) Load(ctx context.Context, id string) (*race.Record, bool, error) {
	b, err := c.rdb.Get(ctx, c.o.Keys.Meta(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("race %s: load record: %w", id, classify(err))
	}
	var rec race.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, false, fmt.Errorf("race %s: decode record: %w", id, err)
	}
	return &rec, true, nil
}

type decided struct {
	Result *race.Result `json:"result"`
	State  race.State   `json:"state"`
}

// Decide stores the result once. A race decided as finished is listed
// as unarchived first (ArchiveLedger), so that no instance dying between
// its result and its archiving leaves it out of the archive: the set is a
// key of another Redis Cluster slot, so the ZADD runs beside the script,
// not in it, and before it. An instance that dies between the two leaves
// a race listed whose result is not stored yet: the sweep leaves it to
// the race's next owner, who decides it and archives it.
func (c *Cluster) Decide(ctx context.Context, id string, res *race.Result, state race.State) (*race.Result, race.State, error) {
	b, err := json.Marshal(decided{res, state})
	if err != nil {
		return nil, "", fmt.Errorf("race %s: encode result: %w", id, err)
	}
	if state == race.Finished {
		if err := c.rdb.ZAdd(ctx, c.o.Keys.Unarchived(), redis.Z{Score: float64(c.nowMs()), Member: id}).Err(); err != nil {
			return nil, "", fmt.Errorf("race %s: list as unarchived: %w", id, classify(err))
		}
	}
	got, err := decideScript.Run(ctx, c.rdb, []string{c.o.Keys.Result(id), c.o.Keys.Owner(id)}, b, int64(c.o.Retention/time.Second), c.o.Instance).Text()
	if err != nil {
		return nil, "", fmt.Errorf("race %s: decide: %w", id, classify(err))
	}
	var d decided
	if err := json.Unmarshal([]byte(got), &d); err != nil || d.Result == nil {
		return nil, "", fmt.Errorf("race %s: stored result unreadable: %v", id, err)
	}
	return d.Result, d.State, nil
}

var _ race.ArchiveLedger = (*Cluster)(nil)

// Unarchived lists at most n races decided as finished before before and
// not yet archived, oldest first.
func (c *Cluster) Unarchived(ctx context.Context, before time.Time, n int) ([]string, error) {
	if err := race.CheckBatch(n); err != nil {
		return nil, err
	}
	ids, err := c.rdb.ZRangeByScore(ctx, c.o.Keys.Unarchived(), &redis.ZRangeBy{
		Min: "-inf", Max: "(" + strconv.FormatInt(before.UnixMilli(), 10), Count: int64(n),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("unarchived races: %w", classify(err))
	}
	return ids, nil
}

// Archived unlists race id: it is archived.
func (c *Cluster) Archived(ctx context.Context, id string) error {
	if err := c.rdb.ZRem(ctx, c.o.Keys.Unarchived(), id).Err(); err != nil {
		return fmt.Errorf("race %s: unlist as unarchived: %w", id, classify(err))
	}
	return nil
}

// Claim takes the race's lease when it is free. A finished race (its
// record says it is over) is taken by nobody: Claim then fails with
// fleet.ErrOver and unlists the race from the live races (its owner may
// have died before releasing it).
func (c *Cluster) Claim(ctx context.Context, id string) (bool, error) {
	n, err := claimScript.Run(ctx, c.rdb, []string{c.o.Keys.Owner(id), c.o.Keys.Meta(id)},
		c.o.Instance, LeaseTTL.Milliseconds(), string(race.Finished), string(race.Aborted)).Int()
	if err != nil {
		return false, fmt.Errorf("race %s: claim: %w", id, classify(err))
	}
	switch n {
	case 2:
		if err := c.rdb.ZRem(ctx, c.o.Keys.Live(), id).Err(); err != nil {
			c.log.Warn().Err(err).Str("race", id).Msg("finished race not unlisted")
		}
		return false, fmt.Errorf("race %s: %w", id, fleet.ErrOver)
	case 1:
	default:
		return false, nil
	}
	// Listed live until the lease's end; renewals move it on. Should
	// this fail, Claim fails (the caller runs nothing) and the lease runs
	// out.
	if err := c.rdb.ZAdd(ctx, c.o.Keys.Live(), redis.Z{Score: float64(c.nowMs() + LeaseTTL.Milliseconds()), Member: id}).Err(); err != nil {
		return false, fmt.Errorf("race %s: list as live: %w", id, classify(err))
	}
	return true, nil
}

// Renew extends the leases of races ids in one pipeline.
func (c *Cluster) Renew(ctx context.Context, ids []string) ([]string, error) {
	c.forgetOwners()
	if len(ids) == 0 {
		return nil, nil
	}
	now := c.nowMs()
	// A race one of whose moves extended its lease in the last half
	// period has at least LeaseTTL - RenewEvery/2 left: it waits for the
	// next round (ClusterOptions.Extensions). Should it have been lost,
	// its next append says so (NOTOWNER), or a later round once it is
	// quiet.
	fresh := c.o.Extensions.now() - RenewEvery/2
	cmds := make([]*redis.Cmd, len(ids))
	rdb := c.o.Leases
	if rdb == nil {
		rdb = c.rdb
	}
	until := make([]redis.Z, len(ids))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			until[i] = redis.Z{Score: float64(now + LeaseTTL.Milliseconds()), Member: id}
			if c.o.Extensions.since(id, fresh) {
				continue
			}
			// EVAL, not EVALSHA: a pipeline cannot load a missing script.
			cmds[i] = renewScript.Eval(ctx, p, []string{c.o.Keys.Owner(id)}, c.o.Instance, LeaseTTL.Milliseconds())
		}
		// One ZADD for all: the live set is one key. XX: a race
		// released meanwhile (over) is not listed again.
		p.ZAddXX(ctx, c.o.Keys.Live(), until...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", classify(err))
	}
	var lost []string
	for i, cmd := range cmds {
		if cmd == nil {
			continue // kept by its moves
		}
		if n, _ := cmd.Int(); n != 1 {
			lost = append(lost, ids[i])
			c.o.Extensions.forget(ids[i])
		}
	}
	return lost, nil
}

// Owners reads which instance holds each race's lease ("" for none), in
// one pipeline, and remembers them as the owners to forward to (Call).
func (c *Cluster) Owners(ctx context.Context, ids []string) (map[string]string, error) {
	cmds := make([]*redis.StringCmd, len(ids))
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.Get(ctx, c.o.Keys.Owner(id))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read owners: %w", classify(err))
	}
	out := make(map[string]string, len(ids))
	until := c.o.Clock.Now().Add(ownerMemory)
	for i, id := range ids {
		owner, err := cmds[i].Result()
		switch {
		case errors.Is(err, redis.Nil):
			c.owners.Delete(id)
		case err != nil:
			return nil, fmt.Errorf("race %s: owner: %w", id, classify(err))
		default:
			c.owners.Store(id, seenOwner{owner, until})
		}
		out[id] = owner
	}
	return out, nil
}

// Orphans lists live races whose lease ran out.
func (c *Cluster) Orphans(ctx context.Context) ([]string, error) {
	ids, err := c.rdb.ZRangeByScore(ctx, c.o.Keys.Live(), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(c.nowMs(), 10), Count: 100}).Result()
	if err != nil {
		return nil, fmt.Errorf("orphans: %w", classify(err))
	}
	return ids, nil
}

// Release gives up a finished race's lease.
func (c *Cluster) Release(ctx context.Context, id string) error {
	c.o.Extensions.forget(id)
	if err := releaseScript.Run(ctx, c.rdb, []string{c.o.Keys.Owner(id)}, c.o.Instance).Err(); err != nil {
		return fmt.Errorf("race %s: release: %w", id, classify(err))
	}
	if err := c.rdb.ZRem(ctx, c.o.Keys.Live(), id).Err(); err != nil {
		return fmt.Errorf("race %s: unlist: %w", id, classify(err))
	}
	return nil
}

// Handover gives up a live race's lease and marks it orphaned at once.
func (c *Cluster) Handover(ctx context.Context, id string) error {
	c.o.Extensions.forget(id)
	if err := handoverScript.Run(ctx, c.rdb, []string{c.o.Keys.Owner(id)}, c.o.Instance).Err(); err != nil {
		return fmt.Errorf("race %s: hand over: %w", id, classify(err))
	}
	if err := c.rdb.ZAdd(ctx, c.o.Keys.Live(), redis.Z{Score: 0, Member: id}).Err(); err != nil {
		return fmt.Errorf("race %s: list as orphaned: %w", id, classify(err))
	}
	return nil
}

// Call forwards req to the race's owner and waits for the reply.
func (c *Cluster) Call(ctx context.Context, req *fleet.Request) (*fleet.Reply, string, error) {
	rep, owner, err := c.call(ctx, req)
	if err != nil || rep.Err != nil && rep.Err.Code == notOwner {
		c.owners.Delete(req.Race) // look the owner up again next time
	}
	return rep, owner, err
}

// ownerMemory is how long Call trusts the owner it last saw of a race
// before it reads the lease again: a request to an instance that no longer
// owns the race is answered not-owner (or nobody hears it) and forgets it
// at once, so this only bounds the memory of races no longer forwarded
// for, which Renew sweeps.
const ownerMemory = 10 * time.Second

// seenOwner is an owner Call saw, and until when it trusts it.
type seenOwner struct {
	owner string
	until time.Time
}

// forgetOwners drops the owners seen longer ago than ownerMemory.
func (c *Cluster) forgetOwners() {
	now := c.o.Clock.Now()
	c.owners.Range(func(k, v any) bool {
		if !now.Before(v.(seenOwner).until) {
			c.owners.Delete(k)
		}
		return true
	})
}

// notOwner is the code of a reply from an instance that does not run the
// race.
const notOwner = fleet.CodeNotOwner

// forwardRetry is the pause before a forwarded request that reached
// nobody is sent again: the owner's lease is live, so its inbox is only
// being subscribed again (its pub/sub connection reconnecting).
const forwardRetry = 50 * time.Millisecond

// call forwards req to the race's owner as last seen (Call forgets it
// when it does not answer as the owner), looked up in Redis when not
// known: a forwarded request costs one PUBLISH each way.
//
// Whether the owner is gone is its lease's to say, never a count of
// listeners: a PUBLISH that reaches nobody on one Redis (the owner's
// pub/sub connection may be reconnecting) reads the lease, and is sent
// again while the lease names that owner, until ctx is done; only a race
// without a lease is reported as having no owner.
func (c *Cluster) call(ctx context.Context, req *fleet.Request) (*fleet.Reply, string, error) {
	var owner string
	now := c.o.Clock.Now()
	o, ok := c.owners.Load(req.Race)
	if ok = ok && now.Before(o.(seenOwner).until); ok {
		owner = o.(seenOwner).owner
	} else {
		var err error
		if owner, err = c.leaseOf(ctx, req.Race); err != nil {
			return nil, "", err
		}
	}
	if owner == c.o.Instance {
		return nil, owner, fmt.Errorf("race %s: %w", req.Race, fleet.ErrOwnerIsMe)
	}
	if !ok {
		c.owners.Store(req.Race, seenOwner{owner, now.Add(ownerMemory)})
	}
	n := c.next.Add(1)
	ch := make(chan *fleet.Reply, 1)
	c.mu.Lock()
	c.pending[n] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, n)
		c.mu.Unlock()
	}()
	if c.bus != nil {
		// On a Redis Cluster: by sharded pub/sub, to the inbox's node only;
		// whether the owner is there, its answer or its lease tells (below).
		req.Sending(owner)
		c.bus.Publish(inboxTopic(owner), &inboxEvent{envelope{N: n, From: c.o.Instance, Request: req}})
		return c.await(ctx, req, owner, ch)
	}
	b, err := json.Marshal(envelope{N: n, From: c.o.Instance, Request: req})
	if err != nil {
		return nil, owner, fmt.Errorf("encode request: %w", err)
	}
	_, onCluster := c.rdb.(*redis.ClusterClient)
	for {
		req.Sending(owner)
		receivers, err := c.publishRequest(ctx, c.o.Keys.Inbox(owner), b)
		if err != nil {
			return nil, owner, fmt.Errorf("race %s: forward: %w", req.Race, err)
		}
		// On a Redis Cluster the count is one node's (a resharding may
		// have moved the inbox's slot away from the node the owner
		// subscribed on): there only the owner's answer and its lease tell.
		if receivers > 0 || onCluster {
			return c.await(ctx, req, owner, ch)
		}
		lease, err := c.leaseOf(ctx, req.Race)
		if errors.Is(err, fleet.ErrNoOwner) {
			return nil, owner, err
		}
		if err != nil {
			return nil, owner, fmt.Errorf("race %s: owner %s does not listen: %w", req.Race, owner, err)
		}
		if lease == c.o.Instance {
			return nil, lease, fmt.Errorf("race %s: %w", req.Race, fleet.ErrOwnerIsMe)
		}
		if lease != owner {
			owner = lease
			c.owners.Store(req.Race, seenOwner{owner, c.o.Clock.Now().Add(ownerMemory)})
			continue
		}
		select {
		case <-ctx.Done():
			return nil, owner, fmt.Errorf("race %s: owner %s does not listen, and its lease is live: %w", req.Race, owner, race.ErrUnavailable)
		case <-c.ctx.Done():
			return nil, owner, errClosing
		case <-time.After(forwardRetry):
		}
	}
}

// leaseOf reads which instance owns race id; it fails with
// fleet.ErrNoOwner when the race has no lease.
func (c *Cluster) leaseOf(ctx context.Context, id string) (string, error) {
	owner, err := c.rdb.Get(ctx, c.o.Keys.Owner(id)).Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("race %s: %w", id, fleet.ErrNoOwner)
	}
	if err != nil {
		return "", fmt.Errorf("race %s: owner: %w", id, classify(err))
	}
	return owner, nil
}

// await waits for the answer to forwarded request req: its reply on ch, or
// the event that answers it (Request.ByEvent). An owner that does not
// answer in time is taken for gone only once its lease is; when the
// lease names another instance now, the request is to be sent there.
func (c *Cluster) await(ctx context.Context, req *fleet.Request, owner string, ch chan *fleet.Reply) (*fleet.Reply, string, error) {
	select {
	case rep := <-ch:
		return rep, owner, nil
	case <-req.Answered():
		return &fleet.Reply{}, owner, nil
	case <-ctx.Done():
	}
	lctx, cancel := context.WithTimeout(c.ctx, opTimeout)
	defer cancel()
	lease, err := c.leaseOf(lctx, req.Race)
	switch {
	case errors.Is(err, fleet.ErrNoOwner):
		return nil, owner, fmt.Errorf("race %s: owner %s did not answer and its lease is gone: %w", req.Race, owner, fleet.ErrNoOwner)
	case err == nil && lease != owner:
		return nil, owner, fmt.Errorf("race %s: owner %s did not answer and %s holds the lease now: %w", req.Race, owner, lease, fleet.ErrOwnerChanged)
	}
	return nil, owner, fmt.Errorf("race %s: owner %s did not answer: %w", req.Race, owner, race.ErrUnavailable)
}

func (c *Cluster) receiveLoop() {
	defer c.wg.Done()
	in := c.ps.Channel(redis.WithChannelSize(inQueue))
	for {
		select {
		case <-c.ctx.Done():
			return
		case msg, ok := <-in:
			if !ok {
				return
			}
			c.receive(msg.Payload)
		}
	}
}

// receive handles one inbox message of the classic channel.
func (c *Cluster) receive(payload string) {
	var e envelope
	if err := json.Unmarshal([]byte(payload), &e); err != nil {
		c.log.Warn().Err(err).Msg("inbox message unreadable")
		return
	}
	c.route(&e)
}

// route hands an inbox message on: a reply to its caller, a request to its
// connection's worker.
func (c *Cluster) route(e *envelope) {
	if e.Reply != nil {
		c.mu.Lock()
		ch := c.pending[e.N]
		c.mu.Unlock()
		if ch != nil {
			ch <- e.Reply
		}
		return
	}
	if e.Request == nil {
		return
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(e.Request.Topic))
	select {
	case c.work[h.Sum32()%requestWorkers] <- e:
	case <-c.ctx.Done():
	}
}

func (c *Cluster) worker(in <-chan *envelope) {
	defer c.wg.Done()
	for {
		select {
		case <-c.ctx.Done():
			return
		case e := <-in:
			c.serve(e)
		}
	}
}

// serve answers one forwarded request.
func (c *Cluster) serve(e *envelope) {
	c.mu.Lock()
	h := c.handler
	c.mu.Unlock()
	rep := &fleet.Reply{Err: &fleet.WireError{Code: notOwner, Message: "no races here"}}
	if h != nil {
		rep = h(e.Request)
	}
	if rep == nil {
		return // answered by the event the request made (Request.ByEvent)
	}
	if c.bus != nil {
		c.bus.Publish(inboxTopic(e.From), &inboxEvent{envelope{N: e.N, Reply: rep}})
		return
	}
	b, err := json.Marshal(envelope{N: e.N, Reply: rep})
	if err != nil {
		c.log.Error().Err(err).Msg("reply not encoded")
		return
	}
	select {
	case c.outbox <- message{channel: c.o.Keys.Inbox(e.From), payload: b}:
	case <-c.ctx.Done():
	}
}

// errClosing is a forward cut short because this instance is closing.
var errClosing = fmt.Errorf("instance closing: %w", errors.Join(race.ErrUnavailable, fleet.ErrClosed))

// publishRequest publishes request b on inbox in the outbox goroutine's
// next pipeline, with whatever else is waiting (one round trip for many
// under load), and returns how many subscribers got it.
func (c *Cluster) publishRequest(ctx context.Context, inbox string, b []byte) (int64, error) {
	sent := make(chan published, 1)
	select {
	case c.outbox <- message{inbox, b, sent}:
	case <-ctx.Done():
		return 0, race.ErrUnavailable
	case <-c.ctx.Done():
		return 0, errClosing
	}
	select {
	case p := <-sent:
		return p.receivers, p.err
	case <-ctx.Done():
		return 0, race.ErrUnavailable
	case <-c.ctx.Done():
		return 0, errClosing
	}
}

// outboxLoop publishes the queued inbox messages.
func (c *Cluster) outboxLoop() {
	defer c.wg.Done()
	send := func(ctx context.Context, batch []message) error {
		return publishVia(ctx, c.rdb, c.o.Keys.prefix()+"bus", batch)
	}
	publishBatches(c.ctx, c.outbox, send, func(n int, err error) {
		// The callers time out and answer unavailable; the requests
		// answered were handled (a move is stored).
		c.log.Warn().Err(err).Int("messages", n).Msg("inbox messages not sent")
	})
}

// inboxTopic is instance id's inbox as a bus topic (on a Redis Cluster).
func inboxTopic(id string) string { return "instance:" + id }

// inboxEvent is an inbox message carried by the Bus: it is no race event,
// and goes to no connection.
type inboxEvent struct{ envelope }

// EventType is "inbox".
func (*inboxEvent) EventType() string { return "inbox" }

// inboxSub takes this instance's inbox messages off the Bus.
type inboxSub struct{ c *Cluster }

// Deliver routes an inbox message.
func (s inboxSub) Deliver(ev race.Event) {
	if e, ok := ev.(*inboxEvent); ok {
		s.c.route(&e.envelope)
	}
}
