package race

import (
	"context"
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
// Finished until it is archived (ArchiveLedger), and every instance's
// archiver sweeps that list (SweepArchive), so a race whose instance died
// between its result and its archiving is archived all the same. In
// memory mode the races die with the process.
//
// Its lock is a leaf: nothing is called while it is held but the clock
// (to set or stop the sweeps' timer), whose lock is a leaf too.

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

	// The sweeps of the ledger (when the Records keep one).
	sweepT    Timer
	sweepDone chan struct{} // closed when the sweep that runs ends; nil when none runs
	sweepsOff bool          // Drain began: no more sweeps
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
		return &Error{Code: CodeUnavailable, Message: "the archive cannot be written now; try again shortly", Err: err}
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
		return nil, &Error{Code: CodeUnavailable, Message: "the archive cannot be read now; try again shortly", Err: err}
	}
	return out, nil
}

// Final is finished race id's whole public record, for the server's own
// use (the day's board keeps its leader's moves): its result with the
// deal and both games, and every move, even while its deal is sealed. It
// is the race's here, or the archive's; CodeNotOver while the race runs
// here, CodeUnavailable while it is still on its way to the archive or
// the archive cannot be read, CodeNoSuchRace when neither has it.
func (s *Service) Final(ctx context.Context, id string) (Info, error) {
	if r, err := s.Get(id); err == nil {
		if !r.State().Over() {
			return Info{}, Errorf(CodeNotOver, "race %s is not over", id)
		}
		return r.info(ctx, true)
	}
	if s.arch == nil {
		return Info{}, Errorf(CodeNoSuchRace, "no race has id %q", id)
	}
	a, ok, err := s.deps.Archive.Get(ctx, id)
	switch {
	case err != nil:
		return Info{}, &Error{Code: CodeUnavailable, Message: "the archive cannot be read now; try again shortly", Err: err}
	case ok:
		return a.Info, nil
	case s.arch.holds(id):
		return Info{}, Errorf(CodeUnavailable, "race %s is being archived; try again shortly", id)
	}
	return Info{}, Errorf(CodeNoSuchRace, "no race has id %q", id)
}

// openArchived is the handle of race id from the archive, when the live
// store does not have it (notFound is what it said).
func (s *Service) openArchived(ctx context.Context, id string, notFound error) (Handle, error) {
	a, ok, err := s.deps.Archive.Get(ctx, id)
	if err != nil {
		return nil, &Error{Code: CodeUnavailable, Message: "the race's record cannot be read now; try again shortly", Err: err}
	}
	if !ok {
		return nil, notFound
	}
	return &archivedRace{a: a, clock: s.deps.Clock}, nil
}

// archived is the race's record for the archive, once it is over.
func (r *Race) archived(ctx context.Context) (Archived, error) {
	in, err := r.info(ctx, true)
	if err != nil {
		return Archived{}, err
	}
	r.mu.Lock()
	defer r.unlock()
	a := Archived{Info: in, Tag: r.opts.Tag, SealedUntil: r.opts.SealedUntil, EndedAt: r.endedAt}
	for i := range 2 {
		if g := r.seats[i].ghost; g != nil {
			a.Ghosts[i] = g.Ref
		}
	}
	return a, nil
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
		return 0, err
	}
	n := 0
	for _, id := range ids {
		done, err := s.sweepOne(ctx, ledger, id)
		if err != nil {
			return n, err
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
		return false, err
	}
	s.deps.Log.Info().Str("race", id).Msg("finished race archived from the live store")
	return true, ledger.Archived(ctx, id)
}

// startSweeps sweeps now and every archiveSweepEvery, when the Records
// keep a ledger: until Drain.
func (s *Service) startSweeps() {
	if _, ok := s.deps.Records.(ArchiveLedger); !ok || s.arch == nil {
		return
	}
	a := s.arch
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sweepT = s.deps.Clock.AfterFunc(0, s.sweepTick)
}

// sweepTick runs one sweep on a goroutine of its own (a fake clock runs
// its timers in the caller's), of the races listed ArchiveSweepAfter
// before the timer's time, then sets the next archiveSweepEvery after
// that time.
func (s *Service) sweepTick() {
	at := s.deps.Clock.Now()
	before := at.Add(-ArchiveSweepAfter)
	a := s.arch
	a.mu.Lock()
	if a.sweepsOff || a.sweepDone != nil {
		a.mu.Unlock()
		return
	}
	done := make(chan struct{})
	a.sweepDone = done
	a.mu.Unlock()
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), archiveSweepTimeout)
		n, err := s.SweepArchive(ctx, before)
		cancel()
		if err != nil {
			s.deps.Log.Warn().Err(err).Int("archived", n).Msg("sweep of the unarchived races failed; the next one tries again")
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.sweepDone = nil
		if !a.sweepsOff {
			next := at.Add(archiveSweepEvery).Sub(s.deps.Clock.Now())
			a.sweepT = s.deps.Clock.AfterFunc(max(next, 0), s.sweepTick)
		}
	}()
}

// stopSweeps ends the sweeps, waiting until ctx is done for one that runs.
func (a *archiver) stopSweeps(ctx context.Context) {
	a.mu.Lock()
	a.sweepsOff = true
	if a.sweepT != nil {
		a.sweepT.Stop()
	}
	done := a.sweepDone
	a.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
}
