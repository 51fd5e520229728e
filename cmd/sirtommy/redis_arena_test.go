package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sirtommy/lobby"
	"syscall"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// TestRedisArenaAcrossInstances: two instances on one Redis and one
// PostgreSQL run the same scheduled arena (made once, by one id). Four
// players, two on each instance, join it; each round every player is
// paired once for the whole fleet (one matched each, never the last
// opponent again), each race is counted once: after two rounds the
// points sum to two a race (no race lost or counted twice), every
// player has raced twice, and both instances show the same standings.
func TestRedisArenaAcrossInstances(t *testing.T) {
	a, b := twoInstancesWith(t, "--arenas", "Test arena,classic,2m,180m,3h")
	id := runningArena(t, b)
	ps := []*lobbyClient{hello(t, a, "ann"), hello(t, b, "cat"), hello(t, a, "bob"), hello(t, b, "dan")}
	for _, p := range ps {
		p.request(map[string]any{"type": "arena-join", "arena": id}, "arena")
	}
	last := map[string]string{}
	const rounds = 2
	for round := 1; round <= rounds; round++ {
		byRace := map[string][]*lobbyClient{}
		for _, p := range ps {
			m := p.takeSeat("arena")
			opp, _ := m["opponent"].(map[string]any)["player"].(string)
			if m.str("arena") != id || opp == "" || opp == last[p.id] {
				t.Fatalf("round %d: %s matched %v (last opponent %s)", round, p.id, m, last[p.id])
			}
			last[p.id] = opp
			byRace[p.race] = append(byRace[p.race], p)
		}
		if len(byRace) != 2 {
			t.Fatalf("round %d: %d races for four players", round, len(byRace))
		}
		if round == rounds {
			// Out of the pool after this round: nobody is paired again
			// while the test counts.
			for _, p := range ps {
				p.request(map[string]any{"type": "arena-pause", "arena": id}, "arena")
			}
		}
		for _, pair := range byRace {
			if len(pair) != 2 {
				t.Fatalf("round %d: a race of %d", round, len(pair))
			}
			pair[0].running()
			start := pair[1].running()
			// One resigns; the other plays on until they pass them.
			pair[0].request(map[string]any{"type": "resign"}, "moved")
			pair[1].playOn(view(t, start["you"]))
			for _, p := range pair {
				p.result()
			}
		}
		// Counted when every player has raced round races: the next
		// round may be paired at the next heartbeat already (its matched
		// waits for takeSeat), so Played and Racing may have moved on.
		deadline := time.Now().Add(safetyTimeout)
		for v := watchArena(t, ps[0], id); !racedAll(v, len(ps), round); v = watchArena(t, ps[0], id) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d not counted: %+v", round, v)
			}
			time.Sleep(50 * time.Millisecond) // a poll: the end worker counts each race
		}
	}
	va, vb := watchArena(t, ps[0], id), watchArena(t, ps[1], id)
	if !reflect.DeepEqual(va.Standings, vb.Standings) || va.Played != 2*rounds {
		x, _ := json.Marshal(va.Standings)
		y, _ := json.Marshal(vb.Standings)
		t.Fatalf("a shows %s (%d played), b %s", x, va.Played, y)
	}
	sum := 0
	for _, st := range va.Standings {
		sum += st.Points
		if st.Races != rounds {
			t.Errorf("%s raced %d times, want %d", st.Name, st.Races, rounds)
		}
	}
	if want := 2 * va.Played; sum != want {
		t.Errorf("the points sum to %d, want %d for %d races (no fire in two rounds)", sum, want, va.Played)
	}
}

// racedAll reports whether each of the arena's players players has
// raced n races, counted.
func racedAll(v lobby.ArenaView, players, n int) bool {
	if len(v.Standings) != players {
		return false
	}
	for _, st := range v.Standings {
		if st.Races != n {
			return false
		}
	}
	return true
}

// playOn plays the player's game from v, then from the views the server
// sends, until it or the race is over.
func (c *lobbyClient) playOn(v engine.View) {
	c.t.Helper()
	for v.Status == engine.Playing {
		mv, ok := racetest.FromView(&v)
		if !ok {
			c.t.Fatalf("no move from %+v", v)
		}
		// Sent again with the same id while the race's instance cannot be
		// reached (it died; another takes the race over).
		c.n++
		id := fmt.Sprint("m", c.n)
		var r msg
		for tries := 0; ; tries++ {
			c.send(map[string]any{"type": "move", "move": mv.String(), "id": id})
			r = c.next("reply to "+id, func(x msg) bool { return x.str("id") == id || x.str("code") == "rate-limited" })
			if code := r.str("code"); (code != "unavailable" && code != "rate-limited") || tries == 300 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		switch {
		case r.str("code") == string(race.CodeRaceOver):
			return
		case r.str("type") != "moved":
			c.t.Fatalf("move %s: %v", mv, r)
		}
		v = view(c.t, r["view"])
	}
}

// TestRedisArenaInstanceKilled: an arena on two instances, one of them
// killed (SIGKILL) while its two players race the other's two: the
// survivor runs their races on (adopting those the dead one owned), the
// players left play on and win, by forfeit or on time, and every race is
// counted once, whichever instance ends it: each player has one race,
// the points sum to two a race, and nobody is left racing.
func TestRedisArenaInstanceKilled(t *testing.T) {
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	bin := buildBinary(t)
	args := []string{"--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--grace", "2s",
		"--arenas", "Test arena,classic,1m,180m,3h"}
	a, proc := startProcess(t, bin, args...)
	b, logB, _, _ := startServe(t, append(args, "--drain-timeout", "100ms")...)
	defer func() {
		if t.Failed() {
			t.Logf("b %s:\n%s", b, logB)
		}
	}()
	id := runningArena(t, b)
	ann, cat, bob, dan := hello(t, b, "ann"), hello(t, a, "cat"), hello(t, b, "bob"), hello(t, a, "dan")
	ps := []*lobbyClient{ann, cat, bob, dan}
	for _, p := range ps {
		p.request(map[string]any{"type": "arena-join", "arena": id}, "arena")
	}
	starts := map[*lobbyClient]msg{}
	for _, p := range ps {
		p.takeSeat("arena")
	}
	for _, p := range ps {
		starts[p] = p.running()
	}
	if ann.race == bob.race || cat.race == dan.race {
		t.Fatalf("the players of one instance race each other: %s %s %s %s", ann.race, cat.race, bob.race, dan.race)
	}
	if err := proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = proc.Wait()
	// Paused while racing, out of the pool after: the two left are not
	// paired again while the test counts.
	for _, p := range []*lobbyClient{ann, bob} {
		p.request(map[string]any{"type": "arena-pause", "arena": id}, "arena")
	}
	for _, p := range []*lobbyClient{ann, bob} {
		p.playOn(view(t, starts[p]["you"]))
		var res race.Result
		if err := json.Unmarshal([]byte(p.result()), &res); err != nil {
			t.Fatal(err)
		}
		if res.Winner == nil || *res.Winner != p.seat {
			t.Errorf("%s: %s by %s, want their win", p.id, res.Outcome, res.Reason)
		}
	}
	deadline := time.Now().Add(safetyTimeout)
	v := watchArena(t, ann, id)
	for ; v.Played != 2 || v.Racing != 0; v = watchArena(t, ann, id) {
		if time.Now().After(deadline) {
			t.Fatalf("the races were not counted: %+v", v)
		}
		time.Sleep(100 * time.Millisecond) // a poll: the survivor's end worker counts them
	}
	points := map[string]int{ann.id: 2, bob.id: 2, cat.id: 0, dan.id: 0}
	for _, st := range v.Standings {
		if st.Points != points[st.Player] || st.Races != 1 {
			t.Errorf("%s: %d points in %d races, want %d in 1", st.Name, st.Points, st.Races, points[st.Player])
		}
	}
}
