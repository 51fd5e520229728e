package redisrace_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace"
	"sirtommy/race/redisrace/redistest"
)

// TestUnarchivedLedger: a race decided as finished is listed as
// unarchived from its decision, by age, until Archived unlists it; an
// aborted race is never listed. On one Redis and on a Redis Cluster,
// where the list is in a slot of its own, apart from the race's keys.
func TestUnarchivedLedger(t *testing.T) {
	servers := []struct {
		name string
		rdb  func(t *testing.T) redis.UniversalClient
	}{
		{"redis", func(t *testing.T) redis.UniversalClient { return redistest.Start(t, redistest.Options{}).Client(t) }},
		{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.StartCluster(t).Client(t) }},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			clock := racetest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			c, err := redisrace.NewCluster(t.Context(), srv.rdb(t), redisrace.ClusterOptions{
				Keys: redisrace.Keys{Prefix: "test:"}, Instance: "a", Clock: clock, Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			ctx := t.Context()
			t0 := clock.Now()
			decide := func(id string, state race.State) {
				t.Helper()
				res := &race.Result{Outcome: race.OutcomeDraw, Reason: race.ReasonEqualCards, Rated: true}
				if state == race.Aborted {
					res = &race.Result{Outcome: race.OutcomeAborted, Reason: race.ReasonNoFirstMove}
				}
				if _, _, err := c.Decide(ctx, id, res, state); err != nil {
					t.Fatalf("decide %s: %v", id, err)
				}
			}
			list := func(before time.Time, n int) []string {
				t.Helper()
				ids, err := c.Unarchived(ctx, before, n)
				if err != nil {
					t.Fatal(err)
				}
				return ids
			}
			decide("first", race.Finished)
			decide("aborted", race.Aborted)
			clock.Advance(time.Second)
			decide("second", race.Finished)
			clock.Advance(time.Second)
			decide("first", race.Finished) // decided again (a takeover): listed once, from then
			cases := []struct {
				name   string
				before time.Time
				n      int
				want   []string
			}{
				{"the cutoff is strict", t0.Add(time.Second), 10, nil},
				{"by age", t0.Add(time.Hour), 10, []string{"second", "first"}},
				{"limit", t0.Add(time.Hour), 1, []string{"second"}},
			}
			for _, tc := range cases {
				if got := list(tc.before, tc.n); !slices.Equal(got, tc.want) {
					t.Errorf("%s: unarchived %v, want %v", tc.name, got, tc.want)
				}
			}
			for range 2 { // unlisting twice is once
				if err := c.Archived(ctx, "second"); err != nil {
					t.Fatal(err)
				}
			}
			if got := list(t0.Add(time.Hour), 10); !slices.Equal(got, []string{"first"}) {
				t.Errorf("unarchived once second is archived: %v, want [first]", got)
			}
			if _, err := c.Unarchived(ctx, t0, 0); race.ErrorCode(err) != race.CodeInternal {
				t.Errorf("unarchived with n 0: %v, want %s", err, race.CodeInternal)
			}
		})
	}
}

// deadArchive stands for an instance that dies before its races are
// archived: its Puts never succeed.
type deadArchive struct{ race.Archive }

func (deadArchive) Put(context.Context, race.Archived) error {
	return errors.New("the instance died before archiving")
}

// finishOn runs a race of testDeal on in to its end: a few moves each,
// then both resign.
func finishOn(t *testing.T, in *instance, clock *racetest.Clock) *race.Race {
	t.Helper()
	r, _, _ := runningOn(t, in, clock, race.Options{Tag: "tagged"})
	rules, _ := engine.Variant("")
	for s := range 2 {
		g := engine.New(rules, testDeal)
		play(t, r, &g, s, 3+s)
		if err := r.Resign(s, ""); err != nil {
			t.Fatal(err)
		}
	}
	if r.State() != race.Finished {
		t.Fatalf("race is %s, want finished", r.State())
	}
	return r
}

// drainAtCleanup drains in's Service at the test's end without waiting:
// its archiver gives up, and its sweeps stop.
func drainAtCleanup(t *testing.T, in *instance) {
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		in.svc.Drain(ctx)
	})
}

// TestRaceArchivedWhereItEnds: in Redis mode a race is archived by the
// instance it ends on, which then unlists it; once Redis has let it go
// too, it opens from the archive.
func TestRaceArchivedWhereItEnds(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	rdb := redistest.Start(t, redistest.Options{}).Client(t)
	archive := memrace.NewArchive()
	a := newInstance(t, rdb, "a", clock, func(d *race.Deps) { d.Archive = archive })
	drainAtCleanup(t, a)
	r := finishOn(t, a, clock)
	a.svc.Drain(context.Background()) // waits for the archive
	got, ok, err := archive.Get(t.Context(), r.ID())
	if err != nil || !ok {
		t.Fatalf("race not archived (%v)", err)
	}
	if len(got.Info.Moves) < 9 || got.Tag != "tagged" {
		t.Errorf("archived %d moves, tag %q; want 9 or more, tagged", len(got.Info.Moves), got.Tag)
	}
	if ids, err := a.cluster.Unarchived(t.Context(), clock.Now().Add(time.Hour), 10); err != nil || len(ids) != 0 {
		t.Errorf("unarchived after the archive: %v (%v), want none", ids, err)
	}
	// The retention ends: out of memory, and out of Redis.
	if n := a.svc.Evict(0); n != 1 {
		t.Fatalf("evicted %d races, want 1", n)
	}
	keys := redisrace.Keys{Prefix: "test:"}
	if err := rdb.Del(t.Context(), keys.Meta(r.ID()), keys.Result(r.ID()), keys.Log(r.ID()), keys.Seqs(r.ID())).Err(); err != nil {
		t.Fatal(err)
	}
	h, err := a.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatalf("open a race only the archive has: %v", err)
	}
	in, err := h.Info(t.Context())
	if err != nil || h.State() != race.Finished || !reflect.DeepEqual(in, got.Info) {
		t.Errorf("opened from the archive: %s, %+v (%v); want finished, %+v", h.State(), in, err, got.Info)
	}
	if err := h.Move(0, "AS>F1", ""); race.ErrorCode(err) != race.CodeRaceOver {
		t.Errorf("a move on an archived race: %v, want %s", err, race.CodeRaceOver)
	}
}

// TestSweepArchivesRaceOfDeadInstance: an instance that dies after a
// race's result and before its archive leaves the race listed; another
// instance's sweep rebuilds it from the live store, archives it whole and
// unlists it. A listed race whose record is gone is unlisted.
func TestSweepArchivesRaceOfDeadInstance(t *testing.T) {
	clock := racetest.NewClock(time.Now().UTC().Round(0)) // as the archive's JSON gives times back
	rdb := redistest.Start(t, redistest.Options{}).Client(t)
	archive := memrace.NewArchive()
	a := newInstance(t, rdb, "a", clock, func(d *race.Deps) { d.Archive = deadArchive{archive} })
	drainAtCleanup(t, a)
	r := finishOn(t, a, clock)
	live, err := r.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	a.kill()
	ctx := t.Context()
	if _, _, err := a.cluster.Decide(ctx, "gone", &race.Result{Outcome: race.OutcomeDraw}, race.Finished); err != nil {
		t.Fatal(err) // listed, with no record
	}
	if _, ok, _ := archive.Get(ctx, r.ID()); ok {
		t.Fatal("the dead instance archived the race")
	}
	b := newInstance(t, rdb, "b", clock, func(d *race.Deps) { d.Archive = archive })
	drainAtCleanup(t, b)
	if n, err := b.svc.SweepArchive(ctx, clock.Now().Add(-race.ArchiveSweepAfter)); n != 0 || err != nil {
		t.Errorf("a sweep before the cutoff archived %d (%v), want none", n, err)
	}
	n, err := b.svc.SweepArchive(ctx, clock.Now().Add(time.Millisecond))
	if n != 1 || err != nil {
		t.Fatalf("sweep archived %d races (%v), want 1", n, err)
	}
	got, ok, err := archive.Get(ctx, r.ID())
	if err != nil || !ok {
		t.Fatalf("race not archived by the sweep (%v)", err)
	}
	if !reflect.DeepEqual(got.Info, live) || got.Tag != "tagged" {
		t.Errorf("swept race\n%+v\nwant the race as it ended\n%+v", got.Info, live)
	}
	if ids, err := b.cluster.Unarchived(ctx, clock.Now().Add(time.Hour), 10); err != nil || len(ids) != 0 {
		t.Errorf("unarchived after the sweep: %v (%v), want none (the archived race and the one without a record unlisted)", ids, err)
	}
	if n, err := b.svc.SweepArchive(ctx, clock.Now().Add(time.Hour)); n != 0 || err != nil {
		t.Errorf("a second sweep archived %d (%v), want none", n, err)
	}
}
