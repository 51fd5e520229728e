package redisrace_test

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace"
	"sirtommy/race/redisrace/redistest"
)

// TestRedisClusterConformance runs the store's and the bus's conformance
// suites against a real three-node Redis Cluster.
func TestRedisClusterConformance(t *testing.T) {
	cl := redistest.StartCluster(t)
	rdb := cl.Client(t)
	n := 0
	t.Run("store", func(t *testing.T) {
		racetest.TestStore(t, func(t *testing.T) race.Store {
			n++ // a fresh prefix per subtest: an empty store
			return redisrace.NewStore(rdb, redisrace.StoreOptions{Keys: redisrace.Keys{Prefix: "c" + string(rune('a'+n)) + ":"}})
		})
	})
	t.Run("bus", func(t *testing.T) {
		racetest.TestBus(t, func(t *testing.T) (race.Bus, race.Bus) {
			a := redisrace.NewBus(rdb, redisrace.Keys{}, "instance-a", zerolog.Nop())
			b := redisrace.NewBus(rdb, redisrace.Keys{}, "instance-b", zerolog.Nop())
			t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
			return a, b
		}, func(t *testing.T, b race.Bus) {
			ctx, cancel := context.WithTimeout(t.Context(), settleWait)
			defer cancel()
			if err := b.(*redisrace.Bus).Sync(ctx); err != nil {
				t.Fatal(err)
			}
		})
	})
}
