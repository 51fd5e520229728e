package race_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

// testArchive is memrace's archive with what the tests need: Puts that
// fail a number of times first, Puts held at a gate, and a log of the
// calls.
type testArchive struct {
	*memrace.Archive

	mu       sync.Mutex
	failPuts int           // Puts to fail before the next succeeds
	gate     chan struct{} // when set, Put waits until it is closed
	entered  chan string   // when set, Put sends its race's id once called
	puts     []string      // the ids of the Puts that succeeded, in order
	failed   int           // the Puts that failed
	marks    []string      // the ids Followed was called with
}

func newTestArchive() *testArchive { return &testArchive{Archive: memrace.NewArchive()} }

var errArchiveDown = errors.New("the archive's database is down")

func (a *testArchive) Put(ctx context.Context, r race.Archived) error {
	a.mu.Lock()
	gate, entered := a.gate, a.entered
	a.mu.Unlock()
	if entered != nil {
		entered <- r.Info.Race
	}
	if gate != nil {
		<-gate
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failPuts > 0 {
		a.failPuts--
		a.failed++
		return errArchiveDown
	}
	if err := a.Archive.Put(ctx, r); err != nil {
		return err
	}
	a.puts = append(a.puts, r.Info.Race)
	return nil
}

func (a *testArchive) Followed(ctx context.Context, id string) error {
	a.mu.Lock()
	a.marks = append(a.marks, id)
	a.mu.Unlock()
	return a.Archive.Followed(ctx, id)
}

func (a *testArchive) calls() (puts, marks []string, failed int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.puts), slices.Clone(a.marks), a.failed
}

// archiving is a Service with an archive, on a fake clock.
type archiving struct {
	clock   *racetest.Clock
	store   *memrace.Store
	archive *testArchive
	svc     *race.Service
	logs    *lockedBuffer
}

func newArchiving(t *testing.T) *archiving {
	t.Helper()
	a := &archiving{clock: racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), store: memrace.NewStore(),
		archive: newTestArchive(), logs: &lockedBuffer{}}
	a.svc = race.NewService(race.Deps{Clock: a.clock, Log: zerolog.New(a.logs), Store: a.store, Bus: memrace.NewBus(), Archive: a.archive})
	return a
}

// finish makes a race with opts on deal 5 (named, unless opts keep it
// secret with DealFixed), seats two players, has each make a few moves
// and resign: a finished race with moves.
func (a *archiving) finish(t *testing.T, opts race.Options) *race.Race {
	t.Helper()
	opts.Deal, opts.DealNamed = 5, !opts.DealFixed
	r, err := a.svc.Create(opts)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r.Join("p", "", &recorder{}); err != nil {
			t.Fatal(err)
		}
	}
	a.clock.Advance(race.DefaultCountdown)
	for s := range 2 {
		g := newGame(5)
		for range 3 + s {
			m := racetest.Greedy(&g)
			if g.Status() != engine.Playing {
				break
			}
			if err := r.Move(s, m.String(), ""); err != nil {
				t.Fatal(err)
			}
			if err := g.Apply(m); err != nil {
				t.Fatal(err)
			}
			a.clock.Advance(time.Second)
		}
		if err := r.Resign(s, ""); err != nil {
			t.Fatal(err)
		}
	}
	if r.State() != race.Finished {
		t.Fatalf("race is %s, want finished", r.State())
	}
	return r
}

// settle waits until the Service has archived every race it queued.
func (a *archiving) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // only keeps a stuck archiver from hanging the test
	for a.svc.ArchiveQueue() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d races still waiting to be archived", a.svc.ArchiveQueue())
		}
		time.Sleep(time.Millisecond)
	}
}

func (a *archiving) get(t *testing.T, id string) race.Archived {
	t.Helper()
	got, ok, err := a.archive.Get(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("race %s not archived (%v)", id, err)
	}
	return got
}

// TestFinishedRaceArchivedOnceWithItsMoves: a race that finishes is
// archived once, whole: its final record with every move, its tag, when
// it ended.
func TestFinishedRaceArchivedOnceWithItsMoves(t *testing.T) {
	a := newArchiving(t)
	r := a.finish(t, race.Options{Tag: "tagged"})
	ended := a.clock.Now()
	a.clock.Advance(time.Minute) // the archive's record is the race's as it ended
	a.settle(t)
	got := a.get(t, r.ID())
	moves, _ := a.store.Moves(context.Background(), r.ID())
	if len(moves) < 9 || !reflect.DeepEqual(got.Info.Moves, moves) {
		t.Errorf("archived moves %v, want the log's %v", got.Info.Moves, moves)
	}
	live, err := r.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Info, live) {
		t.Errorf("archived info\n%+v\nwant the race's\n%+v", got.Info, live)
	}
	if got.Tag != "tagged" || !got.EndedAt.Equal(ended) || got.Info.State != race.Finished || got.Followed {
		t.Errorf("archived tag %q, ended %s, state %s, followed %v; want tagged, %s, finished, false", got.Tag, got.EndedAt, got.Info.State, got.Followed, ended)
	}
	if puts, _, _ := a.archive.calls(); len(puts) != 1 {
		t.Errorf("puts %v, want the race once", puts)
	}
}

// TestArchiveRetriesWhileItFails: Puts that fail are tried again, in
// the order the races ended, until one succeeds; each failure is counted.
func TestArchiveRetriesWhileItFails(t *testing.T) {
	a := newArchiving(t)
	a.archive.failPuts = 3
	r1 := a.finish(t, race.Options{})
	r2 := a.finish(t, race.Options{})
	a.settle(t)
	puts, _, failed := a.archive.calls()
	if want := []string{r1.ID(), r2.ID()}; !slices.Equal(puts, want) || failed != 3 {
		t.Errorf("puts %v after %d failures, want %v after 3", puts, failed, want)
	}
	if n := a.svc.ArchiveFailures(); n != 3 {
		t.Errorf("ArchiveFailures %d, want 3", n)
	}
	a.get(t, r1.ID())
	a.get(t, r2.ID())
}

// TestAbortedRacesAreNotArchived: races that end without a result to
// rate or replay (no first move, nobody came, the server stopped) are not
// archived; the finished race after them is.
func TestAbortedRacesAreNotArchived(t *testing.T) {
	a := newArchiving(t)
	expired, err := a.svc.Create(race.Options{})
	if err != nil {
		t.Fatal(err)
	}
	noMove, err := a.svc.Create(race.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := noMove.Join("p", "", &recorder{}); err != nil {
			t.Fatal(err)
		}
	}
	a.clock.Advance(race.DefaultCountdown + race.DefaultFirstMoveTimeout)
	expired.Abort(race.ReasonExpired)
	if noMove.State() != race.Aborted || expired.State() != race.Aborted {
		t.Fatalf("races %s and %s, want both aborted", noMove.State(), expired.State())
	}
	finished := a.finish(t, race.Options{})
	a.settle(t) // the archiver goes in order: the aborted ones came first
	if puts, _, _ := a.archive.calls(); !slices.Equal(puts, []string{finished.ID()}) {
		t.Errorf("puts %v, want the finished race alone", puts)
	}
}

// TestEvictedRaceOpensFromTheArchive: a finished race gone from memory
// opens from the archive, as a finished live race: its record, its final
// state to a spectator, and race-over to whatever would play.
func TestEvictedRaceOpensFromTheArchive(t *testing.T) {
	a := newArchiving(t)
	r := a.finish(t, race.Options{Public: true})
	a.settle(t)
	live, _ := r.Info(context.Background())
	liveFinal := r.FinalFor(0, false)
	if n := a.svc.Evict(0); n != 1 {
		t.Fatalf("evicted %d races, want 1", n)
	}
	if _, err := a.svc.Get(r.ID()); race.ErrorCode(err) != race.CodeNoSuchRace {
		t.Fatalf("evicted race still listed: %v", err)
	}
	h, err := a.svc.Open(context.Background(), r.ID())
	if err != nil {
		t.Fatalf("open an archived race: %v", err)
	}
	if h.ID() != r.ID() || h.State() != race.Finished {
		t.Errorf("handle %s is %s, want %s finished", h.ID(), h.State(), r.ID())
	}
	in, err := h.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, live) {
		t.Errorf("archived info\n%+v\nwant\n%+v", in, live)
	}
	refusals := map[string]error{}
	_, refusals["join"] = h.Join("late", "", &recorder{})
	_, refusals["resume"] = h.Resume("any", "", "", &recorder{})
	refusals["move"] = h.Move(0, "AS>F1", "")
	refusals["resign"] = h.Resign(1, "")
	_, refusals["rematch"] = h.Rematch(0)
	for what, err := range refusals {
		if race.ErrorCode(err) != race.CodeRaceOver {
			t.Errorf("%s on an archived race: %v, want %s", what, err, race.CodeRaceOver)
		}
	}
	var spectator recorder
	cancel := h.Watch(&spectator)
	cancel()
	st, ok := spectator.Last().(*race.StateEvent)
	if !ok || len(spectator.Events()) != 1 {
		t.Fatalf("a spectator got %v, want one state", spectator.Events())
	}
	if st.State != race.Finished || !reflect.DeepEqual(st.Result, liveFinal.Result) || st.Boards == nil ||
		!reflect.DeepEqual(st.Boards, liveFinal.Boards) || !reflect.DeepEqual(st.Counts, liveFinal.Counts) {
		t.Errorf("archived final state\n%+v\nwant as the live race's\n%+v", st, liveFinal)
	}
	if _, err := a.svc.Open(context.Background(), "never-made"); race.ErrorCode(err) != race.CodeNoSuchRace {
		t.Errorf("open a race never made: %v, want %s", err, race.CodeNoSuchRace)
	}
}

// TestSealedRaceArchivedWholeShownSealed: the day's race (its deal sealed
// until the day ends) is archived with its deal, games and moves, which
// its archived handle hides until then, as the live race does; Final
// gives them to the server at once.
func TestSealedRaceArchivedWholeShownSealed(t *testing.T) {
	a := newArchiving(t)
	sealed := a.clock.Now().Add(time.Hour)
	r := a.finish(t, race.Options{SealedUntil: sealed, DealFixed: true})
	a.settle(t)
	liveFinal := r.FinalFor(0, false)
	got := a.get(t, r.ID())
	if got.Info.Result.Deal != "5" || got.Info.Result.Games[0] == "" || len(got.Info.Moves) == 0 || !got.SealedUntil.Equal(sealed) {
		t.Fatalf("archived sealed race without its deal, games or moves: %+v", got)
	}
	a.svc.Evict(0)
	h, err := a.svc.Open(context.Background(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	in, _ := h.Info(context.Background())
	if in.Result.Deal != "" || !slices.Equal(in.Result.Games, []string{"", ""}) || in.Moves != nil {
		t.Errorf("sealed archived race shows deal %q, games %q, %d moves", in.Result.Deal, in.Result.Games, len(in.Moves))
	}
	if in.Deal != "" {
		t.Errorf("sealed archived race shows its deal %q", in.Deal)
	}
	var spectator recorder
	h.Watch(&spectator)
	st := spectator.Last().(*race.StateEvent)
	if !reflect.DeepEqual(st.Boards, liveFinal.Boards) {
		t.Errorf("sealed archived boards\n%+v\nwant as the live race's\n%+v", st.Boards, liveFinal.Boards)
	}
	for i, v := range st.Boards {
		for _, c := range v.Turned {
			if c != engine.Hidden {
				t.Errorf("seat %d's sealed board shows turned card %s", i, c)
			}
		}
	}
	final, err := a.svc.Final(context.Background(), r.ID())
	if err != nil || final.Result.Deal != "5" || len(final.Moves) != len(got.Info.Moves) {
		t.Errorf("final of the sealed race: deal %q, %d moves (%v); want 5, %d", final.Result.Deal, len(final.Moves), err, len(got.Info.Moves))
	}
	a.clock.Advance(time.Hour)
	in, _ = h.Info(context.Background())
	if in.Result.Deal != "5" || !reflect.DeepEqual(in.Moves, got.Info.Moves) {
		t.Errorf("once the seal is over, the archived race shows deal %q and %d moves", in.Result.Deal, len(in.Moves))
	}
}

// TestFollowedBeforeAndAfterThePut: a race marked followed while it waits
// for the archive is stored followed, with no write of its own; one
// marked while its Put is on its way is marked once stored; one marked
// after is marked in the archive.
func TestFollowedBeforeAndAfterThePut(t *testing.T) {
	a := newArchiving(t)
	gate := make(chan struct{})
	entered := make(chan string, 10)
	a.archive.gate, a.archive.entered = gate, entered
	first := a.finish(t, race.Options{})
	if id := <-entered; id != first.ID() {
		t.Fatalf("put %s first, want %s", id, first.ID())
	}
	second := a.finish(t, race.Options{}) // waits behind the first
	ctx := context.Background()
	for _, r := range []*race.Race{first, second} {
		if err := a.svc.Followed(ctx, r.ID()); err != nil {
			t.Fatal(err)
		}
	}
	a.archive.mu.Lock()
	a.archive.gate = nil
	a.archive.mu.Unlock()
	close(gate)
	<-entered // the second's Put
	a.settle(t)
	third := a.finish(t, race.Options{})
	<-entered
	a.settle(t)
	if err := a.svc.Followed(ctx, third.ID()); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*race.Race{first, second, third} {
		if !a.get(t, r.ID()).Followed {
			t.Errorf("race %s not followed", r.ID())
		}
	}
	if _, marks, _ := a.archive.calls(); !slices.Equal(marks, []string{first.ID(), third.ID()}) {
		t.Errorf("marked in the archive: %v, want the first (late) and the third (after), not the second", marks)
	}
}

// TestDrainWaitsForTheArchive: Drain returns once the races that finished
// are archived; when its context ends first, it gives up and logs the
// races left.
func TestDrainWaitsForTheArchive(t *testing.T) {
	t.Run("archived", func(t *testing.T) {
		a := newArchiving(t)
		gate := make(chan struct{})
		entered := make(chan string, 1)
		a.archive.gate, a.archive.entered = gate, entered
		r := a.finish(t, race.Options{})
		<-entered
		drained := make(chan struct{})
		go func() {
			a.svc.Drain(context.Background())
			close(drained)
		}()
		select {
		case <-drained:
			t.Fatal("drain returned while the race's Put waits")
		default:
		}
		close(gate)
		<-drained
		if a.svc.ArchiveQueue() != 0 {
			t.Errorf("%d races left after the drain", a.svc.ArchiveQueue())
		}
		a.get(t, r.ID())
	})
	t.Run("given up", func(t *testing.T) {
		a := newArchiving(t)
		a.archive.failPuts = 1 << 30
		r := a.finish(t, race.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		a.svc.Drain(ctx)
		a.settle(t) // the worker gives up
		if _, ok, _ := a.archive.Get(context.Background(), r.ID()); ok {
			t.Fatal("a race the archive refused is archived")
		}
		logs := a.logs.String()
		if !strings.Contains(logs, "not archived by the end of the drain") || !strings.Contains(logs, r.ID()) {
			t.Errorf("the drain did not log the race it could not archive:\n%s", logs)
		}
	})
}

// TestEvictKeepsRacesWaitingForTheArchive: a finished race whose moves
// the archiver has not read yet stays in memory (its log with it).
func TestEvictKeepsRacesWaitingForTheArchive(t *testing.T) {
	a := newArchiving(t)
	gate := make(chan struct{})
	entered := make(chan string, 1)
	a.archive.gate, a.archive.entered = gate, entered
	r := a.finish(t, race.Options{})
	<-entered
	if n := a.svc.Evict(0); n != 0 {
		t.Errorf("evicted %d races while one waits for the archive", n)
	}
	close(gate)
	a.settle(t)
	if n := a.svc.Evict(0); n != 1 {
		t.Errorf("evicted %d races once archived, want 1", n)
	}
	if got := a.get(t, r.ID()); len(got.Info.Moves) == 0 {
		t.Error("archived without its moves")
	}
}

// memLedger is race.Records with race.ArchiveLedger in memory, on its
// own clock: a live store that outlives an instance, as Redis does.
type memLedger struct {
	clock race.Clock

	mu      sync.Mutex
	records map[string]*race.Record
	results map[string]*race.Result
	states  map[string]race.State
	marks   map[string]time.Time
}

func newMemLedger(clock race.Clock) *memLedger {
	return &memLedger{clock: clock, records: map[string]*race.Record{}, results: map[string]*race.Result{},
		states: map[string]race.State{}, marks: map[string]time.Time{}}
}

func (l *memLedger) Save(_ context.Context, rec *race.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := *rec
	l.records[rec.ID] = &c
	return nil
}

func (l *memLedger) Load(_ context.Context, id string) (*race.Record, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rec, ok := l.records[id]
	if !ok {
		return nil, false, nil
	}
	c := *rec
	return &c, true, nil
}

func (l *memLedger) Decide(_ context.Context, id string, res *race.Result, st race.State) (*race.Result, race.State, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == race.Finished {
		l.marks[id] = l.clock.Now()
	}
	if _, ok := l.results[id]; !ok {
		l.results[id], l.states[id] = res, st
	}
	return l.results[id], l.states[id], nil
}

func (l *memLedger) Unarchived(_ context.Context, before time.Time, n int) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for id, at := range l.marks {
		if at.Before(before) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(x, y string) int { return l.marks[x].Compare(l.marks[y]) })
	return ids[:min(n, len(ids))], nil
}

func (l *memLedger) Archived(_ context.Context, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.marks, id)
	return nil
}

func (l *memLedger) unarchived() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.marks)
}

// TestSweepsAtStartAndEveryMinute: races an instance finished and never
// archived (it had no archive: it died first) are archived by another
// Service's sweeps, when it starts and every minute after, once they were
// decided ArchiveSweepAfter ago.
func TestSweepsAtStartAndEveryMinute(t *testing.T) {
	dead := &archiving{clock: racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), store: memrace.NewStore()}
	ledger := newMemLedger(dead.clock)
	dead.svc = race.NewService(race.Deps{Clock: dead.clock, Log: zerolog.Nop(), Store: dead.store, Bus: memrace.NewBus(), Records: ledger})
	first := dead.finish(t, race.Options{})
	dead.clock.Advance(3 * time.Minute)

	// The sweeping Service's clock runs beside the dead one's; it has no
	// race, so its only timer is its sweep's.
	clock := racetest.NewClock(dead.clock.Now())
	archive := newTestArchive()
	svc := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: dead.store, Bus: memrace.NewBus(), Records: ledger, Archive: archive})
	t.Cleanup(func() { svc.Drain(context.Background()) })
	swept := func() []string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second) // only keeps a stuck sweep from hanging the test
		for clock.Pending() != 1 {                   // the next sweep is set once this one is done
			if time.Now().After(deadline) {
				t.Fatal("the sweep did not set the next")
			}
			time.Sleep(time.Millisecond)
		}
		puts, _, _ := archive.calls()
		return puts
	}
	clock.Advance(0) // the sweep at start
	if got := swept(); !slices.Equal(got, []string{first.ID()}) {
		t.Fatalf("the sweep at start archived %v, want %s", got, first.ID())
	}
	second := dead.finish(t, race.Options{}) // a few seconds
	clock.Advance(dead.clock.Now().Sub(clock.Now()))
	for minute := 1; minute <= 3; minute++ {
		clock.Advance(time.Minute)
		got := swept()
		want := []string{first.ID()}
		if minute == 3 { // ArchiveSweepAfter has passed
			want = append(want, second.ID())
		}
		if !slices.Equal(got, want) {
			t.Errorf("minute %d: archived %v, want %v", minute, got, want)
		}
	}
	if n := ledger.unarchived(); n != 0 {
		t.Errorf("%d races still listed as unarchived", n)
	}
	if got, ok, err := archive.Get(context.Background(), second.ID()); !ok || err != nil || len(got.Info.Moves) == 0 || got.Info.Result == nil {
		t.Errorf("swept race without its moves or result: %+v (%v, %v)", got, ok, err)
	}
}
