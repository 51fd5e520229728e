package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/lobby"
	"sirtommy/lobby/redislobby"
	"sirtommy/race/redisrace/redistest"
)

// TestRedisRatingsShared checks that with --redis both instances read
// their leaderboards from the Redis ratings, under --redis-prefix.
func TestRedisRatingsShared(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	a, _, _, _ := startServe(t, "--redis", rds.URL(), "--redis-prefix", "e2e:", "--secret", testSecret, "--drain-timeout", "100ms")
	b, _, _, _ := startServe(t, "--redis", rds.URL(), "--redis-prefix", "e2e:", "--secret", testSecret, "--drain-timeout", "100ms")
	opt, err := redis.ParseURL(rds.URL())
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	s := lobby.NewStanding("someone", "Someone", "classic")
	s.Games, s.Wins, s.Rating.Rating = 1, 1, 1600
	g := lobby.GameRecord{Race: "r", Variant: "classic", Players: [2]lobby.PlayerRef{{ID: "someone", Name: "Someone"}, {ID: "other", Name: "Other"}}}
	if err := redislobby.NewRatings(rdb, redislobby.Keys{Prefix: "e2e:"}).Save(t.Context(), g, []lobby.Standing{s}); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{a, b} {
		res, err := http.Get(base + "/api/leaderboard/classic")
		if err != nil {
			t.Fatal(err)
		}
		var board struct{ Standings []lobby.Standing }
		err = json.NewDecoder(res.Body).Decode(&board)
		res.Body.Close()
		if err != nil || len(board.Standings) != 1 || board.Standings[0].Player != "someone" || board.Standings[0].Rating.Rating != 1600 {
			t.Errorf("%s: leaderboard %+v, %v", base, board, err)
		}
	}
}

// TestRedisPresenceShared checks that a player in the lobby of one
// instance counts as online in the other's lobby within a few heartbeats.
func TestRedisPresenceShared(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	a, _, _, _ := startServe(t, "--redis", rds.URL(), "--secret", testSecret, "--drain-timeout", "100ms")
	b, _, _, _ := startServe(t, "--redis", rds.URL(), "--secret", testSecret, "--drain-timeout", "100ms")
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
