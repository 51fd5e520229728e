package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// readyTags are the hash tags of the live stores' fixed slots: the
// lobby's (challenges, invites and seats; the queue; presence) and one
// race's, standing for the races' and the analyses' claims (which are
// spread over every slot: the cluster's coverage stands for the rest).
// Ratings, ghosts and the days' boards are in the SQL database, which
// /readyz pings apart (dbHealth).
var readyTags = []string{"{lobby}", "{queue}", "{presence}", "{race:ready}"}

// readyKeep is how long a readiness probe's key stays: it is written and
// read back at once, and needs to outlive the probe only.
const readyKeep = 10 * time.Second

// redisReady is /readyz's check in Redis mode. PING is not enough: a
// Redis may answer it and refuse every write (out of memory, a failed
// save, a replica, too few replicas), and a Redis Cluster answers it
// while slots are not served (CLUSTERDOWN for every key). So on a
// cluster every master must report the cluster ok with every slot
// assigned and served, and a key under each of the stores' hash tags
// must be written and read back.
func redisReady(rdb redis.UniversalClient, prefix, instance string) func(context.Context) error {
	return func(ctx context.Context) error {
		if cc, ok := rdb.(*redis.ClusterClient); ok {
			if err := cc.ForEachMaster(ctx, clusterServesEverySlot); err != nil {
				return fmt.Errorf("redis cluster: %w", err)
			}
		}
		stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
		pipe := rdb.Pipeline()
		gets := make([]*redis.StringCmd, len(readyTags))
		for i, tag := range readyTags {
			key := prefix + tag + ":ready:" + instance
			pipe.Set(ctx, key, stamp, readyKeep)
			gets[i] = pipe.Get(ctx, key)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("redis: a round trip through the stores' keys: %w", err)
		}
		for i, g := range gets {
			if g.Val() != stamp {
				return fmt.Errorf("redis: %s's probe read back %q, not what was written", readyTags[i], g.Val())
			}
		}
		return nil
	}
}

// clusterServesEverySlot asks one master whether the cluster is ok and
// all 16,384 slots are assigned and served, as it sees it.
func clusterServesEverySlot(ctx context.Context, c *redis.Client) error {
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil {
		return fmt.Errorf("%s: %w", c.Options().Addr, err)
	}
	want := map[string]string{"cluster_state": "ok", "cluster_slots_assigned": "16384", "cluster_slots_ok": "16384"}
	for _, line := range strings.Split(info, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if w, ok := want[k]; ok {
			if v != w {
				return fmt.Errorf("%s: %s is %s, want %s", c.Options().Addr, k, v, w)
			}
			delete(want, k)
		}
	}
	if len(want) > 0 {
		return fmt.Errorf("%s: CLUSTER INFO lacks %v", c.Options().Addr, want)
	}
	return nil
}
