package redislobby

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/lobby"
	"sirtommy/race"
)

// lobbyStem is the common stem of the shared lobby's keys (challenges,
// invites, seats, the courier's channels): "PREFIX{lobby}". One hash tag,
// so that a script may touch several of them in Redis Cluster.
func (k Keys) lobbyStem() string { return k.prefix() + "{lobby}" }

// Challenges is the hash of open challenges: id -> lobby.ChallengeInfo
// JSON.
func (k Keys) Challenges() string { return k.lobbyStem() + ":challenges" }

// Challengers is the hash of players with a challenge open: player -> id.
func (k Keys) Challengers() string { return k.lobbyStem() + ":challengers" }

// ChallengesUntil is the hash of the challenges' lives: id -> Unix
// milliseconds until which it is open unless kept again.
func (k Keys) ChallengesUntil() string { return k.lobbyStem() + ":challenges-until" }

// ChallengeTTL is how long a challenge stays open after its instance last
// kept it: three of the lobby's heartbeats, as for presence.
const ChallengeTTL = 3 * lobby.DefaultTick

// Challenges is lobby.Challenges shared in Redis. A challenge is open
// while the instance holding its author's session keeps it (every
// heartbeat); one whose instance died is gone within ChallengeTTL.
type Challenges struct {
	rdb   redis.UniversalClient
	keys  Keys
	clock race.Clock
}

var _ lobby.Challenges = (*Challenges)(nil)

// NewChallenges shares open challenges on rdb; clock dates their lives
// (the instances' clocks are taken to agree to well within
// ChallengeTTL).
func NewChallenges(rdb redis.UniversalClient, keys Keys, clock race.Clock) *Challenges {
	return &Challenges{rdb: rdb, keys: keys, clock: clock}
}

func (c *Challenges) keyList() []string {
	return []string{c.keys.Challenges(), c.keys.Challengers(), c.keys.ChallengesUntil()}
}

// openScript lists a challenge unless its player has one open (not
// expired). KEYS: challenges, challengers, until. ARGV: id, player, JSON,
// until, now.
var openScript = redis.NewScript(`
local old = redis.call('HGET', KEYS[2], ARGV[2])
if old then
  local u = tonumber(redis.call('HGET', KEYS[3], old) or '0')
  if u >= tonumber(ARGV[5]) and redis.call('HEXISTS', KEYS[1], old) == 1 then
    return redis.error_reply('` + alreadyReply + ` ' .. old)
  end
  redis.call('HDEL', KEYS[1], old)
  redis.call('HDEL', KEYS[3], old)
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
return 1
`)

// takeScript withdraws a challenge and returns it if it was open and
// alive (an expired one is removed all the same). KEYS: challenges,
// challengers, until. ARGV: id, now.
var takeScript = redis.NewScript(`
local js = redis.call('HGET', KEYS[1], ARGV[1])
if not js then return false end
local u = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
local p = cjson.decode(js)['player']
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
if redis.call('HGET', KEYS[2], p) == ARGV[1] then redis.call('HDEL', KEYS[2], p) end
if u < tonumber(ARGV[2]) then return false end
return js
`)

// keepScript renews the lives of the challenges still open. KEYS:
// challenges, until. ARGV: until, ids.
var keepScript = redis.NewScript(`
for i = 2, #ARGV do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then redis.call('HSET', KEYS[2], ARGV[i], ARGV[1]) end
end
return 1
`)

// Open lists ch; a player with a challenge open is refused with
// lobby.CodeAlreadyQueued.
func (c *Challenges) Open(ctx context.Context, ch lobby.ChallengeInfo) error {
	js, err := json.Marshal(ch)
	if err != nil {
		return fmt.Errorf("redislobby: open challenge: %w", err)
	}
	now := c.clock.Now()
	err = openScript.Run(ctx, c.rdb, c.keyList(), ch.ID, ch.Player, js, now.Add(ChallengeTTL).UnixMilli(), now.UnixMilli()).Err()
	if err != nil && strings.HasPrefix(err.Error(), alreadyReply) {
		return race.Errorf(lobby.CodeAlreadyQueued, "you already have challenge %s open", strings.TrimSpace(strings.TrimPrefix(err.Error(), alreadyReply)))
	}
	if err != nil {
		return fmt.Errorf("redislobby: open challenge: %w", err)
	}
	return nil
}

// Take withdraws challenge id and returns it if it was open.
func (c *Challenges) Take(ctx context.Context, id string) (lobby.ChallengeInfo, bool, error) {
	js, err := takeScript.Run(ctx, c.rdb, c.keyList(), id, c.clock.Now().UnixMilli()).Text()
	if errors.Is(err, redis.Nil) {
		return lobby.ChallengeInfo{}, false, nil
	}
	if err != nil {
		return lobby.ChallengeInfo{}, false, fmt.Errorf("redislobby: take challenge %s: %w", id, err)
	}
	var ch lobby.ChallengeInfo
	if err := json.Unmarshal([]byte(js), &ch); err != nil {
		return lobby.ChallengeInfo{}, false, fmt.Errorf("redislobby: challenge %s: %w", id, err)
	}
	return ch, true, nil
}

// Get finds open challenge id.
func (c *Challenges) Get(ctx context.Context, id string) (lobby.ChallengeInfo, bool, error) {
	pipe := c.rdb.Pipeline()
	js := pipe.HGet(ctx, c.keys.Challenges(), id)
	until := pipe.HGet(ctx, c.keys.ChallengesUntil(), id)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return lobby.ChallengeInfo{}, false, fmt.Errorf("redislobby: challenge %s: %w", id, err)
	}
	u, _ := until.Int64()
	if js.Err() != nil || u < c.clock.Now().UnixMilli() {
		return lobby.ChallengeInfo{}, false, nil
	}
	var ch lobby.ChallengeInfo
	if err := json.Unmarshal([]byte(js.Val()), &ch); err != nil {
		return lobby.ChallengeInfo{}, false, fmt.Errorf("redislobby: challenge %s: %w", id, err)
	}
	return ch, true, nil
}

// Of is the id of player's open challenge.
func (c *Challenges) Of(ctx context.Context, player string) (string, bool, error) {
	id, err := c.rdb.HGet(ctx, c.keys.Challengers(), player).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("redislobby: challenge of %s: %w", player, err)
	}
	if _, ok, err := c.Get(ctx, id); err != nil || !ok {
		return "", false, err
	}
	return id, true, nil
}

// List is every open challenge; it removes those whose instance stopped
// keeping them.
func (c *Challenges) List(ctx context.Context) ([]lobby.ChallengeInfo, error) {
	pipe := c.rdb.Pipeline()
	all := pipe.HGetAll(ctx, c.keys.Challenges())
	until := pipe.HGetAll(ctx, c.keys.ChallengesUntil())
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("redislobby: list challenges: %w", err)
	}
	now := c.clock.Now().UnixMilli()
	out := make([]lobby.ChallengeInfo, 0, len(all.Val()))
	var dead []string
	for id, js := range all.Val() {
		var u int64
		_, _ = fmt.Sscan(until.Val()[id], &u)
		var ch lobby.ChallengeInfo
		if u < now || json.Unmarshal([]byte(js), &ch) != nil {
			dead = append(dead, id)
			continue
		}
		out = append(out, ch)
	}
	for _, id := range dead {
		// Another instance may remove it too: take is idempotent.
		if _, _, err := c.Take(ctx, id); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Keep renews the lives of challenges ids (those still open).
func (c *Challenges) Keep(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{c.clock.Now().Add(ChallengeTTL).UnixMilli()}
	for _, id := range ids {
		args = append(args, id)
	}
	if err := keepScript.Run(ctx, c.rdb, []string{c.keys.Challenges(), c.keys.ChallengesUntil()}, args...).Err(); err != nil {
		return fmt.Errorf("redislobby: keep challenges: %w", err)
	}
	return nil
}

// Invite is the key of the invite with code.
func (k Keys) Invite(code string) string { return k.lobbyStem() + ":invite:" + code }

// Invites is lobby.Invites shared in Redis: a key per invite (its JSON)
// that expires when it is no longer kept; Take deletes it, and only one
// DEL of a key finds it.
type Invites struct {
	rdb  redis.UniversalClient
	keys Keys
}

var _ lobby.Invites = (*Invites)(nil)

// NewInvites shares invites on rdb.
func NewInvites(rdb redis.UniversalClient, keys Keys) *Invites {
	return &Invites{rdb: rdb, keys: keys}
}

// Put stores inv for keep.
func (s *Invites) Put(ctx context.Context, inv lobby.Invite, keep time.Duration) error {
	js, err := json.Marshal(inv)
	if err != nil {
		return fmt.Errorf("redislobby: invite: %w", err)
	}
	if err := s.rdb.Set(ctx, s.keys.Invite(inv.Code), js, keep).Err(); err != nil {
		return fmt.Errorf("redislobby: invite: %w", err)
	}
	return nil
}

// Get finds invite code.
func (s *Invites) Get(ctx context.Context, code string) (lobby.Invite, bool, error) {
	js, err := s.rdb.Get(ctx, s.keys.Invite(code)).Bytes()
	if errors.Is(err, redis.Nil) {
		return lobby.Invite{}, false, nil
	}
	if err != nil {
		return lobby.Invite{}, false, fmt.Errorf("redislobby: invite %s: %w", code, err)
	}
	var inv lobby.Invite
	if err := json.Unmarshal(js, &inv); err != nil {
		return lobby.Invite{}, false, fmt.Errorf("redislobby: invite %s: %w", code, err)
	}
	return inv, true, nil
}

// Take uses invite code up; true for one caller only.
func (s *Invites) Take(ctx context.Context, code string) (bool, error) {
	n, err := s.rdb.Del(ctx, s.keys.Invite(code)).Result()
	if err != nil {
		return false, fmt.Errorf("redislobby: take invite %s: %w", code, err)
	}
	return n == 1, nil
}
