package redislobby

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/lobby"
	"sirtommy/race"
)

// queue is the common stem of the quick-play queue's keys:
// "PREFIX{queue}". One hash tag for all variants lets Join check, in one
// script, that a player is in no other variant's queue.
func (k Keys) queue() string { return k.prefix() + "{queue}" }

// Where is the hash of every queued player's variant.
func (k Keys) Where() string { return k.queue() + ":where" }

// Seekers is variant's hash of queued players (seeker JSON).
func (k Keys) Seekers(variant string) string { return k.queue() + ":seekers:" + variant }

// Order is variant's sorted set of queued players scored by join order.
func (k Keys) Order(variant string) string { return k.queue() + ":order:" + variant }

// Seq is the counter of joins, which orders every queue.
func (k Keys) Seq() string { return k.queue() + ":seq" }

// QueueVariants is the set of variants that ever had a queue.
func (k Keys) QueueVariants() string { return k.queue() + ":variants" }

// Queue is a quick-play queue per variant shared by every instance on one
// Redis. Any instance may Pair; claiming a pair takes both players out in
// one script that checks both are still queued, so that no player is ever
// paired twice however many instances pair at once.
type Queue struct {
	rdb   redis.UniversalClient
	keys  Keys
	cfg   lobby.MatchConfig
	clock race.Clock
	// live: pair only players whose instance shares its presence
	// (DropDead).
	live bool
}

// DropDead makes Pair take out, unpaired, the players whose instance
// stopped sharing its presence counts (it died: nobody would tell them
// they were paired). For instances that share presence (NewPresence).
func (q *Queue) DropDead() *Queue {
	q.live = true
	return q
}

// liveInstances are the instances whose presence has not expired.
func (q *Queue) liveInstances(ctx context.Context) (map[string]bool, error) {
	all, err := q.rdb.HGetAll(ctx, q.keys.PresenceKey()).Result()
	if err != nil {
		return nil, err
	}
	now := q.clock.Now()
	live := make(map[string]bool, len(all))
	for id, v := range all {
		var s shared
		if json.Unmarshal([]byte(v), &s) == nil && !time.UnixMilli(s.Until).Before(now) {
			live[id] = true
		}
	}
	return live, nil
}

// NewQueue makes a shared queue on rdb; cfg is the matchmaking
// configuration (zero fields take lobby's defaults) and clock times the
// waits.
func NewQueue(rdb redis.UniversalClient, keys Keys, cfg lobby.MatchConfig, clock race.Clock) *Queue {
	return &Queue{rdb: rdb, keys: keys, cfg: cfg, clock: clock}
}

// seeker is a queued player as stored.
type seeker struct {
	Rating   float64 `json:"r"`
	Since    int64   `json:"t"` // Unix milliseconds
	Instance string  `json:"i"` // the instance holding the player's connection
	Name     string  `json:"n,omitempty"`
}

// Match is a pair claimed by Pair, with the instances to tell.
type Match struct {
	lobby.Pair
	// InstanceA and InstanceB hold the connections of A and B.
	InstanceA, InstanceB string
}

// alreadyReply starts the error the join script returns for a player
// queued already.
const alreadyReply = "ALREADY"

// inRaceReply starts the error the join script returns for a player in a
// lobby race.
const inRaceReply = "INRACE"

// joinScript queues a player unless queued already or racing (Seats
// marks them in the same slot). KEYS: where, seekers, order, seq,
// variants, the player's racing mark. ARGV: player, variant, seeker JSON.
var joinScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v then return redis.error_reply('` + alreadyReply + ` ' .. v) end
local r = redis.call('GET', KEYS[6])
if r then return redis.error_reply('` + inRaceReply + ` ' .. r) end
local seq = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[3], seq, ARGV[1])
redis.call('SADD', KEYS[5], ARGV[2])
return seq
`)

// leaveScript unqueues players if they are queued in the variant: all of
// them or none. KEYS: where, seekers, order. ARGV: variant, players.
var leaveScript = redis.NewScript(`
for i = 2, #ARGV do
  if redis.call('HGET', KEYS[1], ARGV[i]) ~= ARGV[1] then return 0 end
end
for i = 2, #ARGV do
  redis.call('HDEL', KEYS[1], ARGV[i])
  redis.call('HDEL', KEYS[2], ARGV[i])
  redis.call('ZREM', KEYS[3], ARGV[i])
end
return 1
`)

// Join puts player, whose connection instance holds, in variant's queue; a
// player already in a queue is refused with lobby.CodeAlreadyQueued.
func (q *Queue) Join(ctx context.Context, player, variant string, rating float64, instance string) error {
	return q.join(ctx, lobby.Seeker{Player: player, Variant: variant, Rating: rating}, instance)
}

func (q *Queue) join(ctx context.Context, s lobby.Seeker, instance string) error {
	player, variant := s.Player, s.Variant
	js, err := json.Marshal(seeker{Rating: s.Rating, Since: q.clock.Now().UnixMilli(), Instance: instance, Name: s.Name})
	if err != nil {
		return fmt.Errorf("redislobby: join %s: %w", player, err)
	}
	k := q.keys
	err = joinScript.Run(ctx, q.rdb, []string{k.Where(), k.Seekers(variant), k.Order(variant), k.Seq(), k.QueueVariants(), k.Racing(player)},
		player, variant, js).Err()
	if err != nil && strings.HasPrefix(err.Error(), inRaceReply) {
		id := strings.TrimSpace(strings.TrimPrefix(err.Error(), inRaceReply))
		if id == "" {
			return race.Errorf(lobby.CodeInRace, "you were just paired: your race is being made")
		}
		return race.Errorf(lobby.CodeInRace, "you are in race %s until it is over", id)
	}
	if err != nil && strings.HasPrefix(err.Error(), alreadyReply) {
		return race.Errorf(lobby.CodeAlreadyQueued, "you are already in the %s queue", strings.TrimSpace(strings.TrimPrefix(err.Error(), alreadyReply)))
	}
	if err != nil {
		return fmt.Errorf("redislobby: join %s: %w", player, err)
	}
	return nil
}

// Leave takes player out of their queue and reports whether they were in
// one.
func (q *Queue) Leave(ctx context.Context, player string) (bool, error) {
	variant, ok, err := q.Queued(ctx, player)
	if err != nil || !ok {
		return false, err
	}
	left, err := q.take(ctx, variant, player)
	if err != nil {
		return false, fmt.Errorf("redislobby: leave %s: %w", player, err)
	}
	return left, nil
}

// take unqueues players from variant atomically, reporting whether they
// all were there.
func (q *Queue) take(ctx context.Context, variant string, players ...string) (bool, error) {
	args := []any{variant}
	for _, p := range players {
		args = append(args, p)
	}
	k := q.keys
	n, err := leaveScript.Run(ctx, q.rdb, []string{k.Where(), k.Seekers(variant), k.Order(variant)}, args...).Int()
	return n == 1, err
}

// Queued reports the queue player is in.
func (q *Queue) Queued(ctx context.Context, player string) (variant string, ok bool, err error) {
	variant, err = q.rdb.HGet(ctx, q.keys.Where(), player).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("redislobby: queue of %s: %w", player, err)
	}
	return variant, true, nil
}

// Counts is the number of players in each variant's queue, across all
// instances; empty queues are left out.
func (q *Queue) Counts(ctx context.Context) (map[string]int, error) {
	variants, err := q.rdb.SMembers(ctx, q.keys.QueueVariants()).Result()
	if err != nil {
		return nil, fmt.Errorf("redislobby: queue counts: %w", err)
	}
	pipe := q.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(variants))
	for i, v := range variants {
		cmds[i] = pipe.ZCard(ctx, q.keys.Order(v))
	}
	if len(variants) > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, fmt.Errorf("redislobby: queue counts: %w", err)
		}
	}
	out := make(map[string]int, len(variants))
	for i, v := range variants {
		if n := cmds[i].Val(); n > 0 {
			out[v] = int(n)
		}
	}
	return out, nil
}

// Pair plans variant's pairs as lobby.Matchmaker would, claims each (both
// players still queued, taken out together) and returns those it claimed,
// longest waiting first. A pair another instance broke up in between is
// skipped; its players wait for the next round.
func (q *Queue) Pair(ctx context.Context, variant string) ([]Match, error) {
	players, err := q.rdb.ZRange(ctx, q.keys.Order(variant), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("redislobby: pair %s: %w", variant, err)
	}
	if len(players) < 2 {
		return nil, nil
	}
	raw, err := q.rdb.HMGet(ctx, q.keys.Seekers(variant), players...).Result()
	if err != nil {
		return nil, fmt.Errorf("redislobby: pair %s: %w", variant, err)
	}
	var live map[string]bool
	if q.live {
		if live, err = q.liveInstances(ctx); err != nil {
			return nil, fmt.Errorf("redislobby: pair %s: %w", variant, err)
		}
	}
	seekers := make([]lobby.Seeker, 0, len(players))
	instances := make(map[string]string, len(players))
	for i, p := range players {
		s, ok := raw[i].(string)
		if !ok {
			continue // left since ZRANGE
		}
		var sk seeker
		if err := json.Unmarshal([]byte(s), &sk); err != nil {
			return nil, fmt.Errorf("redislobby: pair %s: seeker %s: %w", variant, p, err)
		}
		// A new instance shares its presence within a heartbeat: its
		// players are not taken for dead before then.
		if live != nil && !live[sk.Instance] && q.clock.Now().Sub(time.UnixMilli(sk.Since)) > PresenceTTL {
			if _, err := q.take(ctx, variant, p); err != nil {
				return nil, fmt.Errorf("redislobby: pair %s: drop %s: %w", variant, p, err)
			}
			continue
		}
		instances[p] = sk.Instance
		seekers = append(seekers, lobby.Seeker{Player: p, Name: sk.Name, Variant: variant, Rating: sk.Rating, Since: time.UnixMilli(sk.Since)})
	}
	pairs := lobby.PairQueue(q.cfg, seekers, q.clock.Now())
	if len(pairs) == 0 {
		return nil, nil
	}
	// One claim script per pair, each atomic on its own, sent in one
	// pipeline: a round trip per pass, not per pair.
	k := q.keys
	keys := []string{k.Where(), k.Seekers(variant), k.Order(variant)}
	if err := leaveScript.Load(ctx, q.rdb).Err(); err != nil {
		return nil, fmt.Errorf("redislobby: pair %s: %w", variant, err)
	}
	pipe := q.rdb.Pipeline()
	claims := make([]*redis.Cmd, len(pairs))
	for i, p := range pairs {
		claims[i] = leaveScript.EvalSha(ctx, pipe, keys, variant, p.A.Player, p.B.Player)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("redislobby: pair %s: claim: %w", variant, err)
	}
	var out []Match
	for i, p := range pairs {
		if n, _ := claims[i].Int(); n == 1 {
			p.Variant = variant
			out = append(out, Match{Pair: p, InstanceA: instances[p.A.Player], InstanceB: instances[p.B.Player]})
		}
	}
	return out, nil
}

// Instance is the queue as one instance's lobby uses it: a lobby.Queue
// whose players' connections that instance holds.
type Instance struct {
	q        *Queue
	instance string
}

var _ lobby.Queue = (*Instance)(nil)

// For is the queue for the lobby of instance.
func (q *Queue) For(instance string) *Instance { return &Instance{q: q, instance: instance} }

// Join queues s (refused with lobby.CodeAlreadyQueued if queued already).
func (i *Instance) Join(ctx context.Context, s lobby.Seeker) error {
	return i.q.join(ctx, s, i.instance)
}

// Leave unqueues player; false once they were paired.
func (i *Instance) Leave(ctx context.Context, player string) (bool, error) {
	return i.q.Leave(ctx, player)
}

// Queued reports player's queue.
func (i *Instance) Queued(ctx context.Context, player string) (string, bool, error) {
	return i.q.Queued(ctx, player)
}

// Pair claims the pairs of every variant's queue, longest waiting first.
func (i *Instance) Pair(ctx context.Context) ([]lobby.Pair, error) {
	counts, err := i.q.Counts(ctx) // two round trips, however many variants
	if err != nil {
		return nil, fmt.Errorf("redislobby: pair: %w", err)
	}
	var out []lobby.Pair
	for v, n := range counts {
		if n < 2 {
			continue
		}
		ms, err := i.q.Pair(ctx, v)
		for _, m := range ms {
			out = append(out, m.Pair)
		}
		if err != nil {
			return out, err
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].A.Since.Before(out[b].A.Since) })
	return out, nil
}
