package sqlrace

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race"
)

// TestAFailedCommitFailsEveryAppendOfItsBatch: three appends wait for the
// writer and go in one transaction, whose one bad insert (a trigger
// refuses race "bad", as a full disk would refuse any) fails them all as
// unavailable, with nothing of any stored; sent again once the database
// takes them, they are stored.
func TestAFailedCommitFailsEveryAppendOfItsBatch(t *testing.T) {
	db := sqltest.SQLite(t)
	ctx := t.Context()
	s, err := openStore(ctx, db.SQL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := db.SQL().ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON live_moves
WHEN NEW.race = 'bad' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	ids := []string{"good1", "bad", "good2"}
	m := race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1", ID: "x"}
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { errs[i] = s.Append(ctx, id, m) })
	}
	// The writer starts once all three wait in its queue: one batch.
	for len(s.w.ops) < len(ids) {
		time.Sleep(time.Millisecond)
	}
	go s.w.run()
	wg.Wait()
	for i, id := range ids {
		if !errors.Is(errs[i], race.ErrUnavailable) {
			t.Errorf("append to %s in the failed batch: %v, want ErrUnavailable", id, errs[i])
		}
	}
	var n int
	if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM live_moves`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the failed batch left %d moves (%v)", n, err)
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
