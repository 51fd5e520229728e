package sqlstore

import (
	"sync"

	"sirtommy/lobby"
)

// standingCache keeps the standings read and saved on a SQLite store in
// memory, so that a player's quick play and the rating of their next
// race do not read the database again. It is sound only where Ratings.Save
// is the only writer of the standings: SQLite, whose data folder one
// server holds (LockFile). PostgreSQL, shared by a fleet, has none.
//
// A standing's games only grow (Save refuses a stale one), so the cache
// keeps, for each player and variant, the standing with the most games
// it was given: a read that started before a Save committed and ends
// after it cannot put an older standing back (unless the newer one was
// dropped meanwhile to make room: then the next Save of that player is
// refused as stale, which forgets it, and the race's rating reads the
// database again).
type standingCache struct {
	mu sync.Mutex
	m  map[standingKey]lobby.Standing
}

// standingKey names a standing.
type standingKey struct{ variant, player string }

// maxCachedStandings bounds the cache: about 200 bytes each, 2 MB. When
// full, an arbitrary standing is dropped for the new one (it is read from
// the database again when needed).
const maxCachedStandings = 10_000

// get returns the cached standing of player in variant.
func (c *standingCache) get(variant, player string) (lobby.Standing, bool) {
	if c == nil {
		return lobby.Standing{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[standingKey{variant, player}]
	return s, ok
}

// read keeps s, read from the database, unless the cache has one already
// (never older: saved ones are kept as they commit).
func (c *standingCache) read(s lobby.Standing) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := standingKey{s.Variant, s.Player}
	if _, ok := c.m[k]; !ok {
		c.putLocked(k, s)
	}
}

// saved keeps the standings a Save committed, each unless the cache has
// one with more games (a later Save that reached the cache first).
func (c *standingCache) saved(after []lobby.Standing) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range after {
		k := standingKey{s.Variant, s.Player}
		s.WinPercent = lobby.WinPercent(s.Wins, s.Draws, s.Games) // derived, as a read derives it
		if old, ok := c.m[k]; !ok || old.Games <= s.Games {
			c.putLocked(k, s)
		}
	}
}

// forget drops the standings of a Save that did not commit them, so that
// they are read from the database again.
func (c *standingCache) forget(after []lobby.Standing) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range after {
		delete(c.m, standingKey{s.Variant, s.Player})
	}
}

// putLocked stores s under k, dropping another standing if full; c.mu held.
func (c *standingCache) putLocked(k standingKey, s lobby.Standing) {
	if c.m == nil {
		c.m = make(map[standingKey]lobby.Standing)
	}
	if _, ok := c.m[k]; !ok && len(c.m) >= maxCachedStandings {
		for other := range c.m {
			delete(c.m, other)
			break
		}
	}
	c.m[k] = s
}

// DropCaches forgets what the store keeps in memory of its tables (the
// standings), for whoever writes them behind its back while it is open:
// tests that empty the tables.
func (db *DB) DropCaches() {
	if c := db.standings; c != nil {
		c.mu.Lock()
		c.m = nil
		c.mu.Unlock()
	}
}
