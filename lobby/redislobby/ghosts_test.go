package redislobby_test

import (
	"strconv"
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/redislobby"
	"sirtommy/race/redisrace/redistest"
)

// TestRedisGhosts runs the ghost store's suite against Redis, two clients
// on one store.
func TestRedisGhosts(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	n := 0
	lobbytest.GhostsSuite(t, func(t *testing.T) [2]lobby.Ghosts {
		n++
		keys := redislobby.Keys{Prefix: "g" + strconv.Itoa(n) + ":"}
		return [2]lobby.Ghosts{redislobby.NewGhosts(srv.Client(t), keys), redislobby.NewGhosts(srv.Client(t), keys)}
	})
}

// TestRedisDailies runs the day's boards' suite against Redis.
func TestRedisDailies(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	n := 0
	lobbytest.DailiesSuite(t, func(t *testing.T) [2]lobby.Dailies {
		n++
		keys := redislobby.Keys{Prefix: "d" + strconv.Itoa(n) + ":"}
		return [2]lobby.Dailies{redislobby.NewDailies(srv.Client(t), keys), redislobby.NewDailies(srv.Client(t), keys)}
	})
}
