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

// publishBatches publishes the messages that arrive on in until ctx is
// done: as many as are waiting, up to publishBatch, in one pipeline, so a
// busy instance pays one round trip for many messages and whoever queued
// them never waits for Redis. failed hears of each pipeline that failed
// while ctx was live, with the number of messages it held.
func publishBatches(ctx context.Context, rdb redis.UniversalClient, in <-chan message, failed func(n int, err error)) {
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
			_, err := rdb.Pipelined(pctx, func(p redis.Pipeliner) error {
				for _, m := range batch {
					p.Publish(pctx, m.channel, m.payload)
				}
				return nil
			})
			cancel()
			if err != nil && ctx.Err() == nil {
				failed(len(batch), err)
			}
		}
	}
}
