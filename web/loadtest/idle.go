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
	// Held is the connections open when the server's memory was read
	// during the run (Config.Measure), and Before and During the readings;
	// zero when it was not read.
	Held   int64  `json:"held,omitempty"`
	Before Memory `json:"before"`
	During Memory `json:"during"`
	// PerConn is (During - Before) / Held: what an idle connection costs
	// the server in heap and stacks, and goroutines.
	PerConn Memory `json:"perConnection"`
	// MemoryError says why the memory was not read ("" if it was).
	MemoryError string `json:"memoryError,omitempty"`
}

// IdleConfig is an idle run.
type IdleConfig struct {
	URL      string
	Conns    int
	Duration time.Duration
	// Memory, when set, reads the server's memory: once before the first
	// dial and once while all the connections that could be opened are
	// open (settle after the last dial, or just before the end).
	Memory func(context.Context) (Memory, error)
}

// idleSettle is how long the connections are left alone after the last
// dial before the server's memory is read.
const idleSettle = 3 * time.Second

// RunIdle opens cfg.Conns websockets to cfg.URL that send nothing, holds
// them for cfg.Duration (minus the ramp-up) and closes them; with
// cfg.Memory it reports what they cost the server.
func RunIdle(ctx context.Context, cfg IdleConfig) IdleReport {
	r := &run{start: time.Now()}
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var rep IdleReport
	if cfg.Memory != nil {
		var err error
		if rep.Before, err = cfg.Memory(ctx); err != nil {
			rep.MemoryError = err.Error()
			cfg.Memory = nil
		}
	}
	sem := make(chan struct{}, dialConcurrency)
	var dials, wg sync.WaitGroup
	measured := make(chan struct{})
	for range cfg.Conns {
		dials.Add(1)
		wg.Go(func() {
			c, err := r.dial(ctx, sem, cfg.URL)
			dials.Done()
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
	go func() {
		defer close(measured)
		if cfg.Memory == nil {
			return
		}
		dials.Wait()
		deadline, _ := ctx.Deadline()
		wait := min(idleSettle, time.Until(deadline)-time.Second)
		select {
		case <-time.After(max(wait, 0)):
		case <-ctx.Done():
			rep.MemoryError = "the run ended before its connections settled"
			return
		}
		held := r.conns.Load() - r.dropped.Load()
		during, err := cfg.Memory(ctx)
		if err != nil {
			rep.MemoryError = err.Error()
			return
		}
		rep.Held, rep.During = held, during
		if held > 0 {
			n := float64(held)
			rep.PerConn = Memory{Heap: (during.Heap - rep.Before.Heap) / n, Stacks: (during.Stacks - rep.Before.Stacks) / n,
				Goroutines: (during.Goroutines - rep.Before.Goroutines) / n}
		}
	}()
	wg.Wait()
	<-measured
	rep.URL, rep.Connections, rep.Seconds = cfg.URL, r.conns.Load(), time.Since(r.start).Seconds()
	rep.Errors, rep.Dropped = r.errs.snapshot(), r.dropped.Load()
	if rep.Errors == nil {
		rep.Errors = map[string]int64{}
	}
	return rep
}
