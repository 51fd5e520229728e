package redisrace_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace"
	"sirtommy/race/redisrace/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// settleWait bounds a bus's Sync in tests.
const settleWait = 5 * time.Second

func TestStoreConformance(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	n := 0
	racetest.TestStore(t, func(t *testing.T) race.Store {
		n++ // a fresh prefix per subtest: an empty store
		return redisrace.NewStore(rdb, redisrace.StoreOptions{Keys: redisrace.Keys{Prefix: "t" + string(rune('a'+n)) + ":"}})
	})
}

func TestBusConformance(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
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
}

func TestKeysShareTheRaceSlot(t *testing.T) {
	k := redisrace.Keys{}
	for _, got := range []string{k.Log("R"), k.Seqs("R"), k.Meta("R"), k.Owner("R")} {
		if !strings.HasPrefix(got, "sirtommy:{race:R}") {
			t.Errorf("%q does not start with the race's hash tag", got)
		}
	}
	if got := (redisrace.Keys{Prefix: "x:"}).Log("R"); got != "x:{race:R}:log" {
		t.Errorf("prefixed log key %q", got)
	}
	// A race's channels share one bus shard's hash tag, so that sharded
	// pub/sub carries them on one node in order.
	seat := k.Channel(race.SeatTopic("R", 1))
	tag, _, _ := strings.Cut(seat, "}")
	if !strings.HasPrefix(tag, "sirtommy:{bus:") {
		t.Fatalf("seat channel %q has no bus shard tag", seat)
	}
	for _, got := range []string{k.Channel(race.SeatTopic("R", 0)), k.Channel(race.WatchTopic("R")), k.Channel("R/conn/a/1"), k.Channel("R/owner")} {
		if !strings.HasPrefix(got, tag+"}:R:") {
			t.Errorf("%q is not in the bus shard of %q", got, seat)
		}
	}
	shards := map[string]bool{}
	for i := range 200 {
		c := k.Channel(race.WatchTopic(fmt.Sprint("race", i)))
		shards[c[:strings.Index(c, "}")]] = true
	}
	if len(shards) != redisrace.BusShards {
		t.Errorf("200 races' channels in %d bus shards, want all %d", len(shards), redisrace.BusShards)
	}
}

func TestFinishedRaceExpiresAfterRetention(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	const retention = time.Hour
	keys := redisrace.Keys{}
	s := redisrace.NewStore(rdb, redisrace.StoreOptions{Retention: retention})
	if err := s.Append(t.Context(), "R", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"}); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.TTL(t.Context(), keys.Log("R")).Val(); ttl <= retention {
		t.Errorf("a live race's log expires in %v: sooner than any race lasts", ttl)
	}
	if err := s.Finished(t.Context(), "R"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{keys.Log("R"), keys.Seqs("R")} {
		if ttl := rdb.TTL(t.Context(), k).Val(); ttl <= 0 || ttl > retention {
			t.Errorf("%s expires in %v, want the retention %v", k, ttl, retention)
		}
	}
}
