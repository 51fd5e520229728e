package main

import (
	"testing"

	"sirtommy/race/redisrace/redistest"
)

// TestReadyzRedisRefusingWrites: a Redis that answers PING but refuses
// every write (here it wants a replica it does not have; a full memory or
// a failed save does the same) makes /readyz answer 503, and 200 again
// once it takes writes. On the code that only sent PING, /readyz stayed
// 200.
func TestReadyzRedisRefusingWrites(t *testing.T) {
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	base, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")
	if code := readyz(t, base); code != 200 {
		t.Fatalf("/readyz %d with Redis up", code)
	}
	rdb := rds.Client(t)
	if err := rdb.ConfigSet(t.Context(), "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("PING refused too: %v", err)
	}
	if code := readyz(t, base); code != 503 {
		t.Fatalf("/readyz %d while Redis refuses writes, want 503", code)
	}
	if err := rdb.ConfigSet(t.Context(), "min-replicas-to-write", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if code := readyz(t, base); code != 200 {
		t.Fatalf("/readyz %d once Redis takes writes again", code)
	}
}

// TestReadyzClusterSlotNotServed: a Redis Cluster with one slot nobody
// serves (every key is refused with CLUSTERDOWN while every node answers
// PING) makes /readyz answer 503, and 200 once the slot is served again.
// On the code that pinged every master, /readyz stayed 200.
func TestReadyzClusterSlotNotServed(t *testing.T) {
	cl := redistest.StartCluster(t)
	pg := fleetDatabase(t)
	base, _, _, _ := startServe(t, "--redis", cl.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")
	if code := readyz(t, base); code != 200 {
		t.Fatalf("/readyz %d on a healthy cluster", code)
	}
	rdb := cl.Client(t)
	ctx := t.Context()
	const key = "a key of some race's slot"
	slot, err := rdb.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	owner, err := rdb.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.ClusterDelSlots(ctx, int(slot)).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "/readyz 503 with a slot not served", func() bool { return readyz(t, base) == 503 })
	if err := owner.ClusterAddSlots(ctx, int(slot)).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "/readyz 200 once the slot is served again", func() bool { return readyz(t, base) == 200 })
}
