package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"golang.org/x/sync/errgroup"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/web/loadtest"
	"sirtommy/web/metrics"
)

// loadtestReport is the loadtest command's whole result: the race run, the
// echo run of the same size alongside it, and their p99 ratio.
type loadtestReport struct {
	Race *loadtest.Report     `json:"race,omitempty"`
	Echo *loadtest.EchoReport `json:"echo,omitempty"`
	// P99Ratio is the race server's move→opponent p99 over the echo
	// server's round-trip p99, both measured in the same run.
	P99Ratio float64 `json:"p99Ratio,omitempty"`
	// CPU is what the servers' processes spent during the run, from their
	// /metrics; absent when neither server published it.
	CPU *cpuReport `json:"cpu,omitempty"`
}

// cpuReport compares the servers' CPU in one run: each process's CPU
// seconds (user plus system, as the kernel counts them) over the run, per
// accepted move for the race servers and per echoed message for the echo
// server, with the machine's load at both ends. Both figures include the
// connections' handshakes at the start of the run.
type cpuReport struct {
	RaceSeconds       float64 `json:"raceServerSeconds,omitempty"`
	RacePerMoveMicros float64 `json:"raceServerMicrosPerMove,omitempty"`
	EchoSeconds       float64 `json:"echoServerSeconds,omitempty"`
	EchoPerMsgMicros  float64 `json:"echoServerMicrosPerMessage,omitempty"`
	// Ratio is RacePerMoveMicros over EchoPerMsgMicros.
	Ratio     float64 `json:"ratio,omitempty"`
	LoadStart float64 `json:"machineLoadAtStart"`
	LoadEnd   float64 `json:"machineLoadAtEnd"`
}

// cpuMeter reads the summed CPU seconds of the servers behind some
// websocket URLs. A server that does not answer /metrics makes it unusable
// (ok false), rather than a figure that leaves a process out.
type cpuMeter struct{ urls []string }

func newCPUMeter(wsURLs ...string) cpuMeter {
	var m cpuMeter
	for _, u := range wsURLs {
		if mu, err := loadtest.MetricsURL(u); err == nil && !slices.Contains(m.urls, mu) {
			m.urls = append(m.urls, mu)
		}
	}
	return m
}

func (m cpuMeter) read(ctx context.Context) (total float64, ok bool) {
	if len(m.urls) == 0 {
		return 0, false
	}
	for _, u := range m.urls {
		s, err := loadtest.CPUSeconds(ctx, u)
		if err != nil {
			return 0, false
		}
		total += s
	}
	return total, true
}

// idleRun holds idle connections and reports what they cost the server.
func idleRun(ctx context.Context, e env, cfg loadtest.IdleConfig, gcURL string, asJSON bool) error {
	metricsURL, err := loadtest.MetricsURL(cfg.URL)
	if err != nil {
		return usagef("loadtest: --url: %v", err)
	}
	cfg.Memory = func(ctx context.Context) (loadtest.Memory, error) {
		if gcURL != "" {
			if err := loadtest.ForceGC(ctx, gcURL); err != nil {
				return loadtest.Memory{}, err
			}
		}
		return loadtest.MemoryInUse(ctx, metricsURL)
	}
	r := loadtest.RunIdle(ctx, cfg)
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(r)
	}
	fmt.Fprintf(e.stdout, "held %d idle connections to %s for %.1fs; dropped %d, errors %v\n",
		r.Connections, r.URL, r.Seconds, r.Dropped, r.Errors)
	if r.MemoryError != "" {
		fmt.Fprintf(e.stdout, "server memory not read: %s\n", r.MemoryError)
		return nil
	}
	gc := "without a forced garbage collection (give --gc-url)"
	if gcURL != "" {
		gc = "each reading after a forced garbage collection"
	}
	kb := func(b float64) float64 { return b / 1024 }
	fmt.Fprintf(e.stdout, "server memory with %d held (%s): heap in use %.1f → %.1f MB, stacks %.1f → %.1f MB, goroutines %.0f → %.0f\n",
		r.Held, gc, r.Before.Heap/1e6, r.During.Heap/1e6, r.Before.Stacks/1e6, r.During.Stacks/1e6, r.Before.Goroutines, r.During.Goroutines)
	fmt.Fprintf(e.stdout, "per idle connection: %.2f KB (heap %.2f KB + stacks %.2f KB), %.2f goroutines\n",
		kb(r.PerConn.Heap+r.PerConn.Stacks), kb(r.PerConn.Heap), kb(r.PerConn.Stacks), r.PerConn.Goroutines)
	return nil
}

// loadtestCommand drives a race server (and, with --echo, an echo server at
// the same time and load) and reports.
func loadtestCommand(ctx context.Context, e env) error {
	fs := newFlagSet(e, "loadtest", "loadtest --url ws://HOST:PORT/ws [--echo ws://HOST:PORT/] [flags]\n\n"+
		"Plays races of two bot players through the lobby (hello, quick play, join) plus spectators\n"+
		"(races of --seats over the API with --seats above 2),\n"+
		"and reports latency percentiles, errors and dropped connections. With --echo it drives an\n"+
		"echo server (sirtommy echo) with the same connections and message rate in the same run.")
	var urls urlList
	fs.Var(&urls, "url", "the race server's websocket URL; give it again (or comma-separated) for instances of a cluster, which players dial in turn")
	echoURL := fs.String("echo", "", "an echo server's websocket URL to drive alongside, as a baseline")
	races := fs.Int("races", 10, "races kept running at once (--seats players each)")
	seats := fs.Int("seats", 2, "racers in each race, 2 to 10; above 2 the races are made over the HTTP API (as --direct), and move→opponent counts every other racer's update")
	spectators := fs.Int("spectators", 0, "spectator connections")
	duration := fs.Duration("duration", 30*time.Second, "how long to run")
	warmup := fs.Duration("warmup", 0, "leave the moves (and echoes) sent in the first --warmup of the run out of the latency percentiles: every race starts at once, which a running service never sees; the run still lasts --duration in all")
	bot := fs.String("bot", "medium", "the players' bot level: easy, medium, hard or expert")
	rate := fs.Float64("rate", loadtest.DefaultRate, "moves a second per player")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	direct := fs.Bool("direct", false, "make races over the HTTP API of the --urls in turn and seat each race's players on alternate --urls, instead of quick play (which pairs players of one instance only); the server needs --api-races-per-minute 0")
	localShare := fs.Float64("local-share", 0, "with --direct and several --url: the share (0 to 1) of races whose two players both dial their race's own instance, for the move→opponent latency on one instance and across instances side by side in one run")
	away := fs.Bool("away", false, "with --direct and several --url: seat both players of each race not in --local-share on the instance after their race's own, so that the race runs on one instance and its players are on another")
	flooders := fs.Int("flood", 0, "extra clients that each send --flood-rate messages a second, reconnecting when closed (hardening: do the players' figures move?)")
	floodRate := fs.Float64("flood-rate", 10000, "messages a second per --flood client")
	cpuProfile := fs.String("cpuprofile", "", "write the load client's own CPU profile to this file")
	memProfile := fs.String("memprofile", "", "write the load client's allocation profile to this file at the end")
	arena := fs.String("arena", "", "join the players (2 × --races) to this arena (its id or name, running or starting soon) instead of quick play, and make the spectators watch its leaderboard; reports the pairing delay after each race's end and the leaderboard's updates")
	idle := fs.Int("idle", 0, "instead of races: hold this many idle websockets to --url for --duration, and report what each costs the server (heap and stacks in use, from its /metrics, before and during)")
	gcURL := fs.String("gc-url", "", "with --idle: the server's --pprof address (http://HOST:PORT), to force a garbage collection before each memory reading")
	if _, err := parseInterspersed(fs, e.args); err != nil {
		return err
	}
	if len(urls) == 0 && *echoURL == "" {
		return usagef("loadtest: give --url, --echo or both")
	}
	if *races < 1 || *spectators < 0 || *duration <= 0 || *rate <= 0 || *flooders < 0 || *floodRate <= 0 {
		return usagef("loadtest: --races, --duration and --rate must be positive, --spectators not negative")
	}
	if *seats < race.MinSeats || *seats > race.MaxSeats {
		return usagef("loadtest: --seats must be from %d to %d", race.MinSeats, race.MaxSeats)
	}
	if *warmup < 0 || *warmup >= *duration {
		return usagef("loadtest: --warmup must be at least 0 and shorter than --duration")
	}
	if *localShare < 0 || *localShare > 1 {
		return usagef("loadtest: --local-share must be from 0 to 1")
	}
	if *localShare > 0 && !*direct {
		return usagef("loadtest: --local-share needs --direct (quick play seats each race's players on one instance already)")
	}
	if *away && (!*direct || len(urls) < 2) {
		return usagef("loadtest: --away needs --direct and two --url or more")
	}
	if *arena != "" && (*direct || *seats != 2) {
		return usagef("loadtest: --arena pairs players two by two: no --direct, no --seats")
	}
	if *idle > 0 {
		if len(urls) == 0 {
			return usagef("loadtest: --idle needs --url")
		}
		return idleRun(ctx, e, loadtest.IdleConfig{URL: urls[0], Conns: *idle, Duration: *duration}, *gcURL, *asJSON)
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if *memProfile != "" {
		defer writeAllocProfile(*memProfile, e.stderr)
	}
	level, err := engine.ParseLevel(*bot)
	if err != nil {
		return usagef("loadtest: --bot: %v", err)
	}
	var progress func(loadtest.Progress)
	if f, ok := e.stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) && !*asJSON {
		progress = func(p loadtest.Progress) {
			fmt.Fprintf(e.stderr, "\r%4.0fs conns %d races %d/%d moves %d errors %d dropped %d   ",
				p.Elapsed.Seconds(), p.Connections, p.RacesFinished, p.RacesStarted, p.Moves, p.Errors, p.Dropped)
		}
	}
	var rep loadtestReport
	raceCPU, echoCPU := newCPUMeter(urls...), newCPUMeter()
	if *echoURL != "" {
		echoCPU = newCPUMeter(*echoURL)
	}
	loadStart, _ := loadtest.MachineLoad()
	raceBefore, raceOK := raceCPU.read(ctx)
	echoBefore, echoOK := echoCPU.read(ctx)
	g, gctx := errgroup.WithContext(ctx)
	if len(urls) > 0 {
		g.Go(func() error {
			r, err := loadtest.Run(gctx, loadtest.Config{
				Flooders: *flooders, FloodRate: *floodRate, Direct: *direct, LocalShare: *localShare, Away: *away,
				URLs: urls, Races: *races, Seats: *seats, Spectators: *spectators, Duration: *duration, Warmup: *warmup,
				Level: level, Rate: *rate, Seed: uint64(time.Now().UnixNano()), Arena: *arena,
			}, progress)
			if err != nil {
				return fmt.Errorf("loadtest: %w", err)
			}
			rep.Race = &r
			return nil
		})
	}
	if *echoURL != "" {
		g.Go(func() error {
			r, err := loadtest.RunEcho(gctx, loadtest.EchoConfig{
				URL: *echoURL, Conns: *seats**races + *spectators, Senders: *seats * *races,
				Rate: *rate, Duration: *duration, Warmup: *warmup,
			})
			if err != nil {
				return fmt.Errorf("loadtest echo: %w", err)
			}
			rep.Echo = &r
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if rep.Race != nil && rep.Echo != nil && rep.Echo.RoundTrip.P99 > 0 {
		rep.P99Ratio = rep.Race.OpponentSeen.P99 / rep.Echo.RoundTrip.P99
	}
	if raceOK || echoOK {
		c := &cpuReport{LoadStart: loadStart}
		c.LoadEnd, _ = loadtest.MachineLoad()
		if after, ok := raceCPU.read(ctx); raceOK && ok && rep.Race != nil {
			c.RaceSeconds = after - raceBefore
			if rep.Race.Moves > 0 {
				c.RacePerMoveMicros = c.RaceSeconds / float64(rep.Race.Moves) * 1e6
			}
		}
		if after, ok := echoCPU.read(ctx); echoOK && ok && rep.Echo != nil {
			c.EchoSeconds = after - echoBefore
			if rep.Echo.Messages > 0 {
				c.EchoPerMsgMicros = c.EchoSeconds / float64(rep.Echo.Messages) * 1e6
			}
		}
		if c.RacePerMoveMicros > 0 && c.EchoPerMsgMicros > 0 {
			c.Ratio = c.RacePerMoveMicros / c.EchoPerMsgMicros
		}
		rep.CPU = c
	}
	if progress != nil {
		fmt.Fprintln(e.stderr)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printLoadReport(e.stdout, rep)
	return nil
}

func printLoadReport(w io.Writer, rep loadtestReport) {
	q := func(name string, x loadtest.Quantiles) {
		fmt.Fprintf(w, "  %-24s n=%-8d p50 %8.2f ms  p99 %8.2f ms  p99.9 %8.2f ms  max %8.2f ms\n",
			name, x.Count, x.P50, x.P99, x.P999, x.Max)
	}
	errs := func(m map[string]int64) {
		codes := make([]string, 0, len(m))
		for c := range m {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		for _, c := range codes {
			fmt.Fprintf(w, "    %-22s %d\n", c, m[c])
		}
	}
	if r := rep.Race; r != nil {
		fmt.Fprintf(w, "race server %s: %d races of %d + %d spectators for %.1fs\n", strings.Join(r.URLs, " "), r.Races, r.Seats, r.Spectators, r.Seconds)
		fmt.Fprintf(w, "  connections %d, races started %d, finished %d, aborted %d\n", r.Connections, r.RacesStarted, r.RacesFinished, r.RacesAborted)
		fmt.Fprintf(w, "  moves %d (%.1f/s), board updates to spectators %d\n", r.Moves, r.MovesPerSec, r.BoardUpdates)
		q("move→own reply", r.OwnReply)
		q("move→opponent update", r.OpponentSeen)
		if r.OpponentCross != nil {
			q("  across instances", *r.OpponentCross)
		}
		if r.OpponentLocal != nil && r.OpponentLocal.Count > 0 {
			q("  on one instance", *r.OpponentLocal)
		}
		fmt.Fprintf(w, "  moves that crossed their race's end (race-over, not errors) %d\n", r.LateMoves)
		fmt.Fprintf(w, "  dropped connections %d, errors:\n", r.Dropped)
		errs(r.Errors)
		if a := r.Arena; a != nil {
			fmt.Fprintf(w, "  arena %s: %d players, %d watchers\n", a.Arena, a.Players, a.Watchers)
			q("join→first pairing", a.FirstPairing)
			q("race end→next pairing", a.Repairing)
			q("between two updates", a.Gaps)
			fmt.Fprintf(w, "  leaderboard updates %d (%.2f a connection a second), shortest gap %.0f ms\n", a.Updates, a.UpdatesPerSecond, a.ShortestGapMs)
		}
		if f := r.Flood; f != nil {
			fmt.Fprintf(w, "  flood: %d clients sent %d messages (%.0f/s) on %d connections, ended by:\n", f.Clients, f.Sent, f.SentPerSec, f.Connections)
			errs(f.Ends)
		}
	}
	if r := rep.Echo; r != nil {
		fmt.Fprintf(w, "echo server %s: %d connections for %.1fs, %d messages\n", r.URL, r.Connections, r.Seconds, r.Messages)
		q("echo round trip", r.RoundTrip)
		fmt.Fprintf(w, "  dropped connections %d, errors:\n", r.Dropped)
		errs(r.Errors)
	}
	if rep.P99Ratio > 0 {
		fmt.Fprintf(w, "move→opponent p99 / echo p99 = %.2f\n", rep.P99Ratio)
	}
	if c := rep.CPU; c != nil {
		if c.RaceSeconds > 0 {
			fmt.Fprintf(w, "race server CPU %.2f s, %.1f µs per accepted move\n", c.RaceSeconds, c.RacePerMoveMicros)
		}
		if c.EchoSeconds > 0 {
			fmt.Fprintf(w, "echo server CPU %.2f s, %.1f µs per message\n", c.EchoSeconds, c.EchoPerMsgMicros)
		}
		if c.Ratio > 0 {
			fmt.Fprintf(w, "CPU per move / echo CPU per message = %.2f\n", c.Ratio)
		}
		fmt.Fprintf(w, "machine load (1 min) %.2f at the start, %.2f at the end\n", c.LoadStart, c.LoadEnd)
	}
}

// urlList is a flag given once or more, each time one URL or several
// separated by commas.
type urlList []string

func (l *urlList) String() string { return strings.Join(*l, ",") }

func (l *urlList) Set(v string) error {
	for u := range strings.SplitSeq(v, ",") {
		if u = strings.TrimSpace(u); u != "" {
			*l = append(*l, u)
		}
	}
	return nil
}

// echoShutdownTimeout bounds the echo server's shutdown.
const echoShutdownTimeout = 5 * time.Second

// echoServer is the echo command's handler: the bare echo on every path,
// and the process's metrics (its CPU, which loadtest reads) on /metrics.
// With pair, each message also goes to the sender's partner
// (loadtest.PairEchoHandler).
func echoServer(pair bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.New().Handler())
	if pair {
		mux.Handle("/", loadtest.PairEchoHandler())
	} else {
		mux.Handle("/", loadtest.EchoHandler())
	}
	return mux
}

// echoCommand runs a bare websocket echo server (no game logic), the
// baseline for loadtest --echo.
func echoCommand(ctx context.Context, e env) error {
	fs := newFlagSet(e, "echo", "echo [--addr HOST:PORT]\n\nRuns a bare websocket echo server on every path: the load test's baseline.")
	addr := fs.String("addr", "127.0.0.1:8090", "address to listen on; port 0 picks a free port")
	pair := fs.Bool("pair", false, "pair connections as they arrive and send each message to the sender's partner too, as a move's two writes (the mover's reply, the opponent's update) with no game between")
	if _, err := parseInterspersed(fs, e.args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("echo: listen on %s: %w", *addr, err)
	}
	hs := &http.Server{Handler: echoServer(*pair), ReadHeaderTimeout: readHeaderTimeout}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(e.stdout, "echo listening on ws://%s/\n", ln.Addr())
	select {
	case err := <-served:
		return fmt.Errorf("echo: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), echoShutdownTimeout)
	defer cancel()
	_ = hs.Shutdown(sctx) // hijacked websockets are not waited for
	_ = hs.Close()
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("echo: %w", err)
	}
	return nil
}
