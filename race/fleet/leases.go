package fleet

import (
	"context"
	"errors"
	"time"

	"sirtommy/race"
)

// Run keeps this instance's races owned: every period it renews their
// leases, lets go of races it lost, and takes over live races whose owner
// died, so that their timers run somewhere. The period is real time, like
// the leases' expiry in Redis. It returns when ctx is done, once the
// fleet's background work has stopped (Close).
//
// Renewal runs on its own goroutine, apart from releasing finished races
// and adopting orphans: under load those take seconds (a Redis round trip
// each, and a rebuild per adopted race), and a renewal waiting behind them
// let leases run out, so that the instances took each other's races.
func (f *Fleet) Run(ctx context.Context, every time.Duration) {
	defer f.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick(ctx, every, f.renew)
	}()
	tick(ctx, every, f.housekeep)
	<-done
}

// tick calls fn every period until ctx is done.
func tick(ctx context.Context, every time.Duration, fn func(context.Context)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fn(ctx)
	}
}

// renew extends the leases of the races run here and not yet released
// (a finished race keeps its lease until housekeep releases it), in one
// pipeline, and stops the races another instance owns now. It reads no
// race's state: that would wait for a race's lock.
func (f *Fleet) renew(ctx context.Context) {
	f.fwd.forgetOwners()
	c := f.cluster
	var live []string
	byID := make(map[string]*race.Race)
	draining := f.svc.Draining()
	for _, r := range f.svc.Races() {
		switch {
		case f.isReleased(r):
		case r.Halted() && !draining:
			// Stopped by a fenced write (an append, a decision): another
			// instance runs it now.
			f.deps.Log.Warn().Str("race", r.ID()).Msg("race stopped here: another instance runs it now")
			f.lost(r)
		default:
			live = append(live, r.ID())
			byID[r.ID()] = r
		}
	}
	cctx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()
	lost, err := c.Renew(cctx, live)
	if err != nil {
		f.deps.Log.Warn().Err(err).Msg("leases not renewed")
		return
	}
	for _, id := range lost {
		r := byID[id]
		if r == nil || f.isReleased(r) {
			continue // released meanwhile: finished, not lost
		}
		if ok, err := c.Claim(cctx, id); err == nil && ok {
			continue // the lease had only expired (Redis was away): kept
		}
		f.deps.Log.Warn().Str("race", id).Msg("lease lost: another instance runs the race now")
		f.lost(r)
	}
}

// housekeep releases the leases of finished races and takes over live
// races whose lease ran out.
func (f *Fleet) housekeep(ctx context.Context) {
	c := f.cluster
	f.pruneRemotes()
	races := f.svc.Races()
	f.pruneReleased(races)
	for _, r := range races {
		if r.State().Over() && f.markReleased(r) {
			// The record that says it is over is stored before the lease
			// goes: a free lease with a record not over yet is a race
			// whose end another instance must complete.
			r.FlushRecords()
			cctx, cancel := context.WithTimeout(ctx, clusterTimeout)
			_ = c.Release(cctx, r.ID())
			cancel()
		}
	}
	cctx, cancel := context.WithTimeout(ctx, clusterTimeout)
	orphans, err := c.Orphans(cctx)
	cancel()
	if err != nil {
		return
	}
	for _, id := range orphans {
		cctx, cancel := context.WithTimeout(ctx, clusterTimeout)
		if _, err := f.takeOver(cctx, id); err != nil && !errors.Is(err, ErrOver) {
			f.deps.Log.Warn().Err(err).Str("race", id).Msg("orphan not taken over")
		}
		cancel()
	}
}
