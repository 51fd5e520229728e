package redislobby

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/lobby"
	"sirtommy/race"
)

// PresenceTTL is how long an instance's counts are summed after its last
// share: three of the lobby's one-second heartbeats, so a missed beat or
// two is no flicker, and a dead instance's players stop counting within
// seconds.
const PresenceTTL = 3 * lobby.DefaultTick

// PresenceKey is the hash of every instance's counts (instance id ->
// JSON with the Unix milliseconds until which they count).
func (k Keys) PresenceKey() string { return k.prefix() + "{presence}:instances" }

// Presence shares presence counts between the instances on one Redis: each
// stores its own with an expiry and sums the others' that have not
// expired, removing those that have.
type Presence struct {
	rdb      redis.UniversalClient
	keys     Keys
	instance string
	clock    race.Clock
}

var (
	_ lobby.PresenceShare = (*Presence)(nil)
	_ lobby.RaceListShare = (*Presence)(nil)
)

// RaceListKey is the hash of every instance's live public races
// (instance id -> JSON with the Unix milliseconds until which they are
// listed): each instance lists the races it runs.
func (k Keys) RaceListKey() string { return k.prefix() + "{presence}:races" }

// NewPresence shares the counts of instance on rdb; clock dates them (the
// instances' clocks are taken to agree to well within PresenceTTL).
func NewPresence(rdb redis.UniversalClient, keys Keys, instance string, clock race.Clock) *Presence {
	return &Presence{rdb: rdb, keys: keys, instance: instance, clock: clock}
}

// shared is one instance's counts as stored.
type shared struct {
	Until    int64          `json:"until"` // Unix milliseconds
	Presence lobby.Presence `json:"presence"`
}

// Share stores own and returns the sum of the other live instances'.
func (p *Presence) Share(ctx context.Context, own lobby.Presence) (lobby.Presence, error) {
	now := p.clock.Now()
	js, err := json.Marshal(shared{Until: now.Add(PresenceTTL).UnixMilli(), Presence: own})
	if err != nil {
		return lobby.Presence{}, fmt.Errorf("redislobby: presence: %w", err)
	}
	key := p.keys.PresenceKey()
	pipe := p.rdb.Pipeline()
	pipe.HSet(ctx, key, p.instance, js)
	all := pipe.HGetAll(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil {
		return lobby.Presence{}, fmt.Errorf("redislobby: presence: %w", err)
	}
	var others lobby.Presence
	var dead []string
	for id, v := range all.Val() {
		if id == p.instance {
			continue
		}
		var s shared
		if err := json.Unmarshal([]byte(v), &s); err != nil || time.UnixMilli(s.Until).Before(now) {
			dead = append(dead, id)
			continue
		}
		others.Online += s.Presence.Online
		others.Queued += s.Presence.Queued
		others.Racing += s.Presence.Racing
		for v, n := range s.Presence.Queues {
			if others.Queues == nil {
				others.Queues = make(map[string]int)
			}
			others.Queues[v] += n
		}
	}
	if len(dead) > 0 {
		// Another instance may remove them too; HDEL is idempotent. A
		// dead instance that comes back simply shares again.
		if err := p.rdb.HDel(ctx, key, dead...).Err(); err != nil {
			return others, fmt.Errorf("redislobby: presence: remove expired: %w", err)
		}
	}
	return others, nil
}

// listedRaces is one instance's races as stored.
type listedRaces struct {
	Until int64              `json:"until"` // Unix milliseconds
	Races []lobby.ListedRace `json:"races"`
}

// ShareRaces stores own and returns the other live instances' races,
// removing the lists of instances that stopped sharing.
func (p *Presence) ShareRaces(ctx context.Context, own []lobby.ListedRace) ([]lobby.ListedRace, error) {
	now := p.clock.Now()
	js, err := json.Marshal(listedRaces{Until: now.Add(PresenceTTL).UnixMilli(), Races: own})
	if err != nil {
		return nil, fmt.Errorf("redislobby: race list: %w", err)
	}
	key := p.keys.RaceListKey()
	pipe := p.rdb.Pipeline()
	pipe.HSet(ctx, key, p.instance, js)
	all := pipe.HGetAll(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("redislobby: race list: %w", err)
	}
	var others []lobby.ListedRace
	var dead []string
	for id, v := range all.Val() {
		if id == p.instance {
			continue
		}
		var l listedRaces
		if err := json.Unmarshal([]byte(v), &l); err != nil || time.UnixMilli(l.Until).Before(now) {
			dead = append(dead, id)
			continue
		}
		others = append(others, l.Races...)
	}
	if len(dead) > 0 {
		if err := p.rdb.HDel(ctx, key, dead...).Err(); err != nil {
			return others, fmt.Errorf("redislobby: race list: remove expired: %w", err)
		}
	}
	return others, nil
}

// Forget removes this instance's counts and races at once (on shutdown).
func (p *Presence) Forget(ctx context.Context) error {
	pipe := p.rdb.Pipeline()
	pipe.HDel(ctx, p.keys.PresenceKey(), p.instance)
	pipe.HDel(ctx, p.keys.RaceListKey(), p.instance)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redislobby: presence: forget %s: %w", p.instance, err)
	}
	return nil
}
