package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Analyses keeps the coach's finished analyses (web/coach: its Values) in
// the analyses table, by key, for good; the claims of the analyses under
// way are live state and stay in memory or Redis.
type Analyses struct {
	db  *DB
	now func() time.Time
}

// NewAnalyses makes the analyses' store on db.
func NewAnalyses(db *DB) *Analyses { return &Analyses{db: db, now: time.Now} }

// Get returns the analysis stored under key; ok is false when none is.
func (a *Analyses) Get(ctx context.Context, key string) ([]byte, bool, error) {
	var v string
	err := a.db.sql.QueryRowContext(ctx, "SELECT value FROM analyses WHERE key = $1", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("sqlstore: get analysis %q: %w", key, err)
	}
	return []byte(v), true, nil
}

// Put stores val under key, replacing what was there (an unreadable
// analysis computed again). Both are TEXT: key and val must be UTF-8
// without a NUL byte (the coach's keys and JSON are), else Put stores
// nothing and says so.
func (a *Analyses) Put(ctx context.Context, key string, val []byte) error {
	if !isText([]byte(key)) || key == "" || !isText(val) {
		return fmt.Errorf("sqlstore: analysis %q: the key and value must be UTF-8 text without NUL bytes", key)
	}
	if _, err := a.db.sql.ExecContext(ctx,
		`INSERT INTO analyses (key, value, at_ms) VALUES ($1, $2, $3)
		 ON CONFLICT (key) DO UPDATE SET value = excluded.value, at_ms = excluded.at_ms`,
		key, string(val), a.now().UnixMilli()); err != nil {
		return fmt.Errorf("sqlstore: put analysis %q: %w", key, err)
	}
	return nil
}

// isText reports whether b fits a TEXT column on both databases:
// PostgreSQL refuses invalid UTF-8 and the NUL byte.
func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }
