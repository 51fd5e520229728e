package redislobby

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

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

// Here is the hash of the instances holding a session of player
// (instance id -> Unix milliseconds, in Redis's clock, until which it
// counts): the presence key that says whether a player is connected
// anywhere.
func (k Keys) Here(player string) string { return k.lobbyStem() + ":here:" + player }

// Presence of players: an instance says it holds a player's session for
// HereTTL and says it again every HereRefresh, so a dead instance's
// players count as away within HereTTL, and a missed refresh or two is
// no flicker.
const (
	HereTTL     = 3 * lobby.DefaultTick
	HereRefresh = lobby.DefaultTick
)

// hereBatch bounds the presence keys one refresh script touches, so that
// a busy instance's refresh never holds Redis for long.
const hereBatch = 500

// keepHere says that instance ARGV[1] holds a session of each player
// whose Here key is in KEYS, for ARGV[2] milliseconds from Redis's now
// (so the instances' clocks need not agree). The key lives as long as
// its newest entry.
var keepHere = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
for _, k in ipairs(KEYS) do
  redis.call('HSET', k, ARGV[1], now + ttl)
  redis.call('PEXPIRE', k, ttl)
end
return #KEYS
`)

// othersHere counts the instances other than ARGV[1] in Here key KEYS[1]
// whose entry has not expired, removing those that have.
var othersHere = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local h = redis.call('HGETALL', KEYS[1])
local n = 0
for i = 1, #h, 2 do
  if tonumber(h[i + 1]) < now then
    redis.call('HDEL', KEYS[1], h[i])
  elseif h[i] ~= ARGV[1] then
    n = n + 1
  end
end
return n
`)

// Courier is lobby.Courier over Redis: a pub/sub channel per player,
// subscribed by the instances that hold a session of theirs, and a
// presence key per player that those instances keep fresh. Whether a
// player is connected anywhere is read from the presence key, never from
// a count of subscribers (PUBLISH's answer and PUBSUB NUMSUB count one
// node's subscribers on a Redis Cluster). On a Redis Cluster the
// channels are sharded (SSUBSCRIBE, SPUBLISH: Redis 7), so a notice goes
// to the node of the lobby's slot only instead of to every node; they
// all carry the lobby's hash tag, so one subscription connection holds
// them.
type Courier struct {
	rdb      redis.UniversalClient
	keys     Keys
	instance string
	log      zerolog.Logger
	sharded  bool
	done     chan struct{} // closed when the receiving goroutine ends
	stop     chan struct{} // closed by Close: the refresher stops, and a lost subscription is not renewed
	kept     chan struct{} // closed when the refresher ends

	// psMu orders changes of the subscriptions: Listen, Unlisten, and
	// renewing them all where a resharding moved the lobby's slot. It is
	// taken before mu.
	psMu sync.Mutex
	ps   *redis.PubSub // under psMu and mu; read under either

	mu      sync.Mutex
	mine    map[string]bool // players this instance listens for
	started bool
	closed  bool
}

var _ lobby.Courier = (*Courier)(nil)

// envelope is a notice on the wire, with the instance that sent it (which
// receives its own message too, and drops it).
type envelope struct {
	From   string       `json:"from"`
	Notice lobby.Notice `json:"notice"`
}

// NewCourier carries notices for instance on rdb; Close stops it. On a
// *redis.ClusterClient it uses sharded pub/sub.
func NewCourier(ctx context.Context, rdb redis.UniversalClient, keys Keys, instance string, log zerolog.Logger) (*Courier, error) {
	_, sharded := rdb.(*redis.ClusterClient)
	c := &Courier{rdb: rdb, keys: keys, instance: instance, log: log, sharded: sharded,
		done: make(chan struct{}), stop: make(chan struct{}), kept: make(chan struct{}), mine: make(map[string]bool)}
	ps, err := c.subscribe(ctx, []string{keys.InstanceChannel(instance), keys.ChangedChannel()})
	if err != nil {
		return nil, fmt.Errorf("redislobby: courier: %w", err)
	}
	c.ps = ps
	go c.refresh()
	return c, nil
}

// Start delivers the notices other instances send to receive, and their
// announcements of changed challenges to changed.
func (c *Courier) Start(receive func(lobby.Notice), changed func()) {
	c.mu.Lock()
	c.started = true
	ps := c.ps
	c.mu.Unlock()
	go func() {
		defer close(c.done)
		for ps != nil {
			for m := range ps.ChannelWithSubscriptions() {
				switch m := m.(type) {
				case *redis.Subscription:
					if m.Kind == "sunsubscribe" && c.lost(m.Channel) {
						c.renew(ps) // ends ps's channel
					}
				case *redis.Message:
					c.deliver(m, receive, changed)
				}
			}
			ps = c.next(ps)
		}
	}()
}

// deliver hands a message to receive or changed.
func (c *Courier) deliver(m *redis.Message, receive func(lobby.Notice), changed func()) {
	if m.Channel == c.keys.ChangedChannel() {
		if m.Payload != c.instance {
			changed()
		}
		return
	}
	var env envelope
	if err := json.Unmarshal([]byte(m.Payload), &env); err != nil {
		c.log.Warn().Err(err).Str("channel", m.Channel).Msg("bad notice")
		return
	}
	if env.From != c.instance {
		receive(env.Notice)
	}
}

// next is the subscription that replaced ps, or nil once closed.
func (c *Courier) next(ps *redis.PubSub) *redis.PubSub {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.ps == ps {
		return nil
	}
	return c.ps
}

// lost reports whether channel, which Redis just unsubscribed this
// instance from, is one it still wants: on a cluster Redis ends the
// sharded subscriptions of a slot that moved to another node.
func (c *Courier) lost(channel string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	if channel == c.keys.ChangedChannel() || channel == c.keys.InstanceChannel(c.instance) {
		return true
	}
	for p := range c.mine {
		if c.keys.PlayerChannel(p) == channel {
			return true
		}
	}
	return false
}

// renew subscribes to every channel again, on the node that now serves
// the lobby's slot, and closes old; until it succeeds (or Close), it
// tries again every HereRefresh, letting Listen and Unlisten in between.
// Notices sent meanwhile are lost (the players' presence keys still say
// they are connected).
func (c *Courier) renew(old *redis.PubSub) {
	c.log.Warn().Msg("the lobby's slot moved: subscribing again where it is now")
	for {
		done, err := c.renewOnce(old)
		if done {
			return
		}
		c.log.Warn().Err(err).Msg("the lobby's channels not subscribed again; trying again")
		select {
		case <-c.stop:
			return
		case <-time.After(HereRefresh):
		}
	}
}

// renewOnce is one try of renew: done once old is replaced (or closed).
func (c *Courier) renewOnce(old *redis.PubSub) (done bool, err error) {
	c.psMu.Lock()
	defer c.psMu.Unlock()
	c.mu.Lock()
	if c.closed || c.ps != old {
		c.mu.Unlock()
		return true, nil
	}
	channels := []string{c.keys.InstanceChannel(c.instance), c.keys.ChangedChannel()}
	for p := range c.mine {
		channels = append(channels, c.keys.PlayerChannel(p))
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), HereRefresh)
	defer cancel()
	if cc, ok := c.rdb.(*redis.ClusterClient); ok {
		cc.ReloadState(ctx) // where the slot is now
	}
	ps, err := c.subscribe(ctx, channels)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	c.ps = ps // Close, which takes psMu, has not run
	c.mu.Unlock()
	_ = old.Close()
	return true, nil
}

// subscribe makes a subscription to channels and waits for Redis to
// confirm each.
func (c *Courier) subscribe(ctx context.Context, channels []string) (*redis.PubSub, error) {
	var ps *redis.PubSub
	if c.sharded {
		ps = c.rdb.SSubscribe(ctx, channels...)
	} else {
		ps = c.rdb.Subscribe(ctx, channels...)
	}
	for range channels {
		if _, err := ps.Receive(ctx); err != nil {
			_ = ps.Close()
			return nil, err
		}
	}
	return ps, nil
}

// refresh keeps this instance's players present every HereRefresh until
// Close.
func (c *Courier) refresh() {
	defer close(c.kept)
	t := time.NewTicker(HereRefresh)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		// Under psMu, so that an Unlisten's removal is never undone by a
		// refresh that read the players before it.
		c.psMu.Lock()
		c.mu.Lock()
		players := make([]string, 0, len(c.mine))
		for p := range c.mine {
			players = append(players, p)
		}
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), HereRefresh)
		err := c.keep(ctx, players)
		cancel()
		c.psMu.Unlock()
		switch {
		case err != nil && !failing:
			c.log.Warn().Err(err).Int("players", len(players)).Msg("players' presence not refreshed; they count as away elsewhere if it goes on")
		case err == nil && failing:
			c.log.Info().Int("players", len(players)).Msg("players' presence refreshed again")
		}
		failing = err != nil
	}
}

// keep says this instance holds the players' sessions, for HereTTL.
func (c *Courier) keep(ctx context.Context, players []string) error {
	if len(players) == 0 {
		return nil
	}
	pipe := c.rdb.Pipeline()
	for len(players) > 0 {
		n := min(len(players), hereBatch)
		keys := make([]string, n)
		for i, p := range players[:n] {
			keys[i] = c.keys.Here(p)
		}
		keepHere.Eval(ctx, pipe, keys, c.instance, HereTTL.Milliseconds())
		players = players[n:]
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redislobby: players' presence: %w", err)
	}
	return nil
}

// Listen subscribes to player's channel, then marks the player present
// here: whoever sees the mark can reach them.
func (c *Courier) Listen(ctx context.Context, player string) error {
	c.psMu.Lock()
	var err error
	if c.sharded {
		err = c.ps.SSubscribe(ctx, c.keys.PlayerChannel(player))
	} else {
		err = c.ps.Subscribe(ctx, c.keys.PlayerChannel(player))
	}
	if err != nil {
		c.psMu.Unlock()
		return fmt.Errorf("redislobby: listen for %s: %w", player, err)
	}
	c.mu.Lock()
	c.mine[player] = true // the refresher marks them, should keep fail
	c.mu.Unlock()
	err = c.keep(ctx, []string{player})
	c.psMu.Unlock()
	return err
}

// Unlisten removes the player's presence mark of this instance, then
// unsubscribes from their channel.
func (c *Courier) Unlisten(ctx context.Context, player string) error {
	c.psMu.Lock()
	defer c.psMu.Unlock()
	c.mu.Lock()
	delete(c.mine, player)
	c.mu.Unlock()
	herr := c.rdb.HDel(ctx, c.keys.Here(player), c.instance).Err()
	var err error
	if c.sharded {
		err = c.ps.SUnsubscribe(ctx, c.keys.PlayerChannel(player))
	} else {
		err = c.ps.Unsubscribe(ctx, c.keys.PlayerChannel(player))
	}
	if herr != nil || err != nil {
		return fmt.Errorf("redislobby: unlisten for %s: %w", player, firstErr(herr, err))
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// publish sends payload on channel (sharded on a cluster), in pipe.
func (c *Courier) publish(ctx context.Context, pipe redis.Cmdable, channel string, payload any) *redis.IntCmd {
	if c.sharded {
		return pipe.SPublish(ctx, channel, payload)
	}
	return pipe.Publish(ctx, channel, payload)
}

// Send publishes n on its player's channel and reports whether another
// instance holds a session of theirs (its presence mark, read in the
// same round trip; every instance marked subscribed before marking).
func (c *Courier) Send(ctx context.Context, n lobby.Notice) (bool, error) {
	js, err := json.Marshal(envelope{From: c.instance, Notice: n})
	if err != nil {
		return false, fmt.Errorf("redislobby: notice: %w", err)
	}
	pipe := c.rdb.Pipeline()
	c.publish(ctx, pipe, c.keys.PlayerChannel(n.Player), js)
	others := othersHere.Eval(ctx, pipe, []string{c.keys.Here(n.Player)}, c.instance)
	if _, err := pipe.Exec(ctx); err != nil {
		return false, fmt.Errorf("redislobby: notice for %s: %w", n.Player, err)
	}
	count, err := others.Int64()
	if err != nil {
		return false, fmt.Errorf("redislobby: is %s connected: %w", n.Player, err)
	}
	return count > 0, nil
}

// Listening reports whether another instance holds a session of player.
func (c *Courier) Listening(ctx context.Context, player string) (bool, error) {
	n, err := othersHere.Run(ctx, c.rdb, []string{c.keys.Here(player)}, c.instance).Int64()
	if err != nil {
		return false, fmt.Errorf("redislobby: is %s connected: %w", player, err)
	}
	return n > 0, nil
}

// Changed announces that the open challenges changed.
func (c *Courier) Changed(ctx context.Context) error {
	if err := c.publish(ctx, c.rdb, c.keys.ChangedChannel(), c.instance).Err(); err != nil {
		return fmt.Errorf("redislobby: announce a change: %w", err)
	}
	return nil
}

// Close stops listening and removes this instance's presence marks at
// once (its players are away from here).
func (c *Courier) Close() error {
	close(c.stop)
	<-c.kept
	c.mu.Lock()
	players := make([]string, 0, len(c.mine))
	for p := range c.mine {
		players = append(players, p)
	}
	c.mine = map[string]bool{}
	c.mu.Unlock()
	var forgot error
	if len(players) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), HereRefresh)
		pipe := c.rdb.Pipeline()
		for _, p := range players {
			pipe.HDel(ctx, c.keys.Here(p), c.instance)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			forgot = fmt.Errorf("redislobby: players' presence not removed: %w", err)
		}
		cancel()
	}
	c.psMu.Lock()
	c.mu.Lock()
	c.closed = true
	started, ps := c.started, c.ps
	c.mu.Unlock()
	err := ps.Close()
	c.psMu.Unlock()
	if started {
		<-c.done // the channel closes with the PubSub
	}
	if err != nil {
		return fmt.Errorf("redislobby: courier: %w", err)
	}
	return forgot
}
