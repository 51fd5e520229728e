package rediscoach_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"sirtommy/race/redisrace/redistest"
	"sirtommy/web/coach/coachtest"
	"sirtommy/web/coach/rediscoach"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func client(t *testing.T) *redis.Client {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return rdb
}

func TestStore(t *testing.T) { coachtest.TestStore(t, rediscoach.New(client(t), "test:")) }

// TestFleet: two instances on one Redis analyse a game once.
func TestFleet(t *testing.T) {
	rdb := client(t)
	coachtest.TestFleet(t, rediscoach.New(rdb, "test:"))
	keys, err := rdb.Keys(context.Background(), "test:{analysis:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 {
		t.Fatalf("keys left %v, want the analysis alone (its claim gone)", keys)
	}
}
