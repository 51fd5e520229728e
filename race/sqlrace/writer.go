package sqlrace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"sirtommy/race"
)

// Group commit. Every write of the live tables (a move, a record, a
// result, a race forgotten) is an op handed to one writer goroutine,
// which owns one connection. It takes the ops waiting for it (and, when
// the last commit began less than Options.Interval ago, those that come
// until then), writes them in one transaction (the moves as one row of
// the journal), commits, and only then releases their callers: nothing
// is acknowledged before it is durable, and a busy server pays one
// commit for many moves.
const (
	// maxBatch bounds the ops of one transaction, so that a burst does not
	// make one commit (and its callers' wait) arbitrarily long.
	maxBatch = 512
	// queueLen is how many ops may wait for the writer before callers
	// wait to hand theirs over: a few commits' worth at 5,000 races.
	queueLen = 4 << 10
	// opWait bounds a caller's wait for its op's commit: a healthy SQLite
	// commits in well under a millisecond, and a busy one (a checkpoint's
	// fsync, another connection's write) in milliseconds. This long, the
	// database is stuck, and a player should hear "unavailable" (the
	// move may still be stored: its retry, same id, is then answered as
	// stored). It is busy_timeout's (lobby/sqlstore).
	opWait = 5 * time.Second
	// trimEvery is how often at most the writer deletes the moves of
	// forgotten races from the front of live_log: each trim looks over
	// every race in memory for the oldest move still needed.
	trimEvery = time.Minute
)

// opKind is what an op writes.
type opKind uint8

const (
	opAppend opKind = iota // a move: an entry of live_log
	opSave                 // a record: live_races
	opDecide               // a result, once: live_results
	opForget               // a race's record and result, and the log's front
)

// op is one write, and its outcome once done has a value.
type op struct {
	kind opKind
	race string

	// opAppend: the move, and its race's log, whose first pos the writer
	// sets.
	move race.MoveRecord
	log  *raceLog
	// opSave: the record's JSON and state; opDecide: the decision's JSON.
	data  []byte
	state race.State
	atMs  int64

	// Outcome, set by the writer before done.
	err error
	// opDecide: the decision stored (this one or an earlier one).
	decided []byte

	done chan struct{}
}

// statements are the writer's prepared statements.
type statements struct {
	insertLog, saveRecord, decide, readDecided, forgetRecord, forgetResult, trimLog *sql.Stmt
}

// The writer's SQL: the same text on SQLite and PostgreSQL.
const (
	sqlInsertLog  = `INSERT INTO live_log (pos, entries) VALUES ($1, $2)`
	sqlSaveRecord = `INSERT INTO live_races (id, state, record, updated_ms) VALUES ($1, $2, $3, $4)
ON CONFLICT (id) DO UPDATE SET state = excluded.state, record = excluded.record, updated_ms = excluded.updated_ms`
	sqlDecide = `INSERT INTO live_results (race, decided, decided_ms) VALUES ($1, $2, $3)
ON CONFLICT (race) DO NOTHING`
	sqlReadDecided  = `SELECT decided FROM live_results WHERE race = $1`
	sqlForgetRecord = `DELETE FROM live_races WHERE id = $1`
	sqlForgetResult = `DELETE FROM live_results WHERE race = $1`
	sqlTrimLog      = `DELETE FROM live_log WHERE pos < $1`
)

func prepare(ctx context.Context, db *sql.DB) (*statements, error) {
	var st statements
	for _, p := range []struct {
		s   **sql.Stmt
		sql string
	}{
		{&st.insertLog, sqlInsertLog}, {&st.saveRecord, sqlSaveRecord}, {&st.decide, sqlDecide},
		{&st.readDecided, sqlReadDecided}, {&st.forgetRecord, sqlForgetRecord}, {&st.forgetResult, sqlForgetResult},
		{&st.trimLog, sqlTrimLog},
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
	for _, s := range []*sql.Stmt{st.insertLog, st.saveRecord, st.decide, st.readDecided, st.forgetRecord, st.forgetResult, st.trimLog} {
		if s != nil {
			_ = s.Close()
		}
	}
}

// writer is the goroutine that writes the live tables, and the queue of
// ops waiting for it.
type writer struct {
	conn     *sql.Conn
	st       *statements
	store    *Store
	interval time.Duration
	// trimEvery and opWait are the consts', but in tests.
	trimEvery, opWait time.Duration
	// Only the writer's goroutine touches these: pos is the next
	// live_log.pos (the order of the commits with moves), trimmed when the
	// log's front was last trimmed, and entries the journal row being
	// made.
	pos     int64
	trimmed time.Time
	entries []entry

	// mu guards closed: ops are sent under its read lock, so that none is
	// sent once close has closed ops. It is never held across a commit.
	mu     sync.RWMutex
	closed bool
	ops    chan *op
	exited chan struct{}

	// The callers' bound on their wait, without a timer each: stall is
	// closed by watch once a commit has run opWait (busySince, in Unix
	// nanoseconds; 0 between commits), and every caller waiting gives
	// up; the writer makes a new one when that commit ends. stallMu
	// orders the close and the renewal.
	stall     atomic.Pointer[chan struct{}]
	stalled   atomic.Bool
	stallMu   sync.Mutex
	busySince atomic.Int64
}

// newWriter makes the writer; its goroutine is run.
func newWriter(conn *sql.Conn, st *statements, s *Store, pos int64, interval time.Duration) *writer {
	w := &writer{conn: conn, st: st, store: s, pos: pos, interval: interval, trimEvery: trimEvery, opWait: opWait,
		ops: make(chan *op, queueLen), exited: make(chan struct{})}
	stall := make(chan struct{})
	w.stall.Store(&stall)
	return w
}

// watch closes stall when a commit has run opWait, until the writer
// exits. It looks every fifth of opWait: a caller gives up at most that
// much later.
func (w *writer) watch() {
	t := time.NewTicker(w.opWait / 5)
	defer t.Stop()
	for {
		select {
		case <-w.exited:
			return
		case now := <-t.C:
			if b := w.busySince.Load(); b != 0 && now.UnixNano()-b >= int64(w.opWait) {
				w.stallMu.Lock()
				if !w.stalled.Load() {
					w.stalled.Store(true)
					close(*w.stall.Load())
				}
				w.stallMu.Unlock()
			}
		}
	}
}

// unstall makes a new stall channel once the commit that stalled ended.
func (w *writer) unstall() {
	if !w.stalled.Load() {
		return
	}
	w.stallMu.Lock()
	defer w.stallMu.Unlock()
	stall := make(chan struct{})
	w.stall.Store(&stall)
	w.stalled.Store(false)
}

// opPool keeps ops (and their done channels) between calls: an op is put
// back only once it is done and its outcome read.
var opPool = sync.Pool{New: func() any { return &op{done: make(chan struct{}, 1)} }}

func newOp(kind opKind, raceID string) *op {
	o := opPool.Get().(*op)
	o.kind, o.race = kind, raceID
	return o
}

// release puts back an op that is done, its outcome read.
func release(o *op) {
	done := o.done
	*o = op{done: done}
	opPool.Put(o)
}

// errNotDone marks a wait that ended before its op's commit: the op is
// the writer's still, and may yet be written.
var errNotDone = errors.New("not committed yet")

// send hands o to the writer. On an error o was not handed over.
func (w *writer) send(ctx context.Context, o *op) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return fmt.Errorf("%w: the live races' database is closed", race.ErrUnavailable)
	}
	select {
	case w.ops <- o:
		return nil
	default:
	}
	// The queue is full: wait for room, bounded like the commit.
	t := time.NewTimer(w.opWait)
	defer t.Stop()
	select {
	case w.ops <- o:
		return nil
	case <-t.C:
		return fmt.Errorf("%w: the live races' database is not keeping up", race.ErrUnavailable)
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", race.ErrUnavailable, ctx.Err())
	}
}

// wait waits until o, handed over, is committed or failed (nil: its
// outcome is set), ctx is done, or a commit has run opWait (an error
// wrapping errNotDone and race.ErrUnavailable: o is still the writer's).
func (w *writer) wait(ctx context.Context, o *op) error {
	select {
	case <-o.done:
		return nil
	case <-*w.stall.Load():
		return fmt.Errorf("%w: %w: a commit has run over %s", race.ErrUnavailable, errNotDone, w.opWait)
	case <-ctx.Done():
		return fmt.Errorf("%w: %w: %w", race.ErrUnavailable, errNotDone, ctx.Err())
	}
}

// do sends o and waits for it. On an error o may still be written later
// and must not be reused.
func (w *writer) do(ctx context.Context, o *op) error {
	if err := w.send(ctx, o); err != nil {
		return err
	}
	return w.wait(ctx, o)
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

// run is the writer's goroutine: one transaction for the ops that wait
// (and, within the interval since the last commit began, those that
// come until its end), then the next.
func (w *writer) run() {
	defer close(w.exited)
	go w.watch()
	batch := make([]*op, 0, maxBatch)
	var linger *time.Timer
	var began time.Time // the last commit's start
	for o := range w.ops {
		batch = append(batch[:0], o)
		open := w.gather(&batch)
		if rest := w.interval - time.Since(began); open && rest > 0 && len(batch) < maxBatch {
			if linger == nil {
				linger = time.NewTimer(rest)
			} else {
				linger.Reset(rest)
			}
			w.lingerFor(&batch, linger)
		}
		began = time.Now()
		w.busySince.Store(began.UnixNano())
		err := w.commit(batch)
		w.busySince.Store(0)
		w.unstall() // before the callers go: the next ones wait on a new one
		if err != nil {
			err = fmt.Errorf("%w: live races' commit of %d writes: %w", race.ErrUnavailable, len(batch), err)
		}
		for _, o := range batch {
			o.err = err
			o.done <- struct{}{}
		}
		clear(batch) // drop the references until the next batch
	}
}

// gather adds the ops waiting to batch, up to maxBatch; it reports false
// once ops is closed.
func (w *writer) gather(batch *[]*op) (open bool) {
	for len(*batch) < maxBatch {
		select {
		case o, ok := <-w.ops:
			if !ok {
				return false
			}
			*batch = append(*batch, o)
		default:
			return true
		}
	}
	return true
}

// lingerFor adds the ops that come until t fires, up to maxBatch.
func (w *writer) lingerFor(batch *[]*op, t *time.Timer) {
	for len(*batch) < maxBatch {
		select {
		case o, ok := <-w.ops:
			if !ok {
				t.Stop()
				return
			}
			*batch = append(*batch, o)
		case <-t.C:
			return
		}
	}
	t.Stop()
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

// entry is a move as live_log's rows hold it.
type entry struct {
	Race string `json:"race"`
	race.MoveRecord
}

// write runs the batch's statements in tx, setting each op's outcome:
// its moves go in one row of the journal, pos.
func (w *writer) write(ctx context.Context, tx *sql.Tx, batch []*op) error {
	t := txStmts{tx: tx}
	w.entries = w.entries[:0]
	for _, o := range batch {
		switch o.kind {
		case opAppend:
			w.entries = append(w.entries, entry{Race: o.race, MoveRecord: o.move})
			// Set before the commit: a trim in this batch keeps the row
			// (and one rolled back only keeps a few rows a while longer).
			o.log.first.CompareAndSwap(0, w.pos)
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
			for _, s := range []*sql.Stmt{w.st.forgetRecord, w.st.forgetResult} {
				if _, err := t.get(ctx, s).ExecContext(ctx, o.race); err != nil {
					return fmt.Errorf("race %s: forget: %w", o.race, err)
				}
			}
			// Its moves go from memory now, and from the journal with its
			// front, once no race kept has older ones.
			w.store.logs.Delete(o.race)
			if now := time.Now(); now.Sub(w.trimmed) >= w.trimEvery {
				if _, err := t.get(ctx, w.st.trimLog).ExecContext(ctx, w.front()); err != nil {
					return fmt.Errorf("trim the log: %w", err)
				}
				w.trimmed = now
			}
		}
	}
	if len(w.entries) == 0 {
		return nil
	}
	b, err := json.Marshal(w.entries)
	if err != nil {
		return fmt.Errorf("encode %d moves: %w", len(w.entries), err)
	}
	clear(w.entries) // drop the strings until the next batch
	if _, err := t.get(ctx, w.st.insertLog).ExecContext(ctx, w.pos, string(b)); err != nil {
		return fmt.Errorf("append %d moves to the log: %w", len(w.entries), err)
	}
	w.pos++
	return nil
}

// front is the pos of the oldest move any race in memory still has: the
// moves below it belong to races forgotten.
func (w *writer) front() int64 {
	front := int64(math.MaxInt64)
	w.store.logs.Range(func(_, v any) bool {
		if f := v.(*raceLog).first.Load(); f > 0 && f < front {
			front = f
		}
		return true
	})
	return min(front, w.pos)
}
