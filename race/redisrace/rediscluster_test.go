package redisrace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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

// TestBusFollowsReshardedShard: the slot of a race's bus shard moves to
// another node (a resharding) while an instance follows the race: Redis
// ends the sharded subscriptions of that slot, and the bus must subscribe
// again where the slot now is, so that the race's events still arrive.
func TestBusFollowsReshardedShard(t *testing.T) {
	cl := redistest.StartCluster(t)
	rdb := cl.Client(t)
	keys := redisrace.Keys{Prefix: "m:"}
	a := redisrace.NewBus(rdb, keys, "instance-a", zerolog.Nop())
	b := redisrace.NewBus(rdb, keys, "instance-b", zerolog.Nop())
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	got := &racetest.Recorder{}
	topic := race.WatchTopic("R")
	b.Subscribe(topic, got)
	ctx, cancel := context.WithTimeout(t.Context(), settleWait)
	defer cancel()
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// heard publishes a board with seq n until b has it (the first ones
	// may go while b subscribes again).
	heard := func(n int) {
		t.Helper()
		deadline := time.Now().Add(settleWait)
		for time.Now().Before(deadline) {
			a.Publish(topic, &race.BoardEvent{Race: "R", Seq: n})
			time.Sleep(20 * time.Millisecond)
			for _, ev := range got.Events() {
				if bd, ok := ev.(*race.BoardEvent); ok && bd.Seq == n {
					return
				}
			}
		}
		t.Fatalf("board %d never reached b", n)
	}
	heard(1)
	cl.MoveSlot(t, keys.Channel(topic))
	heard(2)
	if b.Stats.DecodeErrs.Load() != 0 || a.Stats.PublishErrs.Load() > 3 {
		t.Errorf("decode errors %d, publish errors %d", b.Stats.DecodeErrs.Load(), a.Stats.PublishErrs.Load())
	}
}

// TestForwardingFollowsReshardedInbox: on a Redis Cluster the instances'
// inboxes are sharded channels (no plain channel is subscribed on any
// node), and a request forwarded to the owner, and its reply, still go
// through after both inboxes' slots moved to other nodes.
func TestForwardingFollowsReshardedInbox(t *testing.T) {
	cl := redistest.StartCluster(t)
	rdb := cl.Client(t)
	keys := redisrace.Keys{Prefix: "f:"}
	start := func(name string) *redisrace.Cluster {
		bus := redisrace.NewBus(rdb, keys, name, zerolog.Nop())
		c, err := redisrace.NewCluster(t.Context(), rdb, redisrace.ClusterOptions{
			Keys: keys, Instance: name, Clock: race.SystemClock{}, Log: zerolog.Nop(), Bus: bus})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close(); _ = bus.Close() })
		return c
	}
	a, b := start("a"), start("b")
	// a answers each frame {"n":N} with {"n":N+100}.
	a.Listen(func(frame []byte) {
		var m struct{ N int }
		if json.Unmarshal(frame, &m) == nil {
			_, _ = a.Send(context.Background(), "b", fmt.Appendf(nil, `{"n":%d}`, m.N+100))
		}
	})
	replies := make(chan int, 100)
	b.Listen(func(frame []byte) {
		var m struct{ N int }
		if json.Unmarshal(frame, &m) == nil {
			replies <- m.N
		}
	})
	var mu sync.Mutex
	var plain []string
	err := rdb.ForEachMaster(t.Context(), func(ctx context.Context, node *redis.Client) error {
		p, err := node.PubSubChannels(ctx, "*").Result()
		mu.Lock()
		defer mu.Unlock()
		plain = append(plain, p...)
		return err
	})
	if err != nil || len(plain) != 0 {
		t.Fatalf("plain channels subscribed %v (%v), want none", plain, err)
	}
	// answered sends frame n to a until a's reply comes back (the first
	// tries may go while an inbox subscribes again on its new node).
	answered := func(n int) {
		t.Helper()
		deadline := time.Now().Add(settleWait)
		for time.Now().Before(deadline) {
			heard, err := b.Send(t.Context(), "a", fmt.Appendf(nil, `{"n":%d}`, n))
			if err == nil && heard {
				select {
				case got := <-replies:
					if got == n+100 {
						return
					}
				case <-time.After(time.Second):
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("frame %d was never answered", n)
	}
	answered(1)
	cl.MoveSlot(t, keys.Channel("instance:a"))
	cl.MoveSlot(t, keys.Channel("instance:b"))
	answered(2)
}
