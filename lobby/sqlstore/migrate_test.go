package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"

	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
)

// version1Rows are rows written with 00001's schema, one in a table of each
// kind of column it has.
var version1Rows = []string{
	`INSERT INTO settings (name, value) VALUES ('secret', 'kept')`,
	`INSERT INTO players (id, name, created_ms, seen_ms) VALUES ('p1', 'Ann', 1, 2)`,
	`INSERT INTO standings (player, variant, name, rating, deviation, volatility, games, wins, losses, draws, streak, best_streak)
	 VALUES ('p1', 'classic', 'Ann', 1612.5, 80, 0.06, 3, 2, 1, 0, 1, 2)`,
	`INSERT INTO games (race, variant, at_ms, rated, record) VALUES ('r1', 'classic', 5, true, '{"race":"r1"}')`,
}

// version1Check reads the rows of version1Rows back, as one string.
const version1Check = `SELECT s.value || ' ' || p.name || ' ' || CAST(st.rating AS TEXT) || ' ' || g.record
FROM settings s, players p, standings st, games g
WHERE s.name = 'secret' AND p.id = 'p1' AND st.player = 'p1' AND g.race = 'r1'`

// earlier is a database left at an earlier schema version, with rows
// written then, and a query that reads them back.
type earlier struct {
	version int64
	rows    []string
	check   string
	want    string
}

// TestMigrationsUpFromEachEarlierSchema: a database left at each earlier
// schema version, with rows in it, is brought to the newest by the open of
// a newer binary, its rows intact.
func TestMigrationsUpFromEachEarlierSchema(t *testing.T) {
	for _, tc := range []earlier{
		{1, version1Rows, version1Check, `kept Ann 1612.5 {"race":"r1"}`},
	} {
		t.Run(fmt.Sprintf("from version %d", tc.version), func(t *testing.T) {
			t.Run("sqlite", func(t *testing.T) {
				dir := t.TempDir()
				db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, sqlstore.DatabaseFile))
				if err != nil {
					t.Fatal(err)
				}
				migrateTo(t, db, goose.DialectSQLite3, tc)
				opened, err := sqlstore.OpenSQLite(context.Background(), dir)
				if err != nil {
					t.Fatalf("open of a version %d database: %v", tc.version, err)
				}
				defer opened.Close()
				checkUpFrom(t, opened, tc)
			})
			t.Run("postgres", func(t *testing.T) {
				url := sqltest.PostgresURL(t)
				db, err := sql.Open("pgx", url)
				if err != nil {
					t.Fatal(err)
				}
				migrateTo(t, db, goose.DialectPostgres, tc)
				opened, err := sqlstore.OpenPostgres(context.Background(), url)
				if err != nil {
					t.Fatalf("open of a version %d database: %v", tc.version, err)
				}
				defer opened.Close()
				checkUpFrom(t, opened, tc)
			})
		})
	}
}

// migrateTo brings db to e's schema version with this package's
// migrations, writes e's rows, and closes it.
func migrateTo(t *testing.T, db *sql.DB, dialect goose.Dialect, e earlier) {
	t.Helper()
	defer db.Close()
	p, err := goose.NewProvider(dialect, db, os.DirFS("migrations"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), e.version); err != nil {
		t.Fatalf("migrate to %d: %v", e.version, err)
	}
	if v, err := p.GetDBVersion(context.Background()); err != nil || v != e.version {
		t.Fatalf("the database is at version %d (%v), want %d", v, err, e.version)
	}
	for _, q := range e.rows {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// checkUpFrom checks that db, opened at e's version, is at the newest
// with the tables of every migration, and e's rows read as they should.
func checkUpFrom(t *testing.T, db *sqlstore.DB, e earlier) {
	from := e.version
	t.Helper()
	var v int64
	if err := db.SQL().QueryRow(`SELECT MAX(version_id) FROM goose_db_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if newest := sqlstore.SchemaVersion(); v != newest || newest <= from {
		t.Fatalf("from version %d the open reached %d, want the newest, %d (above %d)", from, v, newest, from)
	}
	for _, q := range []string{
		`SELECT COUNT(*) FROM live_races`, `SELECT COUNT(*) FROM live_results`, `SELECT COUNT(*) FROM live_log`,
	} {
		var n int
		if err := db.SQL().QueryRow(q).Scan(&n); err != nil {
			t.Errorf("a table of migration 00002: %s: %v", q, err)
		}
	}
	for _, q := range []string{
		`SELECT COUNT(*) FROM accounts`, `SELECT COUNT(*) FROM passkeys`, `SELECT COUNT(*) FROM passkey_challenges`,
		`SELECT COUNT(*) FROM sessions`, `SELECT COUNT(*) FROM api_tokens`,
	} {
		var n int
		if err := db.SQL().QueryRow(q).Scan(&n); err != nil {
			t.Errorf("a table of migration 00003: %s: %v", q, err)
		}
	}
	var arenas int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM arenas`).Scan(&arenas); err != nil {
		t.Errorf("the table of migration 00004: %v", err)
	}
	var got string
	if err := db.SQL().QueryRow(e.check).Scan(&got); err != nil || got != e.want {
		t.Errorf("the version %d rows read %q (%v), want %q", from, got, err, e.want)
	}
}
