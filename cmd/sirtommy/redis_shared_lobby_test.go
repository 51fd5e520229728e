package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// lobbyClient is a websocket that said hello.
type lobbyClient struct {
	*client
	id      string // player id
	seat    int
	race    string // the race taken a seat in
	n       int
	backlog []msg // messages read but not yet asked for
}

// next waits for a message that ok accepts, keeping the others for later
// (a matched event may come before the reply to the request that made
// it).
func (c *lobbyClient) next(what string, ok func(msg) bool) msg {
	c.t.Helper()
	for i, m := range c.backlog {
		if ok(m) {
			c.backlog = slices.Delete(c.backlog, i, i+1)
			return m
		}
	}
	timeout := time.After(safetyTimeout)
	for {
		select {
		case m, open := <-c.in:
			if !open {
				c.t.Fatalf("connection closed waiting for %s", what)
			}
			if ok(m) {
				return m
			}
			c.backlog = append(c.backlog, m)
		case <-timeout:
			var seen []string
			for _, m := range c.backlog {
				if m.str("type") != "lobby" {
					seen = append(seen, fmt.Sprint(m["type"], " ", m["race"], " ", m["state"], " ", m["via"], " ", m["id"], " ", m["code"]))
				}
			}
			c.t.Fatalf("no %s; last unread %q", what, seen[max(0, len(seen)-8):])
		}
	}
}

// result waits for the state message that carries the race's result.
func (c *lobbyClient) result() string {
	c.t.Helper()
	m := c.next("result", func(m msg) bool { return m.str("type") == "state" && m["result"] != nil && m.str("race") == c.race })
	b, _ := json.Marshal(m["result"])
	return string(b)
}

func hello(t testing.TB, base, name string) *lobbyClient {
	t.Helper()
	c := dial(t, base)
	c.send(map[string]any{"type": "hello", "id": "h", "name": name})
	w := c.next("welcome", ofType("welcome"))
	return &lobbyClient{client: c, id: w.str("player")}
}

// request sends m and waits for its reply (type want; "" takes any),
// sending it again while over the message budget; it fails on another
// reply.
func (c *lobbyClient) request(m map[string]any, want string) msg {
	c.t.Helper()
	c.n++
	id := fmt.Sprint("r", c.n)
	m["id"] = id
	for {
		c.send(m)
		r := c.next("reply to "+id, func(x msg) bool { return x.str("id") == id || x.str("code") == "rate-limited" })
		if r.str("code") == "rate-limited" {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if want != "" && r.str("type") != want {
			c.t.Fatalf("%v: got %v, want %s", m, r, want)
		}
		return r
	}
}

// accept sends an acceptance (its reply is matched), again while over
// the message budget, and leaves the matched event for takeSeat.
func (c *lobbyClient) accept(m map[string]any) {
	c.t.Helper()
	c.n++
	id := fmt.Sprint("a", c.n)
	m["id"] = id
	for {
		c.send(m)
		r := c.next("matched or a refusal", func(x msg) bool {
			return x.str("type") == "matched" || x.str("type") == "error" && (x.str("id") == id || x.str("code") == "rate-limited")
		})
		switch {
		case r.str("code") == "rate-limited":
			time.Sleep(100 * time.Millisecond)
		case r.str("type") == "error":
			c.t.Fatalf("%v: %v", m, r)
		default:
			c.backlog = append(c.backlog, r)
			return
		}
	}
}

// takeSeat waits for matched and joins its race, on this client's
// instance.
func (c *lobbyClient) takeSeat(via string) msg {
	c.t.Helper()
	m := c.next("matched", ofType("matched"))
	if m.str("via") != via {
		c.t.Fatalf("matched %v, want via %s", m, via)
	}
	j := c.request(map[string]any{"type": "join", "race": m.str("race")}, "joined")
	if j["seat"] != m["seat"] {
		c.t.Fatalf("joined seat %v, matched seat %v", j["seat"], m["seat"])
	}
	c.seat, c.race = int(j["seat"].(float64)), m.str("race")
	return m
}

// running waits until the race taken a seat in runs.
func (c *lobbyClient) running() msg {
	c.t.Helper()
	return c.next("running", func(m msg) bool {
		return m.str("type") == "state" && m.str("state") == "running" && m.str("race") == c.race
	})
}

// view decodes a board.
func view(t testing.TB, v any) engine.View {
	t.Helper()
	b, _ := json.Marshal(v)
	var out engine.View
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// playBlind plays the player's game to its end from the views the server
// sends (the deal is secret): a card that fits a foundation, else the
// turned card on W1.
func (c *lobbyClient) playBlind() {
	c.t.Helper()
	st := c.running()
	v := view(c.t, st["you"])
	id := "" // the move's id, kept while it is sent again
	for v.Status == engine.Playing {
		mv, ok := racetest.FromView(&v)
		if !ok {
			c.t.Fatalf("no move from %+v", v)
		}
		if id == "" {
			c.n++
			id = fmt.Sprint("m", c.n)
		}
		c.send(map[string]any{"type": "move", "id": id, "move": mv.String()})
		r := c.next("answer to "+id, func(x msg) bool { return x.str("id") == id || x.str("code") == "rate-limited" })
		if code := r.str("code"); code == "rate-limited" || code == "unavailable" {
			// A busy machine: again, with the same id, as the protocol
			// asks (a move refused as unavailable may have been stored).
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if r.str("type") != "moved" {
			c.t.Fatalf("move %s: %v", mv, r)
		}
		v, id = view(c.t, r["view"]), ""
	}
}

// lobbyOf reads base's lobby over the API.
func lobbyOf(t *testing.T, base string) lobby.LobbyEvent {
	t.Helper()
	res, err := http.Get(base + "/api/lobby")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var ev lobby.LobbyEvent
	if err := json.NewDecoder(res.Body).Decode(&ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// until polls base's lobby until ok accepts it.
func until(t *testing.T, base, what string, ok func(lobby.LobbyEvent) bool) {
	t.Helper()
	for deadline := time.Now().Add(safetyTimeout); ; time.Sleep(50 * time.Millisecond) {
		if ok(lobbyOf(t, base)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %s", base, what)
		}
	}
}

// TestRedisLobbyAcrossInstances: two real servers on one Redis, players
// on each. Quick play pairs them (the race is made on A, listed on B,
// watched from B, and played to its end, each player on their own
// instance); a challenge
// posted on A is accepted on B; an invite made on A is accepted on B,
// once.
func TestRedisLobbyAcrossInstances(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	a, logA, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms", "--spectator-delay", "0s")
	b, logB, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms", "--spectator-delay", "0s")
	defer func() {
		if t.Failed() {
			t.Logf("a %s:\n%s\nb %s:\n%s", a, logA, b, logB)
		}
	}()
	ann, bob := hello(t, a, "ann"), hello(t, b, "bob")

	// Quick play: bob waits on B; ann's queue on A pairs them there.
	bob.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
	until(t, a, "bob counted in the queue", func(ev lobby.LobbyEvent) bool { return ev.Presence.Queued == 1 })
	ann.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
	ma, mb := ann.takeSeat("quick"), bob.takeSeat("quick")
	id := ma.str("race")
	if mb.str("race") != id || ann.seat == bob.seat {
		t.Fatalf("matched %v / %v", ma, mb)
	}
	if op, _ := ma["opponent"].(map[string]any); op["name"] != "bob" {
		t.Fatalf("ann's opponent %v", ma["opponent"])
	}
	until(t, b, "the race made on A in B's list", func(ev lobby.LobbyEvent) bool {
		return slices.ContainsFunc(ev.Races, func(r lobby.RaceSummary) bool { return r.Race == id })
	})
	watcher := dial(t, b) // a spectator on B, of the race listed there
	watcher.send(map[string]any{"type": "watch", "id": "w", "race": id})
	watcher.next("watching", ofType("watching"))
	ann.playBlind()
	bob.playBlind()
	ra, rb := ann.result(), bob.result()
	if ra != rb {
		t.Fatalf("results differ:\n%s\n%s", ra, rb)
	}
	if rw := watcher.result(); rw != ra {
		t.Fatalf("the spectator on B saw another result:\n%s\n%s", rw, ra)
	}

	// A challenge posted on A, accepted on B.
	ch := ann.request(map[string]any{"type": "challenge", "variant": "classic"}, "challenged")
	chID, _ := ch["challenge"].(map[string]any)["id"].(string)
	until(t, b, "ann's challenge", func(ev lobby.LobbyEvent) bool {
		return len(ev.Challenges) == 1 && ev.Challenges[0].ID == chID
	})
	bob.accept(map[string]any{"type": "accept-challenge", "challenge": chID})
	ma, mb = ann.takeSeat("challenge"), bob.takeSeat("challenge")
	if ma.str("race") != mb.str("race") || ma.str("challenge") != chID {
		t.Fatalf("matched %v / %v", ma, mb)
	}
	until(t, a, "no challenge left", func(ev lobby.LobbyEvent) bool { return len(ev.Challenges) == 0 })
	for _, c := range []*lobbyClient{ann, bob} {
		c.running()
		c.request(map[string]any{"type": "resign"}, "moved")
	}
	ann.result()

	// An invite made on A, accepted on B, once.
	inv := ann.request(map[string]any{"type": "invite", "deal": "7"}, "invited")
	code := inv.str("code")
	bob.accept(map[string]any{"type": "accept-invite", "code": code})
	ma, mb = ann.takeSeat("invite"), bob.takeSeat("invite")
	if ma.str("race") != mb.str("race") || mb.str("invite") != code {
		t.Fatalf("matched %v / %v", ma, mb)
	}
	cat := hello(t, a, "cat")
	if r := cat.request(map[string]any{"type": "accept-invite", "code": code}, "error"); r.str("code") != string(lobby.CodeNoSuchInvite) {
		t.Fatalf("invite used twice: %v", r)
	}
}

// TestRedisLobbyInstanceKilled: an instance (its own process) is killed
// with a challenge open and a player queued. The other instance's lobby
// drops the challenge within seconds, and nobody there is paired with
// the player who can no longer be told.
func TestRedisLobbyInstanceKilled(t *testing.T) {
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	bin := buildBinary(t)
	a, proc := startProcess(t, bin, "--redis", rds.URL(), "--database", pg, "--secret", testSecret)
	b, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")
	cat, dan := hello(t, a, "cat"), hello(t, a, "dan")
	cat.request(map[string]any{"type": "challenge"}, "challenged")
	dan.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
	until(t, b, "cat's challenge and dan queued", func(ev lobby.LobbyEvent) bool {
		return len(ev.Challenges) == 1 && ev.Presence.Queued == 1
	})
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	until(t, b, "the dead instance's challenge and player gone", func(ev lobby.LobbyEvent) bool {
		return len(ev.Challenges) == 0 && ev.Presence.Queued == 0 && ev.Presence.Online == 0
	})
	eve := hello(t, b, "eve")
	eve.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
	time.Sleep(1500 * time.Millisecond) // a pairing would be told by now
	for _, m := range eve.backlog {
		if m.str("type") == "matched" {
			t.Fatalf("eve paired with a player of the dead instance: %v", m)
		}
	}
	for drained := false; !drained; {
		select {
		case m := <-eve.in:
			if m.str("type") == "matched" {
				t.Fatalf("eve paired with a player of the dead instance: %v", m)
			}
		default:
			drained = true
		}
	}
	if q := lobbyOf(t, b).Presence.Queued; q != 1 {
		t.Fatalf("%d queued, want eve still waiting", q)
	}
}

// TestRedisLobbyThreeInstancesQuickPlay: three real servers on one Redis,
// four players on each, all queuing at once: each player is matched
// exactly once, every race has both seats given, and each player takes
// their seat through their own instance.
func TestRedisLobbyThreeInstancesQuickPlay(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	var bases []string
	for range 3 {
		base, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")
		bases = append(bases, base)
	}
	var players []*lobbyClient
	for i := range 12 {
		players = append(players, hello(t, bases[i%3], fmt.Sprint("p", i)))
	}
	queued := make(chan msg, len(players))
	for _, p := range players {
		go func() { // each goroutine writes to its own websocket only
			p.send(map[string]any{"type": "queue", "id": "q", "variant": "classic"})
			queued <- nil
		}()
	}
	for range players {
		<-queued
	}
	seats := make(map[string]string) // race/seat -> player
	for _, p := range players {
		m := p.takeSeat("quick")
		key := fmt.Sprint(m.str("race"), "/", p.seat)
		if o, ok := seats[key]; ok {
			t.Fatalf("seat %s given to %s and %s", key, o, p.id)
		}
		seats[key] = p.id
	}
	for key := range seats {
		race, seat, _ := strings.Cut(key, "/")
		if _, ok := seats[race+"/"+map[string]string{"0": "1", "1": "0"}[seat]]; !ok {
			t.Fatalf("race %s has nobody in the other seat", race)
		}
	}
	time.Sleep(time.Second) // a second matched event would come by now
	for _, p := range players {
		for drained := false; !drained; {
			select {
			case m := <-p.in:
				p.backlog = append(p.backlog, m)
			default:
				drained = true
			}
		}
		for _, m := range p.backlog {
			if m.str("type") == "matched" {
				t.Fatalf("%s matched twice: %v", p.id, m)
			}
		}
	}
}
