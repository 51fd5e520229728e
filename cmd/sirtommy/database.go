package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"sirtommy/lobby/sqlstore"
	"sirtommy/race"
	"sirtommy/web/metrics"
)

// defaultData is --data's default: a folder beside where the server is
// started, so that "go run ./cmd/sirtommy" keeps its players.
const defaultData = "./sirtommy-data"

// postgresSchemes are the URL schemes --database takes.
var postgresSchemes = []string{"postgres://", "postgresql://"}

// isPostgresURL reports whether s names a PostgreSQL database.
func isPostgresURL(s string) bool {
	for _, p := range postgresSchemes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Database timeouts.
const (
	// dbPingTimeout bounds /readyz's ping of the database: one that takes
	// longer is as good as down. It leaves Redis's round trip the rest of
	// the whole check's second (web's readyCheckTimeout).
	dbPingTimeout = 500 * time.Millisecond
	// dbStartTimeout bounds reading (or storing) the token secret at
	// start: a few milliseconds on a database that answers.
	dbStartTimeout = 10 * time.Second
)

// openDatabase opens the durable store: PostgreSQL at --database, else
// SQLite in the --data folder. Its errors are sentences saying why (the
// folder unreadable or in use by another server, a newer schema) and
// nothing was changed.
func openDatabase(ctx context.Context, cfg serveConfig) (*sqlstore.DB, error) {
	if cfg.databaseURL != "" {
		return sqlstore.OpenPostgres(ctx, cfg.databaseURL)
	}
	return sqlstore.OpenSQLite(ctx, cfg.dataDir)
}

// closeDatabase closes the durable store: the last thing serve does, once
// the lobby and the races have written what they had.
func closeDatabase(db *sqlstore.DB, log zerolog.Logger) {
	if err := db.Close(); err != nil {
		log.Warn().Err(err).Str("database", db.Where()).Msg("database closed with an error")
	}
}

// dataLine names where the durable data is, for the greeting and the
// logs, from a DB's Kind and Where: "sirtommy-data/ (SQLite)", or
// "host:5432/db (PostgreSQL)" (Where never holds a password).
func dataLine(kind sqlstore.Kind, where string) string {
	if kind == sqlstore.Postgres {
		return where + " (PostgreSQL)"
	}
	return filepath.Clean(where) + "/ (SQLite)"
}

// dbPingBuckets are the readiness ping's latency buckets, in seconds:
// from 100 µs (a local SQLite or PostgreSQL on the same host) to the ping's
// timeout.
func dbPingBuckets() []float64 {
	return []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, dbPingTimeout.Seconds()}
}

// dbHealth is what /readyz and /metrics know of the database: its pings'
// latency and failures, and (at each scrape) its connection pool.
type dbHealth struct {
	db       *sqlstore.DB
	ping     prometheus.Histogram
	failures prometheus.Counter
}

func newDBHealth(db *sqlstore.DB) *dbHealth {
	return &dbHealth{
		db: db,
		ping: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sirtommy_database_ping_seconds",
			Help:    "Latency of /readyz's ping of the database (failed pings included).",
			Buckets: dbPingBuckets(),
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sirtommy_database_ping_failures_total",
			Help: "Pings of the database by /readyz that failed or timed out (the instance answered unready).",
		}),
	}
}

// ready pings the database within dbPingTimeout.
func (h *dbHealth) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, dbPingTimeout)
	defer cancel()
	start := time.Now()
	err := h.db.Ping(ctx)
	h.ping.Observe(time.Since(start).Seconds())
	if err != nil {
		h.failures.Inc()
		return fmt.Errorf("database %s: %w", h.db.Where(), err)
	}
	return nil
}

// collectors are the database's metrics: the pings', and the pool's
// (go_sql_*{db_name="sirtommy"}: connections open, in use and idle, waits
// for a connection and their time).
func (h *dbHealth) collectors() []prometheus.Collector {
	return []prometheus.Collector{collectors.NewDBStatsCollector(h.db.SQL(), "sirtommy"), h.ping, h.failures}
}

// archiveQueuer is the race service's archiver, as seen by the metrics:
// how many finished races it has yet to write to the durable store.
type archiveQueuer interface{ ArchiveQueue() int }

// watchArchive exports the race archive's queue as
// sirtommy_archive_queue, once the race service has one (the archiver
// behind race.Deps.Archive, with Service.ArchiveQueue); before that it
// adds nothing.
func watchArchive(met *metrics.Metrics, races *race.Service) {
	q, ok := any(races).(archiveQueuer)
	if !ok {
		return
	}
	met.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sirtommy_archive_queue",
		Help: "Finished races waiting to be written to the durable store (a growing queue: the database is slow or away).",
	}, func() float64 { return float64(q.ArchiveQueue()) }))
}
