package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/race/redisrace/redistest"
)

// TestRedisPresenceShared checks that a player in the lobby of one
// instance counts as online in the other's lobby within a few heartbeats.
func TestRedisPresenceShared(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	a, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")
	b, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")
	c := dial(t, a)
	c.send(map[string]any{"type": "hello", "id": "h", "name": "ann"})
	c.next("welcome", ofType("welcome"))
	deadline := time.Now().Add(safetyTimeout)
	for {
		res, err := http.Get(b + "/api/lobby")
		if err != nil {
			t.Fatal(err)
		}
		var ev lobby.LobbyEvent
		err = json.NewDecoder(res.Body).Decode(&ev)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Presence.Online == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("b's lobby counts %d online, want ann on a", ev.Presence.Online)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
