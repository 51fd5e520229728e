package sqlstore

import (
	"context"
	"testing"
)

// TestConnectionsCheckpointAtWalCheckpointPages: the pool's connections and
// the writer's all let the WAL grow to walCheckpointPages before a commit
// checkpoints it, not SQLite's default of 1,000 pages.
func TestConnectionsCheckpointAtWalCheckpointPages(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	const pragma = "PRAGMA wal_autocheckpoint"
	var pool int
	if err := db.sql.QueryRowContext(ctx, pragma).Scan(&pool); err != nil {
		t.Fatal(err)
	}
	tx, release, err := db.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var writer int
	err = tx.QueryRowContext(ctx, pragma).Scan(&writer)
	_ = tx.Rollback()
	release()
	if err != nil {
		t.Fatal(err)
	}
	if pool != walCheckpointPages || writer != walCheckpointPages {
		t.Fatalf("wal_autocheckpoint: pool %d, writer %d; want %d", pool, writer, walCheckpointPages)
	}
}
