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

// dailyStem is the common stem of the day's boards' keys: "PREFIX{daily}".
func (k Keys) dailyStem() string { return k.prefix() + "{daily}" }

// DailyBegun is the set of players who made day's attempt in variant.
func (k Keys) DailyBegun(day, variant string) string {
	return k.dailyStem() + ":begun:" + day + ":" + variant
}

// DailyBoard is the day's sorted set: player -> rank key (lower first).
func (k Keys) DailyBoard(day, variant string) string {
	return k.dailyStem() + ":board:" + day + ":" + variant
}

// DailyEntries is the day's hash: player -> lobby.DailyEntry JSON.
func (k Keys) DailyEntries(day, variant string) string {
	return k.dailyStem() + ":entries:" + day + ":" + variant
}

// DailyHistory is player's list of entries, newest first.
func (k Keys) DailyHistory(player string) string { return k.dailyStem() + ":history:" + player }

// DailyTTL is how long a day's board is kept: its games are the day's
// public record once it is revealed.
const DailyTTL = 90 * 24 * time.Hour

// Dailies is lobby.Dailies shared in Redis: every instance sees the same
// attempts and boards.
type Dailies struct {
	rdb  redis.UniversalClient
	keys Keys
}

var _ lobby.Dailies = (*Dailies)(nil)

// NewDailies shares the day's boards on rdb.
func NewDailies(rdb redis.UniversalClient, keys Keys) *Dailies {
	return &Dailies{rdb: rdb, keys: keys}
}

// Begin records the attempt: SADD is the one winner.
func (d *Dailies) Begin(ctx context.Context, day, variant, player string) (bool, error) {
	k := d.keys.DailyBegun(day, variant)
	p := d.rdb.TxPipeline()
	added := p.SAdd(ctx, k, player)
	p.Expire(ctx, k, DailyTTL)
	if _, err := p.Exec(ctx); err != nil {
		return false, fmt.Errorf("redislobby: begin daily: %w", err)
	}
	return added.Val() == 1, nil
}

// Undo forgets the attempt.
func (d *Dailies) Undo(ctx context.Context, day, variant, player string) error {
	if err := d.rdb.SRem(ctx, d.keys.DailyBegun(day, variant), player).Err(); err != nil {
		return fmt.Errorf("redislobby: undo daily: %w", err)
	}
	return nil
}

// Begun reports the attempt.
func (d *Dailies) Begun(ctx context.Context, day, variant, player string) (bool, error) {
	ok, err := d.rdb.SIsMember(ctx, d.keys.DailyBegun(day, variant), player).Result()
	if err != nil {
		return false, fmt.Errorf("redislobby: begun daily: %w", err)
	}
	return ok, nil
}

// Finish records e once: HSETNX decides, then the board and history.
func (d *Dailies) Finish(ctx context.Context, e lobby.DailyEntry) error {
	e.Rank = 0
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("redislobby: daily entry: %w", err)
	}
	ek := d.keys.DailyEntries(e.Day, e.Variant)
	first, err := d.rdb.HSetNX(ctx, ek, e.Player, b).Result()
	if err != nil {
		return fmt.Errorf("redislobby: finish daily: %w", err)
	}
	if !first {
		return nil
	}
	bk, hk := d.keys.DailyBoard(e.Day, e.Variant), d.keys.DailyHistory(e.Player)
	p := d.rdb.TxPipeline()
	p.Expire(ctx, ek, DailyTTL)
	p.ZAdd(ctx, bk, redis.Z{Score: e.RankKey(), Member: e.Player})
	p.Expire(ctx, bk, DailyTTL)
	p.LPush(ctx, hk, b)
	p.LTrim(ctx, hk, 0, maxDailyHistory-1)
	if _, err := p.Exec(ctx); err != nil {
		d.rdb.HDel(ctx, ek, e.Player) // so that a retry records it
		return fmt.Errorf("redislobby: finish daily: %w", err)
	}
	return nil
}

// maxDailyHistory bounds a player's history of days (lobby's own bound).
const maxDailyHistory = 400

// Board is the n best, ranked (ties by player id, as ZRANGE orders them).
func (d *Dailies) Board(ctx context.Context, day, variant string, n int) ([]lobby.DailyEntry, int, error) {
	bk := d.keys.DailyBoard(day, variant)
	p := d.rdb.Pipeline()
	ids := p.ZRange(ctx, bk, 0, int64(n)-1)
	total := p.ZCard(ctx, bk)
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, 0, fmt.Errorf("redislobby: daily board: %w", err)
	}
	if len(ids.Val()) == 0 {
		return nil, int(total.Val()), nil
	}
	raw, err := d.rdb.HMGet(ctx, d.keys.DailyEntries(day, variant), ids.Val()...).Result()
	if err != nil {
		return nil, 0, fmt.Errorf("redislobby: daily board: %w", err)
	}
	out := make([]lobby.DailyEntry, 0, len(raw))
	for i, r := range raw {
		s, ok := r.(string)
		if !ok {
			continue
		}
		var e lobby.DailyEntry
		if err := json.Unmarshal([]byte(s), &e); err != nil {
			return nil, 0, fmt.Errorf("redislobby: daily entry: %w", err)
		}
		e.Rank = i + 1
		out = append(out, e)
	}
	return out, int(total.Val()), nil
}

// Entry is player's entry with its rank.
func (d *Dailies) Entry(ctx context.Context, day, variant, player string) (lobby.DailyEntry, bool, error) {
	p := d.rdb.Pipeline()
	raw := p.HGet(ctx, d.keys.DailyEntries(day, variant), player)
	rank := p.ZRank(ctx, d.keys.DailyBoard(day, variant), player)
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return lobby.DailyEntry{}, false, fmt.Errorf("redislobby: daily entry: %w", err)
	}
	if raw.Err() != nil {
		return lobby.DailyEntry{}, false, nil
	}
	var e lobby.DailyEntry
	if err := json.Unmarshal([]byte(raw.Val()), &e); err != nil {
		return lobby.DailyEntry{}, false, fmt.Errorf("redislobby: daily entry: %w", err)
	}
	if rank.Err() == nil {
		e.Rank = int(rank.Val()) + 1
	}
	return e, true, nil
}

// History is player's last n entries, newest first.
func (d *Dailies) History(ctx context.Context, player string, n int) ([]lobby.DailyEntry, error) {
	raw, err := d.rdb.LRange(ctx, d.keys.DailyHistory(player), 0, int64(n)-1).Result()
	if err != nil {
		return nil, fmt.Errorf("redislobby: daily history: %w", err)
	}
	out := make([]lobby.DailyEntry, 0, len(raw))
	for _, s := range raw {
		var e lobby.DailyEntry
		if err := json.Unmarshal([]byte(s), &e); err != nil {
			return nil, fmt.Errorf("redislobby: daily history: %w", err)
		}
		out = append(out, e)
	}
	return out, nil
}
