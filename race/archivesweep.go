package race

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The sweeps archive what an instance that died left unarchived. In
// Redis mode the Records list every race decided as Finished until it is
// archived (ArchiveLedger: the list is written before the result, so no
// such race escapes it); the instance the race finished on archives it
// within moments and unlists it. Every Service that archives sweeps the
// list when it is made and every minute after, and archives from the live
// store each race listed ArchiveSweepAfter ago or more: one whose
// instance died between its result and its archiving. Two sweeps, or a
// sweep and the race's own archiver, may store a race twice: Put keeps
// it once.

// The sweeps of the live store's unarchived races (ArchiveLedger).
const (
	// archiveSweepEvery is the time between two sweeps of this instance.
	archiveSweepEvery = time.Minute
	// ArchiveSweepAfter is how long a race stays unarchived before a
	// sweep archives it from its record: its own instance's archiver
	// stores it within milliseconds, and is left to do so.
	ArchiveSweepAfter = 2 * time.Minute
	// archiveSweepBatch bounds the races one sweep takes; the next sweep
	// takes the next ones.
	archiveSweepBatch = 100
	// archiveSweepTimeout bounds one sweep.
	archiveSweepTimeout = 5 * time.Minute
)

// sweeps is the timer and the state of a Service's sweeps. Its lock is a
// leaf: nothing is called under it but the clock, a leaf too.
type sweeps struct {
	mu   sync.Mutex
	t    Timer
	done chan struct{} // closed when the sweep that runs ends; nil when none runs
	off  bool          // Drain began: no more sweeps
}

// SweepArchive archives the races that the Records list as decided
// Finished before before and not archived (ArchiveLedger): those whose
// instance died between their result and their archiving. Each is
// rebuilt from its record and event log, as Open rebuilds a finished
// race for its replay, stored, and unlisted; a race still live is left
// to its own end, and one the live store no longer holds, or aborted, is
// unlisted. It returns how many it archived. Without an Archive, or
// Records that keep no such list, it does nothing.
//
// The Service sweeps by itself every minute, and once when it is made,
// the races listed ArchiveSweepAfter ago or more.
func (s *Service) SweepArchive(ctx context.Context, before time.Time) (int, error) {
	ledger, ok := s.deps.Records.(ArchiveLedger)
	if s.arch == nil || !ok {
		return 0, nil
	}
	ids, err := ledger.Unarchived(ctx, before, archiveSweepBatch)
	if err != nil {
		return 0, fmt.Errorf("sweep of the unarchived races: %w", err)
	}
	n := 0
	for _, id := range ids {
		done, err := s.sweepOne(ctx, ledger, id)
		if err != nil {
			return n, fmt.Errorf("sweep of the unarchived races: race %s: %w", id, err)
		}
		if done {
			n++
		}
	}
	return n, nil
}

// sweepOne archives listed race id if it is finished and reports whether
// it did.
func (s *Service) sweepOne(ctx context.Context, ledger ArchiveLedger, id string) (bool, error) {
	if s.arch.holds(id) {
		return false, nil // on its way here
	}
	r, err := s.Get(id)
	if err == nil && !r.State().Over() {
		return false, nil // it runs here: its end archives it
	}
	if err != nil {
		rec, found, err := s.deps.Records.Load(ctx, id)
		if err != nil {
			return false, err
		}
		if !found || rec.State == Aborted {
			if !found {
				s.deps.Log.Error().Str("race", id).Msg("finished race never archived, and its record is gone from the live store")
			}
			return false, ledger.Archived(ctx, id)
		}
		if rec.State != Finished {
			return false, nil // live elsewhere (or taken over soon): its end archives it
		}
		moves, err := s.deps.Store.Moves(ctx, id)
		if err != nil {
			return false, err
		}
		if r, err = Restore(rec, moves, s.deps); err != nil {
			s.deps.Log.Error().Err(err).Str("race", id).Msg("finished race cannot be rebuilt from the live store, nor archived")
			return false, ledger.Archived(ctx, id)
		}
	}
	a, err := r.archived(ctx)
	if err != nil {
		return false, err
	}
	if err := s.deps.Archive.Put(ctx, a); err != nil {
		s.arch.failures.Add(1)
		if IsRefusal(err) && ErrorCode(err) != CodeUnavailable {
			// Refused for good: listed, it would stop every sweep here.
			s.deps.Log.Error().Err(err).Str("race", id).Msg("finished race refused by the archive; no longer listed as unarchived")
			return false, ledger.Archived(ctx, id)
		}
		return false, err
	}
	s.deps.Log.Info().Str("race", id).Msg("finished race archived from the live store")
	return true, ledger.Archived(ctx, id)
}

// startSweeps sweeps now and every archiveSweepEvery, when the Service
// archives and its Records keep a ledger: until Drain.
func (s *Service) startSweeps() {
	if _, ok := s.deps.Records.(ArchiveLedger); !ok || s.arch == nil {
		return
	}
	w := &sweeps{}
	s.sweeps = w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t = s.deps.Clock.AfterFunc(0, s.sweepTick)
}

// sweepTick runs one sweep on a goroutine of its own (a fake clock runs
// its timers in the caller's), of the races listed ArchiveSweepAfter
// before the timer's time, then sets the next archiveSweepEvery after
// that time.
func (s *Service) sweepTick() {
	at := s.deps.Clock.Now()
	before := at.Add(-ArchiveSweepAfter)
	w := s.sweeps
	w.mu.Lock()
	if w.off || w.done != nil {
		w.mu.Unlock()
		return
	}
	done := make(chan struct{})
	w.done = done
	w.mu.Unlock()
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), archiveSweepTimeout)
		n, err := s.SweepArchive(ctx, before)
		cancel()
		if err != nil {
			s.deps.Log.Warn().Err(err).Int("archived", n).Msg("sweep of the unarchived races failed; the next one tries again")
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.done = nil
		if !w.off {
			next := at.Add(archiveSweepEvery).Sub(s.deps.Clock.Now())
			w.t = s.deps.Clock.AfterFunc(max(next, 0), s.sweepTick)
		}
	}()
}

// stop ends the sweeps, waiting until ctx is done for one that runs.
func (w *sweeps) stop(ctx context.Context) {
	w.mu.Lock()
	w.off = true
	if w.t != nil {
		w.t.Stop()
	}
	done := w.done
	w.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
}
