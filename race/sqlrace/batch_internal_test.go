package sqlrace

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race"
)

// TestAFailedCommitFailsEveryAppendOfItsBatch: two appends and a
// record's save wait for the writer and go in one transaction, whose
// save fails (a trigger refuses race "bad"'s record, as a full disk would
// refuse any write): the appends fail as unavailable with it, and nothing
// of the batch is stored; sent again once the database takes them, they
// are stored.
func TestAFailedCommitFailsEveryAppendOfItsBatch(t *testing.T) {
	db := sqltest.SQLite(t)
	ctx := t.Context()
	s, err := openStore(ctx, db.SQL(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := db.SQL().ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON live_races
WHEN NEW.id = 'bad' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	ids := []string{"good1", "good2"}
	m := race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1", ID: "x"}
	errs := make([]error, len(ids)+1)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { errs[i] = s.Append(ctx, id, m) })
	}
	wg.Go(func() { errs[len(ids)] = s.Records(race.SystemClock{}).Save(ctx, &race.Record{ID: "bad"}) })
	// The writer starts once all three wait in its queue: one batch.
	for len(s.w.ops) < len(errs) {
		time.Sleep(time.Millisecond)
	}
	go s.w.run()
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, race.ErrUnavailable) {
			t.Errorf("write %d of the failed batch: %v, want ErrUnavailable", i, err)
		}
	}
	var n int
	if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM live_log`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the failed batch left %d rows in the log (%v)", n, err)
	}
	for _, id := range ids {
		if got, _ := s.Moves(ctx, id); len(got) != 0 {
			t.Errorf("race %s holds %v after the failed batch", id, got)
		}
	}
	if _, err := db.SQL().ExecContext(ctx, `DROP TRIGGER refuse`); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := s.Append(ctx, id, m); err != nil {
			t.Errorf("append to %s again: %v", id, err)
		}
		if got, err := s.Moves(ctx, id); err != nil || fmt.Sprint(got) != fmt.Sprint([]race.MoveRecord{m}) {
			t.Errorf("race %s holds %v (%v)", id, got, err)
		}
	}
}

// TestForgottenMovesLeaveTheJournalFromTheFront: a forgotten race's moves
// stay in the journal while a race kept has older ones, and go once none
// has; a Store opened again reads only what is left, and what it needs.
func TestForgottenMovesLeaveTheJournalFromTheFront(t *testing.T) {
	db := sqltest.SQLite(t)
	ctx := t.Context()
	s, err := openStore(ctx, db.SQL(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.w.trimEvery = 0 // a trim at every Forget
	go s.w.run()
	rows := func() int {
		t.Helper()
		var n int
		if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM live_log`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i, id := range []string{"old", "young", "old", "young"} {
		if err := s.Append(ctx, id, race.MoveRecord{Seat: 0, Seq: i/2 + 1, Move: "AS>F1"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Forget(ctx, "young"); err != nil {
		t.Fatal(err)
	}
	if n := rows(); n != 4 { // a commit, a row, each
		t.Errorf("with old kept the journal holds %d rows, want all 4", n)
	}
	if got, _ := s.Moves(ctx, "young"); len(got) != 0 {
		t.Errorf("a forgotten race's moves: %v", got)
	}
	if err := s.Append(ctx, "new", race.MoveRecord{Seat: 1, Seq: 1, Move: "2S>W1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if n := rows(); n != 1 {
		t.Errorf("with old forgotten too the journal holds %d rows, want new's 1", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := New(ctx, db.SQL(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if ids := again.Races(); fmt.Sprint(ids) != "[new]" {
		t.Errorf("opened again, the store holds races %v, want [new]", ids)
	}
}

// TestAnAppendNotWaitedForIsLearnedByTheNext: an append whose caller
// stops waiting before its commit (unavailable) is committed later; the
// race's next append learns so first: its retry is answered as stored,
// once, and another move under its seq is a conflict.
func TestAnAppendNotWaitedForIsLearnedByTheNext(t *testing.T) {
	db := sqltest.SQLite(t)
	s, err := openStore(t.Context(), db.SQL(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	m := race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1", ID: "m1"}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- s.Append(ctx, "p", m) }()
	for len(s.w.ops) < 1 { // handed over; the writer has not started
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; !errors.Is(err, race.ErrUnavailable) {
		t.Fatalf("an append given up before its commit: %v, want ErrUnavailable", err)
	}
	go s.w.run()
	if err := s.Append(t.Context(), "p", m); err != nil {
		t.Fatalf("its retry: %v", err)
	}
	if err := s.Append(t.Context(), "p", race.MoveRecord{Seat: 0, Seq: 1, Move: "2S>W1"}); !errors.Is(err, race.ErrConflict) {
		t.Errorf("another move under its seq: %v, want ErrConflict", err)
	}
	got, err := s.Moves(t.Context(), "p")
	if err != nil || fmt.Sprint(got) != fmt.Sprint([]race.MoveRecord{m}) {
		t.Errorf("moves %v (%v), want the one", got, err)
	}
	var n int
	if err := db.SQL().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM live_log`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the journal holds %d rows (%v), want the one", n, err)
	}
}

// TestAStalledCommitReleasesItsCallers: while another connection holds
// the database's write lock, the writer's commit waits; once it has
// waited opWait its caller is answered unavailable (not committed yet)
// without waiting for the lock, and once the lock is released and the
// commit done the race's next append learns it was committed.
func TestAStalledCommitReleasesItsCallers(t *testing.T) {
	db := sqltest.SQLite(t)
	ctx := t.Context()
	s, err := openStore(ctx, db.SQL(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.w.opWait = 200 * time.Millisecond // well inside busy_timeout
	go s.w.run()
	other, err := db.SQL().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	hold, err := other.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	m := race.MoveRecord{Seat: 1, Seq: 1, Move: "AS>F1", ID: "m1"}
	if err := s.Append(ctx, "stall", m); !errors.Is(err, errNotDone) || !errors.Is(err, race.ErrUnavailable) {
		t.Fatalf("an append behind a held write lock: %v, want unavailable, not committed yet", err)
	}
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	// Until the stalled commit ends, callers are answered unavailable at
	// once (a client sends again later).
	for s.w.stalled.Load() {
		time.Sleep(time.Millisecond)
	}
	if err := s.Append(ctx, "stall", m); err != nil {
		t.Fatalf("its retry once the lock is released: %v", err)
	}
	if got, err := s.Moves(ctx, "stall"); err != nil || len(got) != 1 {
		t.Errorf("moves %v (%v), want the one", got, err)
	}
}
