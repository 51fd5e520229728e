package loadtest

import (
	"context"
	"sync"
	"time"
)

// IdleReport is what an idle run did.
type IdleReport struct {
	URL         string           `json:"url"`
	Connections int64            `json:"connections"`
	Seconds     float64          `json:"seconds"`
	Errors      map[string]int64 `json:"errorsByCode"`
	Dropped     int64            `json:"droppedConnections"`
}

// RunIdle opens n websockets to url that send nothing, holds them for d
// (minus the ramp-up) and closes them: read the server's /metrics while
// they are open to see what an idle connection costs it.
func RunIdle(ctx context.Context, url string, n int, d time.Duration) IdleReport {
	r := &run{start: time.Now()}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	sem := make(chan struct{}, dialConcurrency)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			c, err := r.dial(ctx, sem, url)
			if err != nil {
				if ctx.Err() == nil {
					r.errs.add("dial-failed")
				}
				return
			}
			defer c.close()
			select {
			case _, ok := <-c.inbox:
				if !ok {
					r.connEnded(ctx, c)
				}
			case <-ctx.Done():
			}
		})
	}
	wg.Wait()
	rep := IdleReport{URL: url, Connections: r.conns.Load(), Seconds: time.Since(r.start).Seconds(),
		Errors: r.errs.snapshot(), Dropped: r.dropped.Load()}
	if rep.Errors == nil {
		rep.Errors = map[string]int64{}
	}
	return rep
}
