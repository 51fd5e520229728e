package sqlstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
)

func TestOpenMigratesToTheNewestSchema(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		var v int64
		if err := db.SQL().QueryRow("SELECT MAX(version_id) FROM goose_db_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		if want := sqlstore.SchemaVersion(); v != want || want < 1 {
			t.Fatalf("schema version %d, want %d", v, want)
		}
	})
}

func TestSecondServerOnOneDataFolderIsRefused(t *testing.T) {
	dir := t.TempDir()
	db, err := sqlstore.OpenSQLite(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = sqlstore.OpenSQLite(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "in use by another sirtommy server") {
		t.Fatalf("second open: %v, want a refusal naming the other server", err)
	}
}

func TestNewerSchemaIsRefusedAndLeftAlone(t *testing.T) {
	dir := t.TempDir()
	db, err := sqlstore.OpenSQLite(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	future := sqlstore.SchemaVersion() + 1
	if _, err := db.SQL().Exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)", future); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlstore.OpenSQLite(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "newer than this binary's") {
		t.Fatalf("open of a newer schema: %v, want a refusal", err)
	}
	db, err = sqlstore.OpenSQLite(context.Background(), dir) // still refused: nothing was overwritten
	if err == nil {
		db.Close()
		t.Fatal("the newer schema was overwritten")
	}
}

// TestFleetStartingAtOnceOnANewDatabase: instances opening one new
// PostgreSQL database at the same moment all start, the schema migrated
// once (each round has its own database).
func TestFleetStartingAtOnceOnANewDatabase(t *testing.T) {
	const rounds, instances = 2, 8 // without the lock, most rounds fail
	for round := range rounds {
		url := sqltest.PostgresURL(t)
		var wg sync.WaitGroup
		errs := make([]error, instances)
		start := make(chan struct{})
		for i := range instances {
			wg.Go(func() {
				<-start
				db, err := sqlstore.OpenPostgres(context.Background(), url)
				if err == nil {
					err = db.Close()
				}
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, instance %d: %v", round, i, err)
			}
		}
	}
}
