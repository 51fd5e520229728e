package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
)

// Arenas is the arenas (lobby.Arenas) in the durable store: a row per
// arena holding it whole as JSON, as it is read and written whole (by
// its pairings and its races' ends), with its start and end beside it
// for Current, and a version that every change moves on. A change is
// optimistic: it writes only over the version it read, and one that lost
// to another instance's change reads the arena again and runs again.
type Arenas struct {
	db *DB
	// decoded keeps the last arena this store read or wrote of each id,
	// by version: an arena of a thousand players is hundreds of
	// kilobytes of JSON, and most reads find the version they had, so
	// they skip the decoding (a copy is handed out, never the kept one).
	mu      sync.Mutex
	decoded map[string]versioned
}

// versioned is an arena as of a version.
type versioned struct {
	version int64
	arena   lobby.Arena
}

var _ lobby.Arenas = (*Arenas)(nil)

// NewArenas is the arenas kept in db.
func NewArenas(db *DB) *Arenas { return &Arenas{db: db, decoded: map[string]versioned{}} }

// kept is arena id as of version, if this store has it decoded.
func (s *Arenas) kept(id string, version int64) (lobby.Arena, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.decoded[id]
	if !ok || v.version != version {
		return lobby.Arena{}, false
	}
	return v.arena.Clone(), true
}

// keep remembers a (a copy) as arena id's version, unless a later one
// is kept.
func (s *Arenas) keep(id string, version int64, a lobby.Arena) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.decoded[id]; ok && v.version > version {
		return
	}
	s.decoded[id] = versioned{version: version, arena: a.Clone()}
}

// keptAfterEnd is how long after its end an arena stays kept decoded:
// the lobby still reads it for its podium (half an hour), whatever time
// a caller of Current asks from.
const keptAfterEnd = time.Hour

// forget drops the arenas kept that ended over keptAfterEnd before now:
// nobody reads them any more.
func (s *Arenas) forget(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, v := range s.decoded {
		if v.arena.EndAt.Add(keptAfterEnd).Before(now) {
			delete(s.decoded, id)
		}
	}
}

// decode is arena id of version from its body, or as kept.
func (s *Arenas) decode(id string, version int64, body string) (lobby.Arena, error) {
	if a, ok := s.kept(id, version); ok {
		return a, nil
	}
	var a lobby.Arena
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		return lobby.Arena{}, err
	}
	a.Upgrade()
	s.keep(id, version, a)
	return a, nil
}

// arenaChangeTries bounds the tries of one Change while other instances
// change the same arena: each lost try sees the winner's arena, so a
// try is lost only to a change that was written, and an arena's writers
// (its pairing, its races' ends) are far fewer than this at once.
const arenaChangeTries = 50

// Queries of the arenas. Times are Unix milliseconds, as in every table;
// the body keeps them whole.
const (
	insertArena = "INSERT INTO arenas (id, start_ms, end_ms, version, body) VALUES ($1, $2, $3, 1, $4)" +
		" ON CONFLICT (id) DO NOTHING"
	selectArena = "SELECT body, version FROM arenas WHERE id = $1"
	// updateArena writes a change over the version it was made from
	// only: no row is updated when another change came in between.
	updateArena = "UPDATE arenas SET body = $1, version = version + 1, start_ms = $2, end_ms = $3 WHERE id = $4 AND version = $5"
	// insertResult adds a counted race; counted again, it is ignored.
	insertResult = "INSERT INTO arena_results (arena_id, race_id, seq, player_a, player_b, body) VALUES ($1, $2, $3, $4, $5, $6)" +
		" ON CONFLICT (arena_id, race_id) DO NOTHING"
	selectResults       = "SELECT body FROM arena_results WHERE arena_id = $1 ORDER BY seq"
	selectPlayerResults = "SELECT body FROM arena_results WHERE arena_id = $1 AND (player_a = $2 OR player_b = $2) ORDER BY seq"
	// selectCurrent takes the arenas that end in now's millisecond or
	// after: Current keeps those that end after now to the nanosecond.
	selectCurrent = "SELECT id, body, version FROM arenas WHERE end_ms >= $1 ORDER BY start_ms, id"
)

// Make stores a unless an arena has its id already (of two callers at
// once, one only makes it: the primary key decides).
func (s *Arenas) Make(ctx context.Context, a lobby.Arena) (bool, error) {
	if err := checkFields([][2]string{{"arena id", a.ID}}); err != nil {
		return false, err
	}
	body, err := encodeArena(a)
	if err != nil {
		return false, err
	}
	res, err := s.db.exec(ctx, insertArena, a.ID, a.StartAt.UnixMilli(), a.EndAt.UnixMilli(), body)
	if err != nil {
		return false, fmt.Errorf("sqlstore: make arena %s: %w", a.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlstore: make arena %s: %w", a.ID, err)
	}
	return n == 1, nil
}

// Get finds arena id.
func (s *Arenas) Get(ctx context.Context, id string) (lobby.Arena, bool, error) {
	if !storable(id) {
		return lobby.Arena{}, false, nil
	}
	var body string
	var version int64
	err := s.db.queryRow(ctx, selectArena, id).Scan(&body, &version)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return lobby.Arena{}, false, nil
	case err != nil:
		return lobby.Arena{}, false, fmt.Errorf("sqlstore: arena %s: %w", id, err)
	}
	a, err := s.decode(id, version, body)
	if err != nil {
		return lobby.Arena{}, false, fmt.Errorf("sqlstore: arena %s: %w", id, err)
	}
	return a, true, nil
}

// Change applies change to arena id and writes it over the version it
// read, trying again with the newer arena while other writers get in
// first; after arenaChangeTries lost tries it gives up with an error
// wrapping race.ErrUnavailable (nothing was changed: try again later).
// The id stays the arena's, whatever change did to it.
func (s *Arenas) Change(ctx context.Context, id string, change func(*lobby.Arena) error) (lobby.Arena, bool, error) {
	if !storable(id) {
		return lobby.Arena{}, false, nil
	}
	for range arenaChangeTries {
		a, ok, lost, err := s.try(ctx, id, change)
		if !lost {
			return a, ok, err
		}
	}
	return lobby.Arena{}, false, fmt.Errorf("sqlstore: change arena %s: %d tries lost to other changes: %w", id, arenaChangeTries, race.ErrUnavailable)
}

// try is one try of Change, in one transaction: lost is true when
// another writer changed the arena between its read and its write. On
// PostgreSQL that happens under contention (its UPDATE waits for the
// other's commit, then finds the version moved on). On SQLite the
// transaction is the writer connection's and holds the write lock from
// its read on, so no try is lost there.
func (s *Arenas) try(ctx context.Context, id string, change func(*lobby.Arena) error) (a lobby.Arena, ok, lost bool, err error) {
	tx, release, err := s.db.begin(ctx)
	if err != nil {
		return lobby.Arena{}, false, false, fmt.Errorf("sqlstore: change arena %s: begin: %w", id, err)
	}
	defer release()
	committed := false
	defer func() {
		if !committed { // read only, refused, lost, failed or panicked: nothing to keep
			_ = tx.Rollback()
		}
	}()
	var body string
	var version int64
	err = s.db.txQueryRow(ctx, tx, selectArena, id).Scan(&body, &version)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return lobby.Arena{}, false, false, nil
	case err != nil:
		return lobby.Arena{}, false, false, fmt.Errorf("sqlstore: change arena %s: read: %w", id, err)
	}
	if a, err = s.decode(id, version, body); err != nil {
		return lobby.Arena{}, false, false, fmt.Errorf("sqlstore: change arena %s: read: %w", id, err)
	}
	a.Counted = nil
	if err := change(&a); err != nil {
		return lobby.Arena{}, true, false, err // as it is: the caller's refusal
	}
	a.ID = id
	next, err := encodeArena(a)
	if err != nil {
		return lobby.Arena{}, true, false, err
	}
	res, err := s.db.txExec(ctx, tx, updateArena, next, a.StartAt.UnixMilli(), a.EndAt.UnixMilli(), id, version)
	if err != nil {
		return lobby.Arena{}, true, false, fmt.Errorf("sqlstore: change arena %s: write: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return lobby.Arena{}, true, false, fmt.Errorf("sqlstore: change arena %s: write: %w", id, err)
	}
	if n == 0 {
		return lobby.Arena{}, true, true, nil
	}
	for k, r := range a.Counted {
		rb, err := json.Marshal(r)
		if err != nil {
			return lobby.Arena{}, true, false, race.Errorf(race.CodeInternal, "sqlstore: arena %s: result of %s cannot be encoded: %v", id, r.Race, err)
		}
		// seq: the version this change writes, then the result's place
		// in it (a change counts few races: fewer than resultsPerChange).
		seq := (version+1)*resultsPerChange + int64(k)
		if _, err := s.db.txExec(ctx, tx, insertResult, id, r.Race, seq, r.Players[0], r.Players[1], string(rb)); err != nil {
			return lobby.Arena{}, true, false, fmt.Errorf("sqlstore: change arena %s: result of %s: %w", id, r.Race, err)
		}
	}
	a.Counted = nil
	if err := tx.Commit(); err != nil {
		return lobby.Arena{}, true, false, fmt.Errorf("sqlstore: change arena %s: commit: %w", id, err)
	}
	committed = true
	s.keep(id, version+1, a)
	return a, true, false, nil
}

// resultsPerChange bounds the races one change of an arena may count,
// for the results' order (seq); the lobby counts one a change.
const resultsPerChange = 1 << 16

// Results lists arena id's counted races in the order they were
// counted; with player, only theirs.
func (s *Arenas) Results(ctx context.Context, id, player string) ([]lobby.ArenaResult, error) {
	out := []lobby.ArenaResult{}
	if !storable(id) || (player != "" && !storable(player)) {
		return out, nil
	}
	q, args := selectResults, []any{id}
	if player != "" {
		q, args = selectPlayerResults, []any{id, player}
	}
	rows, err := s.db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: arena %s results: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r lobby.ArenaResult
		if err := scanJSON(rows, &r); err != nil {
			return nil, fmt.Errorf("sqlstore: arena %s results: %w", id, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: arena %s results: %w", id, err)
	}
	return out, nil
}

// Current lists the arenas that end after now, by start, then id. The
// rows are chosen and ordered to the millisecond, as the columns hold
// the times; the arenas' own times, to the nanosecond, then decide, so
// that the answer is the memory store's.
func (s *Arenas) Current(ctx context.Context, now time.Time) ([]lobby.Arena, error) {
	rows, err := s.db.sql.QueryContext(ctx, selectCurrent, now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("sqlstore: current arenas: %w", err)
	}
	defer rows.Close()
	out := []lobby.Arena{}
	for rows.Next() {
		var id, body string
		var version int64
		if err := rows.Scan(&id, &body, &version); err != nil {
			return nil, fmt.Errorf("sqlstore: current arenas: %w", err)
		}
		a, err := s.decode(id, version, body)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: current arenas: %w", err)
		}
		if a.EndAt.After(now) {
			out = append(out, a)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: current arenas: %w", err)
	}
	s.forget(now)
	slices.SortStableFunc(out, func(a, b lobby.Arena) int {
		if c := a.StartAt.Compare(b.StartAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// encodeArena is a's body. An arena that cannot be encoded (a time
// beyond the year 9999) is a bug upstream, refused with a race code, as
// retrying would not help.
func encodeArena(a lobby.Arena) (string, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return "", race.Errorf(race.CodeInternal, "sqlstore: arena %s cannot be encoded: %v", a.ID, err)
	}
	return string(b), nil
}
