package redisrace

import (
	"context"
	"fmt"
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
	// inQueue is go-redis's buffer of received messages.
	inQueue = 4 << 10
	// opsQueue is how many subscribe and unsubscribe requests may wait
	// for Redis.
	opsQueue = 4 << 10
	// syncPoll is how often Sync publishes its marker until it comes back.
	syncPoll = 5 * time.Millisecond
)

// BusStats count what the bus could not do.
type BusStats struct {
	Dropped     atomic.Int64 // events not published: the queue was full
	PublishErrs atomic.Int64 // pipelines Redis refused or could not take
	DecodeErrs  atomic.Int64 // received messages that were not events
}

// Bus is a race.Bus over Redis pub/sub. Publish delivers at once to the
// subscribers on this instance and queues the event for Redis, which
// brings it to the other instances; one goroutine publishes, so the events
// of one topic reach every instance in the order they were published.
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

	ps     *redis.PubSub
	out    chan message
	ops    chan subOp
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	syncMu  sync.Mutex
	syncN   int
	syncers map[string]chan struct{} // by marker channel
}

type entry struct{ s race.Subscriber }

type subOp struct {
	channel string
	sub     bool
}

var _ race.Bus = (*Bus)(nil)

// NewBus starts a Bus on rdb; origin names this instance (unique per
// process: a random token). Close stops it.
func NewBus(rdb redis.UniversalClient, keys Keys, origin string, log zerolog.Logger) *Bus {
	ctx, cancel := context.WithCancel(context.Background())
	b := &Bus{
		rdb: rdb, keys: keys, origin: origin, ownPrefix: originPrefix(origin), log: log,
		subs:    make(map[string]map[*entry]struct{}),
		ps:      rdb.Subscribe(ctx),
		out:     make(chan message, outQueue),
		ops:     make(chan subOp, opsQueue),
		ctx:     ctx,
		cancel:  cancel,
		syncers: make(map[string]chan struct{}),
	}
	b.wg.Add(3)
	go b.publishLoop()
	go b.receiveLoop()
	go b.subscribeLoop()
	return b
}

// Close stops the bus's goroutines and its pub/sub connection.
func (b *Bus) Close() error {
	b.cancel()
	err := b.ps.Close()
	b.wg.Wait()
	return err
}

// Publish delivers ev to this instance's subscribers of topic and queues it
// for the others.
func (b *Bus) Publish(topic string, ev race.Event) {
	ch := b.keys.Channel(topic)
	for _, s := range b.local(ch) {
		s.Deliver(ev)
	}
	payload, err := encode(b.origin, ev)
	if err != nil {
		b.log.Error().Err(err).Str("topic", topic).Msg("event not published")
		return
	}
	select {
	case b.out <- message{ch, payload}:
	default:
		b.Stats.Dropped.Add(1)
	}
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
		b.queueOp(subOp{ch, true})
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
					b.queueOp(subOp{ch, false})
				}
			}
		})
	}
}

// queueOp is called with mu held, so ops reach Redis in the order the
// subscriptions changed.
func (b *Bus) queueOp(op subOp) {
	select {
	case b.ops <- op:
	case <-b.ctx.Done():
	}
}

func (b *Bus) subscribeLoop() {
	defer b.wg.Done()
	for {
		select {
		case <-b.ctx.Done():
			return
		case op := <-b.ops:
			var err error
			if op.sub {
				// go-redis remembers the channel even when this fails and
				// subscribes again whenever it reconnects.
				err = b.ps.Subscribe(b.ctx, op.channel)
			} else {
				err = b.ps.Unsubscribe(b.ctx, op.channel)
			}
			if err != nil && b.ctx.Err() == nil {
				b.log.Warn().Err(err).Str("channel", op.channel).Bool("subscribe", op.sub).Msg("pub/sub change deferred to the reconnect")
			}
		}
	}
}

func (b *Bus) publishLoop() {
	defer b.wg.Done()
	publishBatches(b.ctx, b.rdb, b.keys.prefix()+"bus", b.out, func(n int, err error) {
		b.Stats.PublishErrs.Add(1)
		b.log.Warn().Err(err).Int("events", n).Msg("events not published")
	})
}

func (b *Bus) receiveLoop() {
	defer b.wg.Done()
	in := b.ps.Channel(redis.WithChannelSize(inQueue))
	for {
		select {
		case <-b.ctx.Done():
			return
		case msg, ok := <-in:
			if !ok {
				return
			}
			b.receive(msg)
		}
	}
}

// Sync waits until every subscription made before it is live in Redis:
// it subscribes to a marker channel of its own after them and publishes on
// it until the marker comes back (Redis handles one connection's
// subscriptions in order).
func (b *Bus) Sync(ctx context.Context) error {
	b.syncMu.Lock()
	b.syncN++
	ch := b.syncPrefix() + fmt.Sprint(b.syncN)
	done := make(chan struct{})
	b.syncers[ch] = done
	b.syncMu.Unlock()
	defer func() {
		b.syncMu.Lock()
		delete(b.syncers, ch)
		b.syncMu.Unlock()
		b.queueOp(subOp{ch, false})
	}()
	b.queueOp(subOp{ch, true})
	tick := time.NewTicker(syncPoll)
	defer tick.Stop()
	for {
		_ = b.rdb.Publish(ctx, ch, "sync").Err()
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("bus sync: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

func (b *Bus) syncPrefix() string { return b.keys.prefix() + "bus-sync:" + b.origin + ":" }

func (b *Bus) receive(msg *redis.Message) {
	if strings.HasPrefix(msg.Channel, b.syncPrefix()) {
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
		s.Deliver(ev)
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
