// Package rediscoach is the Redis Store of the coach package, so that a
// fleet analyses each game once: the finished analysis under
// "PREFIX{analysis:KEY}" and, while one instance computes it, a short
// claim "PREFIX{analysis:KEY}:claim" holding "HOLDER PERCENT", which the
// holder refreshes after each position and other instances read for the
// percentage. A claim that lapses (its holder died) is taken by the next
// instance that asks.
package rediscoach

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/web/coach"
)

// DefaultPrefix starts every key unless the caller names another: the
// race keys' (redisrace.DefaultPrefix).
const DefaultPrefix = "sirtommy:"

// Store is the coach's Store on Redis.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
}

var _ coach.Store = (*Store)(nil)

// New makes a store on rdb with keys under prefix ("" : DefaultPrefix).
func New(rdb redis.UniversalClient, prefix string) *Store {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Store{rdb: rdb, prefix: prefix}
}

func (s *Store) key(k string) string   { return s.prefix + "{analysis:" + k + "}" }
func (s *Store) claim(k string) string { return s.key(k) + ":claim" }

// Get reads the finished analysis.
func (s *Store) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := s.rdb.Get(ctx, s.key(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("rediscoach: get %s: %w", key, err)
	}
	return b, true, nil
}

// claimScript takes the claim (KEYS[1]) for ARGV[1] for ARGV[2] ms unless
// another holder has it or the analysis (KEYS[2]) is there; it returns ""
// when taken, "done 100" when the analysis is there, else the claim's
// value.
var claimScript = redis.NewScript(`
if redis.call("EXISTS", KEYS[2]) == 1 then return "done 100" end
local v = redis.call("GET", KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) ~= ARGV[1] .. " " then return v end
redis.call("SET", KEYS[1], ARGV[1] .. " 0", "PX", ARGV[2])
return ""
`)

// Claim takes the claim unless another holder has it, or the analysis is
// there already (then the percent is 100).
func (s *Store) Claim(ctx context.Context, key, holder string, ttl time.Duration) (bool, int, error) {
	v, err := claimScript.Run(ctx, s.rdb, []string{s.claim(key), s.key(key)}, holder, ttl.Milliseconds()).Text()
	if err != nil {
		return false, 0, fmt.Errorf("rediscoach: claim %s: %w", key, err)
	}
	if v == "" {
		return true, 0, nil
	}
	_, pct, _ := strings.Cut(v, " ")
	n, _ := strconv.Atoi(pct)
	return false, n, nil
}

// refreshScript sets the claim (KEYS[1]) to "ARGV[1] ARGV[2]" for ARGV[3]
// ms if ARGV[1] holds it; 1 if so.
var refreshScript = redis.NewScript(`
local v = redis.call("GET", KEYS[1])
if not v or string.sub(v, 1, #ARGV[1] + 1) ~= ARGV[1] .. " " then return 0 end
redis.call("SET", KEYS[1], ARGV[1] .. " " .. ARGV[2], "PX", ARGV[3])
return 1
`)

// Refresh extends holder's claim with its progress.
func (s *Store) Refresh(ctx context.Context, key, holder string, percent int, ttl time.Duration) (bool, error) {
	n, err := refreshScript.Run(ctx, s.rdb, []string{s.claim(key)}, holder, percent, ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("rediscoach: refresh %s: %w", key, err)
	}
	return n == 1, nil
}

// putScript stores ARGV[2] under KEYS[1] for ARGV[3] ms and deletes the
// claim KEYS[2] if ARGV[1] holds it.
var putScript = redis.NewScript(`
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
local v = redis.call("GET", KEYS[2])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. " " then redis.call("DEL", KEYS[2]) end
return 1
`)

// Put stores the analysis and drops holder's claim, in one step.
func (s *Store) Put(ctx context.Context, key, holder string, val []byte, keep time.Duration) error {
	if err := putScript.Run(ctx, s.rdb, []string{s.key(key), s.claim(key)}, holder, val, keep.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("rediscoach: put %s: %w", key, err)
	}
	return nil
}

// releaseScript deletes the claim KEYS[1] if ARGV[1] holds it.
var releaseScript = redis.NewScript(`
local v = redis.call("GET", KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. " " then redis.call("DEL", KEYS[1]) end
return 1
`)

// Release drops holder's claim.
func (s *Store) Release(ctx context.Context, key, holder string) error {
	if err := releaseScript.Run(ctx, s.rdb, []string{s.claim(key)}, holder).Err(); err != nil {
		return fmt.Errorf("rediscoach: release %s: %w", key, err)
	}
	return nil
}
