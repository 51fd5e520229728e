package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// fairRacer plays one seat from the views its instance sends, and keeps
// the moves it sent.
type fairRacer struct {
	c    *lobbyClient
	v    engine.View
	sent []string
}

// step plays one move; false when the racer's game or the race is over.
func (r *fairRacer) step() bool {
	r.c.t.Helper()
	if r.v.Status != engine.Playing {
		return false
	}
	mv, ok := racetest.FromView(&r.v)
	if !ok {
		r.c.t.Fatalf("no move from %+v", r.v)
	}
	r.sent = append(r.sent, mv.String()) // counted from the moment it is sent
	// Sent again with the same id: a move refused as unavailable may have
	// been stored, and is then answered as stored.
	r.c.n++
	id := fmt.Sprint("m", r.c.n)
	for {
		r.c.send(map[string]any{"type": "move", "id": id, "move": mv.String()})
		m := r.c.next("answer to "+id, func(x msg) bool { return x.str("id") == id || x.str("code") == "rate-limited" })
		switch code := m.str("code"); {
		case code == "rate-limited" || code == "unavailable":
			time.Sleep(100 * time.Millisecond)
			continue
		case code == "race-over":
			r.sent = r.sent[:len(r.sent)-1]
			r.v.Status = engine.Stuck
			return false
		case m.str("type") != "moved":
			r.c.t.Fatalf("move %s: %v", mv, m)
		}
		r.v = view(r.c.t, m["view"])
		return true
	}
}

// fairObservation is a message an onlooker read, with how many moves each
// seat had sent by then.
type fairObservation struct {
	who  string
	raw  []byte
	sent [2]int
}

// TestRedisOnlookersOnAnotherInstanceSeeNoCardAhead is the information
// invariant in Redis mode: the racers play on instance A, while on
// instance B each racer watches with their lobby identity, someone
// watches anonymously, someone sits in the lobby and the API is polled.
// No message there may hold a card a racer still playing has not turned.
func TestRedisOnlookersOnAnotherInstanceSeeNoCardAhead(t *testing.T) {
	rds := redistest.Start(t, redistest.Options{})
	for _, tc := range []struct {
		name   string
		public bool
		delay  string
	}{
		{name: "public, delayed", public: true, delay: "500ms"},
		{name: "private", public: false, delay: "0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pg := fleetDatabase(t)
			a, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms", "--spectator-delay", tc.delay)
			b, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms", "--spectator-delay", tc.delay)
			ann, annToken := helloWithToken(t, a, "ann")
			bob, bobToken := helloWithToken(t, a, "bob")
			tokens := map[*lobbyClient]string{ann: annToken, bob: bobToken}
			if tc.public {
				ann.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
				bob.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
				ann.takeSeat("quick")
				bob.takeSeat("quick")
			} else {
				inv := ann.request(map[string]any{"type": "invite", "deal": "7"}, "invited")
				bob.accept(map[string]any{"type": "accept-invite", "code": inv.str("code")})
				ann.takeSeat("invite")
				bob.takeSeat("invite")
			}
			id := ann.race
			var racers [2]*fairRacer
			racers[ann.seat] = &fairRacer{c: ann}
			racers[bob.seat] = &fairRacer{c: bob}

			// The onlookers, all on B.
			type onlooker struct {
				who  string
				c    *client
				over bool
			}
			var onlookers []*onlooker
			for _, p := range []*lobbyClient{ann, bob} {
				c := dial(t, b)
				c.send(map[string]any{"type": "hello", "id": "h", "token": tokens[p]})
				c.next("welcome", ofType("welcome"))
				c.send(map[string]any{"type": "watch", "id": "w", "race": id})
				c.next("watching", ofType("watching"))
				onlookers = append(onlookers, &onlooker{who: "seat " + strconv.Itoa(p.seat) + "'s own watch", c: c})
			}
			anon := dial(t, b)
			anon.send(map[string]any{"type": "watch", "id": "w", "race": id})
			anon.next("watching", ofType("watching"))
			lob := hello(t, b, "wes")
			onlookers = append(onlookers, &onlooker{who: "anonymous watch", c: anon}, &onlooker{who: "lobby", c: lob.client})

			var obs []fairObservation
			sent := func() [2]int { return [2]int{len(racers[0].sent), len(racers[1].sent)} }
			pings := 0
			drain := func() {
				for _, o := range onlookers {
					pings++
					pid := "p" + strconv.Itoa(pings)
					o.c.send(map[string]any{"type": "ping", "id": pid})
					for {
						m := o.c.next("pong "+pid, func(msg) bool { return true })
						if m.str("type") == "pong" && m.str("id") == pid {
							break
						}
						if m.str("type") == "error" && m.str("code") == "rate-limited" {
							break // the ping's answer: refused, but everything before it is in
						}
						if st := m.str("state"); m.str("type") == "state" && (st == "finished" || st == "aborted") {
							o.over = true
						}
						if !o.over {
							raw, _ := json.Marshal(m)
							obs = append(obs, fairObservation{who: o.who, raw: raw, sent: sent()})
						}
					}
				}
				for _, path := range []string{"/api/races/" + id, "/api/lobby"} {
					res, err := http.Get(b + path)
					if err != nil {
						t.Fatal(err)
					}
					body, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if !strings.Contains(string(body), `"state":"finished"`) && !strings.Contains(string(body), `"state":"aborted"`) {
						obs = append(obs, fairObservation{who: "GET " + path + " on B", raw: body, sent: sent()})
					}
				}
			}

			for _, r := range racers {
				r.v = view(t, r.c.running()["you"])
			}
			// Seat 0 far ahead: three moves for each of seat 1's, seat 1
			// starting after seat 0's first twenty.
			for i := 0; racers[0].v.Status == engine.Playing || racers[1].v.Status == engine.Playing; i++ {
				moved := false
				for range 3 {
					moved = racers[0].step() || moved
				}
				if i == 0 || i > 7 {
					moved = racers[1].step() || moved
				}
				drain()
				if !moved && i > 7 {
					break
				}
			}
			res := ann.result()
			drain()
			var result struct{ Deal string }
			if err := json.Unmarshal([]byte(res), &result); err != nil {
				t.Fatal(err)
			}
			deal, err := strconv.ParseUint(result.Deal, 10, 64)
			if err != nil {
				t.Fatalf("result %s", res)
			}
			sight, err := racetest.NewSight("classic", deal)
			if err != nil {
				t.Fatal(err)
			}
			boards, hidden := 0, 0
			for _, o := range obs {
				games, err := sight.Replay([][]string{racers[0].sent[:o.sent[0]], racers[1].sent[:o.sent[1]]})
				if err != nil {
					t.Fatal(err)
				}
				if err := sight.Check(o.raw, games); err != nil {
					t.Fatalf("%s on B got %v", o.who, err)
				}
				if strings.Contains(string(o.raw), `"type":"board"`) {
					boards++
				}
				if strings.Contains(string(o.raw), `"??"`) {
					hidden++
				}
			}
			if boards == 0 || hidden == 0 {
				t.Fatalf("nothing tested: %d boards, %d messages with hidden cards", boards, hidden)
			}
			t.Logf("%d observations on B, %d boards, %d with hidden cards", len(obs), boards, hidden)
		})
	}
}

// helloWithToken is hello that also returns the player's token.
func helloWithToken(t testing.TB, base, name string) (*lobbyClient, string) {
	t.Helper()
	c := dial(t, base)
	c.send(map[string]any{"type": "hello", "id": "h", "name": name})
	w := c.next("welcome", ofType("welcome"))
	return &lobbyClient{client: c, id: w.str("player")}, w.str("token")
}
