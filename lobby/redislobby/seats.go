package redislobby

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/lobby"
)

// Racing is the key holding the lobby race player is in ("" while it is
// being made). It shares the queue's hash tag, so that joining the queue
// and claiming a player each check the other in one script.
func (k Keys) Racing(player string) string { return k.queue() + ":racing:" + player }

// Seats is lobby.Seats shared in Redis: a key per racing player, expiring
// (the lobby picks a time longer than the race can last) so that nobody
// stays marked when the end of a race is never seen.
type Seats struct {
	rdb  redis.UniversalClient
	keys Keys
}

var _ lobby.Seats = (*Seats)(nil)

// NewSeats shares seats on rdb.
func NewSeats(rdb redis.UniversalClient, keys Keys) *Seats {
	return &Seats{rdb: rdb, keys: keys}
}

// claimScript marks every player as being paired unless one is marked
// already (it returns that one's index, from 1, or 0), and takes the
// marked players out of any queue. KEYS: the players' marks, then the
// queue's where hash. ARGV: the mark's life in milliseconds, the queue's
// key stem, the players. (The seekers and order keys, named from the
// player's variant, share the slot of the others.)
var claimScript = redis.NewScript(`
local n = #KEYS - 1
for i = 1, n do
  if redis.call('EXISTS', KEYS[i]) == 1 then return i end
end
for i = 1, n do
  redis.call('SET', KEYS[i], '', 'PX', ARGV[1])
  local p = ARGV[i + 2]
  local v = redis.call('HGET', KEYS[n + 1], p)
  if v then
    redis.call('HDEL', KEYS[n + 1], p)
    redis.call('HDEL', ARGV[2] .. ':seekers:' .. v, p)
    redis.call('ZREM', ARGV[2] .. ':order:' .. v, p)
  end
end
return 0
`)

// freeScript removes the marks of KEYS that name race ARGV[1].
var freeScript = redis.NewScript(`
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
end
return 1
`)

// Claim marks players as being paired unless one of them is busy, and
// takes them out of the queue.
func (s *Seats) Claim(ctx context.Context, players []string, keep time.Duration) (string, error) {
	keys := make([]string, 0, len(players)+1)
	args := []any{keep.Milliseconds(), s.keys.queue()}
	for _, p := range players {
		keys = append(keys, s.keys.Racing(p))
		args = append(args, p)
	}
	keys = append(keys, s.keys.Where())
	i, err := claimScript.Run(ctx, s.rdb, keys, args...).Int()
	if err != nil {
		return "", fmt.Errorf("redislobby: claim players: %w", err)
	}
	if i > 0 {
		return players[i-1], nil
	}
	return "", nil
}

// Assign records race raceID for its players, kept for keep, in one
// transaction.
func (s *Seats) Assign(ctx context.Context, raceID string, players []string, keep time.Duration) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, pl := range players {
			p.Set(ctx, s.keys.Racing(pl), raceID, keep)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("redislobby: players of %s: %w", raceID, err)
	}
	return nil
}

// Racing is the race player is in.
func (s *Seats) Racing(ctx context.Context, player string) (string, bool, error) {
	id, err := s.rdb.Get(ctx, s.keys.Racing(player)).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("redislobby: race of %s: %w", player, err)
	}
	return id, true, nil
}

// Free ends raceID's marks of players.
func (s *Seats) Free(ctx context.Context, raceID string, players []string) error {
	if len(players) == 0 {
		return nil
	}
	var keys []string
	for _, p := range players {
		keys = append(keys, s.keys.Racing(p))
	}
	if err := freeScript.Run(ctx, s.rdb, keys, raceID).Err(); err != nil {
		return fmt.Errorf("redislobby: free race %q: %w", raceID, err)
	}
	return nil
}
