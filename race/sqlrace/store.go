// Package sqlrace keeps the single binary's live races in its SQL
// database (SQLite in the data folder), so that a server killed mid-race
// loses no acknowledged move and resumes its races when it starts again:
// Store is the races' event log (race.Store) and Records their records
// and results (race.Records), in the tables of lobby/sqlstore's migration
// 00002_live_races.sql. Every write goes through one writer goroutine that
// commits the writes waiting for it together (group commit, writer.go):
// a move is acknowledged once its transaction is committed.
//
// The event log is a journal (live_log: a row for each commit with the
// moves it committed, written at its end only) and the Store keeps each
// race's moves in memory as well, read from the journal when it opens:
// appends are checked and moves read in memory, and a commit of any
// number of moves inserts one row. One process writes these tables,
// which the data folder's lock (lobby/sqlstore) makes sure of. The SQL
// is the same on PostgreSQL, where a fleet keeps its live races in Redis
// instead.
package sqlrace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"sirtommy/race"
)

// Store is a race.Store on the live_log journal, each race's moves kept
// in memory too.
type Store struct {
	db *sql.DB
	w  *writer
	st *statements
	// logs is each race's moves (race id -> *raceLog), found without a
	// lock as memrace's logs are.
	logs sync.Map
}

// raceLog is one race's moves, as committed.
type raceLog struct {
	// mu is held across an append's commit: one append of a race at a
	// time (the race's own lock is held around it anyway).
	mu    sync.Mutex
	moves []race.MoveRecord
	last  [race.MaxSeats]int // each seat's last seq; 0: none
	// pending is an append whose caller stopped waiting before its
	// commit: the next append of the race learns its outcome first.
	pending *op
	// first is the pos of the live_log row with the race's first move
	// (0: none), set by the writer.
	first atomic.Int64
}

// add records committed move m.
func (l *raceLog) add(m race.MoveRecord) {
	l.moves = append(l.moves, m)
	l.last[m.Seat] = m.Seq
}

// settle learns the outcome of the race's pending append, if any: it
// fails while that one is still not committed.
func (l *raceLog) settle(ctx context.Context, w *writer) error {
	o := l.pending
	if o == nil {
		return nil
	}
	if err := w.wait(ctx, o); err != nil {
		return fmt.Errorf("an earlier move of the race: %w", err)
	}
	if o.err == nil {
		l.add(o.move)
	}
	l.pending = nil
	release(o)
	return nil
}

var (
	_ race.Store     = (*Store)(nil)
	_ race.Forgetter = (*Store)(nil)
)

// ErrBadRecord marks a move record the store refuses: a seat that is not
// 0 or 1, a seq below 1, or a move or request id that is not valid UTF-8
// (which the journal's JSON would not keep as it is). Nothing was
// stored.
var ErrBadRecord = errors.New("bad move record")

// Options configure a Store.
type Options struct {
	// Interval is the least time from the start of one commit to the
	// start of the next: writes that come sooner wait for it and share
	// it; one that comes later is committed at once. Zero commits what
	// waits at once: the lowest latency, but on a busy server a commit
	// for every move or two, and a commit (its locks, its pages written
	// to the WAL) costs many times what a move adds to it. With an
	// interval a move waits for it at most; the server commits at most
	// once an interval however busy it is.
	Interval time.Duration
}

// New opens the live tables on db, whose schema must have migration
// 00002_live_races (lobby/sqlstore.OpenSQLite migrates it): it reads the
// journal whole, then starts the writer on a connection of its own.
// Close stops it.
func New(ctx context.Context, db *sql.DB, o Options) (*Store, error) {
	s, err := openStore(ctx, db, o)
	if err != nil {
		return nil, err
	}
	go s.w.run()
	return s, nil
}

// openStore is New but for starting the writer.
func openStore(ctx context.Context, db *sql.DB, o Options) (*Store, error) {
	s := &Store{db: db}
	pos, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	st, err := prepare(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("live races: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		st.close()
		return nil, fmt.Errorf("live races: the writer's connection: %w", err)
	}
	s.st, s.w = st, newWriter(conn, st, s, pos+1, o.Interval)
	return s, nil
}

// load reads the journal into the races' logs and returns its last pos.
func (s *Store) load(ctx context.Context) (int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT pos, entries FROM live_log ORDER BY pos`)
	if err != nil {
		return 0, fmt.Errorf("live races: read the log: %w", err)
	}
	defer rows.Close()
	var pos int64
	var entries []entry
	for rows.Next() {
		var b string
		if err := rows.Scan(&pos, &b); err != nil {
			return 0, fmt.Errorf("live races: read the log: %w", err)
		}
		entries = entries[:0]
		if err := json.Unmarshal([]byte(b), &entries); err != nil {
			return 0, fmt.Errorf("live races: the log's row %d: %w", pos, err)
		}
		for _, e := range entries {
			m := e.MoveRecord
			if err := checkRecord(m); err != nil {
				return 0, fmt.Errorf("live races: race %s in the log's row %d: %w", e.Race, pos, err)
			}
			l := s.log(e.Race)
			if m.Seq <= l.last[m.Seat] {
				return 0, fmt.Errorf("live races: race %s seat %d seq %d in the log's row %d is not above the seat's last, %d",
					e.Race, m.Seat, m.Seq, pos, l.last[m.Seat])
			}
			l.add(m)
			l.first.CompareAndSwap(0, pos)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("live races: read the log: %w", err)
	}
	return pos, nil
}

// log is race id's log, made empty when it has none yet.
func (s *Store) log(id string) *raceLog {
	if v, ok := s.logs.Load(id); ok {
		return v.(*raceLog)
	}
	v, _ := s.logs.LoadOrStore(id, &raceLog{})
	return v.(*raceLog)
}

// Close stops the writer once the writes queued are committed, and closes
// its connection; db stays open (its owner closes it).
func (s *Store) Close() error {
	s.w.close()
	s.st.close()
	return s.w.conn.Close()
}

// Append stores a move and returns once its transaction is committed: a
// record already there (same seat, seq and move) is not stored twice,
// one that contradicts the log is refused with race.ErrConflict, and a
// failed commit with race.ErrUnavailable (nothing of it stored).
func (s *Store) Append(ctx context.Context, raceID string, m race.MoveRecord) error {
	if err := checkRecord(m); err != nil {
		return fmt.Errorf("race %s seat %d seq %d: %w", raceID, m.Seat, m.Seq, err)
	}
	l := s.log(raceID)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.settle(ctx, s.w); err != nil {
		return fmt.Errorf("race %s seat %d seq %d: append: %w", raceID, m.Seat, m.Seq, err)
	}
	if m.Seq <= l.last[m.Seat] {
		for i := len(l.moves) - 1; i >= 0; i-- {
			if old := l.moves[i]; old.Seat == m.Seat && old.Seq == m.Seq {
				if old.Move == m.Move {
					return nil // stored already
				}
				return fmt.Errorf("race %s seat %d seq %d holds %q: %w", raceID, m.Seat, m.Seq, old.Move, race.ErrConflict)
			}
		}
		return fmt.Errorf("race %s seat %d seq %d is not above the seat's last: %w", raceID, m.Seat, m.Seq, race.ErrConflict)
	}
	o := newOp(opAppend, raceID)
	o.move, o.log = m, l
	if err := s.w.send(ctx, o); err != nil {
		release(o)
		return fmt.Errorf("race %s seat %d seq %d: append: %w", raceID, m.Seat, m.Seq, err)
	}
	if err := s.w.wait(ctx, o); err != nil {
		l.pending = o // the race's next append learns what became of it
		return fmt.Errorf("race %s seat %d seq %d: append: %w", raceID, m.Seat, m.Seq, err)
	}
	err := o.err
	release(o)
	if err != nil {
		return fmt.Errorf("race %s seat %d seq %d: append: %w", raceID, m.Seat, m.Seq, err)
	}
	l.add(m)
	return nil
}

// checkRecord refuses what the journal cannot hold as given.
func checkRecord(m race.MoveRecord) error {
	switch {
	case m.Seat < 0 || m.Seat >= race.MaxSeats:
		return fmt.Errorf("%w: no seat %d", ErrBadRecord, m.Seat)
	case m.Seq < 1:
		return fmt.Errorf("%w: seq %d", ErrBadRecord, m.Seq)
	case !utf8.ValidString(m.Move):
		return fmt.Errorf("%w: move %q", ErrBadRecord, m.Move)
	case !utf8.ValidString(m.ID):
		return fmt.Errorf("%w: request id %q", ErrBadRecord, m.ID)
	}
	return nil
}

// Moves returns a copy of the race's moves, in the order they were
// appended.
func (s *Store) Moves(ctx context.Context, raceID string) ([]race.MoveRecord, error) {
	v, ok := s.logs.Load(raceID)
	if !ok {
		return nil, nil
	}
	l := v.(*raceLog)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.settle(ctx, s.w); err != nil {
		return nil, fmt.Errorf("race %s: read log: %w", raceID, err)
	}
	return append([]race.MoveRecord(nil), l.moves...), nil
}

// Races lists the races whose moves the store holds, in no particular
// order.
func (s *Store) Races() []string {
	var ids []string
	s.logs.Range(func(k, _ any) bool {
		ids = append(ids, k.(string))
		return true
	})
	sort.Strings(ids)
	return ids
}

// Forget deletes a race: its moves from memory, its record and result
// from the tables, and its moves from the journal once no race kept has
// older ones (at a Forget trimEvery after the last trim). The Service calls it when it drops a
// finished race from memory (Evict).
//
// This is where the live tables meet the archive (race.Archive, table
// races): eviction comes --retention after the race's end, long after
// the archive has stored it, so the finished race is still found there
// once its live rows are gone.
func (s *Store) Forget(ctx context.Context, raceID string) error {
	o := newOp(opForget, raceID)
	if err := s.w.do(ctx, o); err != nil {
		return fmt.Errorf("race %s: forget: %w", raceID, err)
	}
	err := o.err
	release(o)
	if err != nil {
		return fmt.Errorf("race %s: forget: %w", raceID, err)
	}
	return nil
}
