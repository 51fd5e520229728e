package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// writer is SQLite's one connection for the stores' writes that go
// through exec and inTx (a race's end, the archive, accounts' multi-row
// changes): in turn, as SQLite runs writers anyway (one at a time). With one connection
// its page cache stays warm: SQLite empties a connection's cache when
// another connection has written since its last transaction, so writes
// spread over the pool's connections read most of their pages again
// (pread) on every transaction. Reads use the pool. PostgreSQL has none.
type writer struct {
	// sem is held while the connection is in use: one write at a time,
	// and a caller whose context ends while it waits gives up.
	sem  chan struct{}
	conn *sql.Conn // nil until the first write, and after it broke
}

func newWriter() *writer { return &writer{sem: make(chan struct{}, 1)} }

// begin starts a transaction: on SQLite on the writer connection, held
// until release (after Commit or Rollback); on PostgreSQL on the pool.
func (db *DB) begin(ctx context.Context) (tx *sql.Tx, release func(), err error) {
	w := db.writer
	if w == nil {
		tx, err := db.sql.BeginTx(ctx, nil)
		return tx, func() {}, err
	}
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, context.Cause(ctx)
	}
	release = func() { <-w.sem }
	if w.conn == nil {
		if w.conn, err = db.sql.Conn(ctx); err != nil {
			w.conn = nil
			release()
			return nil, nil, err
		}
	}
	tx, err = w.conn.BeginTx(ctx, nil)
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) {
		// Broken: the next write takes a new connection.
		_ = w.conn.Close()
		w.conn = nil
	}
	if err != nil {
		release()
		return nil, nil, err
	}
	return tx, release, nil
}

// closeWriter gives the writer's connection back, before the pool closes.
func (db *DB) closeWriter() {
	w := db.writer
	if w == nil {
		return
	}
	w.sem <- struct{}{}
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
	<-w.sem
}

// execWrite runs write q with args in a transaction of its own on the
// writer connection (SQLite; exec's write path).
func (db *DB) execWrite(ctx context.Context, q string, args ...any) (sql.Result, error) {
	tx, release, err := db.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := db.txExec(ctx, tx, q, args...)
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return res, nil
}
