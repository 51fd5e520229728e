// Package redisrace holds the Redis implementations of the race package's
// Store and Bus, for several instances sharing one Redis: a stream per
// race for the event log, with a per-seat sequence check that makes
// appends idempotent, and pub/sub carrying events between instances.
//
// Every key carries a prefix (default "sirtommy:") and a hash tag, so that
// one race's keys share a Redis Cluster slot: "sirtommy:{race:ID}:log";
// its pub/sub channels share one of BusShards tags.
package redisrace

import (
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// DefaultPrefix starts every key and channel unless the caller names
// another (--redis-prefix).
const DefaultPrefix = "sirtommy:"

// Key lifetimes.
const (
	// LiveTTL is the expiry every write sets on a race's keys while it
	// runs: longer than any race (at most an hour, and a match of nine
	// rounds each made anew), so that a race nobody finishes still goes
	// away.
	LiveTTL = 24 * time.Hour
	// DefaultRetention is how long a finished race's records stay for
	// replays and late readers (--redis-retention).
	DefaultRetention = 7 * 24 * time.Hour
)

// Keys names the Redis keys and channels of one deployment.
type Keys struct {
	// Prefix starts every name; "" means DefaultPrefix.
	Prefix string
}

func (k Keys) prefix() string {
	if k.Prefix == "" {
		return DefaultPrefix
	}
	return k.Prefix
}

// Race is the common stem of race id's keys: "PREFIX{race:ID}". The hash
// tag keeps all of them in one cluster slot.
func (k Keys) Race(id string) string { return k.prefix() + "{race:" + id + "}" }

// Log is race id's stream of accepted moves.
func (k Keys) Log(id string) string { return k.Race(id) + ":log" }

// Seqs is race id's hash of each seat's last seq ("0", "1") and of every
// stored move by "SEAT:SEQ", which makes appends idempotent.
func (k Keys) Seqs(id string) string { return k.Race(id) + ":seq" }

// Meta is race id's record (race.Record as JSON).
func (k Keys) Meta(id string) string { return k.Race(id) + ":meta" }

// Result is race id's result, set once (race.Result and state as JSON).
func (k Keys) Result(id string) string { return k.Race(id) + ":result" }

// Owner is race id's lease: the instance that runs it, with an expiry.
func (k Keys) Owner(id string) string { return k.Race(id) + ":owner" }

// Live is the sorted set of live races, scored by the Unix time in
// milliseconds when their owner's lease runs out.
func (k Keys) Live() string { return k.prefix() + "live" }

// Unarchived is the sorted set of races decided as finished and not yet
// archived, scored by the Unix time in milliseconds when they were
// decided (race.ArchiveLedger). Like Live it is a key of its own, in a
// Redis Cluster slot of its own: written beside a race's scripts, never
// in them.
func (k Keys) Unarchived() string { return k.prefix() + "unarchived" }

// Inbox is the pub/sub channel where instance id takes forwarded requests
// and replies on one Redis. On a Redis Cluster they go by the bus instead,
// on Channel("instance:"+id), a sharded channel.
func (k Keys) Inbox(id string) string { return k.prefix() + "instance:" + id }

// BusShards is how many hash tags the bus's channels are spread over:
// every channel of a race shares one ("PREFIX{bus:N}:ID:seat/0"), so that
// on a Redis Cluster a race's events go, by sharded pub/sub, to the one
// node serving that tag's slot, in order, and an instance needs one
// subscription connection per tag rather than per race. Channels are not
// keys: no script touches them with a race's keys.
const BusShards = 16

// Channel is the pub/sub channel of a bus topic. Topics of a race
// ("ID/seat/0", "ID/watch", "ID/conn/...") share the race's bus shard.
func (k Keys) Channel(topic string) string {
	id, rest, ok := strings.Cut(topic, "/")
	if !ok {
		return k.busStem(topic) + ":" + topic
	}
	return k.busStem(id) + ":" + id + ":" + rest
}

// busStem is the start of the channels of race id (or of a topic that
// belongs to no race): the prefix and its bus shard's hash tag.
func (k Keys) busStem(id string) string { return k.shardStem(busShard(id)) }

// shardStem is the start of bus shard i's channels.
func (k Keys) shardStem(i int) string { return k.prefix() + "{bus:" + strconv.Itoa(i) + "}" }

// busShard is the bus shard of race id.
func busShard(id string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % BusShards)
}

// shardOfChannel is the bus shard a channel's hash tag names, or -1 for a
// channel without one.
func (k Keys) shardOfChannel(channel string) int {
	rest, ok := strings.CutPrefix(channel, k.prefix()+"{bus:")
	if !ok {
		return -1
	}
	n, _, ok := strings.Cut(rest, "}")
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 || i >= BusShards {
		return -1
	}
	return i
}
