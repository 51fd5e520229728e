package redisrace

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// publishBatch is the most PUBLISH commands sent in one pipeline.
const publishBatch = 256

// message is one pub/sub message waiting to be published.
type message struct {
	channel string
	payload []byte
}

// publishBatches hands the messages that arrive on in to send until ctx
// is done: as many as are waiting, up to publishBatch, at once, so a busy
// instance pays one round trip for many messages and whoever queued them
// never waits for Redis. failed hears of each batch that failed while ctx
// was live, with the number of messages it held.
func publishBatches(ctx context.Context, in <-chan message, send func(ctx context.Context, batch []message) error, failed func(n int, err error)) {
	batch := make([]message, 0, publishBatch)
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-in:
			batch = append(batch[:0], m)
		more:
			for len(batch) < publishBatch {
				select {
				case m := <-in:
					batch = append(batch, m)
				default:
					break more
				}
			}
			pctx, cancel := context.WithTimeout(ctx, opTimeout)
			err := send(pctx, batch)
			cancel()
			if err != nil && ctx.Err() == nil {
				failed(len(batch), err)
			}
			clear(batch) // let the payloads go
		}
	}
}

// publishVia publishes batch in one pipeline through rdb, or on a Redis
// Cluster through the master of the slot of via: go-redis would send each
// PUBLISH (which names no key) to a node of its own, and the nodes'
// broadcasts would reorder the messages. One node passes them on to the
// others in the order it got them.
func publishVia(ctx context.Context, rdb redis.UniversalClient, via string, batch []message) error {
	node, err := publisher(ctx, rdb, via)
	if err != nil {
		return err
	}
	_, err = node.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, m := range batch {
			p.Publish(ctx, m.channel, m.payload)
		}
		return nil
	})
	return err
}

// publisher is the client to PUBLISH through: rdb itself, or on a Redis
// Cluster the master of the slot of key (pub/sub messages reach the
// subscribers of every node from there, in the order published).
func publisher(ctx context.Context, rdb redis.UniversalClient, key string) (redis.Cmdable, error) {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return rdb, nil
	}
	node, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return nil, classify(err)
	}
	return node, nil
}
