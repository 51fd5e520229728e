package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/lobby/sqlstore"
	"sirtommy/race"
	"sirtommy/race/sqlrace"
)

// restoreTimeout bounds reading the live tables and rebuilding their
// races at start: a few thousand races take well under a second.
const restoreTimeout = time.Minute

// liveInterval is the least time between the live races' commits
// (sqlrace.Options.Interval): at 1,000 races (3,400 moves a second) a
// commit carries some 60 moves instead of one or two, which brings the
// cost of durable races from about 40% more CPU a move than memory to
// about 20%, for up to 20 ms on each move's answer; below 50 moves a
// second nothing waits (docs/performance.md).
const liveInterval = 20 * time.Millisecond

// localBackend is the single binary's backend with a data folder: the
// memory backend whose races are kept in the folder's SQLite database as
// well (race/sqlrace), every move committed before it is acknowledged, so
// that a server killed mid-race (SIGKILL, a crash) resumes its races when
// it starts again on the same folder: restore rebuilds them.
// It shares db, the durable store serve opened on the folder (one data
// folder is opened once: its lock is exclusive); finished races are kept
// until keep has passed since their end.
func localBackend(ctx context.Context, db *sqlstore.DB, keep time.Duration, log zerolog.Logger) (*backend, error) {
	store, err := sqlrace.New(ctx, db.SQL(), sqlrace.Options{Interval: liveInterval})
	if err != nil {
		return nil, fmt.Errorf("data folder %s: %w", db.Where(), err)
	}
	be := memoryBackend(log)
	records := store.Records(be.deps.Clock)
	be.deps.Store, be.deps.Records = store, records
	be.restore = func(ctx context.Context, svc *race.Service) error {
		return restoreRaces(ctx, svc, store, records, keep, log)
	}
	be.close = func() {
		if err := store.Close(); err != nil {
			log.Warn().Err(err).Msg("data folder closed with an error")
		}
	}
	log.Info().Str("data", db.Where()).Msg("races kept in the data folder")
	return be, nil
}

// restoreRaces rebuilds, at start, the races the live tables hold. A race
// that is not over is adopted by svc and goes on: its players resume it
// with their seat tokens (their connections died with the last process,
// so each human seat's grace period starts now), its computer seats are
// made again. A finished race is kept for its record and replay until it
// is evicted like any other (Service.Evict then deletes its rows), unless
// it ended keep ago already. What is not rebuilt is deleted: a race that
// cannot be (logged), one that ended keep ago, and moves without a record
// (a race whose record was never saved): their moves would hold the
// journal's front (sqlrace) for ever.
func restoreRaces(ctx context.Context, svc *race.Service, store *sqlrace.Store, records *sqlrace.Records, keep time.Duration, log zerolog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, restoreTimeout)
	defer cancel()
	began := time.Now()
	list, err := records.List(ctx)
	if err != nil {
		return fmt.Errorf("races of the data folder: %w", err)
	}
	now := svc.Deps().Clock.Now()
	var live, kept, broken int
	for _, s := range list {
		rec := s.Record
		if rec.State.Over() && now.Sub(s.Saved) >= keep {
			continue // deleted below
		}
		moves, err := store.Moves(ctx, rec.ID)
		if err != nil {
			return fmt.Errorf("races of the data folder: %w", err)
		}
		if !rec.State.Over() {
			restarted(rec)
		}
		r, err := race.Restore(rec, moves, svc.Deps())
		if err != nil {
			log.Error().Err(err).Str("race", rec.ID).Msg("race not rebuilt: its rows are deleted")
			broken++
			continue
		}
		if rec.State.Over() {
			svc.Keep(r)
			kept++
			continue
		}
		if !svc.Adopt(r) {
			return errors.New("races of the data folder: the server is draining already")
		}
		r.Rearm(rec)
		live++
	}
	gone := store.Races()
	for _, s := range list {
		gone = append(gone, s.Record.ID)
	}
	forgotten := 0
	for _, id := range gone {
		if _, err := svc.Get(id); err == nil {
			continue
		}
		if err := store.Forget(ctx, id); err != nil {
			return fmt.Errorf("races of the data folder: %w", err)
		}
		forgotten++
	}
	log.Info().Int("live", live).Int("finished", kept).Int("forgotten", forgotten).Int("broken", broken).
		Dur("took", time.Since(began)).Msg("races of the data folder restored")
	return nil
}

// restarted marks rec's human seats as disconnected with no grace period
// begun: nobody can have stayed connected through the restart, and the
// time the server was down is not theirs to lose, so Rearm gives each the
// whole grace period from now. Computer and ghost seats are made again.
func restarted(rec *race.Record) {
	for i := range rec.Seats {
		if st := &rec.Seats[i]; st.Taken && !st.Computer && st.Ghost == nil {
			st.Connected, st.GraceEnd = false, time.Time{}
		}
	}
}
