package main

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/race/redisrace/redistest"
)

// TestRedisRatingsShared checks that the instances of a fleet answer one
// leaderboard: the one in their shared PostgreSQL database (--database),
// where a standing is written directly with SQL.
func TestRedisRatingsShared(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	a, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--redis-prefix", "e2e:", "--secret", testSecret, "--drain-timeout", "100ms")
	b, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--redis-prefix", "e2e:", "--secret", testSecret, "--drain-timeout", "100ms")
	db, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO standings (player, variant, name, rating, deviation, volatility,
		games, wins, losses, draws, streak, best_streak) VALUES ('someone', 'classic', 'Someone', 1600, 200, 0.06, 1, 1, 0, 0, 1, 1)`); err != nil {
		t.Fatal(err)
	}
	boards := make([]string, 2)
	for i, base := range []string{a, b} {
		res, err := http.Get(base + "/api/leaderboard/classic")
		if err != nil {
			t.Fatal(err)
		}
		var board struct{ Standings []lobby.Standing }
		err = json.NewDecoder(res.Body).Decode(&board)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s: leaderboard %d, %v", base, res.StatusCode, err)
		}
		j, _ := json.Marshal(board.Standings)
		boards[i] = string(j)
	}
	if boards[0] != boards[1] {
		t.Fatalf("the instances answer different leaderboards:\na %s\nb %s", boards[0], boards[1])
	}
	var board []lobby.Standing
	if err := json.Unmarshal([]byte(boards[0]), &board); err != nil || len(board) != 1 || board[0].Player != "someone" || board[0].Rating.Rating != 1600 {
		t.Fatalf("leaderboard %s (%v), want someone at 1600 from PostgreSQL", boards[0], err)
	}
}

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
