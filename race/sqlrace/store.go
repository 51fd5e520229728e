// Package sqlrace keeps the single binary's live races in its SQL
// database (SQLite in the data folder), so that a server killed mid-race
// loses no acknowledged move and resumes its races when it starts again:
// Store is the races' event log (race.Store) and Records their records
// and results (race.Records), in the tables of lobby/sqlstore's migration
// 00002_live_races.sql. Every write goes through one writer goroutine that
// commits the writes waiting for it together (group commit, writer.go):
// a move is acknowledged once its transaction is committed.
//
// One process writes these tables: the data folder's lock (lobby/sqlstore)
// makes sure of it, and Store counts on it (it keeps each race's last seqs
// in memory). The SQL is the same on PostgreSQL, where a fleet keeps its
// live races in Redis instead.
package sqlrace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"sirtommy/race"
)

// Store is a race.Store on the live_moves table. It keeps each race's last
// seq per seat in memory (loaded whole at New), so that an append whose
// seq is new, every move's, costs one INSERT and no read.
type Store struct {
	db *sql.DB
	w  *writer
	st *statements
	// logs is each race's last seqs (race id -> *raceLog), found without
	// a lock as memrace's logs are.
	logs sync.Map
}

// raceLog is one race's last committed seq per seat (0: none). The
// writer raises them once a move is committed; Append reads them.
type raceLog struct {
	last [2]atomic.Int64
}

// raise records that seat's seq seq is committed.
func (l *raceLog) raise(seat, seq int) {
	v := &l.last[seat]
	for {
		old := v.Load()
		if int64(seq) <= old || v.CompareAndSwap(old, int64(seq)) {
			return
		}
	}
}

var (
	_ race.Store     = (*Store)(nil)
	_ race.Forgetter = (*Store)(nil)
)

// ErrBadRecord marks a move record the store refuses: a seat that is not
// 0 or 1, a seq below 1, or a move or request id that is not valid UTF-8
// or holds a NUL (which PostgreSQL's TEXT cannot). Nothing was stored.
var ErrBadRecord = errors.New("bad move record")

// New opens the live tables on db, whose schema must have migration
// 00002_live_races (lobby/sqlstore.OpenSQLite migrates it), and starts
// their writer on a connection of its own. Close stops it.
func New(ctx context.Context, db *sql.DB) (*Store, error) {
	s, err := openStore(ctx, db)
	if err != nil {
		return nil, err
	}
	go s.w.run()
	return s, nil
}

// openStore is New but for starting the writer.
func openStore(ctx context.Context, db *sql.DB) (*Store, error) {
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
	s.st, s.w = st, newWriter(conn, st, pos+1)
	return s, nil
}

// load reads every race's last seqs, and returns the last pos written.
func (s *Store) load(ctx context.Context) (int64, error) {
	var pos int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(pos), 0) FROM live_moves`).Scan(&pos); err != nil {
		return 0, fmt.Errorf("live races: read the log's end: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT race, seat, MAX(seq) FROM live_moves GROUP BY race, seat`)
	if err != nil {
		return 0, fmt.Errorf("live races: read the seqs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var seat, seq int
		if err := rows.Scan(&id, &seat, &seq); err != nil {
			return 0, fmt.Errorf("live races: read the seqs: %w", err)
		}
		if seat < 0 || seat > 1 {
			return 0, fmt.Errorf("live races: race %s has moves of seat %d", id, seat)
		}
		s.log(id).raise(seat, seq)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("live races: read the seqs: %w", err)
	}
	return pos, nil
}

// log is race id's seqs, made empty when it has none yet.
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

// Append stores a move once its transaction is committed: a record
// already there (same seat, seq and move) is not stored twice, one that
// contradicts the log is refused with race.ErrConflict, and a failed
// commit with race.ErrUnavailable (nothing of it stored).
func (s *Store) Append(ctx context.Context, raceID string, m race.MoveRecord) error {
	if err := checkRecord(m); err != nil {
		return fmt.Errorf("race %s seat %d seq %d: %w", raceID, m.Seat, m.Seq, err)
	}
	l := s.log(raceID)
	if int64(m.Seq) <= l.last[m.Seat].Load() {
		// Not a new move: a retry, or a conflict.
		var held string
		err := s.db.QueryRowContext(ctx, sqlHeldMove, raceID, m.Seat, m.Seq).Scan(&held)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("race %s seat %d seq %d is not above the seat's last: %w", raceID, m.Seat, m.Seq, race.ErrConflict)
		case err != nil:
			return fmt.Errorf("race %s seat %d seq %d: read the log: %w: %w", raceID, m.Seat, m.Seq, race.ErrUnavailable, err)
		}
		return sameMove(raceID, m, held)
	}
	o := newOp(opAppend, raceID)
	o.move, o.log = m, l
	if err := s.w.do(ctx, o); err != nil {
		return fmt.Errorf("race %s seat %d seq %d: append: %w", raceID, m.Seat, m.Seq, err)
	}
	err, inserted, held := o.err, o.inserted, o.held
	release(o)
	if err != nil {
		return fmt.Errorf("race %s seat %d seq %d: append: %w", raceID, m.Seat, m.Seq, err)
	}
	if !inserted {
		return sameMove(raceID, m, held)
	}
	return nil
}

// sameMove is nil when the log holds m's move under its seq, a conflict
// otherwise.
func sameMove(raceID string, m race.MoveRecord, held string) error {
	if held == m.Move {
		return nil // stored already
	}
	return fmt.Errorf("race %s seat %d seq %d holds %q: %w", raceID, m.Seat, m.Seq, held, race.ErrConflict)
}

// checkRecord refuses what the tables cannot hold as given.
func checkRecord(m race.MoveRecord) error {
	switch {
	case m.Seat < 0 || m.Seat > 1:
		return fmt.Errorf("%w: no seat %d", ErrBadRecord, m.Seat)
	case m.Seq < 1:
		return fmt.Errorf("%w: seq %d", ErrBadRecord, m.Seq)
	case !plainText(m.Move):
		return fmt.Errorf("%w: move %q", ErrBadRecord, m.Move)
	case !plainText(m.ID):
		return fmt.Errorf("%w: request id %q", ErrBadRecord, m.ID)
	}
	return nil
}

// plainText reports whether a TEXT column of both databases holds s as
// it is: valid UTF-8 without NUL.
func plainText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// Moves returns the race's moves in the order they were appended.
func (s *Store) Moves(ctx context.Context, raceID string) ([]race.MoveRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seat, seq, move, at_ms, request FROM live_moves WHERE race = $1 ORDER BY pos`, raceID)
	if err != nil {
		return nil, fmt.Errorf("race %s: read log: %w: %w", raceID, race.ErrUnavailable, err)
	}
	defer rows.Close()
	var out []race.MoveRecord
	for rows.Next() {
		var m race.MoveRecord
		if err := rows.Scan(&m.Seat, &m.Seq, &m.Move, &m.AtMs, &m.ID); err != nil {
			return nil, fmt.Errorf("race %s: read log: %w", raceID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("race %s: read log: %w: %w", raceID, race.ErrUnavailable, err)
	}
	return out, nil
}

// Forget deletes the race's rows, its moves, record and result: the
// Service calls it when it drops a finished race from memory (Evict).
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
	s.logs.Delete(raceID)
	return nil
}
