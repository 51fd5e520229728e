package redisrace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"sirtommy/race"
)

// Bus sizes.
const (
	// outQueue is how many events may wait for the publisher goroutine:
	// a second of a busy instance (thousands of moves a second, three
	// events each). Past it events are dropped and counted, never
	// blocking the race that publishes.
	outQueue = 16 << 10
	// opsQueue is how many subscribe and unsubscribe requests may wait
	// for Redis.
	opsQueue = 4 << 10
	// syncPoll is how often Sync publishes its marker until it comes back.
	syncPoll = 5 * time.Millisecond
	// lapseSettle is how long after the first confirmation of a
	// subscription made again the bus tells of the lapse (OnLapse): the
	// others of the same reconnect arrive within it, and one call covers
	// them all.
	lapseSettle = 100 * time.Millisecond
)

// BusStats count what the bus could not do.
type BusStats struct {
	Dropped     atomic.Int64 // events not published: the queue was full
	PublishErrs atomic.Int64 // pipelines Redis refused or could not take
	DecodeErrs  atomic.Int64 // received messages that were not events
	Lapses      atomic.Int64 // subscriptions lapsed and made again (OnLapse)
}

// Bus is a race.Bus over Redis pub/sub. Publish delivers at once to the
// subscribers on this instance and queues the event for Redis, which
// brings it to the other instances; one goroutine publishes, so the events
// of one topic reach every instance in the order they were published.
// On a Redis Cluster it uses sharded pub/sub (SPUBLISH, SSUBSCRIBE: Redis
// 7): a race's channels share one of BusShards hash tags, an event goes to
// the node serving that tag's slot only (plain PUBLISH is broadcast to
// every node), and the bus holds one subscription connection per tag in
// use, made again on the slot's new node when a resharding moves it.
// Subscribing happens in the background: events published before Redis
// has confirmed a subscription may not reach it (the race sends a full
// state to every new subscriber, so nothing is missed for good).
type Bus struct {
	rdb    redis.UniversalClient
	keys   Keys
	origin string
	// ownPrefix starts this instance's own messages (originPrefix).
	ownPrefix string
	log       zerolog.Logger
	// Stats are the bus's counters.
	Stats BusStats

	mu   sync.RWMutex
	subs map[string]map[*entry]struct{} // by channel

	// ps holds every subscription on one Redis; on a Redis Cluster
	// (sharded) shards holds one per bus shard in use instead. Both are
	// changed by subscribeLoop only, and read by Close under psMu.
	ps      *redis.PubSub
	sharded bool
	psMu    sync.Mutex
	shards  [BusShards]*redis.PubSub
	// unsubbing counts the sharded unsubscribes of each channel that
	// Redis has not confirmed yet: a sunsubscribe Redis sends of its own
	// (a resharding) is told from those.
	unsubMu   sync.Mutex
	unsubbing map[string]int

	// pending counts, on one Redis, the messages that Publish queued and
	// Redis has not taken yet: Carry carries nothing past them.
	pending atomic.Int64

	out    chan message
	ops    chan subOp
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	syncMu  sync.Mutex
	syncN   int
	syncers map[string]chan struct{} // by marker channel

	// quiet is how long a subscription connection may stay silent
	// before the bus pings it (quietPing).
	quiet time.Duration

	// lapseMu guards onLapse and lapseDue (OnLapse).
	lapseMu  sync.Mutex
	onLapse  []func()
	lapseDue bool
}

type entry struct{ s race.Subscriber }

// subOp is a change of the bus's subscriptions: subscribe or unsubscribe
// channel, or (renew) subscribe shard's channels again on a new
// connection, where a resharding moved its slot.
type subOp struct {
	channel string
	sub     bool
	renew   bool
	shard   int
	// sent, if not nil, is closed once the command carrying the change
	// was handed to Redis (Sync's marker: see syncShard).
	sent chan struct{}
}

var _ race.Bus = (*Bus)(nil)

// NewBus starts a Bus on rdb; origin names this instance (unique per
// process: a random token). On a *redis.ClusterClient it uses sharded
// pub/sub. Close stops it.
func NewBus(rdb redis.UniversalClient, keys Keys, origin string, log zerolog.Logger) *Bus {
	return newBus(rdb, keys, origin, log, quietPing)
}

// newBus is NewBus with the silence after which a subscription
// connection is pinged.
func newBus(rdb redis.UniversalClient, keys Keys, origin string, log zerolog.Logger, quiet time.Duration) *Bus {
	ctx, cancel := context.WithCancel(context.Background())
	_, sharded := rdb.(*redis.ClusterClient)
	b := &Bus{
		rdb: rdb, keys: keys, origin: origin, ownPrefix: originPrefix(origin), log: log,
		subs:    make(map[string]map[*entry]struct{}),
		sharded: sharded, unsubbing: make(map[string]int),
		out:     make(chan message, outQueue),
		ops:     make(chan subOp, opsQueue),
		ctx:     ctx,
		cancel:  cancel,
		syncers: make(map[string]chan struct{}),
		quiet:   quiet,
	}
	b.wg.Add(2)
	if !sharded {
		b.ps = rdb.Subscribe(ctx)
		b.wg.Add(1)
		go b.receiveLoop(b.ps)
	}
	go b.publishLoop()
	go b.subscribeLoop()
	return b
}

// Close stops the bus's goroutines and its pub/sub connections.
func (b *Bus) Close() error {
	b.cancel()
	b.psMu.Lock()
	var err error
	if b.ps != nil {
		err = b.ps.Close()
	}
	for _, ps := range b.shards {
		if ps != nil {
			_ = ps.Close()
		}
	}
	b.psMu.Unlock()
	b.wg.Wait()
	return err
}

// Publish delivers ev to this instance's subscribers of topic and queues it
// for the others.
func (b *Bus) Publish(topic string, ev race.Event) {
	ch := b.keys.Channel(topic)
	for _, s := range b.local(ch) {
		deliver(s, "", ev)
	}
	payload, err := encode(b.ownPrefix, ev)
	if err != nil {
		b.log.Error().Err(err).Str("topic", topic).Msg("event not published")
		return
	}
	b.pending.Add(1)
	select {
	case b.out <- message{channel: ch, payload: payload}:
	default:
		b.pending.Add(-1)
		b.Stats.Dropped.Add(1)
	}
}

var _ race.Carrier = (*Bus)(nil)

// Carry encodes ev for topic's channel, for the store's append to publish
// (Store.AppendCarrying), on one Redis while nothing Publish queued is
// still on its way: Redis then has every earlier message, and the
// append's comes after them all. The order across channels matters, not
// only within one: a connection attached again takes its joined on its
// own channel before its seat's events on the seat's (the fleet's gate).
// On a Redis Cluster the append's node is not the one the bus publishes
// through, so nothing is carried.
func (b *Bus) Carry(topic string, ev race.Event) (race.Carried, bool) {
	if b.sharded || b.pending.Load() > 0 {
		return race.Carried{}, false
	}
	payload, err := encode(b.ownPrefix, ev)
	if err != nil {
		return race.Carried{}, false // Publish logs it
	}
	return race.Carried{Channel: b.keys.Channel(topic), Payload: payload}, true
}

// Send publishes ev on topic for the other instances (not to this one's
// subscribers) at once, by a command of its own rather than in the queue
// of Publish's events, and returns how many subscribers Redis counted: on
// a Redis Cluster (SPUBLISH), those of the node that serves the topic's
// slot. The fleet's frames go this way: a request does not wait behind a
// busy instance's events, and its sender hears whether anybody listens.
func (b *Bus) Send(ctx context.Context, topic string, ev race.Event) (int64, error) {
	payload, err := encode(b.ownPrefix, ev)
	if err != nil {
		return 0, err
	}
	ch := b.keys.Channel(topic)
	var n int64
	if b.sharded {
		n, err = b.rdb.SPublish(ctx, ch, payload).Result()
	} else {
		n, err = b.rdb.Publish(ctx, ch, payload).Result()
	}
	if err != nil {
		return 0, fmt.Errorf("send on %s: %w", topic, classify(err))
	}
	return n, nil
}

// Relays is true: the bus carries events to other instances.
func (b *Bus) Relays() bool { return true }

// PublishLocal delivers ev to this instance's subscribers of topic only,
// sending nothing to Redis: no other instance follows the topic (see
// race.Bus).
func (b *Bus) PublishLocal(topic string, ev race.Event) {
	for _, s := range b.local(b.keys.Channel(topic)) {
		deliver(s, "", ev)
	}
}

// deliver hands s the event ev published by instance origin ("" for this
// one), telling it where it came from if it asks (race.Sourced).
func deliver(s race.Subscriber, origin string, ev race.Event) {
	if src, ok := s.(race.Sourced); ok {
		src.DeliverFrom(origin, ev)
		return
	}
	s.Deliver(ev)
}

// Subscribe adds s to topic, here at once and through Redis soon after;
// cancel removes it and may be called more than once.
func (b *Bus) Subscribe(topic string, s race.Subscriber) (cancel func()) {
	ch := b.keys.Channel(topic)
	e := &entry{s}
	b.mu.Lock()
	m := b.subs[ch]
	if m == nil {
		m = make(map[*entry]struct{})
		b.subs[ch] = m
		b.queueOp(subOp{channel: ch, sub: true})
	}
	m[e] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if m := b.subs[ch]; m != nil {
				delete(m, e)
				if len(m) == 0 {
					delete(b.subs, ch)
					b.queueOp(subOp{channel: ch, sub: false})
				}
			}
		})
	}
}

// OnLapse has f called, on a goroutine of its own, each time the bus's
// subscriptions lapsed and were made again: a pub/sub connection dropped
// and go-redis subscribed its channels again on a new one, or (Redis
// Cluster) a resharding moved a shard's slot. What was published in
// between never arrives: the fleet then attaches its connections again
// (fleet.Lapser).
func (b *Bus) OnLapse(f func()) {
	b.lapseMu.Lock()
	defer b.lapseMu.Unlock()
	b.onLapse = append(b.onLapse, f)
}

// lapsed tells OnLapse's functions, once for the confirmations that
// arrive within lapseSettle.
func (b *Bus) lapsed() {
	b.lapseMu.Lock()
	defer b.lapseMu.Unlock()
	if b.lapseDue {
		return
	}
	b.lapseDue = true
	time.AfterFunc(lapseSettle, func() {
		b.lapseMu.Lock()
		fs := b.onLapse
		b.lapseDue = false
		b.lapseMu.Unlock()
		if b.ctx.Err() != nil {
			return
		}
		b.Stats.Lapses.Add(1)
		b.log.Info().Msg("pub/sub subscriptions made again: what was published meanwhile is lost")
		for _, f := range fs {
			f()
		}
	})
}

// queueOp is called with mu held, so ops reach Redis in the order the
// subscriptions changed.
func (b *Bus) queueOp(op subOp) {
	select {
	case b.ops <- op:
	case <-b.ctx.Done():
	}
}

// subscribeRunMax is the most channels one SUBSCRIBE or UNSUBSCRIBE
// carries.
const subscribeRunMax = 256

// subscribeLoop makes the subscription changes in the order they were
// queued. On one Redis, the changes of one kind waiting in a row go in one
// command (a connection's topics and its Sync marker, or every
// connection's that joined meanwhile): Redis confirms a command's
// channels in order, so Sync's rule holds, and a race's subscriptions
// cost a few commands rather than one a channel.
func (b *Bus) subscribeLoop() {
	defer b.wg.Done()
	var next *subOp // taken off the queue, not of the run before it
	for {
		var op subOp
		if next != nil {
			op, next = *next, nil
		} else {
			select {
			case <-b.ctx.Done():
				return
			case op = <-b.ops:
			}
		}
		var err error
		ops := []subOp{op}
		switch {
		case op.renew:
			b.renewShard(op.shard)
		case b.sharded:
			err = b.changeShard(op)
		default:
			ops, next = b.run(op)
			channels := make([]string, len(ops))
			for i, o := range ops {
				channels[i] = o.channel
			}
			if op.sub {
				// go-redis remembers the channels even when this fails
				// and subscribes again whenever it reconnects.
				err = b.ps.Subscribe(b.ctx, channels...)
			} else {
				err = b.ps.Unsubscribe(b.ctx, channels...)
			}
		}
		for _, o := range ops {
			if o.sent != nil {
				close(o.sent)
			}
		}
		if err != nil && b.ctx.Err() == nil {
			b.log.Warn().Err(err).Int("channels", len(ops)).Str("first", op.channel).Bool("subscribe", op.sub).Msg("pub/sub change deferred to the reconnect")
		}
	}
}

// run takes off the queue the changes waiting behind first that are of
// its kind (subscribe or unsubscribe), up to subscribeRunMax in all, and
// returns them, first included; next is the change that ended the run,
// if one was taken.
func (b *Bus) run(first subOp) (ops []subOp, next *subOp) {
	ops = []subOp{first}
	for len(ops) < subscribeRunMax {
		select {
		case op := <-b.ops:
			if op.renew || op.sub != first.sub {
				return ops, &op
			}
			ops = append(ops, op)
		default:
			return ops, nil
		}
	}
	return ops, nil
}

// changeShard makes op on the subscription connection of its channel's
// shard (sharded pub/sub), opening it on first use. go-redis subscribes
// a sharded connection on the master of its first channel's slot, and
// again with all its channels, in one SSUBSCRIBE, when it reconnects:
// they share a hash tag, so that is one slot.
func (b *Bus) changeShard(op subOp) error {
	i := b.keys.shardOfChannel(op.channel)
	if i < 0 {
		return fmt.Errorf("channel %q has no bus shard", op.channel)
	}
	ps := b.shards[i]
	switch {
	case ps == nil && op.sub:
		b.openShard(i, op.channel)
		return nil
	case ps == nil:
		return nil
	case op.sub:
		return ps.SSubscribe(b.ctx, op.channel)
	default:
		b.unsubMu.Lock()
		b.unsubbing[op.channel]++
		b.unsubMu.Unlock()
		return ps.SUnsubscribe(b.ctx, op.channel)
	}
}

// ownUnsubscribe reports whether a sunsubscribe of channel confirms one
// this bus asked for (else Redis ended the subscription: a resharding).
func (b *Bus) ownUnsubscribe(channel string) bool {
	b.unsubMu.Lock()
	defer b.unsubMu.Unlock()
	n := b.unsubbing[channel]
	if n == 0 {
		return false
	}
	if n == 1 {
		delete(b.unsubbing, channel)
	} else {
		b.unsubbing[channel] = n - 1
	}
	return true
}

// openShard opens shard i's subscription connection with channels and
// starts its receiver.
func (b *Bus) openShard(i int, channels ...string) {
	b.startShard(i, b.rdb.(*redis.ClusterClient).SSubscribe(b.ctx, channels...))
}

// startShard makes ps shard i's subscription connection and starts its
// receiver, unless the bus is closing (then ps is closed).
func (b *Bus) startShard(i int, ps *redis.PubSub) {
	b.psMu.Lock()
	defer b.psMu.Unlock()
	if b.ctx.Err() != nil {
		_ = ps.Close()
		return
	}
	b.shards[i] = ps
	b.wg.Add(1)
	go b.receiveLoop(ps)
}

// renewShard replaces shard i's subscription connection with a new one
// holding the channels the bus still wants there: Redis ended them on the
// old node (a resharding moved the shard's slot), and go-redis does not
// subscribe them again by itself. It reloads where the slots are, waits
// for Redis to confirm each channel, and tries again in renewRetry while
// that fails.
func (b *Bus) renewShard(i int) {
	channels := b.wantedIn(i)
	b.psMu.Lock()
	old := b.shards[i]
	b.shards[i] = nil
	b.psMu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	if len(channels) == 0 {
		return
	}
	b.log.Info().Int("shard", i).Int("channels", len(channels)).Msg("bus shard moved: subscribing again")
	cc := b.rdb.(*redis.ClusterClient)
	ctx, cancel := context.WithTimeout(b.ctx, opTimeout)
	defer cancel()
	cc.ReloadState(ctx)
	ps := cc.SSubscribe(ctx, channels...)
	for confirmed := 0; confirmed < len(channels); {
		m, err := ps.Receive(ctx)
		if err != nil {
			_ = ps.Close()
			if b.ctx.Err() == nil {
				b.log.Warn().Err(err).Int("shard", i).Msg("bus shard not subscribed again; trying again")
				time.AfterFunc(renewRetry, func() { b.queueOp(subOp{renew: true, shard: i}) })
			}
			return
		}
		switch m := m.(type) {
		case *redis.Subscription:
			confirmed++
		case *redis.Message:
			b.receive(m)
		}
	}
	b.startShard(i, ps)
	b.lapsed() // what the old node had for these channels is lost
}

// renewRetry is how soon a bus shard that could not be subscribed again
// tries again.
const renewRetry = 500 * time.Millisecond

// wantedIn lists the channels of bus shard i the bus subscribes to: its
// subscribers' and its Sync markers'.
func (b *Bus) wantedIn(i int) []string {
	var channels []string
	b.mu.RLock()
	for ch := range b.subs {
		if b.keys.shardOfChannel(ch) == i {
			channels = append(channels, ch)
		}
	}
	b.mu.RUnlock()
	b.syncMu.Lock()
	for ch := range b.syncers {
		if b.keys.shardOfChannel(ch) == i {
			channels = append(channels, ch)
		}
	}
	b.syncMu.Unlock()
	return channels
}

// lost handles the end of a subscription to channel that Redis, not this
// bus, ended (sharded pub/sub, after a resharding): when the bus still
// wants the channel, its shard is subscribed again on a new connection.
func (b *Bus) lost(channel string) {
	if b.ownUnsubscribe(channel) {
		return // the confirmation of an unsubscribe of ours
	}
	b.mu.RLock()
	_, want := b.subs[channel]
	b.mu.RUnlock()
	if !want {
		b.syncMu.Lock()
		_, want = b.syncers[channel]
		b.syncMu.Unlock()
	}
	if i := b.keys.shardOfChannel(channel); want && i >= 0 {
		b.queueOp(subOp{renew: true, shard: i})
	}
}

func (b *Bus) publishLoop() {
	defer b.wg.Done()
	send := func(ctx context.Context, batch []message) error {
		return publishVia(ctx, b.rdb, b.keys.prefix()+"bus", batch)
	}
	if b.sharded {
		send = b.spublish
	}
	counted := func(ctx context.Context, batch []message) error {
		err := send(ctx, batch)
		b.pending.Add(-int64(len(batch))) // Redis has them, or they are lost
		return err
	}
	publishBatches(b.ctx, b.out, counted, func(n int, err error) {
		b.Stats.PublishErrs.Add(1)
		b.log.Warn().Err(err).Int("events", n).Msg("events not published")
	})
}

// spublish publishes batch by sharded pub/sub, in one cluster pipeline:
// go-redis sends each SPUBLISH to the node serving its channel's slot
// (following a resharding's redirections), each node's share in the
// order of the batch, so a race's events (one bus shard) keep theirs.
func (b *Bus) spublish(ctx context.Context, batch []message) error {
	_, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, m := range batch {
			p.SPublish(ctx, m.channel, m.payload)
		}
		return nil
	})
	if err != nil {
		return classify(err)
	}
	return nil
}

// Keep-alive of a subscription connection. go-redis's channel of messages
// pings a quiet connection, but it reads on a goroutine of its own and
// hands each message over a Go channel, waking its health check as well:
// the bus reads on its receive loop instead and keeps the connection alive
// itself.
const (
	// quietPing is how long a subscription connection may stay silent
	// before the bus pings Redis on it: a ping whose write fails drops
	// the connection, and go-redis makes it again with its subscriptions
	// (a lapse), as its channel's health check would; so does a read
	// that heard nothing, ping answers included, for deafAfter.
	quietPing = 3 * time.Second
	// pingTimeout bounds a keep-alive ping.
	pingTimeout = 5 * time.Second
	// receiveRetry is how long the receive loop waits after a second
	// error in a row before it reads again (go-redis reconnects in
	// between).
	receiveRetry = 100 * time.Millisecond
)

// receiveLoop reads ps's messages and subscription confirmations on its
// own goroutine until ps is closed.
func (b *Bus) receiveLoop(ps *redis.PubSub) {
	defer b.wg.Done()
	var heard atomic.Uint64
	stop := make(chan struct{})
	defer close(stop)
	b.wg.Add(1)
	go b.keepAlive(ps, &heard, stop)
	// confirmed holds the channels Redis confirmed on this connection: a
	// second confirmation of one, with no unsubscribe in between, is
	// go-redis subscribing it again on a new connection (the old one
	// dropped), so the subscriptions lapsed.
	confirmed := make(map[string]bool)
	errs := 0
	readCtx, deafAfter := &readDeadline{Context: b.ctx}, b.deafAfter()
	for {
		readCtx.at.Store(time.Now().Add(deafAfter).UnixNano())
		m, err := ps.Receive(readCtx)
		if err != nil {
			if b.ctx.Err() != nil || errors.Is(err, redis.ErrClosed) {
				return
			}
			if errs > 0 {
				select {
				case <-b.ctx.Done():
					return
				case <-time.After(receiveRetry):
				}
			}
			errs++
			continue
		}
		errs = 0
		heard.Add(1)
		switch m := m.(type) {
		case *redis.Message:
			b.receive(m)
		case *redis.Subscription:
			switch m.Kind {
			case "subscribe", "ssubscribe":
				if confirmed[m.Channel] {
					b.lapsed()
				}
				confirmed[m.Channel] = true
			case "unsubscribe":
				delete(confirmed, m.Channel)
			case "sunsubscribe":
				delete(confirmed, m.Channel)
				b.lost(m.Channel)
			}
		}
	}
}

// deafAfter is how long a subscription connection may stay silent,
// pinged, before it is taken for deaf: keepAlive pings it between one
// and two quiets after the last thing heard, and Redis answers a ping
// within pingTimeout.
func (b *Bus) deafAfter() time.Duration { return 2*b.quiet + pingTimeout }

// readDeadline is the receive loop's context for one read: its Deadline
// is the read's (go-redis sets the connection's read deadline from it)
// and it is otherwise the bus's. A read that times out so is a deaf
// connection (a half-open one takes a ping's write and never answers),
// which go-redis drops and makes again, with its subscriptions, as it
// does on a failed write: with a timeout of its own instead (ReceiveTimeout)
// it would keep the connection. Set before each read, it needs no timer
// of its own, as context.WithDeadline would make for every message.
type readDeadline struct {
	context.Context
	at atomic.Int64 // Unix nanoseconds
}

// Deadline is the read's deadline.
func (d *readDeadline) Deadline() (time.Time, bool) { return time.Unix(0, d.at.Load()), true }

// keepAlive pings Redis on ps when nothing was heard on it (heard did not
// move) for a whole quietPing, until done is closed.
func (b *Bus) keepAlive(ps *redis.PubSub, heard *atomic.Uint64, done <-chan struct{}) {
	defer b.wg.Done()
	tick := time.NewTicker(b.quiet)
	defer tick.Stop()
	last := heard.Load()
	for {
		select {
		case <-done:
			return
		case <-b.ctx.Done():
			return
		case <-tick.C:
		}
		if n := heard.Load(); n != last {
			last = n
			continue
		}
		ctx, cancel := context.WithTimeout(b.ctx, pingTimeout)
		// A failed ping's connection is dropped by go-redis; the receive
		// loop's next read makes it again.
		_ = ps.Ping(ctx)
		cancel()
	}
}

// Sync waits until every subscription made before it is live in Redis:
// it subscribes to a marker channel of its own after them and publishes on
// it until the marker comes back (Redis handles one connection's
// subscriptions in order). With sharded pub/sub it does so on each
// shard's connection that holds a subscription.
func (b *Bus) Sync(ctx context.Context) error {
	shards := []int{0}
	if b.sharded {
		shards = b.subscribedShards()
	}
	errs := make(chan error, len(shards))
	for _, i := range shards {
		go func() { errs <- b.syncShard(ctx, i) }()
	}
	var first error
	for range shards {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// subscribedShards lists the bus shards this bus subscribes on.
func (b *Bus) subscribedShards() []int {
	var in [BusShards]bool
	b.mu.RLock()
	for ch := range b.subs {
		if i := b.keys.shardOfChannel(ch); i >= 0 {
			in[i] = true
		}
	}
	b.mu.RUnlock()
	var out []int
	for i, ok := range in {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// syncMarker is the payload of Sync's marker messages.
const syncMarker = "sync"

// syncShard is Sync on the connection of bus shard i.
func (b *Bus) syncShard(ctx context.Context, i int) error {
	b.syncMu.Lock()
	b.syncN++
	ch := b.keys.shardStem(i) + ":bus-sync:" + b.origin + ":" + strconv.Itoa(b.syncN)
	done := make(chan struct{})
	b.syncers[ch] = done
	b.syncMu.Unlock()
	defer func() {
		b.syncMu.Lock()
		delete(b.syncers, ch)
		b.syncMu.Unlock()
		b.queueOp(subOp{channel: ch, sub: false})
	}()
	// The first marker goes once the subscription was handed to Redis,
	// which then nearly always has it first; one sent before it would
	// be lost, and Sync wait a poll for the next.
	sent := make(chan struct{})
	b.queueOp(subOp{channel: ch, sub: true, sent: sent})
	tick := time.NewTicker(syncPoll)
	defer tick.Stop()
	select {
	case <-sent:
	case <-tick.C:
	case <-ctx.Done():
		return fmt.Errorf("bus sync: %w", ctx.Err())
	}
	for {
		if b.sharded {
			_ = b.rdb.SPublish(ctx, ch, syncMarker).Err()
		} else {
			_ = b.rdb.Publish(ctx, ch, syncMarker).Err()
		}
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("bus sync: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

func (b *Bus) receive(msg *redis.Message) {
	if msg.Payload == syncMarker {
		b.syncMu.Lock()
		if done, ok := b.syncers[msg.Channel]; ok {
			close(done)
			delete(b.syncers, msg.Channel)
		}
		b.syncMu.Unlock()
		return
	}
	if strings.HasPrefix(msg.Payload, b.ownPrefix) {
		return // delivered locally when published: not even decoded
	}
	subs := b.local(msg.Channel)
	if len(subs) == 0 {
		return // nobody here listens (any more): nothing to decode
	}
	origin, ev, err := decode(msg.Payload)
	if origin == b.origin {
		return // delivered locally when published
	}
	if err != nil {
		b.Stats.DecodeErrs.Add(1)
		b.log.Warn().Err(err).Str("channel", msg.Channel).Msg("message is not an event")
		return
	}
	for _, s := range subs {
		deliver(s, origin, ev)
	}
}

// local is a copy of channel's subscribers here: they are called without
// the bus's lock, since a subscriber may publish in turn (a connection of
// another instance, whose events go on to its own topic).
func (b *Bus) local(channel string) []race.Subscriber {
	b.mu.RLock()
	defer b.mu.RUnlock()
	m := b.subs[channel]
	if len(m) == 0 {
		return nil
	}
	out := make([]race.Subscriber, 0, len(m))
	for e := range m {
		out = append(out, e.s)
	}
	return out
}
