package main

import (
	"context"
	"testing"

	"sirtommy/race/redisrace/redistest"
)

// TestRedisCommandsPerMoveAcrossInstances plays a race whose players are
// on two instances and counts the Redis commands the moves cost (issue
// #19's budget: at most 3 per move). A move made on the race's owner is
// its log append and the opponent's update on the remote seat's channel;
// a forwarded move is the request, the append, the mover's "moved" on its
// seat's channel and the reply (each a frame of its own here, the moves
// one at a time: under load one frame carries many requests or replies).
// The seat that is on the owner's instance gets its events there,
// through no channel.
func TestRedisCommandsPerMoveAcrossInstances(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	a, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms", "--log-level", "warn")
	b, _, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms", "--log-level", "warn")
	_, p0, p1 := raceAcross(t, a, b)
	if err := rds.Client(t).ConfigResetStat(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	const rounds = 20
	moves := 0
	for range rounds {
		for _, p := range []*player{p0, p1} {
			if p.move() {
				moves++
			}
		}
	}
	calls := rds.CommandCalls(t)
	// The commands the instances send; Redis also counts those the
	// scripts run inside (the append's XADD, HSET, ...), which are no
	// round trips. Lease renewals (a script each second) are among them.
	perMove := calls["publish"] + calls["evalsha"] + calls["eval"]
	t.Logf("%d moves: %v", moves, calls)
	if moves < rounds {
		t.Fatalf("only %d moves played", moves)
	}
	if max := 3 * moves; perMove > max+rounds/2 {
		t.Errorf("%d moves cost %d PUBLISH, EVALSHA and EVAL (%v): more than 3 a move", moves, perMove, calls)
	}
	if calls["publish"] > 2*moves+rounds/2 {
		t.Errorf("%d moves cost %d PUBLISH: more than 2 a move (half of them forwarded: the request, the reply and the mover's event; the others one event to the other instance)", moves, calls["publish"])
	}
}
