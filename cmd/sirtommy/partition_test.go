package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/redisrace/redistest"
)

// PartitionsEnv names the environment variable that runs every partition
// scenario (SIRTOMMY_PARTITIONS=all); without it only the default ones
// run, to keep the suite's time (docs/testing.md).
const PartitionsEnv = "SIRTOMMY_PARTITIONS"

// Partition test timing. None is asserted on: they pace the players and
// bound the waits.
const (
	// partitionPace is the pause between an active player's moves: a
	// game of the test deal (52 moves) lasts about 8 s, through the fault.
	partitionPace = 150 * time.Millisecond
	// idlePace is the pause between the moves of a player who plays its
	// whole game before the fault (under the message budget).
	idlePace = 60 * time.Millisecond
	// retryPause is the pause before a refused move is sent again.
	retryPause = 100 * time.Millisecond
	// partitionAnswer bounds the wait for a move's answer before it is
	// sent again with the same id.
	partitionAnswer = 15 * time.Second
	// partitionEnd bounds a scenario's play after the fault heals.
	partitionEnd = 60 * time.Second
	// strandedAfter is how long after every race's result is stored a
	// connection that has no final state yet is counted as stranded.
	strandedAfter = 20 * time.Second
	// movesBeforeFault is how many moves each active player makes before
	// the fault.
	movesBeforeFault = 4
)

// partitionArgs are the flags of every server of the partition tests
// (one place for what each Redis-mode server needs).
func partitionArgs(redisURL, database string) []string {
	return []string{"--redis", redisURL, "--database", database, "--secret", testSecret, "--api-races-per-minute", "0", "--log-format", "json"}
}

// fault is what a scenario does to instance A's Redis connections: it
// returns once the network is healed.
type fault func(p faults)

// partitionScenario is one run: its fault, and whether it runs by
// default.
type partitionScenario struct {
	name      string
	fault     fault
	byDefault bool
	// onClusterByDefault runs it by default on a Redis Cluster too.
	onClusterByDefault bool
}

// blackhole holds every byte for d, then heals: heal closes the
// connections (what was held is lost) or, with deliver, passes the held
// bytes on late.
func blackhole(d time.Duration, deliver bool) fault {
	return func(p faults) {
		p.hold()
		time.Sleep(d)
		if !deliver {
			p.closeAll()
		}
		p.release()
	}
}

// reset closes every connection and refuses new ones for d.
func reset(d time.Duration) fault {
	return func(p faults) {
		p.refuse()
		time.Sleep(d)
		p.allow()
	}
}

// slow adds latency d to every chunk for span.
func slow(d, span time.Duration) fault {
	return func(p faults) {
		p.latency(d)
		time.Sleep(span)
		p.latency(0)
	}
}

// partitionScenarios are the faults (#30): the default ones
// cover the three failures it reports (spectators stranded after a
// takeover while A's pub/sub is down, a live owner taken over on a short
// reset, takeovers of finished races, which every run shows).
var partitionScenarios = []partitionScenario{
	{name: "blackhole 8s heal by close", fault: blackhole(8*time.Second, false), byDefault: true, onClusterByDefault: true},
	{name: "reset 0.5s", fault: reset(500 * time.Millisecond), byDefault: true},
	{name: "blackhole 8s held bytes delivered", fault: blackhole(8*time.Second, true)},
	{name: "blackhole 1.5s held bytes delivered", fault: blackhole(1500*time.Millisecond, true)},
	{name: "reset 5s", fault: reset(5 * time.Second)},
	{name: "latency 200ms for 10s", fault: slow(200*time.Millisecond, 10*time.Second)},
}

// TestRedisPartitionNobodyStranded runs races across two server
// processes on one Redis, instance A through a proxy that cuts it off
// (a blackhole past the lease, a reset, latency), instance B direct.
// Each race has players and spectators on both instances, some players
// idle (their own game over before the fault). Every message every
// connection receives is recorded, and checked: no acknowledged move
// lost or duplicated, every observer's feed in order and in agreement
// with the log, nothing after the end, every connection (idle players
// and spectators included) given the final state; and, from Redis's own
// MONITOR, no lease taken from a live owner and none of a finished race.
func TestRedisPartitionNobodyStranded(t *testing.T) {
	runPartitions(t, func(sc partitionScenario) bool { return sc.byDefault }, oneRedis)
}

// TestRedisClusterPartitionNobodyStranded is TestRedisPartitionNobodyStranded
// on a real three-node Redis Cluster: each node announces a proxy's port,
// through which both servers reach it, and the proxies cut off instance
// A's connections alone (known by the client name A sends): the 8 s
// blackhole by default, every scenario with SIRTOMMY_PARTITIONS=all.
func TestRedisClusterPartitionNobodyStranded(t *testing.T) {
	runPartitions(t, func(sc partitionScenario) bool { return sc.onClusterByDefault }, redisCluster)
}

// runPartitions runs the scenarios byDefault picks (every one with
// SIRTOMMY_PARTITIONS=all), each on a new network of network's.
func runPartitions(t *testing.T, byDefault func(partitionScenario) bool, network func(*testing.T) partitionNet) {
	all := os.Getenv(PartitionsEnv) == "all"
	bin := buildBinary(t)
	for _, sc := range partitionScenarios {
		if !byDefault(sc) && !all {
			t.Logf("scenario %q runs with %s=all", sc.name, PartitionsEnv)
			continue
		}
		t.Run(strings.ReplaceAll(sc.name, " ", "_"), func(t *testing.T) { runPartition(t, bin, sc, network(t)) })
	}
}

// partitionNet is how a scenario's two servers reach Redis: A's --redis,
// through what cuts it off, B's, and the lease watches of every node.
type partitionNet struct {
	urlA, urlB string
	cut        faults
	leases     []*leaseWatch
}

// oneRedis is one Redis, A through a proxy.
func oneRedis(t *testing.T) partitionNet {
	rds := redistest.Start(t, redistest.Options{})
	proxy := startFaultProxy(t, rds.Addr())
	return partitionNet{urlA: "redis://" + proxy.addr() + "/0", urlB: rds.URL(), cut: proxy,
		leases: []*leaseWatch{watchLeases(t, rds.Addr())}}
}

// cutClient is the client name instance A gives its Redis connections on
// a cluster, by which the proxies know them.
const cutClient = "sirtommy-partitioned-a"

// redisCluster is a Redis Cluster of three nodes, each announcing the
// port of a proxy in front of it that cuts off A's connections alone.
func redisCluster(t *testing.T) partitionNet {
	cl := redistest.StartCluster(t)
	var group proxyGroup
	var n partitionNet
	var clients []*redis.Client
	for _, node := range cl.Nodes {
		p := startFaultProxyFor(t, node.Addr(), cutClient)
		group = append(group, p)
		_, port, _ := net.SplitHostPort(p.addr())
		c := node.Client(t)
		if err := c.ConfigSet(context.Background(), "cluster-announce-port", port).Err(); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		n.leases = append(n.leases, watchLeases(t, node.Addr()))
	}
	// Wait until every node gives the proxies as the cluster's nodes.
	deadline := time.Now().Add(safetyTimeout)
	for i, node := range cl.Nodes {
		for {
			shards, err := clients[i].ClusterShards(context.Background()).Result()
			if err == nil && shardsThrough(shards, group) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s does not announce the proxies: %v %v", node.Addr(), shards, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	n.urlA = "redis://" + group[0].addr() + "?addr=" + group[1].addr() + "&addr=" + group[2].addr() + "&client_name=" + cutClient
	n.urlB, n.cut = cl.URL(), group
	return n
}

// shardsThrough reports whether every node in shards is one of the
// proxies (all of them on the loopback).
func shardsThrough(shards []redis.ClusterShard, group proxyGroup) bool {
	if len(shards) == 0 {
		return false
	}
	for _, sh := range shards {
		for _, nd := range sh.Nodes {
			port := strconv.FormatInt(nd.Port, 10)
			if !slices.ContainsFunc(group, func(p *faultProxy) bool { return strings.HasSuffix(p.addr(), ":"+port) }) {
				return false
			}
		}
	}
	return true
}

// seatPlan is how one seat of a race is played.
type seatPlan struct {
	onA  bool
	idle bool // plays its whole game before the fault, then sends nothing
}

// racePlan is one race of a scenario.
type racePlan struct {
	ownerA    bool
	seats     [2]seatPlan
	watchersA int
	watchersB int
}

// partitionPlans are a scenario's races: owned by A (the instance cut
// off) or by B, players and spectators on both, idle players on both.
var partitionPlans = []racePlan{
	{ownerA: true, seats: [2]seatPlan{{onA: true}, {}}, watchersA: 1, watchersB: 1},
	{ownerA: true, seats: [2]seatPlan{{onA: true}, {}}, watchersA: 1, watchersB: 1},
	{ownerA: true, seats: [2]seatPlan{{onA: true, idle: true}, {}}, watchersA: 1, watchersB: 1},
	{ownerA: true, seats: [2]seatPlan{{onA: true}, {idle: true}}, watchersA: 1},
	{ownerA: true, seats: [2]seatPlan{{}, {}}, watchersA: 2},
	{ownerA: true, seats: [2]seatPlan{{}, {idle: true}}, watchersA: 1},
	{seats: [2]seatPlan{{onA: true}, {}}, watchersA: 1, watchersB: 1},
	{seats: [2]seatPlan{{onA: true, idle: true}, {}}, watchersA: 1},
}

// pRace is one race of a scenario, as the test follows it.
type pRace struct {
	plan    racePlan
	id      string
	players [2]*observer
	games   [2]engine.Game
	tokens  [2]string
	acks    [2][]acked
	ackIDs  [2]map[string]bool
	// unanswered lists each seat's moves that got no answer within
	// partitionAnswer and were sent again: a player should get one.
	unanswered [2][]string
	watch      []*observer
}

// observers are every connection of the race.
func (r *pRace) observers() []*observer {
	return append([]*observer{r.players[0], r.players[1]}, r.watch...)
}

// observer is one websocket whose every message is recorded.
type observer struct {
	name string
	ws   *websocket.Conn

	wmu sync.Mutex // writes

	mu     sync.Mutex
	seen   []seenMsg
	signal chan struct{}
	closed bool
	// resyncs counts a spectator's watch sent again on a gap in the
	// versions, as the browser client does.
	resyncs int
	feed    feedCheck
}

// seenMsg is one message and when it arrived.
type seenMsg struct {
	at time.Time
	m  msg
}

// observe dials base's websocket and records what arrives.
func observe(t *testing.T, base, name string, spectator bool) *observer {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	o := &observer{name: name, ws: ws, signal: make(chan struct{}, 1)}
	o.feed.spectator = spectator
	t.Cleanup(func() { _ = ws.Close() })
	go func() {
		for {
			var m msg
			if err := ws.ReadJSON(&m); err != nil {
				o.mu.Lock()
				o.closed = true
				o.mu.Unlock()
				o.wake()
				return
			}
			o.mu.Lock()
			o.seen = append(o.seen, seenMsg{time.Now(), m})
			resync := o.feed.spectator && o.feed.needsResync(m)
			if resync {
				o.resyncs++
			}
			o.mu.Unlock()
			if resync {
				_ = o.send(map[string]any{"type": "watch", "race": m.str("race")})
			}
			o.wake()
		}
	}()
	return o
}

func (o *observer) wake() {
	select {
	case o.signal <- struct{}{}:
	default:
	}
}

func (o *observer) send(m map[string]any) error {
	m["v"] = 1
	o.wmu.Lock()
	defer o.wmu.Unlock()
	return o.ws.WriteJSON(m)
}

// await returns the first message from index from on that ok accepts,
// and the index after it; it fails after d.
func (o *observer) await(from int, d time.Duration, ok func(msg) bool) (msg, int, error) {
	deadline := time.After(d)
	for {
		o.mu.Lock()
		for i := from; i < len(o.seen); i++ {
			if ok(o.seen[i].m) {
				m := o.seen[i].m
				o.mu.Unlock()
				return m, i + 1, nil
			}
		}
		from = len(o.seen)
		closed := o.closed
		o.mu.Unlock()
		if closed {
			return nil, from, fmt.Errorf("%s: connection closed", o.name)
		}
		select {
		case <-o.signal:
		case <-deadline:
			return nil, from, fmt.Errorf("%s: nothing in %v", o.name, d)
		}
	}
}

// mark is the index of the next message.
func (o *observer) mark() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.seen)
}

// messages is a copy of what the observer received.
func (o *observer) messages() []seenMsg {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]seenMsg(nil), o.seen...)
}

// feedCheck follows a spectator's versions as the browser client does
// (web/PROTOCOL.md, "The spectators' feed"), to send watch again on a gap.
type feedCheck struct {
	spectator bool
	ver       float64
	waiting   bool // a watch was sent again: ignore all but a state
}

// needsResync takes one message; it reports whether the client would
// send watch again now.
func (f *feedCheck) needsResync(m msg) bool {
	v, ok := m["ver"].(float64)
	if !ok {
		return false
	}
	switch {
	case v <= f.ver:
		return false
	case m.str("type") == "state":
		f.ver, f.waiting = v, false
		return false
	case f.waiting:
		return false
	case v == f.ver+1:
		f.ver = v
		return false
	}
	f.waiting = true
	return true
}

// runPartition plays one scenario and checks it.
func runPartition(t *testing.T, bin string, sc partitionScenario, n partitionNet) {
	pg := fleetDatabase(t)
	a, procA, logA := startProcessLogged(t, bin, "info", partitionArgs(n.urlA, pg)...)
	b, procB, logB := startProcessLogged(t, bin, "info", partitionArgs(n.urlB, pg)...)
	defer func() {
		if t.Failed() {
			t.Logf("a's takeover and lease log:\n%s\nb's:\n%s", fleetLog(logA.String()), fleetLog(logB.String()))
		}
	}()
	races := seatPartitionRaces(t, a, b)

	// Play: the idle players play their games out, the others move at
	// their pace until the end, sending a refused move again.
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(races))
	progress := make(chan struct{}, 2*len(races))
	for _, r := range races {
		for s := range 2 {
			wg.Go(func() {
				if err := r.play(s, progress); err != nil {
					errs <- fmt.Errorf("race %s seat %d: %w", r.id, s, err)
				}
			})
		}
	}
	for range 2 * len(races) { // every player under way (idle ones done)
		select {
		case <-progress:
		case <-time.After(partitionEnd):
			t.Fatal("the players did not get under way")
		}
	}
	sc.fault(n.cut)
	if n.cut.touched() == 0 {
		t.Fatal("the fault touched none of A's connections to Redis")
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(partitionEnd):
		// Stuck players are most often stuck goroutines: the stacks of both
		// instances say where.
		t.Logf("a's goroutines:\n%s\nb's:\n%s", goroutineDump(procA, logA), goroutineDump(procB, logB))
		t.Fatal("the players did not finish")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	infos := make(map[string]race.Info)
	for _, r := range races {
		infos[r.id] = raceInfo(t, b, r.id)
	}
	// Every connection gets the final state: wait for all of them, up to
	// a bound past which the others are stranded.
	deadline := time.Now().Add(strandedAfter)
	for _, r := range races {
		for _, o := range r.observers() {
			if _, _, err := o.await(0, time.Until(deadline), func(m msg) bool { return m.str("type") == "state" && m["result"] != nil }); err != nil {
				break
			}
		}
	}
	rep := checkPartition(races, infos)
	leaveAll(t, races, a, b)
	var takeovers int
	var live, finished []string
	for _, w := range n.leases {
		tk, l, f := w.counts()
		takeovers, live, finished = takeovers+tk, append(live, l...), append(finished, f...)
	}
	for _, l := range live {
		t.Errorf("takeover of a live owner: %s", l)
	}
	for _, l := range finished {
		t.Errorf("takeover of a finished race: %s", l)
	}
	for _, p := range rep.problems {
		t.Error(p)
	}
	var unanswered []string // their races
	for _, r := range races {
		for s := range 2 {
			for _, u := range r.unanswered[s] {
				t.Logf("race %s: move %s unanswered within %v, sent again", r.id, u, partitionAnswer)
				unanswered = append(unanswered, r.id)
			}
		}
	}
	t.Logf("%d moves unanswered within %v", len(unanswered), partitionAnswer)
	if len(unanswered) > 0 && !t.Failed() { // a failure logs the fleet's log already
		t.Logf("a's fleet log and the lines of those races:\n%s\nb's:\n%s", fleetLog(logA.String(), unanswered...), fleetLog(logB.String(), unanswered...))
	}
	t.Logf("%s: %d races, %d connections, %d observations, %d acknowledged moves; %d takeovers (%d of a live owner, %d of a finished race); %d connections stranded (%d spectators, %d idle players); %d lost, %d duplicated, %d disagreeing, %d out of order, %d after the end; %d resyncs on a gap; b logged %d takeovers, a %d",
		sc.name, len(races), rep.conns, rep.observations, rep.acks, takeovers, len(live), len(finished),
		rep.stranded, rep.strandedSpectators, rep.strandedIdle, rep.lost, rep.duplicated, rep.disagreeing, rep.outOfOrder, rep.afterEnd, rep.resyncs,
		strings.Count(logB.String(), `"race taken over"`), strings.Count(logA.String(), `"race taken over"`))
}

// goroutineDump ends proc with SIGQUIT, and returns the stacks of its
// goroutines that the Go runtime then writes to its log.
func goroutineDump(proc *os.Process, log *syncBuffer) string {
	from := len(log.String())
	if err := proc.Signal(syscall.SIGQUIT); err != nil {
		return fmt.Sprintf("no dump: %v", err)
	}
	state, _ := proc.Wait()
	// The log is copied from the process's stderr on a goroutine of
	// exec's: wait until it stops growing.
	for n, still := 0, 0; still < 3 && n < 50; n++ {
		l := len(log.String())
		time.Sleep(100 * time.Millisecond)
		if len(log.String()) == l {
			still++
		} else {
			still = 0
		}
	}
	out := log.String()[from:]
	if i := strings.Index(out, "goroutine "); i >= 0 {
		out = out[i:]
	}
	return fmt.Sprintf("%s(%v)", out, state)
}

// fleetLog is the lines of a server's log about leases, takeovers,
// re-attachments and the frames between instances, and those that name
// one of races.
func fleetLog(log string, races ...string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		for _, w := range append([]string{"taken over", "lease", "owner", "not saved", "instance", "attach", "frame", "lapse"}, races...) {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// seatPartitionRaces makes the scenario's races (partitionPlans) on
// their owners, seats their players, has their spectators watch, and
// waits until every race runs.
func seatPartitionRaces(t *testing.T, a, b string) []*pRace {
	t.Helper()
	on := func(onA bool) string {
		if onA {
			return a
		}
		return b
	}
	var races []*pRace
	for i, plan := range partitionPlans {
		r := &pRace{plan: plan, id: createRace(t, on(plan.ownerA))}
		for w := range plan.watchersA + plan.watchersB {
			inst := "A"
			if w >= plan.watchersA {
				inst = "B"
			}
			o := observe(t, on(inst == "A"), fmt.Sprintf("race %d spectator %d on %s", i, w, inst), true)
			if err := o.send(map[string]any{"type": "watch", "race": r.id, "id": "w"}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := o.await(0, safetyTimeout, ofType("watching")); err != nil {
				t.Fatal(err)
			}
			r.watch = append(r.watch, o)
		}
		rules, _ := engine.Variant("")
		for s, sp := range plan.seats {
			inst, how := "B", "active"
			if sp.onA {
				inst = "A"
			}
			if sp.idle {
				how = "idle"
			}
			o := observe(t, on(sp.onA), fmt.Sprintf("race %d player %d on %s (%s)", i, s, inst, how), false)
			name := fmt.Sprint("p", s)
			if err := o.send(map[string]any{"type": "hello", "id": "h", "name": name}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := o.await(0, safetyTimeout, ofType("welcome")); err != nil {
				t.Fatal(err)
			}
			if err := o.send(map[string]any{"type": "join", "race": r.id, "name": name}); err != nil {
				t.Fatal(err)
			}
			j, _, err := o.await(0, safetyTimeout, ofType("joined"))
			if err != nil {
				t.Fatal(err)
			}
			if seat := int(j["seat"].(float64)); seat != s {
				t.Fatalf("race %d: player %d got seat %d", i, s, seat)
			}
			r.players[s], r.tokens[s], r.games[s] = o, j.str("token"), engine.New(rules, testDeal)
			r.ackIDs[s] = make(map[string]bool)
		}
		races = append(races, r)
	}
	for _, r := range races {
		for _, o := range r.players {
			if _, _, err := o.await(0, safetyTimeout, func(m msg) bool { return m.str("type") == "state" && m.str("state") == "running" }); err != nil {
				t.Fatal(err)
			}
		}
	}
	return races
}

// play plays seat s: an idle seat its whole game at once, an active one
// at partitionPace, each move sent again with its id while refused or
// unanswered. It signals progress once the seat is under way (an idle
// seat's game over, an active seat's first moves made).
func (r *pRace) play(s int, progress chan<- struct{}) error {
	o, g := r.players[s], &r.games[s]
	idle := r.plan.seats[s].idle
	pace := partitionPace
	if idle {
		pace = idlePace
	}
	n, signalled := 0, false
	for !g.Status().Over() {
		if !signalled && !idle && n >= movesBeforeFault {
			progress <- struct{}{}
			signalled = true
		}
		m := g.AppendMoves(nil)[0]
		n++
		id := fmt.Sprint("m", n)
		for {
			from, sentAt := o.mark(), time.Now()
			if err := o.send(map[string]any{"type": "move", "id": id, "move": m.String()}); err != nil {
				return err
			}
			a, _, err := o.await(from, partitionAnswer, func(x msg) bool {
				return x.str("id") == id && (x.str("type") == "moved" || x.str("type") == "error") || x.str("code") == "rate-limited"
			})
			if err != nil { // unanswered: sent again with the same id
				r.unanswered[s] = append(r.unanswered[s], fmt.Sprintf("%s (%s) by %s, sent at %s", m, id, o.name, sentAt.Format("15:04:05.000")))
				continue
			}
			if a.str("type") == "moved" {
				if !r.ackIDs[s][id] {
					r.ackIDs[s][id] = true
					seq, _ := a["seq"].(float64)
					r.acks[s] = append(r.acks[s], acked{s, int(seq), a.str("move")})
				}
				break
			}
			switch a.str("code") {
			case "unavailable", "rate-limited":
				time.Sleep(retryPause)
				continue
			case "race-over":
				if !signalled {
					progress <- struct{}{}
				}
				return nil
			}
			return fmt.Errorf("move %s (%s) refused: %v", m, id, a)
		}
		if err := g.Apply(m); err != nil {
			return err
		}
		time.Sleep(pace)
	}
	if !signalled {
		progress <- struct{}{}
	}
	return nil
}

// partitionReport is what checkPartition found.
type partitionReport struct {
	conns, observations, acks                                    int
	stranded, strandedSpectators, strandedIdle                   int
	lost, duplicated, disagreeing, outOfOrder, afterEnd, resyncs int
	problems                                                     []string
}

// problem records one finding, keeping the first few in full.
func (p *partitionReport) problem(count *int, format string, args ...any) {
	*count++
	if len(p.problems) < 40 {
		p.problems = append(p.problems, fmt.Sprintf(format, args...))
	}
}

// checkPartition checks every race's observations against its stored
// log and result (infos, read from instance B).
func checkPartition(races []*pRace, infos map[string]race.Info) *partitionReport {
	rep := &partitionReport{}
	for _, r := range races {
		info := infos[r.id]
		var logged [2][]race.MoveRecord
		seen := make(map[[2]int]bool)
		for _, m := range info.Moves {
			if seen[[2]int{m.Seat, m.Seq}] {
				rep.problem(&rep.duplicated, "race %s: the log holds seat %d's move %d twice", r.id, m.Seat, m.Seq)
			}
			seen[[2]int{m.Seat, m.Seq}] = true
			logged[m.Seat] = append(logged[m.Seat], m)
		}
		stored, _ := json.Marshal(info.Result)
		if info.Result == nil {
			rep.problem(&rep.disagreeing, "race %s: no stored result (state %s)", r.id, info.State)
		} else if info.Result.Reason == race.ReasonForfeit {
			rep.problem(&rep.disagreeing, "race %s: a connected player forfeited: %s", r.id, stored)
		}
		for s := range 2 {
			for i, a := range r.acks[s] {
				if a.seq != i+1 {
					rep.problem(&rep.duplicated, "race %s seat %d: acknowledgement %d has seq %d", r.id, s, i+1, a.seq)
				}
				if a.seq < 1 || a.seq > len(logged[s]) || logged[s][a.seq-1].Move != a.move {
					rep.problem(&rep.lost, "race %s seat %d: acknowledged move %d %s is not in the log", r.id, s, a.seq, a.move)
				}
			}
			rep.acks += len(r.acks[s])
		}
		for _, o := range r.observers() {
			rep.conns++
			msgs := o.messages()
			rep.observations += len(msgs)
			o.mu.Lock()
			rep.resyncs += o.resyncs
			o.mu.Unlock()
			checkObserver(rep, r, o, msgs, logged, stored)
		}
	}
	return rep
}

// checkObserver checks one connection's messages: in order, in agreement
// with the log, the final state (the stored result) received, nothing
// after it.
func checkObserver(rep *partitionReport, r *pRace, o *observer, msgs []seenMsg, logged [2][]race.MoveRecord, stored []byte) {
	var final msg
	var applied [2]int // moves of each seat the observer has applied
	var ver float64
	for _, sm := range msgs {
		m := sm.m
		typ := m.str("type")
		if m.str("race") != "" && m.str("race") != r.id {
			continue
		}
		if final != nil {
			switch {
			case typ == "state" && m["result"] != nil:
				if b, _ := json.Marshal(m["result"]); !sameJSON(b, string(stored)) {
					rep.problem(&rep.disagreeing, "%s: a second final state with another result: %s", o.name, b)
				}
			case typ == "board" || typ == "opponent" || typ == "presence" || typ == "state":
				rep.problem(&rep.afterEnd, "%s: %s after the end", o.name, typ)
			}
			continue
		}
		if o.feed.spectator {
			v, _ := m["ver"].(float64)
			if _, has := m["ver"]; has && v <= ver {
				continue // stale: the client ignores it
			}
			switch typ {
			case "state":
				ver = v
				counts, _ := m["counts"].([]any)
				for s := range min(2, len(counts)) {
					c, _ := counts[s].(map[string]any)
					n, _ := c["moves"].(float64)
					if int(n) < applied[s] {
						rep.problem(&rep.outOfOrder, "%s: a state goes back from seat %d's move %d to %d", o.name, s, applied[s], int(n))
					}
					if int(n) > len(logged[s]) {
						rep.problem(&rep.disagreeing, "%s: a state shows seat %d with %d moves, the log %d", o.name, s, int(n), len(logged[s]))
					}
					applied[s] = int(n)
				}
			case "board":
				if v != ver+1 {
					continue // a gap: the client waits for the fresh state
				}
				ver = v
				s := int(m["seat"].(float64))
				seq := int(m["seq"].(float64))
				if m["reveal"] == true {
					continue
				}
				if seq != applied[s]+1 {
					rep.problem(&rep.outOfOrder, "%s: seat %d's move %d after move %d", o.name, s, seq, applied[s])
				}
				if seq < 1 || seq > len(logged[s]) || !sameMove(m.str("move"), logged[s][seq-1].Move) {
					rep.problem(&rep.disagreeing, "%s: seat %d's move %d %s is not the log's", o.name, s, seq, m.str("move"))
				}
				applied[s] = seq
			default:
				if _, has := m["ver"]; has && v == ver+1 {
					ver = v
				}
			}
		} else if typ == "opponent" {
			c, _ := m["counts"].(map[string]any)
			n, _ := c["moves"].(float64)
			s := int(m["seat"].(float64))
			if int(n) < applied[s] {
				rep.problem(&rep.outOfOrder, "%s: the opponent goes back from move %d to %d", o.name, applied[s], int(n))
			}
			if int(n) > len(logged[s]) {
				rep.problem(&rep.disagreeing, "%s: the opponent has %d moves, the log %d", o.name, int(n), len(logged[s]))
			}
			applied[s] = int(n)
		}
		if typ == "state" && m["result"] != nil {
			final = m
			if b, _ := json.Marshal(m["result"]); !sameJSON(b, string(stored)) {
				rep.problem(&rep.disagreeing, "%s: final result %s, stored %s", o.name, b, stored)
			}
		}
	}
	if final == nil {
		idle := false
		for s, p := range r.players {
			idle = idle || p == o && r.plan.seats[s].idle
		}
		switch {
		case o.feed.spectator:
			rep.strandedSpectators++
		case idle:
			rep.strandedIdle++
		}
		var last []string
		for _, sm := range msgs[max(0, len(msgs)-3):] {
			last = append(last, fmt.Sprintf("%s %s %v", sm.at.Format("15:04:05.000"), sm.m.str("type"), sm.m["ver"]))
		}
		rep.problem(&rep.stranded, "%s (race %s): no final state; last messages %v", o.name, r.id, last)
	}
}

// sameMove reports whether a spectator's board move shows the logged
// move: "??>W1" is a move to W1 whose card is still hidden from them.
func sameMove(shown, logged string) bool {
	if rest, hidden := strings.CutPrefix(shown, "??"); hidden {
		_, to, ok := strings.Cut(logged, ">")
		return ok && rest == ">"+to
	}
	return shown == logged
}

// leaveAll closes every connection of the races and waits until both
// servers have let them go (their seats left, their spectators gone):
// what a server does when a connection leaves a finished race shows in
// the leases.
func leaveAll(t *testing.T, races []*pRace, bases ...string) {
	t.Helper()
	for _, r := range races {
		for _, o := range r.observers() {
			_ = o.ws.Close()
		}
	}
	for _, base := range bases {
		waitFor(t, "the connections to "+base+" gone", func() bool {
			res, err := http.Get(base + "/metrics")
			if err != nil {
				return false
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return strings.Contains(string(b), "\nsirtommy_websocket_connections 0\n")
		})
	}
}
