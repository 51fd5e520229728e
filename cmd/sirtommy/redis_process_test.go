package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/race/redisrace/redistest"
)

// startProcess runs the binary as its own process on port 0, with a data
// folder of the test's own (a later --data in args wins), and returns its
// base URL and the process.
func startProcess(t *testing.T, bin string, args ...string) (string, *os.Process) {
	t.Helper()
	base, proc, _ := startProcessLogged(t, bin, "warn", args...)
	return base, proc
}

// startProcessLogged is startProcess at log level level, keeping what the
// process logs (its standard error).
func startProcessLogged(t *testing.T, bin, level string, args ...string) (string, *os.Process, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", level, "--data", t.TempDir()}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l, ok := listenURL(sc.Text() + "\n"); ok {
				lines <- l
			}
		}
	}()
	select {
	case base := <-lines:
		return base, cmd.Process, &logs
	case <-time.After(safetyTimeout):
		t.Fatalf("the process did not start: %s", logs.String())
		return "", nil, nil
	}
}

func TestRedisInstanceKilledMidRace(t *testing.T) {
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	bin := buildBinary(t)
	a, proc := startProcess(t, bin, "--redis", rds.URL(), "--database", pg, "--secret", testSecret)
	b, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")

	id, p0, p1 := raceAcross(t, a, b) // a owns the race
	for range 8 {
		p0.move()
		p1.move()
	}
	acked := p0.game.Plies()

	if err := proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Player 0 comes back on b with the token; b finds a gone and takes the
	// race over from the log.
	p0.reconnect(t, b)
	var st msg
	for {
		p0.c.send(map[string]any{"type": "resume", "race": id, "token": p0.token, "id": "back"})
		r := p0.c.next("resume answer", func(m msg) bool { return m.str("id") == "back" })
		if r.str("type") == "joined" {
			p0.token = r.str("token") // a resume spends the token it was given
			st = p0.c.next("state", ofType("state"))
			break
		}
		if r.str("code") != "unavailable" {
			t.Fatalf("resume on b: %v", r)
		}
		time.Sleep(100 * time.Millisecond)
	}
	you, _ := st["you"].(map[string]any)
	if got, _ := you["moves"].(float64); int(got) != acked {
		t.Fatalf("after the takeover seat 0 has %v moves, want the %d acknowledged", you["moves"], acked)
	}
	for p0.move() || p1.move() {
	}
	r0, r1 := p0.c.result(), p1.c.result()
	if r0 != r1 {
		t.Errorf("results differ:\n%s\n%s", r0, r1)
	}
	// Decided once: the result stored in Redis is the one both saw.
	opt, _ := redis.ParseURL(rds.URL())
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	stored, err := rdb.Get(t.Context(), "sirtommy:{race:"+id+"}:result").Result()
	var got struct{ Result json.RawMessage }
	if err == nil {
		err = json.Unmarshal([]byte(stored), &got)
	}
	if err != nil || !sameJSON(got.Result, r0) {
		t.Errorf("stored result %s (%v), want %s", stored, err, r0)
	}
	n, err := rdb.XLen(t.Context(), "sirtommy:{race:"+id+"}:log").Result()
	if want := int64(p0.game.Plies() + p1.game.Plies()); err != nil || n != want {
		t.Errorf("log holds %d moves (%v), want %d", n, err, want)
	}
}

func TestRedisInstanceStoppedMidRaceHandsOver(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	a, _, stopA, doneA := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "5s")
	b, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")
	id, p0, p1 := raceAcross(t, a, b)
	for range 5 {
		p0.move()
		p1.move()
	}
	stopA() // SIGTERM: a hands the race over instead of aborting it
	if err := <-doneA; err != nil {
		t.Fatalf("a stopped with %v", err)
	}
	p0.reconnect(t, b)
	for {
		p0.c.send(map[string]any{"type": "resume", "race": id, "token": p0.token, "id": "back"})
		r := p0.c.next("resume answer", func(m msg) bool { return m.str("id") == "back" })
		if r.str("type") == "joined" {
			p0.token = r.str("token") // a resume spends the token it was given
			break
		}
		if r.str("code") != "unavailable" {
			t.Fatalf("resume on b: %v", r)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for p0.move() || p1.move() {
	}
	r0, r1 := p0.c.result(), p1.c.result()
	if r0 != r1 || strings.Contains(r0, "shutdown") {
		t.Errorf("results:\n%s\n%s", r0, r1)
	}
}

// TestRedisOwnerFrozen: the instance that owns a race is frozen
// (SIGSTOP) past its lease mid-race, then thawed. Its player on the other
// instance and a spectator there send nothing while it is frozen: the
// other instance adopts the race when the lease runs out and both get a
// fresh state without asking. Thawed, the old owner finds it lost the
// race (its writes are fenced by the lease) and its own player's moves go
// to the new owner. Nobody connected is forfeited, and every acknowledged
// move is in the log.
func TestRedisOwnerFrozen(t *testing.T) {
	rds := redistest.Start(t, redistest.Options{})
	rc := ownerWithIdleSurvivors(t, rds.URL(), "8s")
	p1, watcher, proc := rc.p1, rc.watcher, rc.proc
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			_ = proc.Signal(syscall.SIGCONT)
		}
	}
	defer thaw()
	p1.c.next("a fresh joined from the new owner", ofType("joined"))
	p1.c.next("its state", ofType("state"))
	watcher.next("a spectator's state from the new owner", ofType("state"))
	thaw()
	// p0 stays on a, which forwards its moves to b now.
	rc.playOut(t, rds.Client(t))
}

// faultRace is a race owned by a real server process (a), with one
// player on a and one on an in-process server (b), and a spectator on b:
// the set-up of the tests that kill or freeze the owner.
type faultRace struct {
	b       string // b's base URL
	id      string
	p0, p1  *player
	watcher *client
	proc    *os.Process
}

// ownerWithIdleSurvivors starts a (a process) and b on the Redis at url
// with the grace period given, makes the race on a, seats and watches it,
// and plays six moves each.
func ownerWithIdleSurvivors(t *testing.T, url, grace string) *faultRace {
	t.Helper()
	bin := buildBinary(t)
	pg := fleetDatabase(t)
	a, proc := startProcess(t, bin, "--redis", url, "--database", pg, "--secret", testSecret, "--grace", grace)
	b, logB, _, _ := startServe(t, "--redis", url, "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms", "--grace", grace)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("b:\n%s", logB)
		}
	})
	rc := &faultRace{b: b, proc: proc}
	rc.id, rc.p0, rc.p1 = raceAcross(t, a, b) // a owns the race
	rc.watcher = dial(t, b)
	rc.watcher.send(map[string]any{"type": "watch", "race": rc.id})
	rc.watcher.next("watching", ofType("watching"))
	for range 6 {
		rc.p0.move()
		rc.p1.move()
	}
	return rc
}

// playOut plays the race to its end and checks that everyone saw one
// result, that no connected player was forfeited, and that the log on
// rdb holds every acknowledged move.
func (rc *faultRace) playOut(t *testing.T, rdb redis.Cmdable) {
	t.Helper()
	for rc.p0.move() || rc.p1.move() {
	}
	r0, r1, rw := rc.p0.c.result(), rc.p1.c.result(), rc.watcher.result()
	if r0 != r1 || rw != r0 {
		t.Errorf("results differ:\n%s\n%s\n%s", r0, r1, rw)
	}
	if strings.Contains(r0, "forfeit") {
		t.Errorf("a connected player was forfeited: %s", r0)
	}
	n, err := rdb.XLen(t.Context(), "sirtommy:{race:"+rc.id+"}:log").Result()
	if want := int64(rc.p0.game.Plies() + rc.p1.game.Plies()); err != nil || n != want {
		t.Errorf("the log holds %d moves (%v), want the %d acknowledged", n, err, want)
	}
}

func TestRedisRestartedMidRace(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{AppendOnly: true})
	pg := fleetDatabase(t)
	a, logA, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")
	b, logB, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")
	defer func() {
		if t.Failed() {
			t.Logf("a:\n%s\nb:\n%s", logA, logB)
		}
	}()
	_, p0, p1 := raceAcross(t, a, b)
	for range 4 {
		p0.move()
		p1.move()
	}
	rds.Stop()
	// While Redis is away a move is refused, never acknowledged.
	m := p0.game.AppendMoves(nil)[0]
	p0.c.send(map[string]any{"type": "move", "id": "down", "move": m.String()})
	r := p0.c.next("refusal", func(x msg) bool { return x.str("id") == "down" })
	if r.str("type") != "error" || r.str("code") != "unavailable" {
		t.Fatalf("a move with Redis down: %v", r)
	}
	if code := readyz(t, a); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with Redis down: %d", code)
	}
	rds.StartAgain()
	// Ready again soon, not at once: the Redis client, its dials failed,
	// probes the server once a second before it dials for requests again.
	waitFor(t, "/readyz ready with Redis back", func() bool { return readyz(t, a) == http.StatusOK })
	for p0.move() || p1.move() {
	}
	if r0, r1 := p0.c.result(), p1.c.result(); r0 != r1 {
		t.Errorf("results differ:\n%s\n%s", r0, r1)
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a json.RawMessage, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func readyz(t *testing.T, base string) int {
	t.Helper()
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
