// Package sqlstore keeps sirtommy's durable data (docs/storage.md) in a
// SQL database: players, ratings and every rating change, every finished
// race, ghost challenges and their runs, the days' boards, the arenas,
// the players' mistakes to practise, the coach's analyses and the token-signing secret. One implementation serves both
// databases the service runs on: SQLite in a data folder (the single
// binary's default, through a pure-Go driver so that the binary stays
// static) and PostgreSQL shared by a fleet. The queries are written once,
// in the SQL both understand ($1 placeholders, ON CONFLICT); the schema is
// migrated with goose from the files in migrations/, embedded.
//
// Live state (running races, queues, leases, presence) is not here: it
// stays in memory or Redis.
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// Kind is which database a DB is.
type Kind string

// The databases a DB may be.
const (
	SQLite   Kind = "sqlite"
	Postgres Kind = "postgres"
)

// File names in a SQLite data folder.
const (
	// DatabaseFile is the SQLite database in the data folder.
	DatabaseFile = "sirtommy.db"
	// LockFile is held (flock) by the one server using the data folder.
	LockFile = "sirtommy.lock"
)

// Connection settings.
const (
	// busyTimeout is how long a SQLite statement waits for another
	// connection's write to finish before failing: writes here take
	// milliseconds, so a wait this long means something is stuck.
	busyTimeout = 5 * time.Second
	// openTimeout bounds the first ping and the migrations at start.
	openTimeout = 30 * time.Second
	// maxPostgresConns bounds one instance's connections to PostgreSQL:
	// its writes are few (a race's end, a ghost) and short.
	maxPostgresConns = 16
	// sqliteIdleConns is how many connections to SQLite stay open between
	// uses. database/sql keeps 2 by default and closes any other one as
	// soon as it is released; a SQLite connection is dear to open again
	// (its pragmas run, and its first statement reads the schema), and a
	// busy server has more than 2 in use at once at races' ends (the
	// archiver, the lobby's end worker, the players' next requests).
	sqliteIdleConns = 8
	// walCheckpointPages is how many pages the WAL may hold before a
	// commit copies them into the database (SQLite's wal_autocheckpoint;
	// its default is 1,000). A checkpoint writes each page once however
	// often it changed since the last one, and syncs both files: over a
	// burst of a thousand races' ends, 4,000 pages copied two fifths as
	// many pages and synced a quarter as often, for a WAL file of up to
	// 16 MB (docs/performance.md, issue 42).
	walCheckpointPages = 4000
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is an open durable store.
type DB struct {
	kind Kind
	sql  *sql.DB
	// where names the database for messages: the data folder, or the
	// PostgreSQL host and database (never a password).
	where string
	lock  *flock.Flock // the data folder's lock; nil for PostgreSQL
	// stmts are the statements of the writes at a race's end and of the
	// quick-play rating read, prepared once (SQLite only): query text →
	// *sql.Stmt. See prepared.
	stmts sync.Map
	// standings caches the standings (SQLite only; nil for PostgreSQL).
	standings *standingCache
	// writer is the connection of the writes (SQLite only; nil for
	// PostgreSQL).
	writer *writer
}

// prepared is query q prepared once for all of db's connections
// (database/sql prepares it again on each connection that runs it, once),
// or nil on PostgreSQL, whose driver keeps its own cache of statements,
// and when preparing fails (the caller then runs q as text, which reports
// the error). On SQLite a statement run as text is parsed and compiled on
// every call: that was most of the CPU of a race's end's small writes.
func (db *DB) prepared(ctx context.Context, q string) *sql.Stmt {
	if db.kind != SQLite {
		return nil
	}
	if st, ok := db.stmts.Load(q); ok {
		return st.(*sql.Stmt)
	}
	st, err := db.sql.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	if old, loaded := db.stmts.LoadOrStore(q, st); loaded {
		_ = st.Close()
		return old.(*sql.Stmt)
	}
	return st
}

// exec runs write q with args: on SQLite prepared once (prepared), on
// the writer connection.
func (db *DB) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if db.writer != nil {
		return db.execWrite(ctx, q, args...)
	}
	return db.sql.ExecContext(ctx, q, args...)
}

// queryRow runs query q with args, prepared once on SQLite (prepared).
func (db *DB) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if st := db.prepared(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return db.sql.QueryRowContext(ctx, q, args...)
}

// txExec runs q with args in tx, prepared once on SQLite (prepared).
func (db *DB) txExec(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	if st := db.prepared(ctx, q); st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, q, args...)
}

// txQueryRow runs query q with args in tx, prepared once on SQLite
// (prepared).
func (db *DB) txQueryRow(ctx context.Context, tx *sql.Tx, q string, args ...any) *sql.Row {
	if st := db.prepared(ctx, q); st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, q, args...)
}

// Kind is which database this is.
func (db *DB) Kind() Kind { return db.kind }

// Where names the database for logs and messages.
func (db *DB) Where() string { return db.where }

// SQL is the database/sql handle, for the stores of this package and for
// tests.
func (db *DB) SQL() *sql.DB { return db.sql }

// Ping checks that the database answers (/readyz).
func (db *DB) Ping(ctx context.Context) error { return db.sql.PingContext(ctx) }

// Close closes the database and releases the data folder.
func (db *DB) Close() error {
	db.closeWriter()
	db.stmts.Range(func(_, st any) bool {
		_ = st.(*sql.Stmt).Close()
		return true
	})
	err := db.sql.Close()
	if db.lock != nil {
		err = errors.Join(err, db.lock.Unlock())
	}
	return err
}

// OpenSQLite opens (making it if needed) the SQLite database in data
// folder dir, holds the folder's lock so that no second server uses it,
// and migrates the schema. It fails with a sentence saying why when the
// folder cannot be made or read, another process holds it, or its schema
// is newer than this binary's; it changes nothing then.
func OpenSQLite(ctx context.Context, dir string) (*DB, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("data folder %s cannot be made: %w", dir, err)
	}
	lock := flock.New(filepath.Join(dir, LockFile))
	held, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("data folder %s cannot be locked: %w", dir, err)
	}
	if !held {
		return nil, fmt.Errorf("data folder %s is in use by another sirtommy server: stop it, or give this one another --data", dir)
	}
	file := filepath.Join(dir, DatabaseFile)
	if f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o640); err != nil {
		_ = lock.Unlock()
		return nil, fmt.Errorf("database %s cannot be opened for writing: %w", file, err)
	} else {
		_ = f.Close()
	}
	// WAL: readers never wait for the writer. synchronous(NORMAL) with
	// WAL loses no committed transaction when the process dies (a crash,
	// SIGKILL); a power cut may lose the last ones, never the file
	// (docs/storage.md). _txlock=immediate takes the write lock when a
	// transaction begins, so that two writers wait in turn instead of
	// failing on an upgrade from read to write.
	dsn := "file:" + file + "?_txlock=immediate" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)" +
		fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)", walCheckpointPages) +
		fmt.Sprintf("&_pragma=busy_timeout(%d)", busyTimeout.Milliseconds())
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		_ = lock.Unlock()
		return nil, fmt.Errorf("database %s: %w", file, err)
	}
	sdb.SetMaxIdleConns(sqliteIdleConns)
	db := &DB{kind: SQLite, sql: sdb, where: dir, lock: lock, standings: &standingCache{}, writer: newWriter()}
	if err := db.start(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("database %s: %w", file, err)
	}
	return db, nil
}

// OpenPostgres connects to the PostgreSQL database at url
// ("postgres://user@host:5432/db") and migrates its schema. Every
// instance of a fleet opens the same one.
func OpenPostgres(ctx context.Context, url string) (*DB, error) {
	sdb, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("--database: %w", err)
	}
	sdb.SetMaxOpenConns(maxPostgresConns)
	sdb.SetMaxIdleConns(maxPostgresConns)
	db := &DB{kind: Postgres, sql: sdb, where: redact(url)}
	if err := db.start(ctx); err != nil {
		_ = sdb.Close()
		return nil, fmt.Errorf("postgres at %s: %w", db.where, err)
	}
	return db, nil
}

// migrateLock is the PostgreSQL advisory lock (any number all instances
// agree on: "sirtommy" in ASCII) held while one instance reads and
// migrates the schema, so that a fleet starting at once on a new database
// migrates it once, the others waiting and then finding it done. Without
// it, two instances creating the same table at once fail to start.
const migrateLock int64 = 0x73697274_6f6d6d79

// start pings the database and brings its schema up to this binary's.
func (db *DB) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	if err := db.sql.PingContext(ctx); err != nil {
		return fmt.Errorf("unreachable: %w", err)
	}
	if db.kind == Postgres {
		conn, err := db.sql.Conn(ctx)
		if err != nil {
			return fmt.Errorf("unreachable: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrateLock); err != nil {
			return fmt.Errorf("wait for another instance's migration: %w", err)
		}
		// Released before the connection goes back to the pool (a session
		// lock outlives a transaction).
		defer func() {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLock)
		}()
	}
	p, err := db.provider()
	if err != nil {
		return err
	}
	have, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("read the schema's version: %w", err)
	}
	if want := SchemaVersion(); have > want {
		return fmt.Errorf("its schema is version %d, newer than this binary's %d: run a newer sirtommy (nothing was changed)", have, want)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate the schema: %w", err)
	}
	return nil
}

// provider is goose's migrator for this database.
func (db *DB) provider() (*goose.Provider, error) {
	dialect := goose.DialectSQLite3
	if db.kind == Postgres {
		dialect = goose.DialectPostgres
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(dialect, db.sql, sub)
}

// SchemaVersion is the newest schema this binary knows: the number of its
// last migration (files are named NNNNN_what.sql).
func SchemaVersion() int64 {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	var v int64
	for _, n := range names {
		base := path.Base(n)
		if i := strings.IndexByte(base, '_'); i > 0 {
			if n, err := strconv.ParseInt(base[:i], 10, 64); err == nil && n > v {
				v = n
			}
		}
	}
	return v
}
