package sqlrace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"sirtommy/race"
)

// Group commit. Every write of the live tables (a move, a record, a
// result, a race forgotten) is an op handed to one writer goroutine,
// which owns one connection. It takes the ops that arrived while its
// last commit ran, writes them in one transaction, commits, and only
// then releases their callers: nothing is acknowledged before it is
// durable, and a busy server pays one commit for many moves.
const (
	// maxBatch bounds the ops of one transaction, so that a burst does not
	// make one commit (and its callers' wait) arbitrarily long.
	maxBatch = 512
	// queueLen is how many ops may wait for the writer before callers
	// wait to hand theirs over: more than a commit's worth at 5,000 races.
	queueLen = 4 << 10
	// opWait bounds a caller's wait for its op's commit: a healthy SQLite
	// commits in well under a millisecond, and a busy one (a checkpoint's
	// fsync, another connection's write) in milliseconds. This long, the
	// database is stuck, and a player should hear "unavailable" (the
	// move may still be stored: its retry, same id, is then answered as
	// stored). It is busy_timeout's (lobby/sqlstore).
	opWait = 5 * time.Second
)

// opKind is what an op writes.
type opKind uint8

const (
	opAppend opKind = iota // a move: live_moves
	opSave                 // a record: live_races
	opDecide               // a result, once: live_results
	opForget               // a race's rows, all gone
)

// op is one write, and its outcome once done is closed.
type op struct {
	kind opKind
	race string

	// opAppend: the move, and its race's seqs to raise once committed.
	move race.MoveRecord
	log  *raceLog
	// opSave: the record's JSON and state; opDecide: the decision's JSON.
	data  []byte
	state race.State
	atMs  int64

	// Outcome, set by the writer before done.
	err error
	// opAppend: inserted is false when the seat's log already had that
	// seq, whose move is then held.
	inserted bool
	held     string
	// opDecide: the decision stored (this one or an earlier one).
	decided []byte

	done chan struct{}
}

// statements are the writer's prepared statements.
type statements struct {
	insertMove, heldMove, saveRecord, decide, readDecided,
	forgetMoves, forgetRecord, forgetResult *sql.Stmt
}

// The writer's SQL: the same text on SQLite and PostgreSQL.
const (
	sqlInsertMove = `INSERT INTO live_moves (race, seat, seq, pos, move, at_ms, request)
VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (race, seat, seq) DO NOTHING`
	sqlHeldMove   = `SELECT move FROM live_moves WHERE race = $1 AND seat = $2 AND seq = $3`
	sqlSaveRecord = `INSERT INTO live_races (id, state, record, updated_ms) VALUES ($1, $2, $3, $4)
ON CONFLICT (id) DO UPDATE SET state = excluded.state, record = excluded.record, updated_ms = excluded.updated_ms`
	sqlDecide = `INSERT INTO live_results (race, decided, decided_ms) VALUES ($1, $2, $3)
ON CONFLICT (race) DO NOTHING`
	sqlReadDecided  = `SELECT decided FROM live_results WHERE race = $1`
	sqlForgetMoves  = `DELETE FROM live_moves WHERE race = $1`
	sqlForgetRecord = `DELETE FROM live_races WHERE id = $1`
	sqlForgetResult = `DELETE FROM live_results WHERE race = $1`
)

func prepare(ctx context.Context, db *sql.DB) (*statements, error) {
	var st statements
	for _, p := range []struct {
		s   **sql.Stmt
		sql string
	}{
		{&st.insertMove, sqlInsertMove}, {&st.heldMove, sqlHeldMove}, {&st.saveRecord, sqlSaveRecord},
		{&st.decide, sqlDecide}, {&st.readDecided, sqlReadDecided}, {&st.forgetMoves, sqlForgetMoves},
		{&st.forgetRecord, sqlForgetRecord}, {&st.forgetResult, sqlForgetResult},
	} {
		s, err := db.PrepareContext(ctx, p.sql)
		if err != nil {
			st.close()
			return nil, fmt.Errorf("prepare %q: %w", p.sql, err)
		}
		*p.s = s
	}
	return &st, nil
}

func (st *statements) close() {
	for _, s := range []*sql.Stmt{st.insertMove, st.heldMove, st.saveRecord, st.decide, st.readDecided,
		st.forgetMoves, st.forgetRecord, st.forgetResult} {
		if s != nil {
			_ = s.Close()
		}
	}
}

// writer is the goroutine that writes the live tables, and the queue of
// ops waiting for it.
type writer struct {
	conn *sql.Conn
	st   *statements
	// pos is the next live_moves.pos: the order of appends, across
	// races and seats. Only the writer's goroutine touches it.
	pos int64

	// mu guards closed: ops are sent under its read lock, so that none is
	// sent once Close has closed ops. It is never held across a commit.
	mu     sync.RWMutex
	closed bool
	ops    chan *op
	exited chan struct{}
}

// newWriter makes the writer; its goroutine is run.
func newWriter(conn *sql.Conn, st *statements, pos int64) *writer {
	return &writer{conn: conn, st: st, pos: pos, ops: make(chan *op, queueLen), exited: make(chan struct{})}
}

// opPool keeps ops (and their done channels) between calls: an op is put
// back only by a caller that saw it done.
var opPool = sync.Pool{New: func() any { return &op{done: make(chan struct{}, 1)} }}

func newOp(kind opKind, raceID string) *op {
	o := opPool.Get().(*op)
	o.kind, o.race = kind, raceID
	return o
}

// release puts back an op whose outcome its caller has read.
func release(o *op) {
	done := o.done
	*o = op{done: done}
	opPool.Put(o)
}

// do hands o to the writer and waits until it is committed (or failed),
// ctx is done, or opWait has passed. On nil o's outcome is set and the
// caller releases o; on an error o may still be written later and must
// not be reused.
func (w *writer) do(ctx context.Context, o *op) error {
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return fmt.Errorf("%w: the live races' database is closed", race.ErrUnavailable)
	}
	select {
	case w.ops <- o:
	default:
		// The queue is full: wait for room, bounded like the commit.
		t := time.NewTimer(opWait)
		select {
		case w.ops <- o:
			t.Stop()
		case <-t.C:
			w.mu.RUnlock()
			return fmt.Errorf("%w: the live races' database is not keeping up", race.ErrUnavailable)
		case <-ctx.Done():
			t.Stop()
			w.mu.RUnlock()
			return fmt.Errorf("%w: %w", race.ErrUnavailable, ctx.Err())
		}
	}
	w.mu.RUnlock()
	select {
	case <-o.done: // the common case: no timer
		return nil
	default:
	}
	t := time.NewTimer(opWait)
	defer t.Stop()
	select {
	case <-o.done:
		return nil
	case <-t.C:
		return fmt.Errorf("%w: no commit in %s", race.ErrUnavailable, opWait)
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", race.ErrUnavailable, ctx.Err())
	}
}

// close stops taking ops, lets the writer commit those queued, and waits
// for it.
func (w *writer) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.ops)
	}
	w.mu.Unlock()
	<-w.exited
}

// run is the writer's goroutine: one transaction for the ops that wait,
// then the next.
func (w *writer) run() {
	defer close(w.exited)
	batch := make([]*op, 0, maxBatch)
	for o := range w.ops {
		batch = append(batch[:0], o)
	gather:
		for len(batch) < maxBatch {
			select {
			case o, ok := <-w.ops:
				if !ok {
					break gather
				}
				batch = append(batch, o)
			default:
				break gather
			}
		}
		err := w.commit(batch)
		if err != nil {
			err = fmt.Errorf("%w: live races' commit of %d writes: %w", race.ErrUnavailable, len(batch), err)
		}
		for _, o := range batch {
			if err == nil && o.kind == opAppend && o.inserted {
				o.log.raise(o.move.Seat, o.move.Seq)
			}
			o.err = err
			o.done <- struct{}{}
		}
		clear(batch) // drop the references until the next batch
	}
}

// commit writes batch in one transaction. The statements' context has
// no end on purpose: the SQLite driver watches a context that can end
// with a goroutine per statement. busy_timeout bounds a wait for the
// write lock, and the callers wait no more than opWait.
func (w *writer) commit(batch []*op) error {
	ctx := context.Background()
	tx, err := w.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := w.write(ctx, tx, batch); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// txStmts are the writer's statements bound to one transaction, made
// when the batch first needs each.
type txStmts struct {
	tx *sql.Tx
	m  map[*sql.Stmt]*sql.Stmt
}

func (t *txStmts) get(ctx context.Context, s *sql.Stmt) *sql.Stmt {
	if b, ok := t.m[s]; ok {
		return b
	}
	b := t.tx.StmtContext(ctx, s)
	if t.m == nil {
		t.m = make(map[*sql.Stmt]*sql.Stmt, 4)
	}
	t.m[s] = b
	return b
}

// write runs the batch's statements in tx, setting each op's outcome.
func (w *writer) write(ctx context.Context, tx *sql.Tx, batch []*op) error {
	t := txStmts{tx: tx}
	for _, o := range batch {
		switch o.kind {
		case opAppend:
			m := o.move
			res, err := t.get(ctx, w.st.insertMove).ExecContext(ctx, o.race, m.Seat, m.Seq, w.pos, m.Move, m.AtMs, m.ID)
			if err != nil {
				return fmt.Errorf("race %s seat %d seq %d: insert: %w", o.race, m.Seat, m.Seq, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("race %s: rows inserted: %w", o.race, err)
			}
			w.pos++
			o.inserted = n == 1
			if !o.inserted {
				// The seat's log has that seq already (a retry, or a
				// conflict): the caller compares the move held.
				if err := t.get(ctx, w.st.heldMove).QueryRowContext(ctx, o.race, m.Seat, m.Seq).Scan(&o.held); err != nil {
					return fmt.Errorf("race %s seat %d seq %d: read the move held: %w", o.race, m.Seat, m.Seq, err)
				}
			}
		case opSave:
			if _, err := t.get(ctx, w.st.saveRecord).ExecContext(ctx, o.race, string(o.state), string(o.data), o.atMs); err != nil {
				return fmt.Errorf("race %s: save record: %w", o.race, err)
			}
		case opDecide:
			if _, err := t.get(ctx, w.st.decide).ExecContext(ctx, o.race, string(o.data), o.atMs); err != nil {
				return fmt.Errorf("race %s: decide: %w", o.race, err)
			}
			var got string
			if err := t.get(ctx, w.st.readDecided).QueryRowContext(ctx, o.race).Scan(&got); err != nil {
				return fmt.Errorf("race %s: read the decision: %w", o.race, err)
			}
			o.decided = []byte(got)
		case opForget:
			for _, s := range []*sql.Stmt{w.st.forgetMoves, w.st.forgetRecord, w.st.forgetResult} {
				if _, err := t.get(ctx, s).ExecContext(ctx, o.race); err != nil {
					return fmt.Errorf("race %s: forget: %w", o.race, err)
				}
			}
		}
	}
	return nil
}
