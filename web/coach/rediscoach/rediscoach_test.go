package rediscoach_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race/redisrace/redistest"
	"sirtommy/web/coach"
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

// TestSplit runs the suites on a fleet's store: the finished analyses in
// SQL, the claims in Redis; Redis is left with no analysis and no claim.
func TestSplit(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		rdb := client(t)
		split := func() coach.Store { return coach.NewSplit(sqlstore.NewAnalyses(db), rediscoach.New(rdb, "test:")) }
		t.Run("store", func(t *testing.T) { coachtest.TestStore(t, split()) })
		if err := rdb.FlushAll(context.Background()).Err(); err != nil { // the claims the store suite leaves held
			t.Fatal(err)
		}
		if _, err := db.SQL().Exec("DELETE FROM analyses"); err != nil {
			t.Fatal(err)
		}
		t.Run("fleet", func(t *testing.T) { coachtest.TestFleet(t, split()) })
		keys, err := rdb.Keys(context.Background(), "test:*").Result()
		if err != nil || len(keys) != 0 {
			t.Fatalf("redis keys left %v (%v), want none", keys, err)
		}
	})
}
