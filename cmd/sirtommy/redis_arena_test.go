package main

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
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
		deadline := time.Now().Add(safetyTimeout)
		for v := watchArena(t, ps[0], id); v.Played != 2*round || v.Racing != 0; v = watchArena(t, ps[0], id) {
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

// playOn plays the player's game from v, then from the views the server
// sends, until it or the race is over.
func (c *lobbyClient) playOn(v engine.View) {
	c.t.Helper()
	for v.Status == engine.Playing {
		mv, ok := racetest.FromView(&v)
		if !ok {
			c.t.Fatalf("no move from %+v", v)
		}
		r := c.request(map[string]any{"type": "move", "move": mv.String()}, "")
		switch {
		case r.str("code") == string(race.CodeRaceOver):
			return
		case r.str("type") != "moved":
			c.t.Fatalf("move %s: %v", mv, r)
		}
		v = view(c.t, r["view"])
	}
}
