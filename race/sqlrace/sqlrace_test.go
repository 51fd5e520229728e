package sqlrace_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/sqlrace"
)

// open starts a Store on db, closed at the test's end.
func open(t testing.TB, db *sqlstore.DB) *sqlrace.Store {
	t.Helper()
	return openWith(t, db, sqlrace.Options{})
}

// openWith starts a Store on db with options o, closed at the test's end.
func openWith(t testing.TB, db *sqlstore.DB, o sqlrace.Options) *sqlrace.Store {
	t.Helper()
	s, err := sqlrace.New(context.Background(), db.SQL(), o)
	if err != nil {
		t.Fatalf("sqlrace.New: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func TestStoreConformance(t *testing.T) {
	for _, o := range []sqlrace.Options{{}, {Interval: time.Millisecond}} {
		t.Run(fmt.Sprintf("interval %s", o.Interval), func(t *testing.T) {
			sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
				// One database for the suite: its subtests use races of their own.
				s := openWith(t, db, o)
				racetest.TestStore(t, func(*testing.T) race.Store { return s })
			})
		})
	}
}

func TestBadRecordsAreRefusedAndChangeNothing(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		s := open(t, db)
		ctx := t.Context()
		for _, tc := range []struct {
			name string
			m    race.MoveRecord
		}{
			{"seat 10", race.MoveRecord{Seat: race.MaxSeats, Seq: 1, Move: "AS>F1"}},
			{"seat -1", race.MoveRecord{Seat: -1, Seq: 1, Move: "AS>F1"}},
			{"seq 0", race.MoveRecord{Seat: 0, Seq: 0, Move: "AS>F1"}},
			{"invalid UTF-8 in the request id", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1", ID: "a\xffb"}},
			{"invalid UTF-8 in the move", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>\xff"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := s.Append(ctx, "bad", tc.m); !errors.Is(err, sqlrace.ErrBadRecord) {
					t.Errorf("append %+v: %v, want ErrBadRecord", tc.m, err)
				}
			})
		}
		if got, err := s.Moves(ctx, "bad"); err != nil || len(got) != 0 {
			t.Errorf("after the refusals the log holds %v (%v)", got, err)
		}
		// The refusals left the seats' seqs alone.
		if err := s.Append(ctx, "bad", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1", ID: "m1"}); err != nil {
			t.Errorf("a good first move after them: %v", err)
		}
	})
}

// TestAStoreOpenedAgainKnowsItsLogs: a server started again on the same
// database (a new Store) answers retries and conflicts of the races it
// did not append to itself, and appends after the last pos.
func TestAStoreOpenedAgainKnowsItsLogs(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		first, err := sqlrace.New(ctx, db.SQL(), sqlrace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		before := []race.MoveRecord{
			{Seat: 0, Seq: 1, Move: "AS>F1", AtMs: 10, ID: "a"},
			{Seat: 1, Seq: 1, Move: "7H>W1", AtMs: 11, ID: "b\x00\"é"}, // the journal's JSON keeps any text
			{Seat: 0, Seq: 3, Move: "2S>W1", AtMs: 12, ID: "c"},        // seqs must grow, not by one
		}
		for _, m := range before {
			if err := first.Append(ctx, "r", m); err != nil {
				t.Fatal(err)
			}
		}
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		s := open(t, db)
		for _, tc := range []struct {
			name string
			m    race.MoveRecord
			want error
		}{
			{"a retry of the last move", before[2], nil},
			{"another move under a stored seq", race.MoveRecord{Seat: 0, Seq: 3, Move: "KD>W3"}, race.ErrConflict},
			{"a seq below the seat's last that is not stored", race.MoveRecord{Seat: 0, Seq: 2, Move: "QC>W2"}, race.ErrConflict},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := s.Append(ctx, "r", tc.m); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
					t.Errorf("append %+v: %v, want %v", tc.m, err, tc.want)
				}
			})
		}
		next := race.MoveRecord{Seat: 1, Seq: 2, Move: "9S>W2", AtMs: 13, ID: "d"}
		if err := s.Append(ctx, "r", next); err != nil {
			t.Fatal(err)
		}
		got, err := s.Moves(ctx, "r")
		if want := append(before, next); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("moves %v (%v), want %v", got, err, want)
		}
	})
}

// TestConcurrentAppendsAreEachCommitted: many races appending at once
// share commits, and every move acknowledged is in its race's log, in
// its order.
func TestConcurrentAppendsAreEachCommitted(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		s := open(t, db)
		ctx := t.Context()
		const races, moves = 20, 30
		var wg sync.WaitGroup
		errs := make(chan error, races)
		for r := range races {
			wg.Go(func() {
				for i := range moves {
					m := race.MoveRecord{Seat: i % 2, Seq: i/2 + 1, Move: fmt.Sprint("m", i), AtMs: int64(i)}
					if err := s.Append(ctx, fmt.Sprint("c", r), m); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for r := range races {
			got, err := s.Moves(ctx, fmt.Sprint("c", r))
			if err != nil || len(got) != moves {
				t.Fatalf("race c%d: %d moves (%v), want %d", r, len(got), err, moves)
			}
			for i, m := range got {
				if m.Move != fmt.Sprint("m", i) {
					t.Fatalf("race c%d: move %d is %+v", r, i, m)
				}
			}
		}
	})
}

func TestForgetDeletesTheRaceAlone(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		s := open(t, db)
		recs := s.Records(race.SystemClock{})
		ctx := t.Context()
		for _, id := range []string{"gone", "kept"} {
			if err := s.Append(ctx, id, race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"}); err != nil {
				t.Fatal(err)
			}
			if err := recs.Save(ctx, &race.Record{ID: id, State: race.Finished}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := recs.Decide(ctx, id, &race.Result{Outcome: race.OutcomeDraw}, race.Finished); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Forget(ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			id    string
			moves int
			found bool
		}{{"gone", 0, false}, {"kept", 1, true}} {
			got, err := s.Moves(ctx, tc.id)
			if err != nil || len(got) != tc.moves {
				t.Errorf("race %s: moves %v (%v), want %d", tc.id, got, err, tc.moves)
			}
			if _, ok, err := recs.Load(ctx, tc.id); err != nil || ok != tc.found {
				t.Errorf("race %s: record found %v (%v), want %v", tc.id, ok, err, tc.found)
			}
		}
		var results, moves int
		if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM live_results`).Scan(&results); err != nil || results != 1 {
			t.Errorf("%d results left (%v), want kept's alone", results, err)
		}
		// gone's move was the journal's first row: the first Forget trims it.
		if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM live_log`).Scan(&moves); err != nil || moves != 1 {
			t.Errorf("%d rows left in the journal (%v), want kept's alone", moves, err)
		}
		// A forgotten race's seqs are forgotten too: its id starts afresh.
		if err := s.Append(ctx, "gone", race.MoveRecord{Seat: 0, Seq: 1, Move: "2S>W1"}); err != nil {
			t.Errorf("a first move after Forget: %v", err)
		}
	})
}

func TestRecordsSaveLoad(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		recs := open(t, db).Records(race.SystemClock{})
		ctx := t.Context()
		if _, ok, err := recs.Load(ctx, "none"); ok || err != nil {
			t.Fatalf("load of an unknown race: %v %v", ok, err)
		}
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		rec := &race.Record{ID: "s", Deal: 1<<63 + 5, State: race.Running, CreatedAt: at, StartAt: at.Add(3 * time.Second),
			Seats: []race.SeatState{{Taken: true, Name: "Ann", Token: "t0", Connected: true}, {Taken: true, Computer: true, Level: "easy", Seed: 9}}}
		if err := recs.Save(ctx, rec); err != nil {
			t.Fatal(err)
		}
		rec.Seats[0].Connected, rec.Seats[0].GraceEnd = false, at.Add(time.Minute)
		if err := recs.Save(ctx, rec); err != nil {
			t.Fatal(err)
		}
		got, ok, err := recs.Load(ctx, "s")
		if err != nil || !ok {
			t.Fatalf("load: %v %v", ok, err)
		}
		if fmt.Sprint(*got) != fmt.Sprint(*rec) {
			t.Errorf("loaded %+v, want the last saved %+v", *got, *rec)
		}
	})
}

// TestDecideOnceUnderConcurrency: of many decisions of one race at once,
// exactly the first stored is returned to every caller, and Save does not
// touch it.
func TestDecideOnceUnderConcurrency(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		recs := open(t, db).Records(race.SystemClock{})
		ctx := t.Context()
		const n = 16
		type answer struct {
			res   *race.Result
			state race.State
			err   error
		}
		answers := make([]answer, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				w := i % 2
				state := race.Finished
				if i%3 == 0 {
					state = race.Aborted
				}
				res, st, err := recs.Decide(ctx, "d", &race.Result{Outcome: race.OutcomeWin, Winner: &w, Reason: race.Reason(fmt.Sprint("r", i))}, state)
				answers[i] = answer{res, st, err}
			})
		}
		close(start)
		wg.Wait()
		first := answers[0]
		if first.err != nil {
			t.Fatal(first.err)
		}
		for i, a := range answers {
			if a.err != nil || a.res.Reason != first.res.Reason || *a.res.Winner != *first.res.Winner || a.state != first.state {
				t.Errorf("decision %d: %+v %s %v, want the one stored: %+v %s", i, a.res, a.state, a.err, first.res, first.state)
			}
		}
		// Saving the race's record afterwards leaves the decision alone, and
		// List gives a record saved before the decision with it.
		if err := recs.Save(ctx, &race.Record{ID: "d", State: race.Running}); err != nil {
			t.Fatal(err)
		}
		again, st, err := recs.Decide(ctx, "d", &race.Result{Outcome: race.OutcomeDraw, Reason: "late"}, race.Finished)
		if err != nil || again.Reason != first.res.Reason || st != first.state {
			t.Errorf("a later decision: %+v %s %v, want the first", again, st, err)
		}
		list, err := recs.List(ctx)
		if err != nil || len(list) != 1 {
			t.Fatalf("list: %v %v", list, err)
		}
		if r := list[0].Record; r.State != first.state || r.Result == nil || r.Result.Reason != first.res.Reason {
			t.Errorf("listed %s with %+v, want the decided %s and %+v", r.State, r.Result, first.state, first.res)
		}
	})
}

func TestListGivesEveryRaceAndWhenItWasSaved(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		clock := racetest.NewClock(at)
		recs := open(t, db).Records(clock)
		ctx := t.Context()
		for i, st := range []race.State{race.Waiting, race.Running, race.Finished} {
			clock.Advance(time.Minute)
			if err := recs.Save(ctx, &race.Record{ID: fmt.Sprint("l", i), State: st}); err != nil {
				t.Fatal(err)
			}
		}
		list, err := recs.List(ctx)
		if err != nil || len(list) != 3 {
			t.Fatalf("list: %v %v", list, err)
		}
		for i, s := range list {
			if want := at.Add(time.Duration(i+1) * time.Minute); s.Record.ID != fmt.Sprint("l", i) || !s.Saved.Equal(want) {
				t.Errorf("listed %s saved %s, want l%d saved %s", s.Record.ID, s.Saved, i, want)
			}
		}
	})
}
