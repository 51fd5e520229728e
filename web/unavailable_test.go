package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
	"sirtommy/web"
)

// errDiskOnFire is a storage failure that says nothing of availability:
// it must still reach clients as unavailable, never internal.
var errDiskOnFire = errors.New("disk on fire")

// failingStore is the event log until down is set; then every append
// fails. It holds the memory store as a race.Store, so that memrace's
// OpenLog (race.LogOpener) is not passed through: every append comes
// here.
type failingStore struct {
	race.Store
	down atomic.Bool
}

func (s *failingStore) Append(ctx context.Context, id string, m race.MoveRecord) error {
	if s.down.Load() {
		return errDiskOnFire
	}
	return s.Store.Append(ctx, id, m)
}

// failingQueue and failingChallenges fail every call while down is set.
type failingQueue struct {
	lobby.Queue
	down *atomic.Bool
}

func (q failingQueue) Join(ctx context.Context, s lobby.Seeker) error {
	if q.down.Load() {
		return errDiskOnFire
	}
	return q.Queue.Join(ctx, s)
}

type failingChallenges struct {
	lobby.Challenges
	down *atomic.Bool
}

func (c failingChallenges) Open(ctx context.Context, ch lobby.ChallengeInfo) error {
	if c.down.Load() {
		return errDiskOnFire
	}
	return c.Challenges.Open(ctx, ch)
}

func (c failingChallenges) Of(ctx context.Context, player string) (string, bool, error) {
	if c.down.Load() {
		return "", false, nil // the read works; the write fails
	}
	return c.Challenges.Of(ctx, player)
}

type failingRatings struct {
	*memlobby.Ratings
	down *atomic.Bool
}

func (r failingRatings) Leaderboard(ctx context.Context, variant string, n int) ([]lobby.Standing, error) {
	if r.down.Load() {
		return nil, errDiskOnFire
	}
	return r.Ratings.Leaderboard(ctx, variant, n)
}

// TestStorageFailuresAreUnavailable: when a store fails, with whatever
// error, clients are told unavailable (try again), never internal: a move
// the event log did not take, a queue or challenge the shared stores did
// not take, a leaderboard the ratings could not read.
func TestStorageFailuresAreUnavailable(t *testing.T) {
	store := &failingStore{Store: memrace.NewStore()}
	var down atomic.Bool
	e := newEnvWith(t, func(clock *racetest.Clock, d *web.Deps) {
		d.Races = race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: store, Bus: memrace.NewBus()})
		tokens, err := lobby.NewTokens([]byte(testSecret), clock, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		st := memlobby.NewStores(lobby.MatchConfig{}, clock)
		st.Ratings = failingRatings{Ratings: memlobby.NewRatings(), down: &down}
		st.Queue = failingQueue{Queue: st.Queue, down: &down}
		st.Challenges = failingChallenges{Challenges: st.Challenges, down: &down}
		l := lobby.New(lobby.Config{}, lobby.Deps{
			Clock: clock, Log: zerolog.Nop(), Races: d.Races, Tokens: tokens,
			Stores: st,
		})
		t.Cleanup(l.Close)
		d.Lobby = l
		d.Seats = web.OpenSeats{} // API races here; the lobby's requests are tested below
	})
	// A move the log does not take.
	id := e.create(`{"deal":"9"}`)
	a, b := e.dial(), e.dial()
	a.join(id, "ann")
	b.join(id, "bob")
	e.clock.Advance(race.DefaultCountdown)
	a.untilState(race.Running)
	g := newGame(9)
	store.down.Store(true)
	mv := racetest.Greedy(&g)
	m := a.expectError(map[string]any{"type": "move", "move": mv.String(), "id": "m1"}, race.CodeUnavailable)
	if m.ID != "m1" {
		t.Errorf("error %s does not answer the move", m.raw)
	}
	store.down.Store(false)
	if !a.move(mv, "m1") { // sent again, it is played
		t.Fatal("race over")
	}
	if err := g.Apply(mv); err != nil || g.Status() != engine.Playing {
		t.Fatal(err)
	}

	// The lobby's stores.
	c := e.dial()
	c.hello("cy")
	down.Store(true)
	c.expectError(map[string]any{"type": "queue", "id": "q"}, race.CodeUnavailable)
	c.expectError(map[string]any{"type": "challenge", "id": "c"}, race.CodeUnavailable)
	var apiErr struct{ Error struct{ Code race.Code } }
	res, err := http.Get(e.ts.URL + "/api/leaderboard/classic")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(&apiErr); err != nil || res.StatusCode != http.StatusServiceUnavailable || apiErr.Error.Code != race.CodeUnavailable {
		t.Errorf("leaderboard while the ratings fail: %d %+v %v; want 503 %s", res.StatusCode, apiErr, err, race.CodeUnavailable)
	}
}
