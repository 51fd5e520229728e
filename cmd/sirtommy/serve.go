package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/account"
	"sirtommy/lobby/sqlstore"
	"sirtommy/race"
	"sirtommy/race/redisrace"
	"sirtommy/web"
	"sirtommy/web/metrics"
)

// Server timeouts.
const (
	// readHeaderTimeout bounds how long a client may take to send request
	// headers (slowloris).
	readHeaderTimeout = 10 * time.Second
	// idleTimeout closes keep-alive HTTP connections nobody uses.
	idleTimeout = 2 * time.Minute
	// closeConnsTimeout bounds the wait for websockets to close after the
	// drain.
	closeConnsTimeout = 5 * time.Second
)

// serveConfig is the serve command's configuration.
type serveConfig struct {
	addr           string
	logFormat      string
	logLevel       string
	drainTimeout   time.Duration
	spectatorDelay time.Duration
	grace          time.Duration
	allowedOrigins string
	// origin is the site's address as browsers see it, for passkeys;
	// empty: http://localhost:PORT.
	origin        string
	secret        string
	computerOffer time.Duration
	// arenas are the scheduled arenas (--arenas, parsed).
	arenasFlag string
	arenas     []lobby.ArenaSchedule
	retention  time.Duration
	apiRaces   int
	practice   int // tries of "find the better move" a minute per address
	// Durable data: PostgreSQL at databaseURL, else SQLite in dataDir.
	dataDir     string
	databaseURL string
	// Redis mode: empty redisURL keeps everything in memory.
	redisURL       string
	redisPrefix    string
	redisRetention time.Duration
	seatMoves      bool
	// pprofAddr, when set, serves net/http/pprof on its own listener.
	pprofAddr string
	// durableRaces keeps the running races in the SQLite data folder too
	// (local.go).
	durableRaces bool
}

// envFlag names the environment variable that backs a flag.
func envFlag(name string) string {
	return "SIRTOMMY_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Flag groups of serve --help, in the order they are listed.
const (
	groupServer = "server"
	groupLobby  = "lobby and races"
	groupData   = "data (what outlives the process: docs/storage.md)"
	groupRedis  = "Redis mode (several instances)"
	groupLimits = "limits"
)

// Log formats of --log-format.
const (
	logAuto    = "auto" // console on a terminal, JSON otherwise
	logJSON    = "json"
	logConsole = "console"
)

func parseServe(e env) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	groups := map[string][]string{} // group -> flag names, in definition order
	var durErr error
	// fromEnv reads a flag's environment fallback through parse.
	fromEnv := func(name string, parse func(string) error) {
		if v := e.getenv(envFlag(name)); v != "" {
			if err := parse(v); err != nil && durErr == nil {
				durErr = fmt.Errorf("%s=%q: %w", envFlag(name), v, err)
			}
		}
	}
	usage := func(group, name, text string) string {
		groups[group] = append(groups[group], name)
		return text + " (env " + envFlag(name) + ")"
	}
	str := func(p *string, group, name, def, text string) {
		fromEnv(name, func(v string) error { def = v; return nil })
		fs.StringVar(p, name, def, usage(group, name, text))
	}
	intFlag := func(p *int, group, name string, def int, text string) {
		fromEnv(name, func(v string) (err error) { def, err = strconv.Atoi(v); return err })
		fs.IntVar(p, name, def, usage(group, name, text))
	}
	dur := func(p *time.Duration, group, name string, def time.Duration, text string) {
		fromEnv(name, func(v string) (err error) { def, err = time.ParseDuration(v); return err })
		fs.DurationVar(p, name, def, usage(group, name, text))
	}
	str(&c.addr, groupServer, "addr", ":8080", "address to listen on; port 0 picks a free port")
	str(&c.logFormat, groupServer, "log-format", logAuto, "log format: auto (console on a terminal, JSON otherwise), json or console")
	str(&c.logLevel, groupServer, "log-level", "info", "log level: debug, info, warn or error")
	dur(&c.drainTimeout, groupServer, "drain-timeout", 30*time.Second, "on shutdown, how long running races may go on before they are aborted")
	str(&c.allowedOrigins, groupServer, "allowed-origins", "", "comma-separated browser origins (https://host) allowed to open websockets besides this host")
	str(&c.origin, groupServer, "origin", "", "the site's address as browsers see it (https://sirtommy.example): passkeys are bound to its host and answers from other origins refused; empty: http://localhost:PORT")
	str(&c.secret, groupServer, "secret", "", fmt.Sprintf("secret (at least %d bytes) signing player tokens and deriving the day's deals; empty: a random one kept in the database, so tokens outlive restarts", lobby.MinSecretBytes))
	fromEnv("durable-races", func(v string) (err error) { c.durableRaces, err = strconv.ParseBool(v); return err })
	fs.BoolVar(&c.durableRaces, "durable-races", c.durableRaces, usage(groupServer, "durable-races", "keep the running races in --data too, every move committed before it is answered, so that a restart or crash resumes them (about a fifth more CPU a move, and up to 20 ms more a move when busy; docs/performance.md)"))
	str(&c.pprofAddr, groupServer, "pprof", "", "address (127.0.0.1:6060) to serve net/http/pprof on, apart from the service's port; empty: off")
	dur(&c.spectatorDelay, groupLobby, "spectator-delay", 10*time.Second, "delay of the spectators' feed in public races")
	dur(&c.grace, groupLobby, "grace", race.DefaultGrace, "how long a disconnected player has to resume before forfeiting")
	dur(&c.computerOffer, groupLobby, "computer-offer-after", lobby.DefaultComputerOfferAfter, "how long a quick-play player waits before being offered the computer")
	str(&c.arenasFlag, groupLobby, "arenas", defaultArenas, `the arenas made on a schedule, split by ";": "NAME,VARIANT,RACE LIMIT,DURATION,EVERY[,GRADE]" (an arena of DURATION every EVERY, on the multiples of EVERY in UTC, of races of RACE LIMIT); empty: none`)
	dur(&c.retention, groupLobby, "retention", defaultRetention, "memory mode: how long a finished race stays for its result and replay; Redis mode keeps it for --redis-retention")
	str(&c.dataDir, groupData, "data", defaultData, "folder of the SQLite database keeping players, ratings, finished races, ghosts, days' boards and analyses; one server at a time (not used with --database)")
	str(&c.databaseURL, groupData, "database", "", "postgres://user[:password]@host[:port]/db: keep that data in this PostgreSQL instead of --data; --redis needs it (every instance on the same)")
	str(&c.redisURL, groupRedis, "redis", "", "redis://[:password@]host:port/db: share races with other instances through this Redis; empty keeps them in memory")
	str(&c.redisPrefix, groupRedis, "redis-prefix", redisrace.DefaultPrefix, "prefix of every Redis key and channel")
	dur(&c.redisRetention, groupRedis, "redis-retention", redisrace.DefaultRetention, "how long Redis keeps a finished race's record and log")
	c.seatMoves = true
	fromEnv("seat-moves", func(v string) (err error) { c.seatMoves, err = strconv.ParseBool(v); return err })
	fs.BoolVar(&c.seatMoves, "seat-moves", c.seatMoves, usage(groupRedis, "seat-moves", "play a player's moves on the player's own instance while the race runs on another, the move crossing Redis once; false: forward them to the race's instance (docs/redis.md)"))
	intFlag(&c.apiRaces, groupLimits, "api-races-per-minute", web.DefaultLimits().RacesPerMinute, "races one client address may make over the API (POST /api/races) a minute; 0: no limit")
	intFlag(&c.practice, groupLimits, "practice-per-minute", web.DefaultLimits().PracticePerMinute, "tries of \"find the better move\" one client address may send (POST /api/races/{id}/practice) a minute; 0: no limit")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: sirtommy serve [flags]\n\nRuns the race server on one port, in memory or (--redis) sharing races with\nother instances through Redis; what outlives the process is kept in SQLite\n(--data) or PostgreSQL (--database). Every flag can also be set by its\nenvironment variable; the flag wins.")
		for _, g := range []string{groupServer, groupLobby, groupData, groupRedis, groupLimits} {
			fmt.Fprintf(w, "\n%s:\n", g)
			for _, name := range groups[g] {
				printFlag(w, fs.Lookup(name))
			}
		}
	}
	if err := fs.Parse(e.args); err != nil {
		return c, err
	}
	if durErr != nil {
		return c, usageError{durErr}
	}
	if fs.NArg() > 0 {
		return c, usagef("serve takes no arguments, got %q", fs.Args())
	}
	if c.secret != "" && len(c.secret) < lobby.MinSecretBytes {
		return c, usagef("--secret must be at least %d bytes", lobby.MinSecretBytes)
	}
	arenas, err := lobby.ParseArenaSchedules(c.arenasFlag)
	if err != nil {
		return c, usagef("--arenas: %v", err)
	}
	c.arenas = arenas
	if c.apiRaces < 0 {
		return c, usagef("--api-races-per-minute must be 0 (no limit) or more, not %d", c.apiRaces)
	}
	if c.practice < 0 {
		return c, usagef("--practice-per-minute must be 0 (no limit) or more, not %d", c.practice)
	}
	if c.retention <= 0 {
		return c, usagef("--retention must be positive, not %s", c.retention)
	}
	if c.databaseURL != "" && !isPostgresURL(c.databaseURL) {
		return c, usagef("--database takes a PostgreSQL URL (postgres://user@host:5432/db or postgresql://…); for SQLite give --data DIR")
	}
	if c.databaseURL == "" && c.dataDir == "" {
		return c, usagef("--data must name a folder (or give --database postgres://…)")
	}
	if c.redisURL != "" && c.databaseURL == "" {
		return c, usagef("--redis needs --database postgres://…: several instances cannot share a SQLite data folder, so a fleet keeps its durable data in one PostgreSQL")
	}
	if c.durableRaces && (c.databaseURL != "" || c.redisURL != "") {
		return c, usagef("--durable-races keeps the running races in the SQLite data folder (--data): with --redis, Redis keeps them")
	}
	switch c.logFormat {
	case logAuto, logJSON, logConsole:
	default:
		return c, usagef("--log-format must be auto, json or console, not %q", c.logFormat)
	}
	return c, nil
}

// defaultArenas are the arenas a server runs unless told otherwise: a
// classic arena every hour (55 minutes of 5-minute races) and a daily
// one in another variant, from midnight UTC for two hours.
const defaultArenas = "Hourly classic,classic,5m,55m,1h;Daily aces-out,aces-out,5m,120m,24h"

func newLogger(w io.Writer, format, level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Logger{}, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	f, isFile := w.(*os.File)
	terminal := isFile && isatty.IsTerminal(f.Fd())
	if format == logConsole || (format == logAuto && terminal) {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: !terminal}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// runServe runs the server until ctx is done, then drains: it stops
// accepting connections, lets running races finish for up to the drain
// timeout (aborting what is left), closes websockets with 1001 and returns
// nil.
func runServe(ctx context.Context, e env) error {
	cfg, err := parseServe(e)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log, err := newLogger(e.stderr, cfg.logFormat, cfg.logLevel)
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeDatabase(db, log) // last: after the lobby and the races have written theirs
	log.Info().Str("data", dataLine(db.Kind(), db.Where())).Msg("durable store open")
	secret, err := tokenSecret(ctx, cfg, db)
	if err != nil {
		return err
	}
	be := memoryBackend(log)
	if cfg.redisURL != "" {
		if be, err = redisBackend(ctx, cfg, log); err != nil {
			return err
		}
	} else if cfg.durableRaces {
		if be, err = localBackend(ctx, db, cfg.retention, log); err != nil {
			return err
		}
	}
	defer be.close()
	met := metrics.New()
	be.useDatabase(db, met)
	be.deps.Computers = newComputer // computer seats survive their instance
	races := race.NewService(be.deps)
	if be.restore != nil {
		if err := be.restore(ctx, races); err != nil {
			return err
		}
	}
	keepOwned := be.spread(races)
	keep := cfg.retention
	if cfg.redisURL != "" {
		keep = redisMemoryKeep // Redis keeps them; Open rebuilds them on demand
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	ran, evicted := make(chan struct{}), make(chan struct{})
	go func() { keepOwned(runCtx); close(ran) }()
	go func() { evictFinished(runCtx, races, keep); close(evicted) }()
	defer func() { stopRun(); <-ran; <-evicted }()
	clock := race.SystemClock{}
	tokens, err := lobby.NewTokens(secret, clock, 0)
	if err != nil {
		return fmt.Errorf("player tokens: %w", err)
	}
	computer := race.ComputerFactory(newComputer)
	lob := lobby.New(lobby.Config{
		ComputerOfferAfter: cfg.computerOffer,
		SpectatorDelay:     cfg.spectatorDelay,
		Grace:              cfg.grace,
		Arenas:             cfg.arenas,
	}, lobby.Deps{
		Clock: clock, Log: log, Races: races, Tokens: tokens,
		Stores: be.stores, Computer: computer,
		DailySecret: secret,
	})
	defer lob.Close()
	var origins []string
	for _, o := range strings.Split(cfg.allowedOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			origins = append(origins, o)
		}
	}
	if cfg.pprofAddr != "" {
		stopPprof, err := servePprof(cfg.pprofAddr, log)
		if err != nil {
			return err
		}
		defer stopPprof()
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	accounts, err := account.New(sqlstore.NewAccounts(db), account.Config{Origin: siteOrigin(cfg.origin, ln.Addr()), Clock: clock})
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("--origin: %w", err)
	}
	swept := make(chan struct{})
	go func() { sweepAccounts(runCtx, accounts, log); close(swept) }()
	defer func() { stopRun(); <-swept }()
	limits := web.DefaultLimits()
	limits.RacesPerMinute = cfg.apiRaces
	limits.PracticePerMinute = cfg.practice
	srv := web.NewServer(web.Deps{
		Accounts:       accounts,
		Limits:         limits,
		Observer:       met,
		Log:            log,
		Races:          races,
		Lobby:          lob,
		Computer:       computer,
		AllowedOrigins: origins,
		SpectatorDelay: cfg.spectatorDelay,
		Grace:          cfg.grace,
		Check:          be.check,
		Analyses:       be.analyses,
		Mistakes:       be.stores.Mistakes,
		Instance:       be.instance,
	})
	met.Watch(&srv.Stats, races)
	watchArchive(met, races)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", met.Handler())
	mux.Handle("/", srv)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info().Str("addr", ln.Addr().String()).Msg("listening")
	greet(e.stdout, ln.Addr(), dataLine(db.Kind(), db.Where()))

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stopRun() // no more adopting races: this instance hands its own over
	<-ran
	log.Info().Dur("drainTimeout", cfg.drainTimeout).Int("live", races.Live()).Msg("draining")
	srv.SetReady(false)
	drainCtx, cancel := context.WithTimeout(context.Background(), cfg.drainTimeout)
	defer cancel()
	if err := hs.Shutdown(drainCtx); err != nil {
		log.Warn().Err(err).Msg("http shutdown")
	}
	if cut := races.Drain(drainCtx); cut > 0 {
		log.Warn().Int("aborted", cut).Msg("races aborted at the drain timeout")
	}
	closeCtx, cancelClose := context.WithTimeout(context.Background(), closeConnsTimeout)
	defer cancelClose()
	if err := srv.CloseConns(closeCtx); err != nil {
		log.Warn().Err(err).Msg("websockets still open after closing")
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info().Msg("stopped")
	return nil
}

// tokenSecret is the secret signing player tokens and deriving the day's
// deals: --secret when given (not stored), else the one the database
// keeps (made at the first start), so that players keep their identity
// across restarts and a fleet's instances agree.
func tokenSecret(ctx context.Context, cfg serveConfig, db *sqlstore.DB) ([]byte, error) {
	if cfg.secret != "" {
		return []byte(cfg.secret), nil
	}
	ctx, cancel := context.WithTimeout(ctx, dbStartTimeout)
	defer cancel()
	secret, err := db.Secret(ctx)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", db.Where(), err)
	}
	return secret, nil
}

// Finished races in memory: kept for --retention in memory mode (their
// only copy), for redisMemoryKeep in Redis mode (Redis has them), looked
// over every evictEvery.
const (
	defaultRetention = 24 * time.Hour
	redisMemoryKeep  = 10 * time.Minute
	evictEvery       = time.Minute
)

// evictFinished drops finished races older than keep from memory until
// ctx is done, so that a long-running server does not grow with every race
// it ever ran.
func evictFinished(ctx context.Context, races *race.Service, keep time.Duration) {
	every(ctx, min(evictEvery, max(keep/2, time.Second)), func() { races.Evict(keep) })
}

// every calls fn each period until ctx is done: the server's housekeeping.
func every(ctx context.Context, period time.Duration, fn func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

// newComputer makes the engine's bot at a level for a computer seat.
func newComputer(level string, seed uint64) (race.Player, error) {
	l, err := engine.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	return engine.NewBot(l, seed), nil
}
