// Package redislobby holds the Redis implementations of the lobby's
// stores, for several instances sharing one Redis: standings as a hash per
// variant and player, a leaderboard as a sorted set per variant and each
// player's history as a capped list.
//
// Every key carries the deployment's prefix (default "sirtommy:") and the
// hash tag {ratings}: Save writes both players' standings, the boards and
// the histories in one Lua script, which Redis Cluster allows only within
// one slot. Ratings traffic is one script per finished race, so one slot
// is no bottleneck.
package redislobby

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/lobby"
	"sirtommy/race/redisrace"
)

// MaxHistory bounds each player's kept history, as memlobby's does: enough
// for any page, and Redis memory stays bounded for a player who races all
// day.
const MaxHistory = 200

// Keys names the lobby's Redis keys of one deployment.
type Keys struct {
	// Prefix starts every name; "" means redisrace.DefaultPrefix, so that
	// races and lobby share one --redis-prefix.
	Prefix string
}

func (k Keys) prefix() string {
	if k.Prefix == "" {
		return redisrace.DefaultPrefix
	}
	return k.Prefix
}

// ratings is the common stem of the ratings keys: "PREFIX{ratings}".
func (k Keys) ratings() string { return k.prefix() + "{ratings}" }

// Standing is the hash of player's standing in variant: fields "games"
// (for the staleness check), "rating" (for people reading Redis) and
// "json" (the lobby.Standing).
func (k Keys) Standing(variant, player string) string {
	return k.ratings() + ":standing:" + variant + ":" + player
}

// Board is variant's leaderboard: a sorted set of player ids scored by
// minus their rating, so that ascending order is best first and ties go by
// player id, as in memlobby.
func (k Keys) Board(variant string) string { return k.ratings() + ":board:" + variant }

// Variants is the set of variants player has a standing in.
func (k Keys) Variants(player string) string { return k.ratings() + ":variants:" + player }

// Recorded marks race id as saved, for RecordedTTL, so that it is saved
// once.
func (k Keys) Recorded(race string) string { return k.ratings() + ":recorded:" + race }

// RecordedTTL is how long a saved race is remembered as saved: far longer
// than any race can be ended again by an instance taking it over.
const RecordedTTL = 30 * 24 * time.Hour

// History is player's list of race records (lobby.GameRecord as JSON),
// newest first, at most MaxHistory long.
func (k Keys) History(player string) string { return k.ratings() + ":history:" + player }

// Ratings is a lobby.Ratings on Redis, safe for concurrent use by any
// number of instances.
type Ratings struct {
	rdb  redis.UniversalClient
	keys Keys
}

var _ lobby.Ratings = (*Ratings)(nil)

// NewRatings makes a store on rdb with keys named by keys.
func NewRatings(rdb redis.UniversalClient, keys Keys) *Ratings {
	return &Ratings{rdb: rdb, keys: keys}
}

// staleReply starts the error the save script returns for a stale
// standing.
const staleReply = "STALE"

// saveScript does nothing for a race saved already; else it checks every
// standing's games against the stored ones, then writes them all, their
// boards and variants, the race into each human's history and the race's
// mark, or writes nothing.
//
// KEYS: n standings, n boards, n variant sets, m histories, the race's
// mark. ARGV: n, m, max history, race JSON, mark TTL in seconds, then per
// standing: player, variant, games, rating, JSON.
var saveScript = redis.NewScript(`
local n, m, maxh = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local mark = KEYS[3 * n + m + 1]
if redis.call('EXISTS', mark) == 1 then
  return 'RECORDED'
end
for i = 1, n do
  local a = 5 + (i - 1) * 5
  local stored = tonumber(redis.call('HGET', KEYS[i], 'games') or '0')
  if stored >= tonumber(ARGV[a + 3]) then
    return redis.error_reply('` + staleReply + ` ' .. ARGV[a + 1] .. ' in ' .. ARGV[a + 2] .. ' has ' .. stored .. ' games')
  end
end
for i = 1, n do
  local a = 5 + (i - 1) * 5
  redis.call('HSET', KEYS[i], 'games', ARGV[a + 3], 'rating', ARGV[a + 4], 'json', ARGV[a + 5])
  redis.call('ZADD', KEYS[n + i], -tonumber(ARGV[a + 4]), ARGV[a + 1])
  redis.call('SADD', KEYS[2 * n + i], ARGV[a + 2])
end
for j = 1, m do
  redis.call('LPUSH', KEYS[3 * n + j], ARGV[4])
  redis.call('LTRIM', KEYS[3 * n + j], 0, maxh - 1)
end
redis.call('SET', mark, '1', 'EX', ARGV[5])
return 'OK'
`)

// Standing is a player's standing in a variant.
func (r *Ratings) Standing(ctx context.Context, variant, player string) (lobby.Standing, error) {
	b, err := r.rdb.HGet(ctx, r.keys.Standing(variant, player), "json").Bytes()
	if errors.Is(err, redis.Nil) {
		return lobby.NewStanding(player, "", variant), nil
	}
	if err != nil {
		return lobby.Standing{}, fmt.Errorf("redislobby: standing of %s in %s: %w", player, variant, err)
	}
	var s lobby.Standing
	if err := json.Unmarshal(b, &s); err != nil {
		return lobby.Standing{}, fmt.Errorf("redislobby: standing of %s in %s: %w", player, variant, err)
	}
	return s, nil
}

// Save stores a race and the standings after it in one script, or nothing
// with an error wrapping lobby.ErrStale when another save came first.
func (r *Ratings) Save(ctx context.Context, g lobby.GameRecord, after []lobby.Standing) error {
	race, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("redislobby: race %s: %w", g.Race, err)
	}
	var humans []string
	for _, p := range g.Players {
		if p.ID != "" && !slices.Contains(humans, p.ID) {
			humans = append(humans, p.ID)
		}
	}
	n := len(after)
	keys := make([]string, 3*n, 3*n+len(humans)+1)
	args := []any{n, len(humans), MaxHistory, race, int64(RecordedTTL / time.Second)}
	for i, s := range after {
		js, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("redislobby: standing of %s: %w", s.Player, err)
		}
		keys[i], keys[n+i], keys[2*n+i] = r.keys.Standing(s.Variant, s.Player), r.keys.Board(s.Variant), r.keys.Variants(s.Player)
		args = append(args, s.Player, s.Variant, s.Games, strconv.FormatFloat(s.Rating.Rating, 'g', -1, 64), js)
	}
	for _, p := range humans {
		keys = append(keys, r.keys.History(p))
	}
	keys = append(keys, r.keys.Recorded(g.Race))
	err = saveScript.Run(ctx, r.rdb, keys, args...).Err()
	if err != nil && strings.HasPrefix(err.Error(), staleReply) {
		return fmt.Errorf("redislobby: save race %s: %s: %w", g.Race, err, lobby.ErrStale)
	}
	if err != nil {
		return fmt.Errorf("redislobby: save race %s: %w", g.Race, err)
	}
	return nil
}

// Leaderboard is the n best rated players of a variant (all of them when
// n is negative).
func (r *Ratings) Leaderboard(ctx context.Context, variant string, n int) ([]lobby.Standing, error) {
	if n == 0 {
		return []lobby.Standing{}, nil
	}
	ids, err := r.rdb.ZRange(ctx, r.keys.Board(variant), 0, int64(n)-1).Result()
	if err != nil {
		return nil, fmt.Errorf("redislobby: leaderboard of %s: %w", variant, err)
	}
	refs := make([][2]string, len(ids))
	for i, id := range ids {
		refs[i] = [2]string{variant, id}
	}
	out, err := r.standings(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("redislobby: leaderboard of %s: %w", variant, err)
	}
	return out, nil
}

// Standings are a player's standings in every variant they played, in
// order of variant.
func (r *Ratings) Standings(ctx context.Context, player string) ([]lobby.Standing, error) {
	variants, err := r.rdb.SMembers(ctx, r.keys.Variants(player)).Result()
	if err != nil {
		return nil, fmt.Errorf("redislobby: standings of %s: %w", player, err)
	}
	slices.Sort(variants)
	refs := make([][2]string, len(variants))
	for i, v := range variants {
		refs[i] = [2]string{v, player}
	}
	out, err := r.standings(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("redislobby: standings of %s: %w", player, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// standings reads the standings named by refs (variant, player) in one
// round trip, in order; missing ones are left out.
func (r *Ratings) standings(ctx context.Context, refs [][2]string) ([]lobby.Standing, error) {
	pipe := r.rdb.Pipeline()
	var cmds []*redis.StringCmd
	for _, ref := range refs {
		cmds = append(cmds, pipe.HGet(ctx, r.keys.Standing(ref[0], ref[1]), "json"))
	}
	if len(cmds) == 0 {
		return []lobby.Standing{}, nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]lobby.Standing, 0, len(cmds))
	for _, c := range cmds {
		b, err := c.Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var s lobby.Standing
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// History is a player's last n races, newest first.
func (r *Ratings) History(ctx context.Context, player string, n int) ([]lobby.GameRecord, error) {
	if n <= 0 {
		return []lobby.GameRecord{}, nil
	}
	raw, err := r.rdb.LRange(ctx, r.keys.History(player), 0, int64(n)-1).Result()
	if err != nil {
		return nil, fmt.Errorf("redislobby: history of %s: %w", player, err)
	}
	out := make([]lobby.GameRecord, 0, len(raw))
	for _, s := range raw {
		var g lobby.GameRecord
		if err := json.Unmarshal([]byte(s), &g); err != nil {
			return nil, fmt.Errorf("redislobby: history of %s: %w", player, err)
		}
		out = append(out, g)
	}
	return out, nil
}
