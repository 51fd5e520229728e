package fleet

import (
	"context"
	"errors"

	"sirtommy/race"
)

// takeOver makes this instance the owner of live race id when it has no
// live owner (its lease ran out or was given up) and rebuilds it here. It
// returns nil, nil when another instance owns the race, and fails with
// ErrOver (wrapped) when the race is over: a finished race is never
// taken over (openOver reads it).
//
// One takeover of a race at a time: the requests and the lease loop that
// find it orphaned at once share one (in the first one's context), while
// other races are taken over beside it.
func (f *Fleet) takeOver(ctx context.Context, id string) (*race.Race, error) {
	r, err, _ := f.takeovers.Do(id, func() (any, error) { return f.adopt(ctx, id) })
	rr, _ := r.(*race.Race)
	return rr, err
}

// adopt is takeOver's work, for one race at a time.
func (f *Fleet) adopt(ctx context.Context, id string) (*race.Race, error) {
	if r, err := f.svc.Get(id); err == nil {
		return r, nil
	}
	if f.svc.Draining() {
		return nil, nil // shutting down: the other instances take it
	}
	c := f.cluster
	ok, err := c.Claim(ctx, id)
	if err != nil || !ok {
		return nil, err
	}
	rec, found, err := c.Load(ctx, id)
	if err == nil && !found {
		err = errors.New("race record vanished")
	}
	if err != nil {
		_ = c.Release(ctx, id)
		return nil, err
	}
	moves, err := f.deps.Store.Moves(ctx, id)
	if err != nil {
		_ = c.Release(ctx, id)
		return nil, err
	}
	r, err := race.Restore(rec, moves, f.svc.Deps())
	if err != nil {
		_ = c.Release(ctx, id)
		return nil, err
	}
	if !f.svc.Adopt(r) { // Drain began meanwhile and will not hand this race over
		r.Stop()
		_ = c.Handover(ctx, id)
		return nil, nil
	}
	if !r.State().Over() {
		r.Rearm(rec)
		f.background(func() { f.catchUp(r) })
	}
	f.deps.Log.Info().Str("race", id).Int("moves", len(moves)).Msg("race taken over")
	f.bus.Publish(OwnerTopic(id), &OwnerEvent{Race: id, Owner: c.Instance()})
	return r, nil
}

// openOver is finished race id, rebuilt here for its record and replay
// (a connection's request found it over, its lease released). A race
// whose result is stored but whose record does not say it is over yet
// (its owner is storing it) is unavailable for a moment.
func (f *Fleet) openOver(ctx context.Context, id string) (*race.Race, error) {
	if r, err := f.svc.Get(id); err == nil && r.State().Over() {
		return r, nil
	}
	rec, ok, err := f.cluster.Load(ctx, id)
	switch {
	case err != nil:
		return nil, &race.Error{Code: race.CodeUnavailable, Message: "the race's record cannot be read now; try again shortly", Err: err}
	case !ok:
		return nil, race.Errorf(race.CodeNoSuchRace, "no race has id %q", id)
	case !rec.State.Over():
		return nil, race.Errorf(race.CodeUnavailable, "the race's result is being recorded; try again shortly")
	}
	r, err := f.restoreOver(ctx, rec)
	if err == nil && !r.State().Over() { // a stale copy of the race is listed here still
		return nil, race.Errorf(race.CodeUnavailable, "the race changes hands; try again shortly")
	}
	return r, err
}

// restoreOver rebuilds a finished race here for its record and replay.
func (f *Fleet) restoreOver(ctx context.Context, rec *race.Record) (*race.Race, error) {
	moves, err := f.deps.Store.Moves(ctx, rec.ID)
	if err != nil {
		return nil, &race.Error{Code: race.CodeUnavailable, Message: "the race's log cannot be read now", Err: err}
	}
	r, err := race.Restore(rec, moves, f.svc.Deps())
	if err != nil {
		return nil, &race.Error{Code: race.CodeInternal, Message: "the race could not be rebuilt", Err: err}
	}
	f.markReleased(r) // a copy for reading: this instance holds no lease on it
	return f.svc.Keep(r), nil
}

// catchUp counts the moves of race r, taken over here, that the holders
// of its seats on other instances logged after its log was read for the
// takeover and before the race listened for their records here: once
// its subscription is live, the log is read again (race.CatchUp).
func (f *Fleet) catchUp(r *race.Race) {
	ctx, cancel := context.WithTimeout(f.ctx, clusterTimeout)
	defer cancel()
	if sy, ok := f.bus.(Syncer); ok {
		if err := sy.Sync(ctx); err != nil {
			f.deps.Log.Warn().Err(err).Str("race", r.ID()).Msg("bus not synced after a takeover")
		}
	}
	if err := r.CatchUp(ctx); err != nil {
		f.deps.Log.Warn().Err(err).Str("race", r.ID()).Msg("held seats' moves not read after a takeover")
	}
}
