package redislobby_test

import (
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/redislobby"
	"sirtommy/race"
	"sirtommy/race/redisrace/redistest"
)

// TestRedisClusterConformance runs the lobby's conformance suites (the
// shared stores, the ratings) against a real three-node Redis Cluster:
// every script's keys must share a slot.
func TestRedisClusterConformance(t *testing.T) {
	cl := redistest.StartCluster(t)
	rdb := cl.Client(t)
	prefix := 0
	t.Run("shared", func(t *testing.T) {
		lobbytest.SharedSuite(t, func(t *testing.T, clock race.Clock, n int) []lobby.Shared {
			prefix++ // a fresh, empty store for each test
			keys := redislobby.Keys{Prefix: "c" + string(rune('a'+prefix)) + ":"}
			out := make([]lobby.Shared, n)
			for i := range out {
				rdb := cl.Client(t)
				out[i] = lobby.Shared{
					Queue:      redislobby.NewQueue(rdb, keys, lobby.MatchConfig{}, clock).For(string(rune('A' + i))),
					Challenges: redislobby.NewChallenges(rdb, keys, clock),
					Invites:    redislobby.NewInvites(rdb, keys),
					Seats:      redislobby.NewSeats(rdb, keys),
				}
			}
			return out
		})
	})
	t.Run("ratings", func(t *testing.T) {
		lobbytest.RatingsSuite(t, func(*testing.T) lobby.Ratings {
			prefix++
			return redislobby.NewRatings(rdb, redislobby.Keys{Prefix: "r" + string(rune('a'+prefix)) + ":"})
		})
	})
}
