// Package redislobby holds the Redis implementations of the lobby's live
// state, for several instances sharing one Redis: the presence counts and
// live race lists, and the shared lobby (the quick-play queue, open
// challenges, invites, who is racing, and the courier that carries a
// matched event to the instance holding a player's connection). What
// lasts (ratings, ghosts, the days' boards) is in the durable store,
// lobby/sqlstore, never in Redis.
//
// Every key carries the deployment's prefix (default "sirtommy:") and a
// hash tag per group ({presence}, {queue}, {lobby}): each Lua script
// touches one group, which Redis Cluster allows only within one slot.
package redislobby

import "sirtommy/race/redisrace"

// Keys names the lobby's Redis keys of one deployment.
type Keys struct {
	// Prefix starts every name; "" means redisrace.DefaultPrefix, so that
	// races and lobby share one --redis-prefix.
	Prefix string
}

func (k Keys) prefix() string {
	if k.Prefix == "" {
		return redisrace.DefaultPrefix
	}
	return k.Prefix
}
