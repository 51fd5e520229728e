package race_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

// heldRecords is Records whose Save, once armed, stops until released.
type heldRecords struct {
	mu      sync.Mutex
	saved   []*race.Record
	armed   bool
	entered chan struct{} // a held Save has begun
	release chan struct{} // lets it finish
	writing int           // Saves running now
	overlap bool          // two Saves ran at once
}

func newHeldRecords() *heldRecords {
	return &heldRecords{entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldRecords) Save(_ context.Context, rec *race.Record) error {
	h.mu.Lock()
	h.writing++
	if h.writing > 1 {
		h.overlap = true
	}
	hold := h.armed
	h.armed = false
	h.mu.Unlock()
	if hold {
		close(h.entered)
		<-h.release
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.writing--
	h.saved = append(h.saved, rec)
	return nil
}

func (h *heldRecords) Load(context.Context, string) (*race.Record, bool, error) {
	return nil, false, nil
}

func (h *heldRecords) Decide(_ context.Context, _ string, res *race.Result, st race.State) (*race.Result, race.State, error) {
	return res, st, nil
}

func (h *heldRecords) last() *race.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.saved[len(h.saved)-1]
}

// TestRecordSaveLeavesTheRaceLock: while a race's record is being saved
// (a Redis round trip in Redis mode), the race's lock is free, so its
// other requests do not wait behind it; the request that changed the
// record is answered once the record is stored.
func TestRecordSaveLeavesTheRaceLock(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	recs := newHeldRecords()
	r, err := race.New("r1", race.Options{}, race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus(), Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	recs.armed = true
	joined := make(chan error, 1)
	go func() {
		_, err := r.Join("ann", "", &recorder{})
		joined <- err
	}()
	<-recs.entered
	// State takes the race's lock: once Join's locked section is over it
	// is free though the save still waits (on the old code the save held
	// it, and this call waited until the test timed out).
	if st := r.State(); st != race.Waiting {
		t.Fatalf("state %s", st)
	}
	if !race.LockFreeForTest(r) {
		t.Fatal("the race's lock is held while its record is saved")
	}
	select {
	case err := <-joined:
		t.Fatalf("join answered (%v) before its record was stored", err)
	default:
	}
	close(recs.release)
	if err := <-joined; err != nil {
		t.Fatal(err)
	}
	if got := recs.last(); !got.Seats[0].Taken || got.Seats[0].Name != "ann" {
		t.Errorf("stored record's seat 0: %+v", got.Seats[0])
	}
}

// TestRecordSavesKeepTheirOrder: many requests at once save the race's
// record one at a time, the last stored record is the race as it ends, and
// it is stored before the race says it is done.
func TestRecordSavesKeepTheirOrder(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	recs := newHeldRecords()
	r, err := race.New("r2", race.Options{}, race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus(), Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	var subs [2]recorder
	var wg sync.WaitGroup
	for s := range 2 {
		wg.Go(func() {
			if _, err := r.Join("p", "", &subs[s]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	clock.Advance(race.DefaultCountdown)
	for range 20 {
		wg.Go(func() { r.Leave(0, &subs[0]); _, _ = r.Resume(race.RecordForTest(r).Seats[0].Token, "", "", &subs[0]) })
		wg.Go(func() { _ = r.Resign(1, "") })
	}
	wg.Wait()
	if err := r.Resign(0, ""); err != nil {
		t.Fatal(err)
	}
	<-r.Done()
	got, want := recs.last(), race.RecordForTest(r)
	if got.State != want.State || !got.State.Over() || got.Result == nil {
		t.Errorf("last stored record: state %s result %v; the race: %s", got.State, got.Result, want.State)
	}
	recs.mu.Lock()
	defer recs.mu.Unlock()
	if recs.overlap {
		t.Error("two saves of one race ran at once")
	}
	for i := 1; i < len(recs.saved); i++ {
		if rank(recs.saved[i].State) < rank(recs.saved[i-1].State) {
			t.Fatalf("save %d (%s) stored after a later state (%s)", i, recs.saved[i].State, recs.saved[i-1].State)
		}
	}
}

func rank(s race.State) int {
	for i, x := range []race.State{race.Waiting, race.Countdown, race.Running, race.Finished, race.Aborted} {
		if s == x {
			return min(i, 3)
		}
	}
	return -1
}

// heldDecision is Records whose Decide stops until released.
type heldDecision struct {
	heldRecords
	decideEntered chan struct{}
	decideRelease chan struct{}
}

func (h *heldDecision) Decide(ctx context.Context, id string, res *race.Result, st race.State) (*race.Result, race.State, error) {
	close(h.decideEntered)
	<-h.decideRelease
	return h.heldRecords.Decide(ctx, id, res, st)
}

// TestResultDecisionLeavesTheRaceLock: while a race's result is being
// stored (one Redis script in Redis mode), the race's lock is free, its
// readers do not wait, and a move or resignation meanwhile is refused as
// over, changing nothing; the request that ended the race returns once
// the result is stored.
func TestResultDecisionLeavesTheRaceLock(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	recs := &heldDecision{heldRecords: *newHeldRecords(), decideEntered: make(chan struct{}), decideRelease: make(chan struct{})}
	r, err := race.New("r3", race.Options{}, race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus(), Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	var subs [2]recorder
	for s := range 2 {
		if _, err := r.Join("p", "", &subs[s]); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(race.DefaultCountdown)
	ended := make(chan struct{})
	go func() {
		r.Abort("shutdown")
		close(ended)
	}()
	<-recs.decideEntered
	if !race.LockFreeForTest(r) {
		t.Fatal("the race's lock is held while its result is stored")
	}
	if st := r.State(); st != race.Running {
		t.Fatalf("state %s while the result is stored", st)
	}
	if err := r.Resign(1, ""); race.ErrorCode(err) != race.CodeRaceOver {
		t.Errorf("resignation while the result is stored: %v, want %s", err, race.CodeRaceOver)
	}
	select {
	case <-ended:
		t.Fatal("Abort returned before the result was stored")
	default:
	}
	close(recs.decideRelease)
	<-ended
	if st := r.State(); st != race.Aborted {
		t.Errorf("state %s after the result was stored, want aborted", st)
	}
	if res := r.Result(); res == nil || res.Statuses[1] == engine.Resigned {
		t.Errorf("result %+v: the refused resignation counted", res)
	}
}
