package redislobby

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"sirtommy/lobby"
)

// PlayerChannel is the pub/sub channel of player's notices: every
// instance holding a session of the player subscribes to it.
func (k Keys) PlayerChannel(player string) string { return k.lobbyStem() + ":player:" + player }

// InstanceChannel is an instance's own channel, subscribed from the
// start so that its subscription is never empty.
func (k Keys) InstanceChannel(instance string) string { return k.lobbyStem() + ":instance:" + instance }

// ChangedChannel carries the announcements that the open challenges
// changed (the announcing instance's id); every instance subscribes.
func (k Keys) ChangedChannel() string { return k.lobbyStem() + ":changed" }

// Courier is lobby.Courier over Redis pub/sub: a channel per player,
// subscribed by the instances that hold a session of theirs. PUBLISH
// answers how many subscribers got a message and PUBSUB NUMSUB how many
// listen, so a sender knows whether the player is connected anywhere (on
// a single Redis; Redis Cluster counts one node's subscribers only).
type Courier struct {
	rdb      redis.UniversalClient
	keys     Keys
	instance string
	log      zerolog.Logger
	ps       *redis.PubSub
	done     chan struct{}

	mu      sync.Mutex
	mine    map[string]bool // players this instance listens for
	started bool
}

var _ lobby.Courier = (*Courier)(nil)

// envelope is a notice on the wire, with the instance that sent it (which
// receives its own message too, and drops it).
type envelope struct {
	From   string       `json:"from"`
	Notice lobby.Notice `json:"notice"`
}

// NewCourier carries notices for instance on rdb; Close stops it.
func NewCourier(ctx context.Context, rdb redis.UniversalClient, keys Keys, instance string, log zerolog.Logger) (*Courier, error) {
	ps := rdb.Subscribe(ctx, keys.InstanceChannel(instance), keys.ChangedChannel())
	for range 2 { // the subscriptions' confirmations
		if _, err := ps.Receive(ctx); err != nil {
			_ = ps.Close()
			return nil, fmt.Errorf("redislobby: courier: %w", err)
		}
	}
	return &Courier{rdb: rdb, keys: keys, instance: instance, log: log, ps: ps, done: make(chan struct{}), mine: make(map[string]bool)}, nil
}

// Start delivers the notices other instances send to receive, and their
// announcements of changed challenges to changed.
func (c *Courier) Start(receive func(lobby.Notice), changed func()) {
	ch := c.ps.Channel()
	c.mu.Lock()
	c.started = true
	c.mu.Unlock()
	go func() {
		defer close(c.done)
		for m := range ch {
			if m.Channel == c.keys.ChangedChannel() {
				if m.Payload != c.instance {
					changed()
				}
				continue
			}
			var env envelope
			if err := json.Unmarshal([]byte(m.Payload), &env); err != nil {
				c.log.Warn().Err(err).Str("channel", m.Channel).Msg("bad notice")
				continue
			}
			if env.From != c.instance {
				receive(env.Notice)
			}
		}
	}()
}

// Listen subscribes to player's channel.
func (c *Courier) Listen(ctx context.Context, player string) error {
	if err := c.ps.Subscribe(ctx, c.keys.PlayerChannel(player)); err != nil {
		return fmt.Errorf("redislobby: listen for %s: %w", player, err)
	}
	c.mu.Lock()
	c.mine[player] = true
	c.mu.Unlock()
	return nil
}

// Unlisten unsubscribes from player's channel.
func (c *Courier) Unlisten(ctx context.Context, player string) error {
	c.mu.Lock()
	delete(c.mine, player)
	c.mu.Unlock()
	if err := c.ps.Unsubscribe(ctx, c.keys.PlayerChannel(player)); err != nil {
		return fmt.Errorf("redislobby: unlisten for %s: %w", player, err)
	}
	return nil
}

// others is how many of n subscribers of player's channel are other
// instances.
func (c *Courier) others(player string, n int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mine[player] {
		n--
	}
	return n
}

// Send publishes n on its player's channel.
func (c *Courier) Send(ctx context.Context, n lobby.Notice) (bool, error) {
	js, err := json.Marshal(envelope{From: c.instance, Notice: n})
	if err != nil {
		return false, fmt.Errorf("redislobby: notice: %w", err)
	}
	got, err := c.rdb.Publish(ctx, c.keys.PlayerChannel(n.Player), js).Result()
	if err != nil {
		return false, fmt.Errorf("redislobby: notice for %s: %w", n.Player, err)
	}
	return c.others(n.Player, got) > 0, nil
}

// Listening reports whether another instance listens for player.
func (c *Courier) Listening(ctx context.Context, player string) (bool, error) {
	ch := c.keys.PlayerChannel(player)
	subs, err := c.rdb.PubSubNumSub(ctx, ch).Result()
	if err != nil {
		return false, fmt.Errorf("redislobby: listeners of %s: %w", player, err)
	}
	return c.others(player, subs[ch]) > 0, nil
}

// Changed announces that the open challenges changed.
func (c *Courier) Changed(ctx context.Context) error {
	if err := c.rdb.Publish(ctx, c.keys.ChangedChannel(), c.instance).Err(); err != nil {
		return fmt.Errorf("redislobby: announce a change: %w", err)
	}
	return nil
}

// Close stops listening.
func (c *Courier) Close() error {
	err := c.ps.Close()
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if started {
		<-c.done // the channel closes with the PubSub
	}
	if err != nil {
		return fmt.Errorf("redislobby: courier: %w", err)
	}
	return nil
}
