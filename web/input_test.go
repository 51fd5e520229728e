package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/web"
)

func TestBadInput(t *testing.T) {
	e := newEnv(t, nil)
	id := e.create(`{"deal":"5"}`)
	a := e.dial()
	// Refusals before the race: each its code, and the connection stays open.
	a.sendRaw([]byte(`{"v":1,"type":`))
	if m := a.untilType("error"); m.Code != web.CodeBadJSON {
		t.Fatalf("malformed JSON: %s", m.raw)
	}
	a.expectError(map[string]any{"type": "dance"}, web.CodeUnknownType)
	a.expectError(map[string]any{"v": 2, "type": "ping"}, web.CodeBadVersion)
	a.sendRaw([]byte(`{"v":1,"type":"ping","pad":"` + strings.Repeat("x", 5000) + `"}`))
	if m := a.untilType("error"); m.Code != web.CodeTooLarge {
		t.Fatalf("oversized frame: %s", m.raw)
	}
	a.expectError(map[string]any{"type": "move", "move": "AS>F1"}, web.CodeNotJoined)
	a.expectError(map[string]any{"type": "join", "race": "nope"}, race.CodeNoSuchRace)
	a.expectError(map[string]any{"type": "watch", "race": "nope"}, race.CodeNoSuchRace)
	a.expectError(map[string]any{"type": "resume", "race": "nope", "token": "x"}, race.CodeNoSuchRace)
	a.join(id, "ann")
	a.expectError(map[string]any{"type": "join", "race": id}, web.CodeAlreadyJoined)
	a.expectError(map[string]any{"type": "move", "move": "AS>F1", "id": "7"}, race.CodeNotStarted)
	a.expectError(map[string]any{"type": "resign"}, race.CodeNotStarted)

	b := e.dial()
	b.join(id, "bob")
	e.clock.Advance(race.DefaultCountdown)
	a.untilState(race.Running)
	g := newGame(5)
	v := g.View()
	m := a.expectError(map[string]any{"type": "move", "move": "KS>F1", "id": "8"}, race.CodeIllegalMove)
	if m.ID != "8" || (m.Reason != "does-not-fit" && m.Reason != "card-not-available") {
		t.Errorf("illegal move: %s", m.raw)
	}
	// The turned card onto a foundation it cannot start.
	if c := v.Turned[0]; c.Rank() != engine.Ace {
		m = a.expectError(map[string]any{"type": "move", "move": c.String() + ">F1"}, race.CodeIllegalMove)
		if m.Reason != "does-not-fit" {
			t.Errorf("reason %q in %s", m.Reason, m.raw)
		}
	}
	m = a.expectError(map[string]any{"type": "move", "move": "hello"}, race.CodeIllegalMove)
	if m.Reason != "bad-notation" {
		t.Errorf("reason %q in %s", m.Reason, m.raw)
	}
	// Nothing changed: the race has no move, and the connection still works.
	in := e.info(id)
	if in.Counts[0].Moves != 0 || in.Counts[1].Moves != 0 || in.State != race.Running {
		t.Fatalf("refused requests changed the race: %+v", in.Counts)
	}
	a.send(map[string]any{"type": "ping", "id": "p"})
	a.untilType("pong")
}

func TestRateLimitAndFlood(t *testing.T) {
	e := newEnv(t, func(d *web.Deps) {
		d.Limits = web.Limits{MsgRate: 0.001, MsgBurst: 3, FloodStrikes: 5, SendQueue: 16}
	})
	c := e.dial()
	for range 3 {
		c.send(map[string]any{"type": "ping"})
		c.untilType("pong")
	}
	c.expectError(map[string]any{"type": "ping"}, web.CodeRateLimited)
	for range 10 {
		if err := c.ws.WriteMessage(websocket.TextMessage, []byte(`{"v":1,"type":"ping"}`)); err != nil {
			break
		}
	}
	for {
		_, _, err := c.ws.ReadMessage()
		if err == nil {
			continue
		}
		if !websocket.IsCloseError(err, websocket.ClosePolicyViolation) {
			t.Fatalf("flood ended with %v, want close 1008", err)
		}
		break
	}
	if e.srv.Stats.Flooded.Load() != 1 {
		t.Errorf("flooded count %d", e.srv.Stats.Flooded.Load())
	}
}

func TestOriginAllowlist(t *testing.T) {
	e := newEnv(t, func(d *web.Deps) { d.AllowedOrigins = []string{"https://play.example"} })
	url := "ws" + strings.TrimPrefix(e.ts.URL, "http") + "/ws"
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"https://play.example", true},
		{e.ts.URL, true}, // same host
		{"https://evil.example", false},
	} {
		ws, res, err := websocket.DefaultDialer.Dial(url, http.Header{"Origin": {tc.origin}})
		if tc.ok != (err == nil) {
			t.Errorf("origin %s: err %v", tc.origin, err)
		}
		if ws != nil {
			ws.Close()
		}
		if !tc.ok && res != nil && res.StatusCode != http.StatusForbidden {
			t.Errorf("origin %s: status %d", tc.origin, res.StatusCode)
		}
	}
}

func TestAPIErrors(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/api/races/nope", "", http.StatusNotFound},
		{"POST", "/api/races", `{"variant":`, http.StatusBadRequest},
		{"POST", "/api/races", `{"variant":"nope"}`, http.StatusBadRequest},
		{"POST", "/api/races", `{"public":true,"deal":"3"}`, http.StatusBadRequest},
		{"POST", "/api/races", `{"deal":"-3"}`, http.StatusBadRequest},
		{"POST", "/api/races", `{"variant":"` + strings.Repeat("x", 5000) + `"}`, http.StatusRequestEntityTooLarge},
		{"GET", "/healthz", "", http.StatusOK},
		{"GET", "/readyz", "", http.StatusOK},
	} {
		req, _ := http.NewRequest(tc.method, e.ts.URL+tc.path, strings.NewReader(tc.body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("%s %s %.40s: status %d, want %d", tc.method, tc.path, tc.body, res.StatusCode, tc.status)
		}
	}
}

// TestRaceCreationRateLimited: one address may make Limits.RacesPerMinute
// races a minute over the API; the next request is refused with 429
// rate-limited and makes nothing.
func TestRaceCreationRateLimited(t *testing.T) {
	limits := web.DefaultLimits()
	limits.RacesPerMinute = 3
	e := newEnv(t, func(d *web.Deps) { d.Limits = limits })
	for range 3 {
		e.create(`{}`)
	}
	res, err := http.Post(e.ts.URL+"/api/races", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Error struct{ Code string } }
	_ = json.NewDecoder(res.Body).Decode(&body)
	if res.StatusCode != http.StatusTooManyRequests || body.Error.Code != string(web.CodeRateLimited) {
		t.Errorf("the fourth race in a minute: status %d, code %q; want 429 %s", res.StatusCode, body.Error.Code, web.CodeRateLimited)
	}
	if n := len(e.races.Races()); n != 3 {
		t.Errorf("%d races exist, want the 3 allowed", n)
	}
}

func TestComputerOpponent(t *testing.T) {
	e := newEnv(t, nil)
	id := e.create(`{"deal":"13","computer":{"level":"easy","paceMs":500}}`)
	a := e.dial()
	a.join(id, "ann")
	a.untilState(race.Countdown)
	e.clock.Advance(race.DefaultCountdown)
	a.untilState(race.Running)
	e.clock.Advance(2 * time.Second) // the computer moves every 0.5 s
	a.untilType("opponent")
	g := newGame(13)
	a.play(&g, racetest.Greedy, nil)
	e.clock.Advance(race.DefaultTimeLimit)
	if r := a.result(); r.Outcome == "aborted" {
		t.Fatalf("result %+v", r)
	}
	bot := 1 - a.seat
	if in := e.info(id); in.Counts[bot].Moves < 4 || !in.Players[bot].Computer {
		t.Fatalf("computer seat %+v %+v", in.Players[bot], in.Counts[bot])
	}
}
