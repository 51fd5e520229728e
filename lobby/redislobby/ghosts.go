package redislobby

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/lobby"
)

// ghostsStem is the common stem of the ghost races' keys:
// "PREFIX{ghosts}", one hash tag.
func (k Keys) ghostsStem() string { return k.prefix() + "{ghosts}" }

// Ghost is challenge id's record (lobby.GhostRecord JSON), kept until its
// keep time.
func (k Keys) Ghost(id string) string { return k.ghostsStem() + ":g:" + id }

// GhostsOf is the sorted set of the challenges player made, scored by
// the Unix milliseconds they were made.
func (k Keys) GhostsOf(player string) string { return k.ghostsStem() + ":mine:" + player }

// DealSeen is the set of players who have seen deal in variant.
func (k Keys) DealSeen(variant string, deal uint64) string {
	return k.ghostsStem() + ":seen:" + variant + ":" + strconv.FormatUint(deal, 10)
}

// GhostRuns are the lists of runs (newest first, lobby.GhostRun JSON)
// against player's ghosts ("against") and by player ("raced").
func (k Keys) GhostRuns(which, player string) string {
	return k.ghostsStem() + ":" + which + ":" + player
}

// GhostTally is the hash of player's record against ghosts.
func (k Keys) GhostTally(player string) string { return k.ghostsStem() + ":tally:" + player }

// GhostRunOf marks race's run recorded.
func (k Keys) GhostRunOf(raceID string) string { return k.ghostsStem() + ":run:" + raceID }

// Retention of what ghost races leave behind.
const (
	// SeenTTL is how long a deal is remembered as seen by its players
	// after the last of them saw it: longer than any ghost challenge
	// lives (lobby.DefaultGhostTTL, kept twice as long), so that nobody
	// races a ghost of a deal they played.
	SeenTTL = 30 * 24 * time.Hour
	// ghostRunsKept bounds each player's lists of runs.
	ghostRunsKept = 100
	// runMarkTTL is how long a race's run is known as recorded: a
	// takeover ends a race again within minutes.
	runMarkTTL = 24 * time.Hour
)

// Ghosts is lobby.Ghosts shared in Redis.
type Ghosts struct {
	rdb  redis.UniversalClient
	keys Keys
}

var _ lobby.Ghosts = (*Ghosts)(nil)

// NewGhosts shares ghost challenges and runs on rdb.
func NewGhosts(rdb redis.UniversalClient, keys Keys) *Ghosts {
	return &Ghosts{rdb: rdb, keys: keys}
}

// Put stores g for keep.
func (g *Ghosts) Put(ctx context.Context, rec lobby.GhostRecord, keep time.Duration) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("redislobby: ghost %s: %w", rec.ID, err)
	}
	p := g.rdb.TxPipeline()
	p.Set(ctx, g.keys.Ghost(rec.ID), b, keep)
	p.ZAdd(ctx, g.keys.GhostsOf(rec.Author), redis.Z{Score: float64(rec.Made.UnixMilli()), Member: rec.ID})
	p.Expire(ctx, g.keys.GhostsOf(rec.Author), keep)
	if _, err := p.Exec(ctx); err != nil {
		return fmt.Errorf("redislobby: put ghost %s: %w", rec.ID, err)
	}
	return nil
}

// Get finds challenge id.
func (g *Ghosts) Get(ctx context.Context, id string) (lobby.GhostRecord, bool, error) {
	b, err := g.rdb.Get(ctx, g.keys.Ghost(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return lobby.GhostRecord{}, false, nil
	}
	if err != nil {
		return lobby.GhostRecord{}, false, fmt.Errorf("redislobby: get ghost %s: %w", id, err)
	}
	var rec lobby.GhostRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return lobby.GhostRecord{}, false, fmt.Errorf("redislobby: ghost %s: %w", id, err)
	}
	return rec, true, nil
}

// Mine lists player's challenges, newest first, dropping from the index
// those no longer kept.
func (g *Ghosts) Mine(ctx context.Context, player string) ([]lobby.GhostInfo, error) {
	ids, err := g.rdb.ZRevRange(ctx, g.keys.GhostsOf(player), 0, ghostRunsKept-1).Result()
	if err != nil {
		return nil, fmt.Errorf("redislobby: ghosts of %s: %w", player, err)
	}
	var out []lobby.GhostInfo
	for _, id := range ids {
		rec, ok, err := g.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			g.rdb.ZRem(ctx, g.keys.GhostsOf(player), id)
			continue
		}
		out = append(out, rec.GhostInfo)
	}
	return out, nil
}

// See marks the deal seen by player: SADD says whether it was already.
func (g *Ghosts) See(ctx context.Context, variant string, deal uint64, player string) (bool, error) {
	k := g.keys.DealSeen(variant, deal)
	p := g.rdb.TxPipeline()
	added := p.SAdd(ctx, k, player)
	p.Expire(ctx, k, SeenTTL)
	if _, err := p.Exec(ctx); err != nil {
		return false, fmt.Errorf("redislobby: see deal: %w", err)
	}
	return added.Val() == 0, nil
}

// Seen reports whether player has seen the deal.
func (g *Ghosts) Seen(ctx context.Context, variant string, deal uint64, player string) (bool, error) {
	ok, err := g.rdb.SIsMember(ctx, g.keys.DealSeen(variant, deal), player).Result()
	if err != nil {
		return false, fmt.Errorf("redislobby: seen deal: %w", err)
	}
	return ok, nil
}

// AddRun records r once per race: the race's mark is set first, and only
// its setter writes the lists and the tally.
func (g *Ghosts) AddRun(ctx context.Context, r lobby.GhostRun) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("redislobby: run %s: %w", r.Race, err)
	}
	first, err := g.rdb.SetNX(ctx, g.keys.GhostRunOf(r.Race), 1, runMarkTTL).Result()
	if err != nil {
		return fmt.Errorf("redislobby: run %s: %w", r.Race, err)
	}
	if !first {
		return nil
	}
	field := map[string]string{"won": "wins", "lost": "losses"}[r.Outcome]
	if field == "" {
		field = "draws"
	}
	p := g.rdb.TxPipeline()
	for which, player := range map[string]string{"against": r.Author, "raced": r.Player} {
		k := g.keys.GhostRuns(which, player)
		p.LPush(ctx, k, b)
		p.LTrim(ctx, k, 0, ghostRunsKept-1)
	}
	p.HIncrBy(ctx, g.keys.GhostTally(r.Player), "races", 1)
	p.HIncrBy(ctx, g.keys.GhostTally(r.Player), field, 1)
	if _, err := p.Exec(ctx); err != nil {
		g.rdb.Del(ctx, g.keys.GhostRunOf(r.Race)) // so that a retry records it
		return fmt.Errorf("redislobby: run %s: %w", r.Race, err)
	}
	return nil
}

// Runs are player's last n runs each way and their record.
func (g *Ghosts) Runs(ctx context.Context, player string, n int) (against, raced []lobby.GhostRun, tally lobby.GhostTally, err error) {
	p := g.rdb.Pipeline()
	a := p.LRange(ctx, g.keys.GhostRuns("against", player), 0, int64(n)-1)
	r := p.LRange(ctx, g.keys.GhostRuns("raced", player), 0, int64(n)-1)
	t := p.HGetAll(ctx, g.keys.GhostTally(player))
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, tally, fmt.Errorf("redislobby: runs of %s: %w", player, err)
	}
	decode := func(raw []string) ([]lobby.GhostRun, error) {
		out := make([]lobby.GhostRun, 0, len(raw))
		for _, s := range raw {
			var run lobby.GhostRun
			if err := json.Unmarshal([]byte(s), &run); err != nil {
				return nil, fmt.Errorf("redislobby: run of %s: %w", player, err)
			}
			out = append(out, run)
		}
		return out, nil
	}
	if against, err = decode(a.Val()); err != nil {
		return nil, nil, tally, err
	}
	if raced, err = decode(r.Val()); err != nil {
		return nil, nil, tally, err
	}
	num := func(f string) int { v, _ := strconv.Atoi(t.Val()[f]); return v }
	tally = lobby.GhostTally{Races: num("races"), Wins: num("wins"), Losses: num("losses"), Draws: num("draws")}
	return against, raced, tally, nil
}

// BestGames is the hash of players' best games on deal in variant:
// player -> lobby.BestGame JSON.
func (k Keys) BestGames(variant string, deal uint64) string {
	return k.ghostsStem() + ":best:" + variant + ":" + strconv.FormatUint(deal, 10)
}

// keepBestScript sets a player's best game unless the stored one has as
// many cards. KEYS: best. ARGV: player, JSON, score.
var keepBestScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur and cjson.decode(cur).score >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`)

// KeepBest keeps b if it has more cards than the best so far (a script:
// one compare and set).
func (g *Ghosts) KeepBest(ctx context.Context, variant string, deal uint64, player string, b lobby.BestGame) error {
	raw, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("redislobby: best game: %w", err)
	}
	if err := keepBestScript.Run(ctx, g.rdb, []string{g.keys.BestGames(variant, deal)}, player, raw, b.Score, SeenTTL.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("redislobby: keep best game: %w", err)
	}
	return nil
}

// Best is player's best game on the deal.
func (g *Ghosts) Best(ctx context.Context, variant string, deal uint64, player string) (lobby.BestGame, bool, error) {
	raw, err := g.rdb.HGet(ctx, g.keys.BestGames(variant, deal), player).Result()
	if errors.Is(err, redis.Nil) {
		return lobby.BestGame{}, false, nil
	}
	if err != nil {
		return lobby.BestGame{}, false, fmt.Errorf("redislobby: best game: %w", err)
	}
	var b lobby.BestGame
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		return lobby.BestGame{}, false, fmt.Errorf("redislobby: best game: %w", err)
	}
	return b, true, nil
}
