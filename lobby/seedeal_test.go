package lobby_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
	"sirtommy/race/memrace"
)

// flakyGhosts is the memory ghosts store whose See and KeepBest fail a
// number of times first, as a database that is away for a while.
type flakyGhosts struct {
	lobby.Ghosts
	mu                sync.Mutex
	failSee, failBest int
}

var errGhostsDown = errors.New("the ghosts' database is down")

func (g *flakyGhosts) See(ctx context.Context, variant string, deal uint64, player string) (bool, error) {
	g.mu.Lock()
	if g.failSee > 0 {
		g.failSee--
		g.mu.Unlock()
		return false, errGhostsDown
	}
	g.mu.Unlock()
	return g.Ghosts.See(ctx, variant, deal, player)
}

func (g *flakyGhosts) KeepBest(ctx context.Context, variant string, deal uint64, player string, b lobby.BestGame) error {
	g.mu.Lock()
	if g.failBest > 0 {
		g.failBest--
		g.mu.Unlock()
		return errGhostsDown
	}
	g.mu.Unlock()
	return g.Ghosts.KeepBest(ctx, variant, deal, player, b)
}

// TestSeenDealAndBestGameSurviveAStoreOutage: when the store fails as a
// race's end is followed up, its players' seen deal (no ghost of it for
// them) and best game are tried again until it answers, as its rating
// is, before the race is marked followed: neither is lost.
func TestSeenDealAndBestGameSurviveAStoreOutage(t *testing.T) {
	clock := newClock()
	races := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus(), Archive: memrace.NewArchive()})
	tokens, err := lobby.NewTokens(lobby.NewSecret(), clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	ghosts := &flakyGhosts{Ghosts: memlobby.NewGhosts(), failSee: 1, failBest: 1}
	f := &fixture{clock: clock, races: races, ratings: memlobby.NewRatings()}
	st := memlobby.NewStores(lobby.MatchConfig{}, clock)
	st.Ratings, st.Ghosts = f.ratings, ghosts
	f.lobby = lobby.New(lobby.Config{}, lobby.Deps{Clock: clock, Log: zerolog.Nop(), Races: races, Tokens: tokens, Stores: st})
	t.Cleanup(f.lobby.Close)

	rc, _, ws := f.drawRace(t)
	f.settle(t) // archived and followed
	deal, err := strconv.ParseUint(rc.Result().Deal, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, w := range ws {
		if seen, err := ghosts.Seen(ctx, "classic", deal, w.ID); err != nil || !seen {
			t.Errorf("%s has not seen the deal of their race (%v)", w.ID, err)
		}
		if b, ok, err := ghosts.Best(ctx, "classic", deal, w.ID); err != nil || !ok || b.Race != rc.ID() {
			t.Errorf("%s's best game on the deal: %+v, %v (%v), want their race's", w.ID, b, ok, err)
		}
	}
}
