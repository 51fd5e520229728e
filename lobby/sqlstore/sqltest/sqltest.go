// Package sqltest opens real databases for tests: a SQLite data folder in
// t.TempDir(), and a fresh PostgreSQL database on the server named by
// SIRTOMMY_TEST_POSTGRES (default: the local server's Unix socket), dropped
// at the test's cleanup. Where no PostgreSQL answers, a test is skipped
// with a message saying so, unless SIRTOMMY_REQUIRE_POSTGRES=1 is set, when
// it fails (CI sets it).
package sqltest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"sirtommy/lobby/sqlstore"
)

// Environment variables of the helper.
const (
	// RequireEnv turns a PostgreSQL that does not answer from a skip into
	// a failure.
	RequireEnv = "SIRTOMMY_REQUIRE_POSTGRES"
	// ServerEnv is the URL of a database on the PostgreSQL server the tests
	// use, as a user that may create databases; each test gets a database
	// of its own there.
	ServerEnv = "SIRTOMMY_TEST_POSTGRES"
)

// DefaultServer is the server of the tests when ServerEnv is not set: the
// local one, through its Unix socket, as the current OS user.
const DefaultServer = "postgres:///postgres?host=/var/run/postgresql&sslmode=disable"

// adminTimeout bounds making and dropping a test's database.
const adminTimeout = 30 * time.Second

// SQLite opens a durable store in a new data folder of the test's and
// closes it at cleanup.
func SQLite(t testing.TB) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.OpenSQLite(context.Background(), t.TempDir())
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Postgres opens a durable store in a new PostgreSQL database of the
// test's and closes and drops it at cleanup.
func Postgres(t testing.TB) *sqlstore.DB {
	t.Helper()
	u := PostgresURL(t)
	db, err := sqlstore.OpenPostgres(context.Background(), u)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() }) // before the drop: cleanups run last first
	return db
}

// PostgresURL makes a new empty database on the tests' PostgreSQL server,
// drops it at cleanup, and returns its URL (for a server process started
// by the test). It skips, or fails with SIRTOMMY_REQUIRE_POSTGRES=1, when
// the server does not answer.
func PostgresURL(t testing.TB) string {
	t.Helper()
	server := os.Getenv(ServerEnv)
	if server == "" {
		server = DefaultServer
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	admin, err := sql.Open("pgx", server)
	if err == nil {
		err = admin.PingContext(ctx)
	}
	if err != nil {
		if admin != nil {
			_ = admin.Close()
		}
		msg := fmt.Sprintf("no PostgreSQL at %s (%v): set %s to a server's URL", redacted(server), err, ServerEnv)
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s; %s=1 requires it", msg, RequireEnv)
		}
		t.Skip(msg)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := "sirtommy_test_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close()
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
		_ = admin.Close()
	})
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("%s: %v", ServerEnv, err)
	}
	u.Path = "/" + name
	return u.String()
}

// Each runs f as a subtest on each database: "sqlite" and "postgres".
func Each(t *testing.T, f func(t *testing.T, db *sqlstore.DB)) {
	t.Run("sqlite", func(t *testing.T) { f(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, Postgres(t)) })
}

func redacted(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the configured server"
	}
	u.User = nil
	return u.String()
}
