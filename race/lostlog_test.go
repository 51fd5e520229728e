package race_test

import (
	"context"
	"reflect"
	"testing"

	"sirtommy/race"
)

// TestFinishedRaceWhoseLogIsLostAnswersFromTheArchive: a finished race
// still in memory whose log the live store has lost (Redis flushed, or
// restarted empty, or its retention shorter than the copy's life) answers
// its record and Final with every move, read from the archive.
func TestFinishedRaceWhoseLogIsLostAnswersFromTheArchive(t *testing.T) {
	ctx := context.Background()
	a := newArchiving(t)
	r := a.finish(t, race.Options{Public: true})
	a.settle(t)
	live, err := r.Info(ctx)
	if err != nil || len(live.Moves) < 9 {
		t.Fatalf("live info with %d moves (%v), want 9 or more", len(live.Moves), err)
	}
	if err := a.store.Forget(ctx, r.ID()); err != nil { // the live store loses the log
		t.Fatal(err)
	}
	got, err := r.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, live) {
		t.Errorf("info once the log is lost\n%+v\nwant as before\n%+v", got, live)
	}
	final, err := a.svc.Final(ctx, r.ID())
	if err != nil || !reflect.DeepEqual(final.Moves, live.Moves) {
		t.Errorf("Final once the log is lost: %d moves (%v), want the %d of the archive", len(final.Moves), err, len(live.Moves))
	}

}
