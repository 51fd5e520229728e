package race

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// The archiver keeps every race that finishes on this instance in the
// Archive, exactly once and off the move path. The Service's end hook
// queues the race, in the goroutine that ended it, without waiting for
// anything; one worker at a time then reads the race's whole record (its
// moves come from the event log, so never under the race's lock nor in
// the ending goroutine) and stores it, retrying while the archive fails,
// in the order the races ended. The queue is unbounded, as the lobby's
// end queue is: a race's record is a few kilobytes, and an outage of
// minutes at a thousand races is a few megabytes.
//
// Races aborted are not archived (see Archive). A race that finishes on
// two instances (one took it over from the other) is archived by both,
// and kept once: Put stores a race once.
//
// Across a crash: in Redis mode the Records list every race decided as
// Finished until it is archived (ArchiveLedger), and every instance
// sweeps that list (archivesweep.go), so a race whose instance died
// between its result and its archiving is archived all the same. In
// memory mode the races die with the process.
//
// Its lock is a leaf: nothing is called while it is held.

// Retry delays while the archive fails: from a tenth of a second,
// doubling, to at most five seconds between tries. Real time, as the
// database's recovery is.
const (
	archiveRetryFirst = 100 * time.Millisecond
	archiveRetryMax   = 5 * time.Second
)

// archiveTimeout bounds one call to the archive: a healthy database
// writes a race in milliseconds.
const archiveTimeout = 10 * time.Second

// archiveJob is one finished race waiting for the worker.
type archiveJob struct {
	race *Race
	// followed is set (under archiver.mu) when the race's followers have
	// done their work before it was stored: Put stores it followed.
	followed bool
}

// archiver is the Service's worker of the Archive.
type archiver struct {
	archive Archive
	log     zerolog.Logger
	// failures counts the Puts that failed (a metric).
	failures atomic.Uint64

	mu      sync.Mutex
	pending []*archiveJob
	jobs    map[string]*archiveJob // pending or being archived, by race id
	busy    bool                   // a worker runs
	idle    chan struct{}          // closed when the worker that runs has nothing left
	stop    chan struct{}          // closed when Drain stops waiting: retries give up
	stopped bool
}

func newArchiver(a Archive, log zerolog.Logger) *archiver {
	return &archiver{archive: a, log: log, jobs: make(map[string]*archiveJob), stop: make(chan struct{})}
}

// queue adds finished race r for the worker, starting it if none runs.
// It never waits for anything but the archiver's lock.
func (a *archiver) queue(r *Race) {
	j := &archiveJob{race: r}
	a.mu.Lock()
	defer a.mu.Unlock()
	if old := a.jobs[r.id]; old != nil {
		j.followed = old.followed
	}
	a.jobs[r.id] = j
	a.pending = append(a.pending, j)
	if !a.busy {
		a.busy = true
		a.idle = make(chan struct{})
		go a.run(a.idle)
	}
}

// run archives the queued races in turn until none is left.
func (a *archiver) run(idle chan struct{}) {
	for {
		a.mu.Lock()
		if len(a.pending) == 0 {
			a.busy = false
			close(idle)
			a.mu.Unlock()
			return
		}
		j := a.pending[0]
		a.pending[0] = nil
		a.pending = a.pending[1:]
		a.mu.Unlock()
		stored, followed := a.archiveOne(j)
		id := j.race.id
		a.mu.Lock()
		if a.jobs[id] == j {
			delete(a.jobs, id)
		}
		// Marked followed while Put was on its way with the mark unset:
		// from now on Service.Followed marks the archive itself.
		late := stored && j.followed && !followed
		a.mu.Unlock()
		if late {
			ctx, cancel := context.WithTimeout(context.Background(), archiveTimeout)
			if err := a.archive.Followed(ctx, id); err != nil {
				// The lobby's sweep does the race's end again: harmless.
				a.log.Warn().Err(err).Str("race", id).Msg("archived race not marked followed")
			}
			cancel()
		}
	}
}

// archiveOne stores j's race, retrying while it fails until Drain gives
// up; it reports whether it was stored, and with which followed mark.
// The race's mark in the live store is dropped then (one try: the next
// sweep drops it otherwise, its Put doing nothing).
func (a *archiver) archiveOne(j *archiveJob) (stored, followed bool) {
	r := j.race
	var rec Archived
	if !a.retry(r.id, "finished race not archived: its record cannot be read", func(ctx context.Context) error {
		var err error
		rec, err = r.archived(ctx)
		return err
	}) {
		return false, false
	}
	if !a.retry(r.id, "finished race not archived", func(ctx context.Context) error {
		a.mu.Lock()
		rec.Followed = j.followed
		a.mu.Unlock()
		err := a.archive.Put(ctx, rec)
		if err != nil {
			a.failures.Add(1)
		}
		return err
	}) {
		return false, false
	}
	if l, ok := r.records.(ArchiveLedger); ok {
		ctx, cancel := context.WithTimeout(context.Background(), archiveTimeout)
		if err := l.Archived(ctx, r.id); err != nil {
			a.log.Warn().Err(err).Str("race", r.id).Msg("archived race still listed as unarchived; a sweep drops it")
		}
		cancel()
	}
	return true, rec.Followed
}

// retry calls f until it succeeds, refuses for good (a refusal other
// than unavailable: trying again would only repeat it), or Drain gives
// up; it reports whether f succeeded.
func (a *archiver) retry(id, what string, f func(context.Context) error) bool {
	delay := archiveRetryFirst
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), archiveTimeout)
		err := f(ctx)
		cancel()
		if err == nil {
			if try > 1 {
				a.log.Info().Str("race", id).Int("tries", try).Msg(what + ": done at last")
			}
			return true
		}
		if IsRefusal(err) && ErrorCode(err) != CodeUnavailable {
			a.log.Error().Err(err).Str("race", id).Msg(what)
			return false
		}
		select {
		case <-a.stop:
			a.log.Error().Err(err).Str("race", id).Msg(what + ": the server stopped waiting")
			return false
		default:
		}
		a.log.Warn().Err(err).Str("race", id).Int("try", try).Dur("retryIn", delay).Msg(what + ": trying again")
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-a.stop:
			t.Stop()
			a.log.Error().Err(err).Str("race", id).Msg(what + ": the server stopped waiting")
			return false
		}
		delay = min(2*delay, archiveRetryMax)
	}
}

// markFollowed marks race id's job followed if it is queued or being
// archived, and reports whether it was.
func (a *archiver) markFollowed(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	j := a.jobs[id]
	if j != nil {
		j.followed = true
	}
	return j != nil
}

// holds reports whether race id waits for the worker or is being archived.
func (a *archiver) holds(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.jobs[id] != nil
}

// waiting is the number of races queued or being archived.
func (a *archiver) waiting() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.jobs)
}

// flush waits until the queue is archived or ctx is done; then the
// worker gives up what still fails, and the races left are logged.
func (a *archiver) flush(ctx context.Context, ledger bool) {
	a.mu.Lock()
	idle, busy := a.idle, a.busy
	a.mu.Unlock()
	if busy {
		select {
		case <-idle:
		case <-ctx.Done():
		}
	}
	a.mu.Lock()
	if !a.stopped {
		a.stopped = true
		close(a.stop)
	}
	left := make([]string, 0, len(a.jobs))
	for id := range a.jobs {
		left = append(left, id)
	}
	a.mu.Unlock()
	if len(left) == 0 {
		return
	}
	ev := a.log.Error().Strs("races", left)
	if ledger {
		ev.Msg("finished races not archived by the end of the drain: another instance's sweep archives them from the live store")
		return
	}
	ev.Msg("finished races not archived by the end of the drain: they are lost")
}

// ArchiveQueue is the number of finished races waiting to be archived
// or being archived now (a gauge for the metrics); 0 without an Archive.
func (s *Service) ArchiveQueue() int {
	if s.arch == nil {
		return 0
	}
	return s.arch.waiting()
}

// ArchiveFailures is the number of times the Archive failed to store a
// finished race since the Service was made (each try counts; a counter
// for the metrics).
func (s *Service) ArchiveFailures() uint64 {
	if s.arch == nil {
		return 0
	}
	return s.arch.failures.Load()
}

// Followed marks finished race id's end as followed up (the lobby calls
// it once its work for the race's end is all done): in the archive, or,
// when the race is still waiting to be archived here, in what will be
// stored, so that the normal path writes the race once. Without an
// Archive it does nothing.
func (s *Service) Followed(ctx context.Context, id string) error {
	if s.arch == nil || s.arch.markFollowed(id) {
		return nil
	}
	if err := s.deps.Archive.Followed(ctx, id); err != nil {
		return &Error{Code: CodeUnavailable, Message: "the archive cannot be written now; try again shortly", Err: fmt.Errorf("race %s: mark followed: %w", id, err)}
	}
	return nil
}

// Unfollowed lists at most n archived races that ended before before and
// whose end nobody marked Followed, oldest first: the work of their end
// was not (all) done. Without an Archive it lists none.
func (s *Service) Unfollowed(ctx context.Context, before time.Time, n int) ([]Archived, error) {
	if s.arch == nil {
		return nil, nil
	}
	if n <= 0 {
		return nil, Errorf(CodeInternal, "unfollowed races: n must be above 0, not %d", n)
	}
	out, err := s.deps.Archive.Unfollowed(ctx, before, n)
	if err != nil {
		return nil, &Error{Code: CodeUnavailable, Message: "the archive cannot be read now; try again shortly", Err: fmt.Errorf("unfollowed races: %w", err)}
	}
	return out, nil
}
