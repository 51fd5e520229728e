package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
	"sirtommy/web"
)

// TestMain runs the tests, closes the shared Chromium, and then checks that
// no goroutine was left behind.
func TestMain(m *testing.M) {
	code := m.Run()
	closeBrowser()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// safetyTimeout only keeps a broken test from hanging; no test asserts on
// wall-clock time. It is generous, for a busy machine.
const safetyTimeout = 30 * time.Second

// playLimits let scripted clients move as fast as they can.
var playLimits = web.Limits{MsgRate: 10000, MsgBurst: 10000, FloodStrikes: 100, SendQueue: 256}

type env struct {
	t     testing.TB
	clock *racetest.Clock
	races *race.Service
	srv   *web.Server
	ts    *httptest.Server
}

func newEnv(t testing.TB, mod func(*web.Deps)) *env {
	t.Helper()
	return newEnvWith(t, func(_ *racetest.Clock, d *web.Deps) {
		if mod != nil {
			mod(d)
		}
	})
}

// newEnvWith is newEnv with the fake clock given to mod too.
func newEnvWith(t testing.TB, mod func(*racetest.Clock, *web.Deps)) *env {
	t.Helper()
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	races := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	deps := web.Deps{
		Log:    zerolog.Nop(),
		Races:  races,
		Limits: playLimits,
		Computer: func(string, uint64) (race.Player, error) {
			return racetest.FirstLegal{}, nil
		},
	}
	mod(clock, &deps)
	srv := web.NewServer(deps)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
		defer cancel()
		if err := srv.CloseConns(ctx); err != nil {
			t.Errorf("close conns: %v", err)
		}
		ts.Close()
	})
	return &env{t: t, clock: clock, races: races, srv: srv, ts: ts}
}

// create makes a race over the API and returns its id.
func (e *env) create(body string) string {
	e.t.Helper()
	res, err := http.Post(e.ts.URL+"/api/races", "application/json", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Race string `json:"race"`
	}
	if res.StatusCode != http.StatusCreated {
		e.t.Fatalf("create: status %d", res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		e.t.Fatal(err)
	}
	return out.Race
}

func (e *env) info(id string) race.Info {
	e.t.Helper()
	res, err := http.Get(e.ts.URL + "/api/races/" + id)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var in race.Info
	if err := json.NewDecoder(res.Body).Decode(&in); err != nil {
		e.t.Fatal(err)
	}
	return in
}

// msg is one server message, decoded loosely.
type msg struct {
	raw  []byte
	Type string    `json:"type"`
	ID   string    `json:"id"`
	Code race.Code `json:"code"`
	// Reason is the engine's reason in errors; the result's reason is in
	// Result.
	Reason  string            `json:"reason"`
	Seat    *int              `json:"seat"`
	Seq     int               `json:"seq"`
	Token   string            `json:"token"`
	State   race.State        `json:"state"`
	Result  *race.Result      `json:"result"`
	View    *engine.View      `json:"view"`
	You     *engine.View      `json:"you"`
	Counts  json.RawMessage   `json:"counts"`
	Boards  []engine.View     `json:"boards"`
	Players []race.PlayerInfo `json:"players"`
	// Opponents is every racer's counts (races of more than two).
	Opponents []race.Counts `json:"opponents"`
}

type client struct {
	t    testing.TB
	ws   *websocket.Conn
	all  []msg
	seat int
	tok  string
}

func (e *env) dial() *client {
	e.t.Helper()
	url := "ws" + strings.TrimPrefix(e.ts.URL, "http") + "/ws"
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	c := &client{t: e.t, ws: ws}
	e.t.Cleanup(func() { ws.Close() })
	return c
}

func (c *client) sendRaw(b []byte) {
	c.t.Helper()
	if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) send(fields map[string]any) {
	c.t.Helper()
	if _, ok := fields["v"]; !ok {
		fields["v"] = 1
	}
	b, _ := json.Marshal(fields)
	c.sendRaw(b)
}

// read returns the next message.
func (c *client) read() msg {
	c.t.Helper()
	_ = c.ws.SetReadDeadline(time.Now().Add(safetyTimeout))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m msg
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("bad message %s: %v", b, err)
	}
	m.raw = b
	c.all = append(c.all, m)
	return m
}

// until reads until a message satisfies ok.
func (c *client) until(ok func(m msg) bool) msg {
	c.t.Helper()
	for {
		if m := c.read(); ok(m) {
			return m
		}
	}
}

func (c *client) untilType(typ string) msg {
	c.t.Helper()
	return c.until(func(m msg) bool { return m.Type == typ })
}

func (c *client) untilState(s race.State) msg {
	c.t.Helper()
	return c.until(func(m msg) bool { return m.Type == "state" && m.State == s })
}

func (c *client) join(id, name string) {
	c.t.Helper()
	c.send(map[string]any{"type": "join", "race": id, "name": name, "id": "j"})
	m := c.untilType("joined")
	c.seat, c.tok = *m.Seat, m.Token
}

// expectError sends a message and expects an error with code.
func (c *client) expectError(fields map[string]any, code race.Code) msg {
	c.t.Helper()
	c.send(fields)
	m := c.until(func(m msg) bool { return m.Type == "error" })
	if m.Code != code {
		c.t.Fatalf("sent %v: error %s (%s), want %s", fields, m.Code, m.raw, code)
	}
	return m
}

// move sends a move and waits for its acceptance; it reports false if the
// race was over first.
func (c *client) move(mv engine.Move, id string) bool {
	c.t.Helper()
	c.send(map[string]any{"type": "move", "move": mv.String(), "id": id})
	m := c.until(func(m msg) bool { return m.Type == "error" || (m.Type == "moved" && m.ID == id) })
	if m.Type == "error" {
		if m.Code == race.CodeRaceOver {
			return false
		}
		c.t.Fatalf("move %s refused: %s", mv, m.raw)
	}
	return true
}

// play plays a local copy of the game with a racetest.Strategy, through the server,
// until the game or the race is over, or stop says so.
func (c *client) play(g *engine.Game, st func(*engine.Game) engine.Move, stop func() bool) {
	c.t.Helper()
	for i := 0; g.Status() == engine.Playing && (stop == nil || !stop()); i++ {
		mv := st(g)
		next := *g
		if err := next.Apply(mv); err != nil {
			c.t.Fatal(err)
		}
		if !c.move(mv, "m"+strconv.Itoa(i)) {
			return
		}
		*g = next
		if c.finished() {
			return
		}
	}
}

// finished reports whether a final state has arrived.
func (c *client) finished() bool {
	for _, m := range c.all {
		if m.Type == "state" && m.Result != nil {
			return true
		}
	}
	return false
}

func (c *client) result() *race.Result {
	c.t.Helper()
	if !c.finished() {
		c.untilState(race.Finished)
	}
	for _, m := range c.all {
		if m.Type == "state" && m.Result != nil {
			return m.Result
		}
	}
	return nil
}

func newGame(deal uint64) engine.Game {
	rules, _ := engine.Variant("classic")
	return engine.New(rules, deal)
}

// startRace makes a private race on deal, seats two clients and runs the
// countdown.
func (e *env) startRace(deal uint64) (id string, a, b *client) {
	e.t.Helper()
	return e.startRaceOf(deal, "classic")
}

// startRaceOf is startRace in a variant.
func (e *env) startRaceOf(deal uint64, variant string) (id string, a, b *client) {
	e.t.Helper()
	id = e.create(`{"deal":"` + strconv.FormatUint(deal, 10) + `","variant":"` + variant + `"}`)
	a, b = e.dial(), e.dial()
	a.join(id, "ann")
	b.join(id, "bob")
	a.untilState(race.Countdown)
	b.untilState(race.Countdown)
	e.clock.Advance(race.DefaultCountdown)
	a.untilState(race.Running)
	b.untilState(race.Running)
	return id, a, b
}
