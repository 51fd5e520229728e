// Package loadtest drives a race server (PROTOCOL.md) over real websockets
// with bot players and spectators, and measures it: races started and
// finished, moves a second, move→own reply and move→opponent update
// latency, errors by code and dropped connections. It also has a bare
// websocket echo server and a client for it, so a run can compare the race
// server's latency with what the machine and the websocket library alone
// cost.
//
// Players come in through the lobby like real clients: hello, then queue
// for quick play, join the race from matched, and play with the engine's
// bot, choosing among the moves legal in the View the server sent (see
// legalFromView). When a race ends they queue again, so N races keep
// running until the duration is up.
package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"sirtommy/engine"
)

// Client defaults.
const (
	// DefaultRate is each player's move rate, moves a second: the design's
	// target load (DESIGN.md) is 2 moves a second per player.
	DefaultRate = 2.0
	// dialConcurrency bounds the handshakes in flight, so a big run ramps
	// up instead of flooding the listener's accept queue.
	dialConcurrency = 32
	// dialTimeout bounds one websocket handshake.
	dialTimeout = 10 * time.Second
	// writeTimeout bounds one message write.
	writeTimeout = 10 * time.Second
	// inboxSize is how many read messages may wait for a connection's
	// loop; the reader blocks past it, as a slow client would.
	inboxSize = 256
)

// Config is one load run.
type Config struct {
	// URLs are the race servers' websockets (ws://host:port/ws): players
	// and spectators dial them in turn, so with two instances of a
	// cluster half the races have their players on different instances.
	URLs       []string
	Races      int           // races kept running at once (Seats players each)
	Spectators int           // spectator connections, spread over the races
	Duration   time.Duration // how long to run, Warmup included
	// Warmup is the start of the run whose moves are played but left out
	// of the latency percentiles: every race starts at once, which a
	// running service never sees, and what follows is the steady state.
	Warmup  time.Duration
	Level   engine.Level // the players' bot level
	Rate    float64      // moves a second per player; 0 means DefaultRate
	Variant string       // the quick-play variant; "" means classic
	Seed    uint64       // seeds the bots
	// Flooders are extra connections that each send FloodRate messages a
	// second (pings) regardless of answers, reconnecting whenever the
	// server closes them: the hardening test of one client flooding while
	// the others play. Their figures are reported apart.
	Flooders  int
	FloodRate float64
	// Direct skips the lobby's quick play: pair k's races are made over
	// the HTTP API of URLs[k % len] and its players 2k and 2k+1 join them
	// by id, on URLs[2k % len] and URLs[(2k+1) % len]. With
	// two instances of a cluster every race then has a player on each
	// (quick play pairs players of one instance only).
	Direct bool
	// LocalShare, with Direct and several URLs, is the share (0 to 1) of
	// the races whose two players both dial their race's own URL, as
	// players who happen to land on one instance do: the same run then
	// measures the move→opponent latency on one instance and across
	// instances side by side, under the same load.
	LocalShare float64
	// Away, with Direct and several URLs, seats both players of each race
	// not among LocalShare on the URL after their race's own: the race
	// runs on one instance and both its players are on another.
	Away bool
	// Seats is the racers of each race, 2 (0 means 2) to 10. Races of
	// more are made over the API, as Direct makes them: quick play pairs
	// two.
	Seats int
	// Arena, when set, is an arena's id or name (one running or starting
	// soon): the 2×Races players join it instead of quick play, and the
	// spectators watch its leaderboard instead of races (arena.go).
	Arena string
}

// playerURL is the index in URLs that player i (the i%Seats-th of race
// i/Seats) dials.
func (cfg Config) playerURL(i int) int {
	n := len(cfg.URLs)
	k := i / cfg.seats()
	switch {
	case cfg.local(k):
		return k % n // the URL the race was made on
	case cfg.Away && cfg.Direct:
		return (k + 1) % n
	}
	return i % n
}

// seats is Seats, 0 read as 2.
func (cfg Config) seats() int {
	if cfg.Seats == 0 {
		return 2
	}
	return cfg.Seats
}

// local reports whether race k's players both dial its URL: LocalShare of
// the races, spread evenly, and in whole rounds of the URLs so that every
// instance gets its share of them.
func (cfg Config) local(k int) bool {
	if !cfg.Direct || cfg.LocalShare <= 0 {
		return false
	}
	j := float64(k / len(cfg.URLs))
	return math.Floor((j+1)*cfg.LocalShare) > math.Floor(j*cfg.LocalShare)
}

// Report is what a run measured.
type Report struct {
	URLs       []string `json:"urls"`
	Races      int      `json:"races"`
	Seats      int      `json:"seats"`
	Spectators int      `json:"spectators"`
	Seconds    float64  `json:"seconds"`
	// WarmupSeconds is Config.Warmup: moves sent before it are not in the
	// percentiles (they are in Moves).
	WarmupSeconds float64   `json:"warmupSeconds,omitempty"`
	Connections   int64     `json:"connections"` // websockets opened
	RacesStarted  int64     `json:"racesStarted"`
	RacesFinished int64     `json:"racesFinished"`
	RacesAborted  int64     `json:"racesAborted"`
	Moves         int64     `json:"moves"` // accepted moves
	MovesPerSec   float64   `json:"movesPerSec"`
	OwnReply      Quantiles `json:"moveToOwnReply"`
	OpponentSeen  Quantiles `json:"moveToOpponentUpdate"`
	// OpponentCross is OpponentSeen for the races whose two players
	// dialled different URLs (instances), and OpponentLocal for those
	// whose players dialled the same one; both absent with one URL.
	OpponentCross *Quantiles       `json:"moveToOpponentUpdateAcrossInstances,omitempty"`
	OpponentLocal *Quantiles       `json:"moveToOpponentUpdateOnOneInstance,omitempty"`
	BoardUpdates  int64            `json:"boardUpdates"` // board messages spectators got
	Errors        map[string]int64 `json:"errorsByCode"` // error codes the server sent, and client-side failures
	// LateMoves are moves the server refused with race-over because the
	// race ended while they were on their way: not errors.
	LateMoves int64 `json:"lateMoves"`
	Dropped   int64 `json:"droppedConnections"`
	// Flood is what the flooders did, when there were any.
	Flood *FloodReport `json:"flood,omitempty"`
	// Arena is what an arena run measured of its arena.
	Arena *ArenaReport `json:"arena,omitempty"`
}

// FloodReport is what the flooding connections sent and how they ended.
type FloodReport struct {
	Clients     int              `json:"clients"`
	Sent        int64            `json:"messagesSent"`
	SentPerSec  float64          `json:"messagesPerSec"`
	Connections int64            `json:"connections"` // websockets the flooders opened
	Ends        map[string]int64 `json:"endsByCode"`  // how the server ended them: closed-1008 is the rate limit
}

// run is the shared state of one load run.
type run struct {
	cfg   Config
	start time.Time
	// from is when the measured part starts (start plus the warm-up):
	// the latencies of what was sent before it are not recorded.
	from time.Time

	own, opp, oppCross, oppLocal *latency
	errs                         counters
	// nextURL hands out Config.URLs in turn.
	nextURL atomic.Int64
	// The flooders' own figures, kept out of the players'.
	floodSent, floodConns atomic.Int64
	floodEnds             counters

	conns, started, finished, aborted, moves, boards, dropped, late atomic.Int64

	racesMu sync.Mutex
	races   map[string]*raceTrack
	// live feeds race ids to spectators: each new race is offered to
	// perRace of them.
	live    chan string
	perRace int
	// arena is an arena run's arena and measures; nil otherwise.
	arena *arenaRun
}

// raceTrack ties the players of one race together, so that the
// move→opponent latency can be measured: the mover notes when it sent its
// n-th move, each other racer looks it up when the counts say n moves.
type raceTrack struct {
	mu   sync.Mutex
	sent []map[int]sentMove // by seat
	refs int
	// url is the URL index each seat's player dialled (-1: not yet).
	url []int
}

// sentMove is when a move was sent, and how many racers have still to
// see it.
type sentMove struct {
	at     time.Time
	unseen int
}

func (r *run) track(id string) *raceTrack {
	r.racesMu.Lock()
	defer r.racesMu.Unlock()
	t := r.races[id]
	if t == nil {
		t = &raceTrack{sent: make([]map[int]sentMove, r.cfg.Seats), url: make([]int, r.cfg.Seats)}
		for s := range t.sent {
			t.sent[s], t.url[s] = map[int]sentMove{}, -1
		}
		r.races[id] = t
	}
	t.refs++
	return t
}

func (r *run) untrack(id string) {
	r.racesMu.Lock()
	defer r.racesMu.Unlock()
	if t := r.races[id]; t != nil {
		t.refs--
		if t.refs <= 0 {
			delete(r.races, id)
		}
	}
}

// pendingWindow is how many of a seat's recent sends are kept for the
// opponent's lookup: one move is in flight at a time, so a few suffice.
const pendingWindow = 8

func (t *raceTrack) sentMove(seat, n int, at time.Time) {
	t.mu.Lock()
	t.sent[seat][n] = sentMove{at: at, unseen: len(t.sent) - 1}
	delete(t.sent[seat], n-pendingWindow)
	t.mu.Unlock()
}

// joined notes which URL the player in seat dialled.
func (t *raceTrack) joined(seat, url int) {
	t.mu.Lock()
	t.url[seat] = url
	t.mu.Unlock()
}

// placement is where a mover and a racer who sees the move are.
type placement int

const (
	placementUnknown placement = iota // a player has not joined yet
	placementOne                      // both on one URL (instance)
	placementAcross                   // on different URLs
)

// seen looks up, for the racer in seat by, when seat sent its n-th move,
// and where the two are.
func (t *raceTrack) seen(seat, by, n int) (at time.Time, where placement, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if seat < 0 || seat >= len(t.sent) || by < 0 || by >= len(t.url) {
		return at, placementUnknown, false
	}
	m, ok := t.sent[seat][n]
	if ok {
		if m.unseen--; m.unseen <= 0 {
			delete(t.sent[seat], n)
		} else {
			t.sent[seat][n] = m
		}
	}
	switch {
	case t.url[seat] < 0 || t.url[by] < 0:
		where = placementUnknown
	case t.url[seat] == t.url[by]:
		where = placementOne
	default:
		where = placementAcross
	}
	return m.at, where, ok
}

// Progress is a snapshot for a progress line.
type Progress struct {
	Elapsed       time.Duration
	Connections   int64
	RacesStarted  int64
	RacesFinished int64
	Moves         int64
	Errors        int64
	Dropped       int64
}

// Run runs the load until cfg.Duration is up or ctx is done, calling
// progress (if not nil) about once a second, and reports.
func Run(ctx context.Context, cfg Config, progress func(Progress)) (Report, error) {
	if cfg.Races < 1 || len(cfg.URLs) == 0 {
		return Report{}, errors.New("loadtest: at least one race and one URL")
	}
	if cfg.Warmup < 0 || cfg.Warmup >= cfg.Duration {
		return Report{}, errors.New("loadtest: the warm-up must be shorter than the run")
	}
	if cfg.LocalShare < 0 || cfg.LocalShare > 1 || (cfg.LocalShare > 0 && !cfg.Direct) {
		return Report{}, errors.New("loadtest: the local share is from 0 to 1, and needs direct races")
	}
	if cfg.Away && (!cfg.Direct || len(cfg.URLs) < 2) {
		return Report{}, errors.New("loadtest: players away from their races need direct races and two URLs or more")
	}
	if cfg.Rate <= 0 {
		cfg.Rate = DefaultRate
	}
	if cfg.Variant == "" {
		cfg.Variant = "classic"
	}
	cfg.Seats = cfg.seats()
	if cfg.Seats < 2 || cfg.Seats > 10 {
		return Report{}, errors.New("loadtest: races have 2 to 10 seats")
	}
	if cfg.Seats > 2 {
		cfg.Direct = true // quick play pairs two
	}
	if cfg.Arena != "" && (cfg.Direct || cfg.Seats != 2) {
		return Report{}, errors.New("loadtest: an arena pairs its players two by two: no --direct, no --seats")
	}
	r := &run{
		cfg: cfg, start: time.Now(), from: time.Now().Add(cfg.Warmup), own: newLatency(), opp: newLatency(),
		oppCross: newLatency(), oppLocal: newLatency(),
		races: make(map[string]*raceTrack), live: make(chan string, max(cfg.Spectators, 1)),
	}
	r.perRace = (cfg.Spectators + cfg.Races - 1) / cfg.Races
	if cfg.Arena != "" {
		id, err := resolveArena(ctx, cfg.URLs[0], cfg.Arena)
		if err != nil {
			return Report{}, fmt.Errorf("loadtest: %w", err)
		}
		r.arena = newArenaRun(id)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	sem := make(chan struct{}, dialConcurrency)
	var wg sync.WaitGroup
	pairs := make([]*pairing, cfg.Races)
	if cfg.Direct {
		for k := range pairs {
			pairs[k] = newPairing(cfg.Seats)
			wg.Go(func() { r.pairer(ctx, pairs[k], r.cfg.URLs[k%len(r.cfg.URLs)]) })
		}
	}
	for i := range cfg.Seats * cfg.Races {
		wg.Go(func() { r.player(ctx, sem, cfg.playerURL(i), cfg.Seed+uint64(i), pairs[i/cfg.Seats], i%cfg.Seats) })
	}
	for range cfg.Spectators {
		if r.arena != nil {
			wg.Go(func() { r.arenaWatcher(ctx, sem) })
			continue
		}
		wg.Go(func() { r.spectator(ctx, sem) })
	}
	for range cfg.Flooders {
		wg.Go(func() { r.flooder(ctx) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
loop:
	for {
		select {
		case <-done:
			break loop
		case <-tick.C:
			if progress != nil {
				progress(r.progress())
			}
		}
	}
	elapsed := time.Since(r.start)
	rep := Report{
		URLs: cfg.URLs, Races: cfg.Races, Seats: cfg.Seats, Spectators: cfg.Spectators, Seconds: elapsed.Seconds(), WarmupSeconds: cfg.Warmup.Seconds(),
		Connections: r.conns.Load(), RacesStarted: r.started.Load(), RacesFinished: r.finished.Load(),
		RacesAborted: r.aborted.Load(), Moves: r.moves.Load(),
		OwnReply: r.own.quantiles(), OpponentSeen: r.opp.quantiles(),
		BoardUpdates: r.boards.Load(), Errors: r.errs.snapshot(), Dropped: r.dropped.Load(),
		LateMoves: r.late.Load(),
	}
	rep.MovesPerSec = float64(rep.Moves) / elapsed.Seconds()
	if cfg.Flooders > 0 {
		rep.Flood = &FloodReport{
			Clients: cfg.Flooders, Sent: r.floodSent.Load(), Connections: r.floodConns.Load(),
			Ends: r.floodEnds.snapshot(),
		}
		rep.Flood.SentPerSec = float64(rep.Flood.Sent) / elapsed.Seconds()
		if rep.Flood.Ends == nil {
			rep.Flood.Ends = map[string]int64{}
		}
	}
	if len(cfg.URLs) > 1 {
		cross, local := r.oppCross.quantiles(), r.oppLocal.quantiles()
		rep.OpponentCross, rep.OpponentLocal = &cross, &local
	}
	if rep.Errors == nil {
		rep.Errors = map[string]int64{}
	}
	if r.arena != nil {
		rep.Arena = r.arena.report(cfg.Seats*cfg.Races, cfg.Spectators, elapsed)
	}
	return rep, nil
}

func (r *run) progress() Progress {
	var errs int64
	for _, n := range r.errs.snapshot() {
		errs += n
	}
	return Progress{
		Elapsed: time.Since(r.start), Connections: r.conns.Load(),
		RacesStarted: r.started.Load(), RacesFinished: r.finished.Load(),
		Moves: r.moves.Load(), Errors: errs, Dropped: r.dropped.Load(),
	}
}

// wsConn is one client websocket: a reader goroutine feeding inbox, and
// the caller writing.
type wsConn struct {
	ws    *websocket.Conn
	inbox chan inMsg
	rerr  chan error // the reader's end: nil when we closed it
}

func (r *run) dial(ctx context.Context, sem chan struct{}, url string) (*wsConn, error) {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	d := websocket.Dialer{HandshakeTimeout: dialTimeout}
	ws, _, err := d.DialContext(ctx, url, nil)
	<-sem
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	r.conns.Add(1)
	c := &wsConn{ws: ws, inbox: make(chan inMsg, inboxSize), rerr: make(chan error, 1)}
	go c.read(ctx)
	return c, nil
}

func (c *wsConn) read(ctx context.Context) {
	defer close(c.inbox)
	var buf bytes.Buffer // reused: decode keeps nothing of the bytes
	for {
		_, rd, err := c.ws.NextReader()
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(rd)
		}
		if err != nil {
			if ctx.Err() != nil {
				err = nil
			}
			c.rerr <- err
			return
		}
		m, err := decode(buf.Bytes())
		if err != nil {
			c.rerr <- err
			return
		}
		select {
		case c.inbox <- m:
		case <-ctx.Done():
			c.rerr <- nil
			return
		}
	}
}

func (c *wsConn) send(m outMsg) error {
	_ = c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := c.ws.WriteJSON(m); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// close says goodbye and closes; the reader then ends.
func (c *wsConn) close() {
	_ = c.ws.WriteControl(websocket.CloseMessage,
		websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	_ = c.ws.Close()
	// Drain what the reader still holds, so it can see the close and end.
	for range c.inbox {
	}
}

// connEnded counts a connection the server or the network ended before the
// run did, by its close code.
func (r *run) connEnded(ctx context.Context, c *wsConn) {
	if ctx.Err() != nil {
		return
	}
	r.dropped.Add(1)
	if err := <-c.rerr; err != nil {
		r.errs.add(closeName(err))
	}
}

func closeName(err error) string {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Sprintf("closed-%d", ce.Code)
	}
	var de *decodeError
	if errors.As(err, &de) {
		return "client-bad-message"
	}
	return "read-failed"
}

// player is one bot player: hello, quick play, join, play; again until
// the run ends.
func (r *run) player(ctx context.Context, sem chan struct{}, url int, seed uint64, pair *pairing, pairIdx int) {
	c, err := r.dial(ctx, sem, r.cfg.URLs[url])
	if err != nil {
		if ctx.Err() == nil {
			r.errs.add("dial-failed")
		}
		return
	}
	defer c.close()
	p := &player{run: r, c: c, url: url, pair: pair, pairIdx: pairIdx, bot: engine.NewBot(r.cfg.Level, seed), rng: rand.New(rand.NewPCG(seed, 0x10ad))}
	err = p.play(ctx)
	switch {
	case ctx.Err() != nil:
	case errors.Is(err, errConnEnded):
		r.connEnded(ctx, c)
	case err != nil:
		r.errs.add("client-write")
	}
}

// floodTick is how often a flooder sends its batch: 10,000 messages a
// second go as 100 every 10 ms, not one timer per message.
const floodTick = 10 * time.Millisecond

// floodPing is what a flooder sends: a valid message, so that the server's
// rate limit, not its decoder, is what stops it.
var floodPing = []byte(`{"v":1,"type":"ping","id":"f"}`)

// flooder sends FloodRate messages a second on a connection until the
// server closes it, then reconnects, until the run ends.
func (r *run) flooder(ctx context.Context) {
	per := max(1, int(r.cfg.FloodRate*floodTick.Seconds()))
	tick := time.NewTicker(floodTick)
	defer tick.Stop()
	sem := make(chan struct{}, 1) // its own: the players' ramp-up does not wait for it
	for ctx.Err() == nil {
		c, err := r.dial(ctx, sem, r.cfg.URLs[0])
		if err != nil {
			if ctx.Err() == nil {
				r.floodEnds.add("dial-failed")
				time.Sleep(floodTick)
			}
			continue
		}
		r.conns.Add(-1) // counted apart from the players'
		r.floodConns.Add(1)
		r.flood(ctx, c, tick.C, per)
		c.close()
		if ctx.Err() == nil {
			if err := <-c.rerr; err != nil {
				r.floodEnds.add(closeName(err))
			} else {
				r.floodEnds.add("write-failed")
			}
		}
	}
}

// flood sends per messages each tick on c until c ends or the run does.
func (r *run) flood(ctx context.Context, c *wsConn, tick <-chan time.Time, per int) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-c.inbox: // the server's answers: pongs, rate-limited errors
			if !ok {
				return
			}
		case <-tick:
			for range per {
				_ = c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
				if err := c.ws.WriteMessage(websocket.TextMessage, floodPing); err != nil {
					return
				}
				r.floodSent.Add(1)
			}
		}
	}
}

// pairing hands the players of a Direct run's race their races: each gets
// the id on its next channel, and says done when its race is over.
type pairing struct {
	next []chan string
	done chan struct{}
}

// newPairing is the pairing of a race of seats players.
func newPairing(seats int) *pairing {
	p := &pairing{next: make([]chan string, seats), done: make(chan struct{}, seats)}
	for i := range p.next {
		p.next[i] = make(chan string, 1)
	}
	return p
}

// createTimeout bounds one POST /api/races.
const createTimeout = 10 * time.Second

// pairer makes races for a pair over the API of the instance at url (the
// pairs take the URLs in turn, so that each instance runs its share of
// the races), one after the other, until the run ends.
func (r *run) pairer(ctx context.Context, pair *pairing, url string) {
	base := "http" + strings.TrimPrefix(url, "ws")
	base = strings.TrimSuffix(base, "/ws")
	client := &http.Client{Timeout: createTimeout}
	for ctx.Err() == nil {
		id, err := createRace(ctx, client, base, r.cfg.Variant, r.cfg.Seats)
		if err != nil {
			if ctx.Err() == nil {
				r.errs.add("create-failed")
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
				}
			}
			continue
		}
		r.started.Add(1)
		for range r.perRace { // offer the race to spectators; none waiting is fine
			select {
			case r.live <- id:
			default:
			}
		}
		for i := range pair.next {
			pair.next[i] <- id // buffered, and emptied before done comes
		}
		for range pair.next {
			select {
			case <-pair.done:
			case <-ctx.Done():
				return
			}
		}
	}
}

// createRace makes a private race over the HTTP API and returns its id.
func createRace(ctx context.Context, client *http.Client, base, variant string, seats int) (string, error) {
	body := fmt.Sprintf(`{"variant":%q,"seats":%d}`, variant, seats)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/races", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var out struct {
		Race string `json:"race"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated || out.Race == "" {
		return "", fmt.Errorf("create race: status %d, %v", res.StatusCode, err)
	}
	return out.Race, nil
}
