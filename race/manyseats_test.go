package race_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

// manySeats is a race of more than two seats under test: the fixture, a
// spectator, and the sight that checks every card it is shown.
type manySeats struct {
	*fixture
	deal    uint64
	seats   int
	humans  map[int]*recorder // by seat
	watcher *recorder
	checked int
	hidden  int // the spectator's messages with a card face down
	sight   *racetest.Sight
}

func newManySeats(t *testing.T, seats int, deal uint64) *manySeats {
	t.Helper()
	f := newRace(t, race.Options{Deal: deal, DealFixed: true, Seats: seats})
	sight, err := racetest.NewSight("classic", deal)
	if err != nil {
		t.Fatal(err)
	}
	m := &manySeats{fixture: f, deal: deal, seats: seats, humans: map[int]*recorder{}, watcher: &recorder{}, sight: sight}
	t.Cleanup(f.race.Watch(m.watcher))
	return m
}

// join seats a person.
func (m *manySeats) join(t *testing.T, name string) int {
	t.Helper()
	sub := &recorder{}
	tk, err := m.race.Join(name, "", sub)
	if err != nil {
		t.Fatalf("%s joins: %v", name, err)
	}
	m.humans[tk.Seat] = sub
	return tk.Seat
}

// startPeople seats a person in every seat, runs the countdown and
// returns each seat's game as the deal starts, for the test to follow.
func (m *manySeats) startPeople(t *testing.T) []engine.Game {
	t.Helper()
	for range m.seats {
		m.join(t, "person")
	}
	m.clock.Advance(race.DefaultCountdown)
	games := make([]engine.Game, m.seats)
	for s := range games {
		games[s] = newGame(m.deal)
	}
	return games
}

// games replays the race's log: every seat's game as it stands.
func (m *manySeats) games(t *testing.T) []engine.Game {
	t.Helper()
	log, err := m.store.Moves(t.Context(), m.race.ID())
	if err != nil {
		t.Fatal(err)
	}
	moves := make([][]string, m.seats)
	for _, e := range log {
		moves[e.Seat] = append(moves[e.Seat], e.Move)
	}
	games, err := m.sight.Replay(moves)
	if err != nil {
		t.Fatal(err)
	}
	return games
}

// checkWatcher checks every event the spectator got since the last check
// against the games as they stand: no card that a racer still playing
// has not turned. Steps are one move of a person, or a tick of the clock
// short enough for a move or two of the server's players.
func (m *manySeats) checkWatcher(t *testing.T) {
	t.Helper()
	evs := m.watcher.Events()
	games := m.games(t)
	for _, ev := range evs[m.checked:] {
		if st, ok := ev.(*race.StateEvent); ok && st.State.Over() {
			break // the result reveals the deal
		}
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.sight.Check(raw, games); err != nil {
			t.Fatalf("the spectator: %v", err)
		}
		if strings.Contains(string(raw), `"??"`) {
			m.hidden++
		}
	}
	m.checked = len(evs)
}

// play moves seat s with st until its game is over, or stop says so,
// checking the spectator after each move.
func (m *manySeats) play(t *testing.T, s int, g *engine.Game, st racetest.Strategy, stop func() bool) {
	t.Helper()
	for g.Status() == engine.Playing && m.race.State() == race.Running && (stop == nil || !stop()) {
		mv := st(g)
		if err := m.race.Move(s, mv.String(), ""); err != nil {
			t.Fatalf("seat %d move %s: %v", s, mv, err)
		}
		if err := g.Apply(mv); err != nil {
			t.Fatal(err)
		}
		m.checkWatcher(t)
	}
}

// wonAndLostDeal is a classic deal that racetest.Greedy wins and
// racetest.Dumb loses.
func wonAndLostDeal(t *testing.T) uint64 {
	t.Helper()
	for d := uint64(1); d < 5000; d++ {
		_, won := finalScore(d, racetest.Greedy)
		_, lost := finalScore(d, racetest.Dumb)
		if won == engine.Won && lost != engine.Won {
			return d
		}
	}
	t.Fatal("no deal of the first 5,000 that Greedy wins and Dumb does not")
	return 0
}

// TestTenSeatRaceRanksEveryRacer runs a race of ten seats to the end: two
// recorded games, two computers and six people. The first to win the deal
// wins it, the race goes on while a place can still change, and the
// result ranks every racer by the rules; the spectator is never shown a
// card a racer still playing has not turned; every person hears every
// other racer's progress and sees no other board.
func TestTenSeatRaceRanksEveryRacer(t *testing.T) {
	const seats = 10
	deal := wonAndLostDeal(t)
	m := newManySeats(t, seats, deal)
	fast, _ := recording(deal, racetest.Greedy, 3*time.Second)
	slow, _ := recording(deal, racetest.Dumb, 2*time.Second)
	for i, gh := range []race.Ghost{fast, slow} {
		if s, err := m.race.SeatGhost("ghost", gh); err != nil || s != i {
			t.Fatalf("ghost %d: seat %d, %v", i, s, err)
		}
	}
	for i := range 2 {
		if s, err := m.race.SeatComputer("computer", race.Computer{Player: racetest.FirstLegal{}, Level: "easy", Pace: 2 * time.Second}); err != nil || s != 2+i {
			t.Fatalf("computer %d: seat %d, %v", i, s, err)
		}
	}
	for i := range 6 {
		if s := m.join(t, "person"); s != 4+i {
			t.Fatalf("person %d got seat %d", i, s)
		}
		if got := m.race.State(); (got == race.Countdown) != (i == 5) {
			t.Fatalf("after %d people the race is %s", i+1, got)
		}
	}
	if _, err := m.race.Join("eleventh", "", &recorder{}); race.ErrorCode(err) != race.CodeRaceFull {
		t.Fatalf("an eleventh racer: %v, want %s", err, race.CodeRaceFull)
	}
	m.clock.Advance(race.DefaultCountdown)
	if got := m.race.State(); got != race.Running {
		t.Fatalf("state %s, want running", got)
	}

	// Seat 4 wins the deal at once; seats 5 and 6 play badly and are out;
	// seat 7 resigns after a few moves. The race goes on.
	games := make([]engine.Game, seats)
	for s := 4; s < seats; s++ {
		games[s] = newGame(deal)
	}
	m.play(t, 4, &games[4], racetest.Greedy, nil)
	m.play(t, 5, &games[5], racetest.Dumb, nil)
	m.clock.Advance(time.Second)
	m.play(t, 6, &games[6], racetest.Dumb, nil)
	m.play(t, 7, &games[7], racetest.Greedy, func() bool { return games[7].Plies() >= 5 })
	if err := m.race.Resign(7, ""); err != nil {
		t.Fatal(err)
	}
	if games[4].Status() != engine.Won || m.race.State() != race.Running {
		t.Fatalf("seat 4 %s, race %s: want won, and the race running on", games[4].Status(), m.race.State())
	}
	// Seats 8 and 9 trail: the server's players move on, a tick at a time,
	// while the people there play a move now and then.
	for tick := 0; m.race.State() == race.Running && tick < 2000; tick++ {
		m.clock.Advance(500 * time.Millisecond)
		m.checkWatcher(t)
		if tick%4 == 0 {
			for _, s := range []int{8, 9} {
				if games[s].Status() == engine.Playing && m.race.State() == race.Running {
					m.play(t, s, &games[s], racetest.Greedy, movesOf(1+tick%3))
				}
			}
		}
	}
	if !m.race.State().Over() {
		t.Fatalf("the race is still %s", m.race.State())
	}
	st, ok := m.humans[4].Last().(*race.StateEvent)
	if !ok || st.Result == nil {
		t.Fatalf("last event %#v is not a final state", m.humans[4].Last())
	}
	res := st.Result
	if res.Outcome != race.OutcomeWin || res.Winner == nil || *res.Winner != 4 || res.Reason != race.ReasonWonDeal || res.Rated {
		t.Errorf("result %s, winner %v, %s, rated %v: want seat 4 to win the deal, unrated", res.Outcome, res.Winner, res.Reason, res.Rated)
	}
	if len(res.Scores) != seats || len(res.Statuses) != seats || len(res.Games) != seats || len(st.Players) != seats {
		t.Fatalf("result for %d, %d, %d seats and %d players, want %d", len(res.Scores), len(res.Statuses), len(res.Games), len(st.Players), seats)
	}
	log, err := m.store.Moves(t.Context(), m.race.ID())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ranking %s", fmtPlaces(res.Ranking))
	if m.checked < 100 || m.hidden < 10 {
		t.Errorf("the spectator's check saw %d messages, %d with a card face down: too few to tell", m.checked, m.hidden)
	}
	if want := racetest.Ranking(res, log); !racetest.SamePlaces(res.Ranking, want) {
		t.Errorf("ranking\n%+v\nwant\n%+v", res.Ranking, want)
	}
	// The race ended when no place could change: at most one racer was
	// still playing, with more cards than every racer out.
	playing := 0
	for s, status := range res.Statuses {
		if status == engine.Playing {
			playing++
			for o, other := range res.Statuses {
				if (other == engine.Stuck || other == engine.Resigned) && res.Scores[o] >= res.Scores[s] {
					t.Errorf("seat %d still playing with %d cards ended behind seat %d out with %d", s, res.Scores[s], o, res.Scores[o])
				}
			}
		}
	}
	if playing > 1 {
		t.Errorf("%d racers were still playing at the end: %v", playing, res.Statuses)
	}
	if race.Commitment(mustUint(t, res.Deal), res.Salt) != m.race.Commitment() {
		t.Errorf("the reveal %s/%s does not open the commitment", res.Deal, res.Salt)
	}
	// A person hears every other racer's progress, by seat, and is shown
	// no other board.
	moved := map[int]bool{}
	for _, e := range log {
		moved[e.Seat] = true
	}
	for s, sub := range m.humans {
		heard := map[int]bool{}
		for _, ev := range sub.Events() {
			switch e := ev.(type) {
			case *race.OpponentEvent:
				heard[e.Seat] = true
			case *race.BoardEvent:
				t.Fatalf("seat %d was sent seat %d's board", s, e.Seat)
			case *race.StateEvent:
				if len(e.Boards) != 0 || len(e.Players) != seats || len(e.Opponents) != seats {
					t.Fatalf("seat %d's state holds %d boards, %d players and %d racers' counts", s, len(e.Boards), len(e.Players), len(e.Opponents))
				}
			}
		}
		for o := range seats {
			if o != s && !heard[o] && moved[o] {
				t.Errorf("seat %d never heard of seat %d's progress", s, o)
			}
		}
	}
}

// TestManySeatsOnTime ends a race of three on time: the racers level on
// cards share their place, and a tie at the top is a draw; a racer who
// leaves mid-race forfeits only their own place (their game is resigned)
// and the others race on.
func TestManySeatsOnTime(t *testing.T) {
	const seats = 4
	deal := wonAndLostDeal(t)
	m := newManySeats(t, seats, deal)
	games := m.startPeople(t)
	// Seats 0 and 1 play the same moves; seat 2 a few; seat 3 leaves.
	m.play(t, 0, &games[0], racetest.Greedy, func() bool { return games[0].Score() >= 6 })
	m.play(t, 1, &games[1], racetest.Greedy, func() bool { return games[1].Score() >= 6 })
	m.play(t, 2, &games[2], racetest.Greedy, func() bool { return games[2].Score() >= 2 })
	m.play(t, 3, &games[3], racetest.Greedy, func() bool { return games[3].Score() >= 1 })
	m.race.Leave(3, m.humans[3])
	m.clock.Advance(race.DefaultGrace)
	if m.race.State() != race.Running {
		t.Fatalf("after seat 3 left for good the race is %s, want running on", m.race.State())
	}
	m.clock.Advance(race.DefaultTimeLimit)
	st, ok := m.humans[0].Last().(*race.StateEvent)
	if !ok || st.Result == nil {
		t.Fatalf("last event %#v is not a final state", m.humans[0].Last())
	}
	res := st.Result
	if res.Outcome != race.OutcomeDraw || res.Winner != nil || res.Reason != race.ReasonEqualCards {
		t.Errorf("result %s, winner %v, %s: want a draw on equal cards", res.Outcome, res.Winner, res.Reason)
	}
	if res.Statuses[3] != engine.Resigned {
		t.Errorf("seat 3 left: %s, want resigned", res.Statuses[3])
	}
	log, err := m.store.Moves(t.Context(), m.race.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := racetest.Ranking(res, log)
	if !racetest.SamePlaces(res.Ranking, want) {
		t.Errorf("ranking\n%+v\nwant\n%+v", res.Ranking, want)
	}
	if places := []int{want[0].Place, want[1].Place, want[2].Place, want[3].Place}; !slices.Equal(places, []int{1, 1, 3, 4}) {
		t.Errorf("places %v, want 1, 1, 3, 4", places)
	}
}

// TestSeatsOutOfRange: a race's seats are 2 to 10, named in the refusal;
// a match or a solo race has two.
func TestSeatsOutOfRange(t *testing.T) {
	for _, n := range []int{0, 1, 11, -3} {
		err := race.Choice{Seats: &n}.Validate()
		if race.ErrorCode(err) != race.CodeBadOptions || !strings.Contains(err.Error(), "2 to 10") {
			t.Errorf("seats %d: %v, want bad-options naming 2 to 10", n, err)
		}
	}
	three, bestOf := 3, 3
	if err := (race.Choice{Seats: &three, BestOf: &bestOf}).Validate(); race.ErrorCode(err) != race.CodeBadOptions {
		t.Errorf("a match of three seats: %v, want bad-options", err)
	}
	if o, err := (race.Choice{Seats: &three}).Options(); err != nil || o.Seats != 3 {
		t.Errorf("three seats: %+v, %v", o, err)
	}
	for _, o := range []race.Options{{Seats: 11}, {Seats: 3, BestOf: 3}, {Seats: 3, Solo: true}} {
		if _, err := race.New("r", o, race.Deps{Clock: racetest.NewClock(time.Now())}); race.ErrorCode(err) != race.CodeBadOptions {
			t.Errorf("New(%+v): %v, want bad-options", o, err)
		}
	}
}

// movesOf is a play's stop for n moves.
func movesOf(n int) func() bool {
	return func() bool { n--; return n < 0 }
}

func fmtPlaces(ps []race.Place) string {
	var b strings.Builder
	for _, p := range ps {
		fin := "-"
		if p.FinishedMs != nil {
			fin = strconv.FormatInt(*p.FinishedMs, 10)
		}
		fmt.Fprintf(&b, "\n  %d. seat %d, %d cards, %s at %s", p.Place, p.Seat, p.Cards, p.Status, fin)
	}
	return b.String()
}

// TestManySeatsRestored rebuilds a race of four from its record and log,
// as another instance taking it over does: every seat, token and game is
// back, the race runs on to its ranking; a record whose seats do not match
// its seat count is refused.
func TestManySeatsRestored(t *testing.T) {
	const seats = 4
	deal := wonAndLostDeal(t)
	m := newManySeats(t, seats, deal)
	games := m.startPeople(t)
	for s := range games {
		m.play(t, s, &games[s], racetest.Greedy, movesOf(2+s))
	}
	rec := race.RecordForTest(m.race)
	log, err := m.store.Moves(t.Context(), m.race.ID())
	if err != nil {
		t.Fatal(err)
	}
	m.race.Stop()
	if len(rec.Seats) != seats || len(rec.Rematch) != seats {
		t.Fatalf("record of %d seats, %d rematch flags; want %d", len(rec.Seats), len(rec.Rematch), seats)
	}
	deps := race.Deps{Clock: m.clock, Log: zerolog.Nop(), Store: m.store, Bus: memrace.NewBus()}
	bad := *rec
	bad.Seats = bad.Seats[:3]
	if _, err := race.Restore(&bad, log, deps); err == nil {
		t.Error("a record of 3 seats for a race of 4 restored")
	}
	r, err := race.Restore(rec, log, deps)
	if err != nil {
		t.Fatal(err)
	}
	race.RearmForTest(r, rec)
	in, err := r.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for s := range seats {
		if c := in.Counts[s]; c.Score != games[s].Score() || c.Moves != games[s].Plies() {
			t.Errorf("restored seat %d: %d cards, %d moves; the game has %d, %d", s, c.Score, c.Moves, games[s].Score(), games[s].Plies())
		}
	}
	subs := make([]*recorder, seats)
	for s := range seats {
		subs[s] = &recorder{}
		if tk, err := r.Resume(rec.Seats[s].Token, "", "", subs[s]); err != nil || tk.Seat != s {
			t.Fatalf("resume seat %d: %+v, %v", s, tk, err)
		}
	}
	for s := range seats {
		for games[s].Status() == engine.Playing && r.State() == race.Running {
			mv := racetest.Dumb(&games[s])
			if err := r.Move(s, mv.String(), ""); err != nil {
				t.Fatalf("seat %d move %s: %v", s, mv, err)
			}
			_ = games[s].Apply(mv)
		}
	}
	res := r.Result()
	if res == nil || len(res.Ranking) != seats {
		t.Fatalf("result %+v: want a ranking of %d", res, seats)
	}
	all, err := m.store.Moves(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if want := racetest.Ranking(res, all); !racetest.SamePlaces(res.Ranking, want) {
		t.Errorf("ranking\n%+v\nwant\n%+v", res.Ranking, want)
	}
}

// TestManySeatsRaceAgain: once a race of three is over and every racer
// asks, the next race is made for the same three on a new deal, each
// racer told of it and taking their seat back with their token.
func TestManySeatsRaceAgain(t *testing.T) {
	const seats = 3
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	r, err := svc.Create(race.Options{Seats: seats})
	if err != nil {
		t.Fatal(err)
	}
	subs := make([]*recorder, seats)
	for s := range subs {
		subs[s] = &recorder{}
		if _, err := r.Join("person", "", subs[s]); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(race.DefaultCountdown)
	for s := range seats {
		if err := r.Resign(s, ""); err != nil {
			t.Fatal(err)
		}
	}
	if !r.State().Over() {
		t.Fatalf("every racer resigned: the race is %s", r.State())
	}
	var next string
	for s := range seats {
		id, err := r.Rematch(s)
		if err != nil {
			t.Fatalf("seat %d asks again: %v", s, err)
		}
		if (id != "") != (s == seats-1) {
			t.Fatalf("seat %d asked: next race %q; want one once all three asked", s, id)
		}
		next = id
	}
	nr, err := svc.Get(next)
	if err != nil {
		t.Fatal(err)
	}
	for s, sub := range subs {
		var ev *race.NextEvent
		var token string
		for _, e := range sub.Events() {
			switch e := e.(type) {
			case *race.NextEvent:
				ev = e
			case *race.JoinedEvent:
				token = e.Token
			}
		}
		if ev == nil || ev.Next != next {
			t.Fatalf("seat %d was told %+v, want the next race %s", s, ev, next)
		}
		if tk, err := nr.Resume(token, "", "", &recorder{}); err != nil || tk.Seat != s {
			t.Fatalf("seat %d takes its seat in the next race: %+v, %v", s, tk, err)
		}
	}
	if got := nr.State(); got != race.Countdown {
		t.Errorf("the next race is %s once its three racers are back, want countdown", got)
	}
	in, err := nr.Info(t.Context())
	if err != nil || len(in.Players) != seats {
		t.Fatalf("next race of %d players, %v", len(in.Players), err)
	}
	clock.Advance(time.Hour)
	svc.Evict(0)
}
