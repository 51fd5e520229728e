package main

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby/sqlstore"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
	"sirtommy/race/sqlrace"
)

// localServer is one run of a server's races on data folder dir, with the
// fake clock given: what localBackend wires, without the web.
type localServer struct {
	db    *sqlstore.DB
	store *sqlrace.Store
	svc   *race.Service
	clock *racetest.Clock
}

// startLocal opens dir and rebuilds its races as serve does at start,
// with keep as --retention.
func startLocal(t *testing.T, dir string, clock *racetest.Clock, keep time.Duration) *localServer {
	t.Helper()
	db, err := sqlstore.OpenSQLite(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlrace.New(t.Context(), db.SQL(), sqlrace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	records := store.Records(clock)
	svc := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: store, Records: records,
		Bus: memrace.NewBus(), Computers: newComputer})
	if err := restoreRaces(t.Context(), svc, store, records, keep, zerolog.Nop()); err != nil {
		t.Fatalf("restore: %v", err)
	}
	s := &localServer{db: db, store: store, svc: svc, clock: clock}
	t.Cleanup(s.stop)
	return s
}

// stop ends the server's use of the folder. Its races are left as they
// are, as a killed process leaves them: what they committed is all the
// next one finds.
func (s *localServer) stop() {
	if s.db == nil {
		return
	}
	_ = s.store.Close()
	_ = s.db.Close()
	s.db = nil
}

// playFirst plays seat's first legal move in race r, whose game g follows.
func playFirst(t *testing.T, r *race.Race, seat int, g *engine.Game) {
	t.Helper()
	m := g.AppendMoves(nil)[0]
	if err := r.Move(seat, m.String(), ""); err != nil {
		t.Fatalf("seat %d move %s: %v", seat, m, err)
	}
	if err := g.Apply(m); err != nil {
		t.Fatal(err)
	}
}

// TestRestartGivesEachPlayerTheWholeGraceFromTheRestart: a race is
// running when its server dies, one player connected and one whose
// grace period had begun; the server starts again ten minutes later.
// The race resumes with every move, and each player has the whole grace
// period from the restart: the one who resumes plays on, the one who
// does not forfeits when it ends, not before.
func TestRestartGivesEachPlayerTheWholeGraceFromTheRestart(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	first := startLocal(t, dir, racetest.NewClock(start), time.Hour)
	r, err := first.svc.Create(race.Options{Deal: testDeal, DealNamed: true, TimeLimit: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	subs := [2]racetest.Chan{make(racetest.Chan, 256), make(racetest.Chan, 256)}
	var tickets [2]race.Ticket
	for s, name := range []string{"ann", "bob"} {
		if tickets[s], err = r.Join(name, "", subs[s]); err != nil {
			t.Fatal(err)
		}
	}
	first.clock.Advance(race.DefaultCountdown)
	rules, _ := engine.Variant("")
	games := [2]engine.Game{engine.New(rules, testDeal), engine.New(rules, testDeal)}
	for range 3 {
		for s := range 2 {
			playFirst(t, r, s, &games[s])
		}
	}
	r.Leave(tickets[1].Seat, subs[1]) // bob's grace period begins
	first.stop()

	second := startLocal(t, dir, racetest.NewClock(start.Add(race.DefaultCountdown+10*time.Minute)), time.Hour)
	back, err := second.svc.Get(r.ID())
	if err != nil {
		t.Fatalf("the race after the restart: %v", err)
	}
	if st := back.State(); st != race.Running {
		t.Fatalf("the race after the restart is %s, want running", st)
	}
	info, err := back.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for s := range 2 {
		if got, want := info.Counts[s].Moves, games[s].Plies(); got != want || info.Players[s].Connected {
			t.Errorf("seat %d after the restart: %d moves, connected %v; want the %d acknowledged, not connected", s, got, info.Players[s].Connected, want)
		}
	}
	second.clock.Advance(race.DefaultGrace - time.Second)
	if st := back.State(); st != race.Running {
		t.Fatalf("the race is %s %v before the grace period from the restart ended", st, back.Result())
	}
	ann := make(racetest.Chan, 256)
	if _, err := back.Resume(tickets[0].Token, "", "", ann); err != nil {
		t.Fatalf("ann resumes: %v", err)
	}
	playFirst(t, back, 0, &games[0])
	second.clock.Advance(2 * time.Second)
	res := back.Result()
	if res == nil || res.Reason != race.ReasonForfeit || res.Winner == nil || *res.Winner != 0 {
		t.Fatalf("after bob's grace period from the restart: %s %+v, want ann winning by forfeit", back.State(), res)
	}
}

// TestRestartKeepsFinishedRacesUntilTheirRetentionEnds: a finished race
// is rebuilt at start for its record and replay while its retention
// lasts, and its rows deleted when it is evicted; one whose retention
// ended while the server was down is deleted at start.
func TestRestartKeepsFinishedRacesUntilTheirRetentionEnds(t *testing.T) {
	dir := t.TempDir()
	const keep = time.Hour
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	clock := racetest.NewClock(start)
	first := startLocal(t, dir, clock, keep)
	ids := make([]string, 2) // ended at the start, and 90 minutes later
	for i := range ids {
		r, err := first.svc.Create(race.Options{Deal: testDeal, DealNamed: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"ann", "bob"} {
			if _, err := r.Join(name, "", make(racetest.Chan, 256)); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(race.DefaultCountdown)
		for s := range 2 {
			if err := r.Resign(s, ""); err != nil {
				t.Fatal(err)
			}
		}
		if r.State() != race.Finished {
			t.Fatalf("race %d is %s after both resigned", i, r.State())
		}
		ids[i] = r.ID()
		clock.Advance(90 * time.Minute * time.Duration(1-i)) // then the restart, a little later
	}
	clock.Advance(time.Minute)
	first.stop()

	second := startLocal(t, dir, racetest.NewClock(clock.Now()), keep)
	ctx := t.Context()
	for i, tc := range []struct {
		listed, rows bool
	}{{false, false}, {true, true}} {
		_, err := second.svc.Get(ids[i])
		if listed := err == nil; listed != tc.listed {
			t.Errorf("race %d listed %v after the restart, want %v", i, listed, tc.listed)
		}
		moves, _ := second.store.Moves(ctx, ids[i])
		if rows := liveRows(t, second.db, ids[i]); rows != tc.rows || (len(moves) > 0) != tc.rows {
			t.Errorf("race %d has live rows %v and %d moves after the restart, want rows and moves %v", i, rows, len(moves), tc.rows)
		}
	}
	var journal int
	if err := second.db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM live_log`).Scan(&journal); err != nil || journal != 2 {
		t.Errorf("after the restart the journal holds %d rows (%v), want the kept race's 2 (a resignation each)", journal, err)
	}
	if r, err := second.svc.Get(ids[1]); err == nil {
		info, err := r.Info(ctx)
		if err != nil || info.Result == nil || len(info.Moves) != 2 {
			t.Errorf("the kept race's record: %+v %v, want its result and its two entries", info, err)
		}
	}
	second.clock.Advance(keep)
	// Evicted, its record and result go at once, its moves from memory
	// (and from the journal's front within a minute: race/sqlrace's tests).
	if n := second.svc.Evict(keep); n != 1 || liveRows(t, second.db, ids[1]) || len(second.store.Races()) != 0 {
		t.Errorf("evicted %d races, rows left %v, moves of %v: want the kept race evicted and its rows gone",
			n, liveRows(t, second.db, ids[1]), second.store.Races())
	}
}

// liveRows reports whether race id has a record or result in the live
// tables.
func liveRows(t *testing.T, db *sqlstore.DB, id string) bool {
	t.Helper()
	var n int
	err := db.SQL().QueryRowContext(context.Background(), `SELECT
 (SELECT COUNT(*) FROM live_races WHERE id = $1) + (SELECT COUNT(*) FROM live_results WHERE race = $1)`, id).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// TestDurableRacesFlag: --durable-races (or its environment variable)
// needs a data folder, and is refused with --redis.
func TestDurableRacesFlag(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		durable bool
		usage   bool
	}{
		{"off by default", []string{"--data", "d"}, nil, false, false},
		{"on with a folder", []string{"--data", "d", "--durable-races"}, nil, true, false},
		{"on from the environment", []string{"--data", "d"}, map[string]string{"SIRTOMMY_DURABLE_RACES": "true"}, true, false},
		{"the flag wins", []string{"--data", "d", "--durable-races=false"}, map[string]string{"SIRTOMMY_DURABLE_RACES": "true"}, false, false},
		{"the default folder", []string{"--durable-races"}, nil, true, false},
		{"with postgres", []string{"--durable-races", "--database", "postgres://127.0.0.1:1/x"}, nil, false, true},
		{"with redis", []string{"--data", "d", "--durable-races", "--redis", "redis://127.0.0.1:1/0"}, nil, false, true},
		{"a bad environment value", []string{"--data", "d"}, map[string]string{"SIRTOMMY_DURABLE_RACES": "maybe"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			cfg, err := parseServe(env{args: tc.args, getenv: func(k string) string { return tc.env[k] }, stdout: &out, stderr: &out})
			var u usageError
			if tc.usage {
				if !errors.As(err, &u) {
					t.Fatalf("want a usage error, got %v", err)
				}
				return
			}
			if err != nil || cfg.durableRaces != tc.durable {
				t.Fatalf("durable races %v (%v), want %v", cfg.durableRaces, err, tc.durable)
			}
		})
	}
}
