package redisrace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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
	// Bus carries the instances' inboxes (the fleet's frames), as it
	// carries the races' events: a classic channel on one Redis, a
	// sharded one on a Redis Cluster (each inbox on one node, followed
	// there across a resharding). Nil: the Cluster makes a Bus of its
	// own.
	Bus *Bus
	// Extensions, when set, is shared with the instance's Store: Renew
	// skips the races whose moves have just extended their leases. Nil:
	// every race is renewed every round.
	Extensions *Extensions
}

// Cluster is a fleet.Cluster in Redis: records as JSON strings, results
// set once with SET NX, leases as keys with an expiry plus a sorted set
// of live races by lease end, and the fleet's frames carried over the
// Bus to each instance's inbox channel.
type Cluster struct {
	rdb redis.UniversalClient
	o   ClusterOptions
	log zerolog.Logger

	// bus carries the inboxes; ownBus is set when the Cluster made it.
	bus     *Bus
	ownBus  bool
	unInbox func()
	// listener is the fleet's, once it listens (Listen).
	listener atomic.Pointer[func([]byte)]
}

var _ fleet.Cluster = (*Cluster)(nil)

// NewCluster starts a Cluster: it listens on this instance's inbox until
// Close.
func NewCluster(ctx context.Context, rdb redis.UniversalClient, o ClusterOptions) (*Cluster, error) {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	c := &Cluster{rdb: rdb, o: o, log: o.Log, bus: o.Bus}
	if c.bus == nil {
		c.bus, c.ownBus = NewBus(rdb, o.Keys, o.Instance, o.Log), true
	}
	c.unInbox = c.bus.Subscribe(inboxTopic(o.Instance), inboxSub{c})
	if err := c.bus.Sync(ctx); err != nil { // the inbox is subscribed
		_ = c.Close()
		return nil, fmt.Errorf("subscribe to the instance inbox: %w", classify(err))
	}
	return c, nil
}

// Close stops listening.
func (c *Cluster) Close() error {
	c.unInbox()
	if c.ownBus {
		return c.bus.Close()
	}
	return nil
}

// Instance names this instance.
func (c *Cluster) Instance() string { return c.o.Instance }

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
// one pipeline.
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
	for i, id := range ids {
		owner, err := cmds[i].Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("race %s: owner: %w", id, classify(err))
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

// Send publishes frame on instance to's inbox; heard is false when
// nobody listens there now (on a Redis Cluster, on the node that serves
// the inbox's slot: a resharding may have moved it, and the owner's
// subscription follows shortly).
func (c *Cluster) Send(ctx context.Context, to string, frame []byte) (bool, error) {
	n, err := c.bus.Send(ctx, inboxTopic(to), &frameEvent{frame})
	return n > 0, err
}

// Listen hands fn every frame sent to this instance's inbox.
func (c *Cluster) Listen(fn func(frame []byte)) { c.listener.Store(&fn) }

// inboxTopic is instance id's inbox as a bus topic.
func inboxTopic(id string) string { return "instance:" + id }

// frameEvent is a fleet frame as the Bus carries it: it is no race event,
// and goes to no connection. The frame is JSON, written into the message
// as it is.
type frameEvent struct{ b []byte }

// EventType is "frame".
func (*frameEvent) EventType() string { return "frame" }

// AppendJSON appends the frame as it is.
func (e *frameEvent) AppendJSON(b []byte) ([]byte, error) { return append(b, e.b...), nil }

// UnmarshalJSON keeps the frame.
func (e *frameEvent) UnmarshalJSON(b []byte) error {
	e.b = append(e.b[:0], b...)
	return nil
}

// inboxSub takes this instance's frames off the Bus.
type inboxSub struct{ c *Cluster }

// Deliver hands a frame to the fleet.
func (s inboxSub) Deliver(ev race.Event) {
	fn := s.c.listener.Load()
	if e, ok := ev.(*frameEvent); ok && fn != nil {
		(*fn)(e.b)
	}
}
