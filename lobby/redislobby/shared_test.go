package redislobby_test

import (
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/redislobby"
	"sirtommy/race"
	"sirtommy/race/redisrace/redistest"
)

// TestRedisShared runs the shared stores' conformance suite against
// Redis, each instance with its own client.
func TestRedisShared(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	prefix := 0
	lobbytest.SharedSuite(t, func(t *testing.T, clock race.Clock, n int) []lobby.Shared {
		prefix++ // a fresh, empty store for each test
		keys := redislobby.Keys{Prefix: "s" + string(rune('a'+prefix)) + ":"}
		out := make([]lobby.Shared, n)
		for i := range out {
			rdb := srv.Client(t)
			out[i] = lobby.Shared{
				Queue:      redislobby.NewQueue(rdb, keys, lobby.MatchConfig{}, clock).For(string(rune('A' + i))),
				Challenges: redislobby.NewChallenges(rdb, keys, clock),
				Invites:    redislobby.NewInvites(rdb, keys),
				Seats:      redislobby.NewSeats(rdb, keys),
			}
		}
		return out
	})
}
