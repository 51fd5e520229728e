package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"sirtommy/engine"
	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race/redisrace/redistest"
)

// testDeal is the named deal of the multi-instance races: the test plays
// both games itself and so knows the legal moves.
const testDeal = 7

// noLeaks checks, after every cleanup of the test (the servers' included),
// that the goroutines the test started are gone.
func noLeaks(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		http.DefaultClient.CloseIdleConnections()
		if err := goleak.Find(before); err != nil {
			t.Error(err)
		}
	})
}

// msg is a server message, loosely.
type msg map[string]any

func (m msg) str(k string) string { s, _ := m[k].(string); return s }

// client is one websocket with its messages read in the background.
type client struct {
	t  testing.TB
	ws *websocket.Conn
	in chan msg
	// seen is every message next has read, in order, those it skipped
	// included: for tests that scan all a client was sent.
	seen []msg
}

func dial(t testing.TB, base string) *client {
	t.Helper()
	return dialWith(t, base, nil)
}

// dialWith is dial with the upgrade request's headers (a cookie).
func dialWith(t testing.TB, base string, header http.Header) *client {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws", header)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, ws: ws, in: make(chan msg, 4096)}
	go func() {
		defer close(c.in)
		for {
			var m msg
			if err := ws.ReadJSON(&m); err != nil {
				return
			}
			c.in <- m
		}
	}()
	t.Cleanup(func() { _ = ws.Close() })
	return c
}

func (c *client) send(m map[string]any) {
	c.t.Helper()
	m["v"] = 1
	if err := c.ws.WriteJSON(m); err != nil {
		c.t.Fatalf("send %v: %v", m, err)
	}
}

// next waits for a message that ok accepts, skipping others.
func (c *client) next(what string, ok func(msg) bool) msg {
	c.t.Helper()
	timeout := time.After(safetyTimeout)
	var skipped []string
	for {
		select {
		case m, open := <-c.in:
			if !open {
				c.t.Fatalf("connection closed waiting for %s", what)
			}
			c.seen = append(c.seen, m)
			if ok(m) {
				return m
			}
			if len(skipped) < 5 {
				skipped = append(skipped, fmt.Sprint(m["type"], " ", m["id"], " ", m["code"], " ", m["message"]))
			}
		case <-timeout:
			c.t.Fatalf("no %s; skipped %q", what, skipped)
		}
	}
}

func ofType(typ string) func(msg) bool { return func(m msg) bool { return m.str("type") == typ } }

// player plays one seat's game through a client, following its own copy
// of the game to pick legal moves.
type player struct {
	c      *client
	race   string
	seat   int
	token  string // the seat's resume token
	player string // the player's signed token, which every instance accepts
	game   engine.Game
	n      int
}

// join takes a seat on race id.
func join(t testing.TB, base, id, name string) *player {
	t.Helper()
	c := dial(t, base)
	c.send(map[string]any{"type": "hello", "id": "h", "name": name})
	w := c.next("welcome", ofType("welcome"))
	c.send(map[string]any{"type": "join", "race": id, "name": name})
	j := c.next("joined", ofType("joined"))
	rules, _ := engine.Variant("")
	return &player{c: c, race: id, seat: int(j["seat"].(float64)), token: j.str("token"), player: w.str("token"), game: engine.New(rules, testDeal)}
}

// reconnect opens a new connection to base as the same player (the
// instances share the secret that signs player tokens).
func (p *player) reconnect(t testing.TB, base string) {
	t.Helper()
	p.c = dial(t, base)
	p.c.send(map[string]any{"type": "hello", "id": "h", "token": p.player})
	p.c.next("welcome", ofType("welcome"))
}

// fleetDatabase makes a fresh PostgreSQL database for the instances of one
// test to share: --redis needs --database, as a fleet cannot share a
// SQLite data folder.
func fleetDatabase(t testing.TB) string {
	t.Helper()
	return sqltest.PostgresURL(t)
}

// testSecret signs player tokens on every instance of a test.
const testSecret = "a test secret of at least thirty-two bytes"

// move plays the first legal move and waits for its acknowledgement,
// sending it again while the server answers "unavailable". It reports
// false when the player's game is over.
func (p *player) move() bool {
	p.c.t.Helper()
	if p.game.Status().Over() {
		return false
	}
	m := p.game.AppendMoves(nil)[0]
	// Sent again with the same id: a move refused as unavailable may have
	// been stored, and is then answered as stored.
	p.n++
	id := fmt.Sprint("m", p.n)
	for {
		p.c.send(map[string]any{"type": "move", "id": id, "move": m.String()})
		r := p.c.next("answer to "+id, func(x msg) bool {
			return x.str("id") == id && (x.str("type") == "moved" || x.str("type") == "error") || x.str("code") == "rate-limited"
		})
		if r.str("type") == "moved" {
			if err := p.game.Apply(m); err != nil {
				p.c.t.Fatal(err)
			}
			return true
		}
		if code := r.str("code"); code != "unavailable" && code != "rate-limited" {
			p.c.t.Fatalf("move %s refused: %v", m, r)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// raceAcross makes a race on instance a, seats a player on a and one on
// b, and waits until it runs.
func raceAcross(t testing.TB, a, b string) (id string, p0, p1 *player) {
	t.Helper()
	id = createRace(t, a)
	p0, p1 = join(t, a, id, "on-a"), join(t, b, id, "on-b")
	for _, p := range []*player{p0, p1} {
		p.c.next("running", func(m msg) bool { return m.str("type") == "state" && m.str("state") == "running" })
	}
	return id, p0, p1
}

// createRace makes a private race on deal testDeal over the API of base.
func createRace(t testing.TB, base string) string {
	t.Helper()
	res, err := http.Post(base+"/api/races", "application/json", strings.NewReader(fmt.Sprintf(`{"deal":%d}`, testDeal)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ Race string }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", res.StatusCode, err)
	}
	return out.Race
}

// result waits for the state message that carries the race's result.
func (c *client) result() string {
	c.t.Helper()
	m := c.next("result", func(m msg) bool { return m.str("type") == "state" && m["result"] != nil })
	b, _ := json.Marshal(m["result"])
	return string(b)
}

// twoInstances starts a real Redis, a PostgreSQL database and two servers
// on them with the same secret, and returns their base URLs; their logs
// are printed if the test fails. It checks for leaked goroutines at the
// end.
func twoInstances(t *testing.T) (a, b string) {
	t.Helper()
	return twoInstancesWith(t)
}

// twoInstancesWith is twoInstances with more flags for both servers.
func twoInstancesWith(t *testing.T, extra ...string) (a, b string) {
	t.Helper()
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	args := append([]string{"--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms"}, extra...)
	a, logA, _, _ := startServe(t, args...)
	b, logB, _, _ := startServe(t, args...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("a %s:\n%s\nb %s:\n%s", a, logA, b, logB)
		}
	})
	return a, b
}

func TestRedisTwoInstancesOneRace(t *testing.T) {
	a, b := twoInstances(t)
	id := createRace(t, a)
	p0 := join(t, a, id, "on-a")
	p1 := join(t, b, id, "on-b")
	watcher := dial(t, b)
	watcher.send(map[string]any{"type": "watch", "race": id})
	watcher.next("watching", ofType("watching"))
	for _, p := range []*player{p0, p1} {
		p.c.next("running", func(m msg) bool { return m.str("type") == "state" && m.str("state") == "running" })
	}
	for p0.move() || p1.move() {
	}
	r0, r1 := p0.c.result(), p1.c.result()
	if r0 != r1 {
		t.Errorf("results differ:\n%s\n%s", r0, r1)
	}
	watcher.next("a board from instance a", ofType("board"))
	if rw := watcher.result(); rw != r0 {
		t.Errorf("the spectator on b saw another result:\n%s\n%s", rw, r0)
	}
	for _, base := range []string{a, b} {
		res, err := http.Get(base + "/api/races/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var info struct {
			State string
			Moves []any
		}
		_ = json.NewDecoder(res.Body).Decode(&info)
		res.Body.Close()
		if want := p0.game.Plies() + p1.game.Plies(); info.State != "finished" || len(info.Moves) != want {
			t.Errorf("%s: state %s with %d moves logged, want finished with %d", base, info.State, len(info.Moves), want)
		}
	}
}

func TestRedisUnreachableAtStart(t *testing.T) {
	var out, errOut syncBuffer
	args := []string{"serve", "--addr", "127.0.0.1:0", "--redis", "redis://127.0.0.1:1/0", "--database", fleetDatabase(t)}
	err := run(t.Context(), args, func(string) string { return "" }, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("serve with no Redis: %v", err)
	}
}
