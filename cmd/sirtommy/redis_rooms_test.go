package main

import (
	"encoding/json"
	"testing"

	"sirtommy/race"
)

// TestRedisRoomAcrossInstances: a room made on instance a, joined from a
// and b; the host on a hears the arrival from b (the courier carries the
// room), starts the race, and every member, on either instance, is
// matched into it and races; the room's race is ranked and unrated.
func TestRedisRoomAcrossInstances(t *testing.T) {
	a, b := twoInstances(t)
	host := hello(t, a, "ann")
	guests := []*lobbyClient{hello(t, b, "bob"), hello(t, a, "cy"), hello(t, b, "dee")}
	room := host.request(map[string]any{"type": "room", "variant": "classic"}, "room")
	code := room["room"].(map[string]any)["code"].(string)
	for _, g := range guests {
		g.request(map[string]any{"type": "join-room", "code": code}, "room")
	}
	host.next("dee's arrival, from the other instance", func(m msg) bool {
		if m.str("type") != "room" {
			return false
		}
		members, _ := m["room"].(map[string]any)["members"].([]any)
		return len(members) == 4
	})
	host.accept(map[string]any{"type": "start-room", "code": code})
	all := append([]*lobbyClient{host}, guests...)
	for _, c := range all {
		m := c.takeSeat("room")
		if m.str("room") != code || m["rated"] != false {
			t.Fatalf("matched %v", m)
		}
	}
	for _, c := range all {
		c.running()
	}
	for _, c := range all {
		c.request(map[string]any{"type": "resign"}, "moved")
	}
	results := map[string]bool{}
	for _, c := range all {
		results[c.result()] = true
	}
	if len(results) != 1 {
		t.Fatalf("the racers got %d different results: %v", len(results), results)
	}
	for js := range results {
		var r race.Result
		if err := json.Unmarshal([]byte(js), &r); err != nil || r.Rated || len(r.Ranking) != 4 {
			t.Fatalf("result %s (%v): want unrated, four ranked", js, err)
		}
	}
}
