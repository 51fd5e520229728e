package redislobby

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/lobby"
)

// Racing is the key holding the lobby race player is in ("" while it is
// being made).
func (k Keys) Racing(player string) string { return k.lobbyStem() + ":racing:" + player }

// Reserved is the key of the lobby's seats in race id (lobby.Reservation
// JSON).
func (k Keys) Reserved(raceID string) string { return k.lobbyStem() + ":seats:" + raceID }

// Seats is lobby.Seats shared in Redis: a key per racing player and per
// lobby race, each expiring (the lobby picks a time longer than the race
// can last) so that nothing stays marked when the end of a race is never
// seen.
type Seats struct {
	rdb  redis.UniversalClient
	keys Keys
}

var _ lobby.Seats = (*Seats)(nil)

// NewSeats shares seats on rdb.
func NewSeats(rdb redis.UniversalClient, keys Keys) *Seats {
	return &Seats{rdb: rdb, keys: keys}
}

// claimScript marks every player of KEYS as being paired unless one is
// marked already: it returns that one's index (from 1), or 0. ARGV: the
// mark's life in milliseconds.
var claimScript = redis.NewScript(`
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then return i end
end
for i = 1, #KEYS do redis.call('SET', KEYS[i], '', 'PX', ARGV[1]) end
return 0
`)

// freeScript removes the marks of KEYS[2..] that name race ARGV[1], and
// the reservation KEYS[1] when ARGV[1] is not empty.
var freeScript = redis.NewScript(`
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
end
if ARGV[1] ~= '' then redis.call('DEL', KEYS[1]) end
return 1
`)

// Claim marks players as being paired unless one of them is busy.
func (s *Seats) Claim(ctx context.Context, players []string, keep time.Duration) (string, error) {
	keys := make([]string, len(players))
	for i, p := range players {
		keys[i] = s.keys.Racing(p)
	}
	i, err := claimScript.Run(ctx, s.rdb, keys, keep.Milliseconds()).Int()
	if err != nil {
		return "", fmt.Errorf("redislobby: claim players: %w", err)
	}
	if i > 0 {
		return players[i-1], nil
	}
	return "", nil
}

// Assign records race raceID for its players and its seats, all kept for
// keep, in one transaction.
func (s *Seats) Assign(ctx context.Context, raceID string, r lobby.Reservation, keep time.Duration) error {
	js, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("redislobby: seats of %s: %w", raceID, err)
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, pl := range r.Players {
			if pl.ID != "" && !pl.Computer {
				p.Set(ctx, s.keys.Racing(pl.ID), raceID, keep)
			}
		}
		p.Set(ctx, s.keys.Reserved(raceID), js, keep)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redislobby: seats of %s: %w", raceID, err)
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

// Reservation is the seats of race raceID.
func (s *Seats) Reservation(ctx context.Context, raceID string) (lobby.Reservation, bool, error) {
	js, err := s.rdb.Get(ctx, s.keys.Reserved(raceID)).Bytes()
	if errors.Is(err, redis.Nil) {
		return lobby.Reservation{}, false, nil
	}
	if err != nil {
		return lobby.Reservation{}, false, fmt.Errorf("redislobby: seats of %s: %w", raceID, err)
	}
	var r lobby.Reservation
	if err := json.Unmarshal(js, &r); err != nil {
		return lobby.Reservation{}, false, fmt.Errorf("redislobby: seats of %s: %w", raceID, err)
	}
	return r, true, nil
}

// Free ends raceID's marks of players and its reservation.
func (s *Seats) Free(ctx context.Context, raceID string, players []string) error {
	keys := []string{s.keys.Reserved(raceID)}
	for _, p := range players {
		keys = append(keys, s.keys.Racing(p))
	}
	if err := freeScript.Run(ctx, s.rdb, keys, raceID).Err(); err != nil {
		return fmt.Errorf("redislobby: free race %q: %w", raceID, err)
	}
	return nil
}
