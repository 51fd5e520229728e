package redislobby_test

import (
	"github.com/redis/go-redis/v9"

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
	lobbytest.SharedSuite(t, sharedStores("s", func(t *testing.T) redis.UniversalClient { return srv.Client(t) }))
}

// sharedStores makes the shared stores' suite its n instances' stores on
// a fresh, empty key prefix (tag, then a letter) for each test, each
// instance with its own client from client.
func sharedStores(tag string, client func(t *testing.T) redis.UniversalClient) func(t *testing.T, clock race.Clock, n int) []lobby.Stores {
	prefix := 0
	return func(t *testing.T, clock race.Clock, n int) []lobby.Stores {
		prefix++
		keys := redislobby.Keys{Prefix: tag + string(rune('a'+prefix)) + ":"}
		out := make([]lobby.Stores, n)
		for i := range out {
			rdb := client(t)
			out[i] = lobby.Stores{
				Queue:      redislobby.NewQueue(rdb, keys, lobby.MatchConfig{}, clock).For(string(rune('A' + i))),
				Challenges: redislobby.NewChallenges(rdb, keys, clock),
				Invites:    redislobby.NewInvites(rdb, keys),
				Seats:      redislobby.NewSeats(rdb, keys),
				Rooms:      redislobby.NewRooms(rdb, keys),
			}
		}
		return out
	}
}
