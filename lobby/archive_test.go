package lobby_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
	"sirtommy/race/memrace"
)

// forgetfulArchive is memrace's archive that, while forget is set, loses
// every followed mark: a process that stopped between a race's work and
// its mark.
type forgetfulArchive struct {
	*memrace.Archive
	mu     sync.Mutex
	forget bool
	lost   int      // the marks lost
	marks  []string // the races marked followed, while not forgetting
}

func (a *forgetfulArchive) Put(ctx context.Context, r race.Archived) error {
	a.mu.Lock()
	if a.forget && r.Followed {
		r.Followed = false
		a.lost++
	}
	a.mu.Unlock()
	return a.Archive.Put(ctx, r)
}

func (a *forgetfulArchive) Followed(ctx context.Context, id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.forget {
		a.lost++
		return nil
	}
	a.marks = append(a.marks, id)
	return a.Archive.Followed(ctx, id)
}

func (a *forgetfulArchive) setForget(forget bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.forget = forget
}

// lostMarks is the number of marks lost so far.
func (a *forgetfulArchive) lostMarks() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lost
}

func (a *forgetfulArchive) marked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.marks)
}

// newArchivingFixture is newFixture with a race archive; more lobbies
// may be made on the same stores (newLobby).
func newArchivingFixture(t *testing.T, archive race.Archive) *fixture {
	t.Helper()
	clock := newClock()
	races := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus(), Archive: archive})
	f := &fixture{clock: clock, races: races, ratings: memlobby.NewRatings()}
	f.lobby = f.newLobby(t)
	return f
}

// newLobby makes a lobby on f's races and ratings, closed at cleanup.
func (f *fixture) newLobby(t *testing.T) *lobby.Lobby {
	t.Helper()
	tokens, err := lobby.NewTokens(lobby.NewSecret(), f.clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	st := memlobby.NewStores(lobby.MatchConfig{}, f.clock)
	st.Ratings = f.ratings
	l := lobby.New(lobby.Config{}, lobby.Deps{Clock: f.clock, Log: zerolog.Nop(), Races: f.races, Tokens: tokens, Stores: st})
	t.Cleanup(l.Close)
	return l
}

// drawRace pairs ann and bob, seats them and has both resign: a rated
// draw. It returns the race and both players' sessions and welcomes.
func (f *fixture) drawRace(t *testing.T) (*race.Race, [2]*lobby.Session, [2]lobby.Welcome) {
	t.Helper()
	a, wa, ra := f.enter(t, "ann")
	b, wb, _ := f.enter(t, "bob")
	for _, s := range []*lobby.Session{a, b} {
		if _, err := s.Queue("classic"); err != nil {
			t.Fatal(err)
		}
	}
	rc, seats := f.takeSeats(t, [2]lobby.Welcome{wa, wb}, ra.matched()[0])
	for _, s := range seats {
		if err := rc.Resign(s, ""); err != nil {
			t.Fatal(err)
		}
	}
	if res := rc.Result(); res == nil || res.Outcome != race.OutcomeDraw {
		t.Fatalf("result %+v, want a draw", res)
	}
	return rc, [2]*lobby.Session{a, b}, [2]lobby.Welcome{wa, wb}
}

// unfollowed lists the archived races not followed, every one.
func (f *fixture) unfollowed(t *testing.T) []string {
	t.Helper()
	list, err := f.races.Unfollowed(context.Background(), f.clock.Now().Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range list {
		ids = append(ids, a.Info.Race)
	}
	return ids
}

// settle waits until the races are archived and none is left
// unfollowed: the lobby's work is all done.
func (f *fixture) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // only keeps a stuck worker from hanging the test
	for f.races.ArchiveQueue() > 0 || len(f.unfollowed(t)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d races to archive, %v unfollowed", f.races.ArchiveQueue(), f.unfollowed(t))
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSweepDoesAnUnfollowedRaceOnce: a race whose work was done but whose
// followed mark was lost (the process stopped between the two) is found
// by the next lobby's sweep at start; its work is done again, changing
// nothing (the ratings count the race once), and it is marked followed.
func TestSweepDoesAnUnfollowedRaceOnce(t *testing.T) {
	archive := &forgetfulArchive{Archive: memrace.NewArchive(), forget: true}
	f := newArchivingFixture(t, archive)
	rc, _, ws := f.drawRace(t)
	f.lobby.Close() // waits for the race's work
	for f.races.ArchiveQueue() > 0 {
		time.Sleep(time.Millisecond)
	}
	if got := f.unfollowed(t); !slices.Equal(got, []string{rc.ID()}) {
		t.Fatalf("unfollowed %v, want the race whose mark was lost", got)
	}
	for _, w := range ws {
		if st := f.standing(t, w.ID); st.Games != 1 {
			t.Fatalf("%s has %d games before the sweep, want 1", w.ID, st.Games)
		}
	}

	archive.setForget(false)
	f.clock.Advance(time.Second)
	next := f.newLobby(t) // a restart: the sweep at start
	f.settle(t)
	next.Close()
	for _, w := range ws {
		st := f.standing(t, w.ID)
		h, _ := f.ratings.History(context.Background(), w.ID, 10)
		if st.Games != 1 || st.Draws != 1 || len(h) != 1 {
			t.Errorf("%s after the sweep: %d games, %d draws, history %d; want the race once", w.ID, st.Games, st.Draws, len(h))
		}
	}
	if got := archive.marked(); !slices.Equal(got, []string{rc.ID()}) {
		t.Errorf("marked followed: %v, want the race once, by the sweep", got)
	}
}

// TestArchivedRaceRacedAgainAsGhost: once a finished race has left
// memory, its games are still raced again as ghosts (MakeGhost reads it
// through Races.Open, from the archive), the game itself and the
// player's best on its deal. The lobby's work marks its races followed,
// and the races it did not make too.
func TestArchivedRaceRacedAgainAsGhost(t *testing.T) {
	f := newArchivingFixture(t, memrace.NewArchive())
	rc, sessions, _ := f.drawRace(t)
	api, err := f.races.Create(race.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := api.Join("anon", "", &recorder{}); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Advance(race.DefaultCountdown)
	for s := range 2 {
		if err := api.Resign(s, ""); err != nil {
			t.Fatal(err)
		}
	}
	f.settle(t) // both archived and followed
	if n := f.races.Evict(0); n != 2 {
		t.Fatalf("evicted %d races, want 2", n)
	}
	if _, err := f.races.Get(rc.ID()); race.ErrorCode(err) != race.CodeNoSuchRace {
		t.Fatalf("race still in memory: %v", err)
	}
	in, err := f.races.Final(context.Background(), rc.ID())
	if err != nil {
		t.Fatal(err)
	}
	annSeat := 0
	if in.Players[1].Name == "ann" {
		annSeat = 1
	}
	for _, best := range []bool{false, true} {
		g, err := sessions[0].MakeGhost(rc.ID(), annSeat, best)
		if err != nil {
			t.Fatalf("ghost of an archived race (best %v): %v", best, err)
		}
		if g.Name != "ann" || g.Variant != "classic" || g.Status != engine.Resigned {
			t.Errorf("ghost (best %v) %+v, want ann's resigned classic game", best, g)
		}
	}
}

// TestSweepEveryMinute: while the lobby runs, a race whose mark was lost
// is found by a sweep once it ended endSweepAfter ago, and followed.
func TestSweepEveryMinute(t *testing.T) {
	archive := &forgetfulArchive{Archive: memrace.NewArchive(), forget: true}
	f := newArchivingFixture(t, archive)
	rc, _, _ := f.drawRace(t)
	deadline := time.Now().Add(30 * time.Second) // only keeps a stuck worker from hanging the test
	for archive.lostMarks() == 0 {               // the lobby's work is done, its mark lost
		if time.Now().After(deadline) {
			t.Fatal("the lobby never marked the race followed")
		}
		time.Sleep(time.Millisecond)
	}
	archive.setForget(false)
	f.clock.Advance(3 * time.Minute)
	f.settle(t)
	if got := archive.marked(); !slices.Equal(got, []string{rc.ID()}) {
		t.Errorf("marked followed: %v, want the race once, by a sweep", got)
	}
}
