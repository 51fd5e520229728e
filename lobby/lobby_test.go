package lobby_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/glicko2"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a session's or a seat's connection: it keeps what it gets.
type recorder struct{ racetest.Recorder }

func (r *recorder) matched() []*lobby.MatchedEvent {
	var out []*lobby.MatchedEvent
	for _, ev := range r.Events() {
		if m, ok := ev.(*lobby.MatchedEvent); ok {
			out = append(out, m)
		}
	}
	return out
}

type fixture struct {
	clock   *racetest.Clock
	races   *race.Service
	ratings *memlobby.Ratings
	lobby   *lobby.Lobby
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clock := newClock()
	races := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	tokens, err := lobby.NewTokens(lobby.NewSecret(), clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	ratings := memlobby.NewRatings()
	st := memlobby.NewStores(lobby.MatchConfig{}, clock)
	st.Ratings = ratings
	l := lobby.New(lobby.Config{}, lobby.Deps{Clock: clock, Log: zerolog.Nop(), Races: races, Tokens: tokens, Stores: st})
	t.Cleanup(l.Close)
	return &fixture{clock: clock, races: races, ratings: ratings, lobby: l}
}

func (f *fixture) enter(t *testing.T, name string) (*lobby.Session, lobby.Welcome, *recorder) {
	t.Helper()
	rec := &recorder{}
	s, w, err := f.lobby.Enter("", name, rec)
	if err != nil {
		t.Fatal(err)
	}
	return s, w, rec
}

// TestLobbyConcurrentQueueing has many players queue, leave and come back
// at once (run with -race): each matched event names a race whose other
// seat went to someone else, and nobody is in two races at once (a player
// paired but not yet told is refused with in-race).
func TestLobbyConcurrentQueueing(t *testing.T) {
	f := newFixture(t)
	const players = 40
	type who struct {
		s   *lobby.Session
		w   lobby.Welcome
		rec *recorder
	}
	all := make([]who, players)
	for i := range all {
		s, w, rec := f.enter(t, fmt.Sprintf("p%d", i))
		all[i] = who{s, w, rec}
	}
	var wg sync.WaitGroup
	for i := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				if len(all[i].rec.matched()) > 0 {
					return
				}
				_, err := all[i].s.Queue("classic")
				if c := race.ErrorCode(err); err != nil && c != lobby.CodeInRace && c != lobby.CodeAlreadyQueued {
					t.Error(err)
				}
				if j%2 == 0 && j < 4 { // the last queue stays
					_ = all[i].s.Unqueue()
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			f.clock.Advance(time.Second)
		}
	}()
	wg.Wait()
	f.clock.Advance(time.Minute)
	seats := make(map[string]string) // race/seat -> player
	for _, p := range all {
		ms := p.rec.matched()
		if len(ms) > 1 {
			t.Fatalf("%s matched %d times", p.w.ID, len(ms))
		}
		for _, m := range ms {
			key := fmt.Sprintf("%s/%d", m.Race, m.Seat)
			if other, ok := seats[key]; ok {
				t.Fatalf("seat %s given to %s and %s", key, other, p.w.ID)
			}
			seats[key] = p.w.ID
			if m.Opponent.ID == p.w.ID {
				t.Fatalf("%s matched with themselves", p.w.ID)
			}
		}
	}
	for key, p := range seats {
		var rc string
		var s int
		fmt.Sscanf(key, "%32s/%d", &rc, &s)
		if _, ok := seats[fmt.Sprintf("%s/%d", rc, 1-s)]; !ok {
			t.Fatalf("%s's race %s has nobody in the other seat", p, rc)
		}
	}
	if q := f.lobby.Snapshot().Presence.Queued; len(seats)+q != players || q > 1 {
		t.Errorf("%d seated + %d queued, want %d with at most one queued", len(seats), q, players)
	}
}

// takeSeats seats both players of the last pairing through the lobby's
// authorizer and runs the countdown.
func (f *fixture) takeSeats(t *testing.T, ws [2]lobby.Welcome, m *lobby.MatchedEvent) (*race.Race, [2]int) {
	t.Helper()
	rc, err := f.races.Get(m.Race)
	if err != nil {
		t.Fatal(err)
	}
	var seats [2]int
	for i, w := range ws {
		_, tok, err := f.lobby.AuthorizeSeat(w.Token, m.Race, "")
		if err != nil || tok == "" {
			t.Fatalf("authorize %s: %q %v", w.ID, tok, err)
		}
		tk, err := rc.Resume(tok, w.ID, "", &recorder{})
		if err != nil {
			t.Fatal(err)
		}
		seats[i] = tk.Seat
	}
	f.clock.Advance(race.DefaultCountdown)
	return rc, seats
}

func (f *fixture) standing(t *testing.T, player string) lobby.Standing {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _ := f.ratings.Standing(context.Background(), "classic", player)
		if st.Games > 0 {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not rated", player)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRatingsAfterRatedRacesNotAborted(t *testing.T) {
	f := newFixture(t)
	a, wa, ra := f.enter(t, "ann")
	b, wb, _ := f.enter(t, "bob")
	for _, s := range []*lobby.Session{a, b} {
		if _, err := s.Queue("classic"); err != nil {
			t.Fatal(err)
		}
	}
	m := ra.matched()[0]
	rc, seats := f.takeSeats(t, [2]lobby.Welcome{wa, wb}, m)
	// Both resign at once, without a card placed: a draw, rated.
	if err := rc.Resign(seats[0], ""); err != nil {
		t.Fatal(err)
	}
	if err := rc.Resign(seats[1], ""); err != nil {
		t.Fatal(err)
	}
	if res := rc.Result(); res.Outcome != "draw" || !res.Rated {
		t.Fatalf("result %+v", res)
	}
	sa, sb := f.standing(t, wa.ID), f.standing(t, wb.ID)
	want := glicko2.Update(glicko2.New(), []glicko2.Result{{Opponent: glicko2.New(), Score: glicko2.Draw}}, glicko2.DefaultTau)
	for _, st := range []lobby.Standing{sa, sb} {
		if st.Draws != 1 || st.Games != 1 || math.Abs(st.Rating.Rating-want.Rating) > 1e-9 || st.Rating.Deviation != want.Deviation {
			t.Errorf("standing %+v, rating want %+v", st, want)
		}
	}
	// An aborted race (nobody moves) changes nothing.
	for _, s := range []*lobby.Session{a, b} {
		if _, err := s.Queue("classic"); err != nil {
			t.Fatal(err)
		}
	}
	m = ra.matched()[1]
	rc, _ = f.takeSeats(t, [2]lobby.Welcome{wa, wb}, m)
	f.clock.Advance(race.DefaultFirstMoveTimeout)
	if res := rc.Result(); res.Outcome != "aborted" {
		t.Fatalf("result %+v", res)
	}
	f.lobby.Close() // waits for rating updates
	if st := f.standing(t, wa.ID); st.Games != 1 {
		t.Errorf("aborted race counted: %+v", st)
	}
	h, _ := f.ratings.History(context.Background(), wa.ID, 10)
	if len(h) != 1 || h[0].Outcome != "draw" || !h[0].Rated {
		t.Errorf("history %+v", h)
	}
}

// TestHeartbeatOnRealClock: on a real clock a tick shorter than New takes
// fires while New is still storing its timer; the two must not race (go
// test -race), and Close stops the heartbeat.
func TestHeartbeatOnRealClock(t *testing.T) {
	clock := race.SystemClock{}
	races := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	tokens, err := lobby.NewTokens(lobby.NewSecret(), clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		l := lobby.New(lobby.Config{Tick: time.Microsecond}, lobby.Deps{
			Clock: clock, Log: zerolog.Nop(), Races: races, Tokens: tokens,
			Stores: memlobby.NewStores(lobby.MatchConfig{}, clock),
		})
		time.Sleep(time.Millisecond)
		l.Close()
	}
}

// failingSeats is a shared Seats whose Assign fails, as a store that
// went away between a pairing's claim and its race does.
type failingSeats struct{ lobby.Seats }

func (failingSeats) Assign(context.Context, string, []string, time.Duration) error {
	return fmt.Errorf("the store went away")
}

// resigner is a computer player that resigns at once.
type resigner struct{}

func (resigner) Choose(*engine.View, []engine.Move) (engine.Move, bool) { return engine.Move{}, false }

// logBuffer is a log's output, written and read concurrently.
type logBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	return len(p), nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b)
}

// TestFailedRaceLoggedAsFailure: a race the lobby cannot make (its store
// fails) is refused with unavailable and logged at error level as not
// made, on quick play, an invite, a challenge and the computer; nothing
// says it was made.
func TestFailedRaceLoggedAsFailure(t *testing.T) {
	clock := newClock()
	races := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	tokens, err := lobby.NewTokens(lobby.NewSecret(), clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	st := memlobby.NewStores(lobby.MatchConfig{}, clock)
	st.Seats = failingSeats{st.Seats}
	logs := &logBuffer{}
	l := lobby.New(lobby.Config{}, lobby.Deps{Clock: clock, Log: zerolog.New(logs), Races: races, Tokens: tokens,
		Stores:   st,
		Computer: func(string, uint64) (race.Player, error) { return resigner{}, nil }})
	t.Cleanup(l.Close)
	enter := func(name string) *lobby.Session {
		s, _, err := l.Enter("", name, &recorder{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ann, bob := enter("ann"), enter("bob")
	count := func() int { return strings.Count(logs.String(), `"level":"error"`) }
	notMade := func(what string, before int) {
		t.Helper()
		if n := count(); n != before+1 || !strings.Contains(logs.String(), `"via":"`+what+`"`) {
			t.Errorf("%s: %d error lines more, want 1 naming via %s; log:\n%s", what, n-before, what, logs.String())
		}
	}
	inv, err := ann.Invite(lobby.RaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := count()
	if err := bob.AcceptInvite(inv.Code); race.ErrorCode(err) != race.CodeUnavailable {
		t.Fatalf("accepting an invite whose race cannot be made: %v", err)
	}
	notMade("invite", n)
	ch, err := ann.Challenge(lobby.RaceOptions{Choice: race.Choice{Variant: "classic"}})
	if err != nil {
		t.Fatal(err)
	}
	n = count()
	if err := bob.AcceptChallenge(ch.ID); race.ErrorCode(err) != race.CodeUnavailable {
		t.Fatalf("accepting a challenge whose race cannot be made: %v", err)
	}
	notMade("challenge", n)
	if err := ann.CancelChallenge(); err != nil && race.ErrorCode(err) != lobby.CodeNoSuchChallenge {
		t.Fatal(err)
	}
	n = count()
	for _, s := range []*lobby.Session{ann, bob} {
		if _, err := s.Queue("classic"); err != nil {
			t.Fatal(err)
		}
	}
	notMade("quick", n)
	if err := bob.Unqueue(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(lobby.DefaultComputerOfferAfter + time.Second)
	n = count()
	if err := ann.PlayComputer(); race.ErrorCode(err) != race.CodeUnavailable {
		t.Fatalf("playing the computer in a race that cannot be made: %v", err)
	}
	notMade("computer", n)
	if strings.Contains(logs.String(), `"paired"`) {
		t.Errorf("a race not made was logged as paired:\n%s", logs.String())
	}
}
