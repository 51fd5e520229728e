package race_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder keeps what a seat or a spectator is sent.
type recorder = racetest.Recorder

type fixture struct {
	clock *racetest.Clock
	store *memrace.Store
	race  *race.Race
	subs  [2]*recorder
	tok   [2]string
}

func newRace(t testing.TB, opts race.Options) *fixture {
	t.Helper()
	return newRaceOn(t, opts, memrace.NewBus())
}

// newRaceOn is newRace with its events on bus.
func newRaceOn(t testing.TB, opts race.Options, bus race.Bus) *fixture {
	t.Helper()
	f := &fixture{clock: racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), store: memrace.NewStore()}
	r, err := race.New("r1", opts, race.Deps{Clock: f.clock, Log: zerolog.Nop(), Store: f.store, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	f.race = r
	return f
}

// seatBoth joins two players and runs the countdown.
func (f *fixture) seatBoth(t *testing.T) {
	t.Helper()
	for s := range 2 {
		f.subs[s] = &recorder{}
		tk, err := f.race.Join("p", "", f.subs[s])
		if err != nil {
			t.Fatal(err)
		}
		if tk.Seat != s {
			t.Fatalf("seat %d, want %d", tk.Seat, s)
		}
		f.tok[s] = tk.Token
	}
	if got := f.race.State(); got != race.Countdown {
		t.Fatalf("state %s, want countdown", got)
	}
	f.clock.Advance(race.DefaultCountdown)
	if got := f.race.State(); got != race.Running {
		t.Fatalf("state %s, want running", got)
	}
}

func (f *fixture) result(t *testing.T) *race.Result {
	t.Helper()
	st, ok := f.subs[0].Last().(*race.StateEvent)
	if !ok || st.Result == nil {
		t.Fatalf("last event %#v is not a final state", f.subs[0].Last())
	}
	return st.Result
}

// playOut plays seat s's game to its end with st, through the race.
func (f *fixture) playOut(t *testing.T, s int, g *engine.Game, st racetest.Strategy, stop func() bool) {
	t.Helper()
	for g.Status() == engine.Playing && f.race.State() == race.Running && (stop == nil || !stop()) {
		m := st(g)
		if err := f.race.Move(s, m.String(), ""); err != nil {
			t.Fatalf("seat %d move %s: %v", s, m, err)
		}
		if err := g.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
}

// finalScore plays a deal with a strategy locally.
func finalScore(deal uint64, st racetest.Strategy) (int, engine.Status) {
	rules, _ := engine.Variant("classic")
	g := engine.New(rules, deal)
	for g.Status() == engine.Playing {
		_ = g.Apply(st(&g))
	}
	return g.Score(), g.Status()
}

func named(deal uint64) race.Options { return race.Options{Deal: deal, DealNamed: true} }

func newGame(deal uint64) engine.Game {
	rules, _ := engine.Variant("classic")
	return engine.New(rules, deal)
}

func TestStuckAndOtherWinsByCount(t *testing.T) {
	var deal uint64
	for d := uint64(1); d < 500; d++ {
		a, _ := finalScore(d, racetest.Dumb)
		b, _ := finalScore(d, racetest.Greedy)
		if b > a && a > 1 {
			deal = d
			break
		}
	}
	f := newRace(t, named(deal))
	f.seatBoth(t)
	g0, g1 := newGame(deal), newGame(deal)
	f.playOut(t, 0, &g0, racetest.Dumb, nil)
	if g0.Status() != engine.Stuck {
		t.Fatalf("seat 0 is %s, want stuck", g0.Status())
	}
	if f.race.State() != race.Running {
		t.Fatalf("race %s after one player stuck with the other at 0", f.race.State())
	}
	f.playOut(t, 1, &g1, racetest.Greedy, nil)
	res := f.result(t)
	if res.Winner == nil || *res.Winner != 1 || res.Reason != "passed" {
		t.Fatalf("result %+v, want seat 1 winning by passing", res)
	}
	// Decided early: seat 1 stopped as soon as it had one card more.
	if g1.Score() != g0.Score()+1 {
		t.Errorf("seat 1 ended with %d, seat 0 with %d: not decided at the first card more", g1.Score(), g0.Score())
	}
	if err := f.race.Move(1, racetest.Greedy(&g1).String(), ""); race.ErrorCode(err) != race.CodeRaceOver {
		t.Errorf("move after the end: %v, want race-over", err)
	}
}

func TestDraw(t *testing.T) {
	f := newRace(t, named(7))
	f.seatBoth(t)
	g0, g1 := newGame(7), newGame(7)
	f.playOut(t, 0, &g0, racetest.Greedy, nil)
	f.playOut(t, 1, &g1, racetest.Greedy, nil)
	res := f.result(t)
	if g0.Status() == engine.Won {
		if res.Winner == nil || *res.Winner != 0 || res.Reason != "won-deal" {
			t.Fatalf("result %+v, want seat 0 winning the deal", res)
		}
		return
	}
	if res.Outcome != "draw" || res.Reason != "equal-cards" || res.Scores[0] != res.Scores[1] {
		t.Fatalf("result %+v, want a draw", res)
	}
}

func TestTimeLimit(t *testing.T) {
	f := newRace(t, named(3))
	f.seatBoth(t)
	g0, g1 := newGame(3), newGame(3)
	// Seat 0 plays until it has a card on a foundation; seat 1 makes one
	// move that puts none there, if it can.
	f.playOut(t, 0, &g0, racetest.Greedy, func() bool { return g0.Score() > 0 })
	m := engine.PlaceMove(g1.View().Turned[0], engine.W(0))
	if err := f.race.Move(1, m.String(), ""); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(race.DefaultTimeLimit)
	res := f.result(t)
	if res.Winner == nil || *res.Winner != 0 || res.Reason != "time" {
		t.Fatalf("result %+v, want seat 0 on time", res)
	}
}

func TestAbortWithoutFirstMove(t *testing.T) {
	f := newRace(t, named(3))
	f.seatBoth(t)
	g0 := newGame(3)
	if err := f.race.Move(0, racetest.Greedy(&g0).String(), ""); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(race.DefaultFirstMoveTimeout - time.Millisecond)
	if f.race.State() != race.Running {
		t.Fatalf("aborted too early")
	}
	f.clock.Advance(time.Millisecond)
	res := f.result(t)
	if f.race.State() != race.Aborted || res.Reason != "no-first-move" || res.Rated {
		t.Fatalf("state %s result %+v, want an unrated abort", f.race.State(), res)
	}
}

func TestForfeitAfterGrace(t *testing.T) {
	f := newRace(t, race.Options{Grace: 10 * time.Second})
	f.seatBoth(t)
	f.race.Leave(1, f.subs[1])
	f.clock.Advance(10*time.Second - time.Millisecond)
	if f.race.State() != race.Running {
		t.Fatal("forfeit before the grace period ended")
	}
	f.clock.Advance(time.Millisecond)
	res := f.result(t)
	if res.Winner == nil || *res.Winner != 0 || res.Reason != "forfeit" {
		t.Fatalf("result %+v, want seat 0 by forfeit", res)
	}
	// The secret deal is revealed and matches the commitment.
	if res.Commitment == "" || res.Commitment != race.Commitment(mustUint(t, res.Deal), res.Salt) {
		t.Errorf("commitment %q does not open with deal %s salt %s", res.Commitment, res.Deal, res.Salt)
	}
}

// A graded race draws its deal among the shipped deals of its grade, and
// its commitment is the SHA-256 of "DEAL:GRADE:SALT", as PROTOCOL.md
// section 6 documents; the result names the grade.
func TestGradedRaceCommitment(t *testing.T) {
	table, ok := engine.Graded("classic")
	if !ok {
		t.Fatal("classic deals are not graded")
	}
	for _, grade := range []string{"easy", "hard"} {
		f := newRace(t, race.Options{Grace: time.Second, Grade: grade})
		start := f.race.Commitment()
		f.seatBoth(t)
		f.race.Leave(1, f.subs[1])
		f.clock.Advance(time.Second)
		res := f.result(t)
		deal := mustUint(t, res.Deal)
		sum := sha256.Sum256([]byte(res.Deal + ":" + grade + ":" + res.Salt))
		if res.Grade != grade || res.Commitment != start || start != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: grade %q, commitment %q at the start and %q at the end; sha256(%s:%s:%s) is %x",
				grade, res.Grade, start, res.Commitment, res.Deal, grade, res.Salt, sum)
		}
		if g, ok := table.Grade(deal); !ok || g.String() != grade {
			t.Errorf("%s race drew deal %d, graded %v (%v)", grade, deal, g, ok)
		}
	}
	// An ungraded race keeps the commitment of deal and salt alone.
	f := newRace(t, race.Options{Grace: time.Second})
	f.seatBoth(t)
	f.race.Leave(1, f.subs[1])
	f.clock.Advance(time.Second)
	res := f.result(t)
	sum := sha256.Sum256([]byte(res.Deal + ":" + res.Salt))
	if res.Grade != "" || res.Commitment != hex.EncodeToString(sum[:]) {
		t.Errorf("ungraded: grade %q, commitment %q", res.Grade, res.Commitment)
	}
}

func TestResumeInGraceRestoresState(t *testing.T) {
	f := newRace(t, named(5))
	f.seatBoth(t)
	g0 := newGame(5)
	g1 := newGame(5)
	f.playOut(t, 0, &g0, racetest.Greedy, func() bool { return g0.Plies() >= 6 })
	f.playOut(t, 1, &g1, racetest.Greedy, func() bool { return g1.Plies() >= 1 })
	f.race.Leave(0, f.subs[0])
	f.clock.Advance(race.DefaultGrace / 2)
	sub := &recorder{}
	tk, err := f.race.Resume(f.tok[0], "", "", sub)
	if err != nil || tk.Seat != 0 || tk.Token == f.tok[0] || tk.Token == "" {
		t.Fatalf("resume: %+v, %v; want seat 0 with a fresh token", tk, err)
	}
	if _, err := f.race.Resume(f.tok[0], "", "", &recorder{}); race.ErrorCode(err) != race.CodeBadToken {
		t.Errorf("the spent token resumes: %v", err)
	}
	// The connection that spent it may send it again (its answer lost):
	// its seat again, with a fresh token, and the one before spent.
	again, err := f.race.Resume(f.tok[0], "", "", sub)
	if err != nil || again.Seat != 0 || again.Token == tk.Token || again.Token == f.tok[0] {
		t.Fatalf("the same connection resuming with the spent token: %+v, %v; want seat 0 with a fresh token", again, err)
	}
	if _, err := f.race.Resume(tk.Token, "", "", &recorder{}); race.ErrorCode(err) != race.CodeBadToken {
		t.Errorf("the token before the last resumes another connection: %v", err)
	}
	st := sub.Events()[1].(*race.StateEvent)
	want := g0.View()
	if st.You == nil || st.You.Moves != want.Moves || st.You.Score != want.Score || st.You.Stock != want.Stock ||
		engine.FormatCards(st.You.Turned) != engine.FormatCards(want.Turned) {
		t.Fatalf("resumed view %+v, want %+v", st.You, want)
	}
	f.clock.Advance(race.DefaultGrace)
	if f.race.State() != race.Running {
		t.Fatalf("state %s: resumed player forfeited", f.race.State())
	}
	if _, err := f.race.Resume("0123", "", "", &recorder{}); race.ErrorCode(err) != race.CodeBadToken {
		t.Errorf("bad token: %v", err)
	}
}

func TestMoveBeforeStartAndIllegal(t *testing.T) {
	f := newRace(t, named(5))
	sub := &recorder{}
	if _, err := f.race.Join("a", "", sub); err != nil {
		t.Fatal(err)
	}
	if err := f.race.Move(0, "AS>F1", ""); race.ErrorCode(err) != race.CodeNotStarted {
		t.Errorf("move before start: %v", err)
	}
	f.subs[0] = sub
	f.subs[1] = &recorder{}
	if _, err := f.race.Join("b", "", f.subs[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.race.Join("c", "", &recorder{}); race.ErrorCode(err) != race.CodeRaceFull {
		t.Errorf("third join: %v", err)
	}
	f.clock.Advance(race.DefaultCountdown)
	n := len(f.subs[0].Events())
	err := f.race.Move(0, "KS>F1", "")
	var re *race.Error
	if e, ok := err.(*race.Error); ok {
		re = e
	}
	if re == nil || re.Code != race.CodeIllegalMove || (re.Reason != "does-not-fit" && re.Reason != "card-not-available") {
		t.Errorf("illegal move: %v", err)
	}
	if err := f.race.Move(0, "nonsense", ""); race.ErrorCode(err) != race.CodeIllegalMove {
		t.Errorf("bad notation: %v", err)
	}
	if len(f.subs[0].Events()) != n {
		t.Errorf("refused moves published events")
	}
}

func TestSpectatorDelay(t *testing.T) {
	f := newRace(t, race.Options{Public: true, SpectatorDelay: 5 * time.Second})
	w := &recorder{}
	cancel := f.race.Watch(w)
	defer cancel()
	f.seatBoth(t)
	st := f.subs[0].Last().(*race.StateEvent) // the start
	if st.You == nil || st.State != race.Running {
		t.Fatal("no view")
	}
	m := engine.PlaceMove(st.You.Turned[0], engine.W(0))
	if err := f.race.Move(0, m.String(), ""); err != nil {
		t.Fatal(err)
	}
	boards := func() int {
		n := 0
		for _, ev := range w.Events() {
			if _, ok := ev.(*race.BoardEvent); ok {
				n++
			}
		}
		return n
	}
	if boards() != 0 {
		t.Fatal("spectator saw the move at once")
	}
	f.clock.Advance(5*time.Second - time.Millisecond)
	if boards() != 0 {
		t.Fatal("spectator saw the move before the delay")
	}
	// Due now, it waits for the race's next event or, at the latest,
	// FeedSlack more.
	f.clock.Advance(time.Millisecond)
	f.clock.Advance(race.FeedSlack - time.Millisecond)
	if boards() != 0 {
		t.Fatal("the timer released the move before FeedSlack")
	}
	f.clock.Advance(time.Millisecond)
	if boards() != 1 {
		t.Fatalf("spectator saw %d moves after the delay and FeedSlack, want 1", boards())
	}
	// A move releases what is due at once, with no timer.
	m2 := engine.PlaceMove(f.subs[0].Last().(*race.MovedEvent).View.Turned[0], engine.W(1))
	if err := f.race.Move(0, m2.String(), ""); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(5 * time.Second)
	timers := f.clock.Pending()
	m3 := engine.PlaceMove(f.subs[0].Last().(*race.MovedEvent).View.Turned[0], engine.W(2))
	if err := f.race.Move(0, m3.String(), ""); err != nil {
		t.Fatal(err)
	}
	if boards() != 2 {
		t.Fatalf("spectator saw %d moves once a move followed the second's due time, want 2", boards())
	}
	if got := f.clock.Pending(); got != timers {
		t.Errorf("%d timers pending after the move released the feed, want %d (one, for the third)", got, timers)
	}
	// The spectators' state says how far behind live their feed runs; the
	// players' does not (it is not theirs).
	var spec *race.StateEvent
	for _, ev := range w.Events() {
		if s, ok := ev.(*race.StateEvent); ok {
			spec = s
		}
	}
	if spec == nil || spec.SpectatorDelayMs != 5000 {
		t.Errorf("spectator state %+v, want spectatorDelayMs 5000", spec)
	}
	if st.SpectatorDelayMs != 0 {
		t.Errorf("a player's state has spectatorDelayMs %d", st.SpectatorDelayMs)
	}
}

func TestComputerPlayer(t *testing.T) {
	f := newRace(t, named(9))
	f.subs[0] = &recorder{}
	if _, err := f.race.Join("human", "", f.subs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.race.SeatComputer("bot", race.Computer{Player: racetest.FirstLegal{}, Level: "hard", Pace: time.Second}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(race.DefaultCountdown)
	if st := f.subs[0].Last().(*race.StateEvent); !st.Players[1].Computer || st.Players[1].Level != "hard" || st.Players[0].Level != "" {
		t.Errorf("players %+v, want the computer's level on its seat alone", st.Players)
	}
	g0 := newGame(9)
	f.playOut(t, 0, &g0, racetest.Greedy, nil)
	f.clock.Advance(10 * time.Minute)
	if !f.race.State().Over() {
		t.Fatalf("race %s", f.race.State())
	}
	in, err := f.race.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if in.Counts[1].Moves == 0 {
		t.Errorf("the computer never moved")
	}
	if len(in.Moves) != in.Counts[0].Moves+in.Counts[1].Moves {
		t.Errorf("log has %d moves, games %d", len(in.Moves), in.Counts[0].Moves+in.Counts[1].Moves)
	}
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	var n uint64
	for _, c := range s {
		n = n*10 + uint64(c-'0')
	}
	return n
}

func TestResignIsOutNotLost(t *testing.T) {
	f := newRace(t, named(5))
	f.seatBoth(t)
	g0, g1 := newGame(5), newGame(5)
	f.playOut(t, 0, &g0, racetest.Greedy, func() bool { return g0.Score() >= 2 })
	if err := f.race.Resign(0, "r"); err != nil {
		t.Fatal(err)
	}
	if err := f.race.Resign(0, "r2"); race.ErrorCode(err) != race.CodeIllegalMove {
		t.Errorf("second resign: %v", err)
	}
	if err := f.race.Resign(0, "r"); err != nil {
		t.Errorf("the first resignation sent again (same id): %v, want its answer again", err)
	}
	moved := f.subs[0].Last().(*race.MovedEvent)
	if moved.Move != "resign" || moved.Seq != g0.Plies()+1 || moved.ID != "r" {
		t.Errorf("resign event %+v", moved)
	}
	if f.race.State() != race.Running {
		t.Fatal("a resignation ended the race while the other could still pass")
	}
	f.playOut(t, 1, &g1, racetest.Greedy, nil)
	res := f.result(t)
	if res.Winner == nil || *res.Winner != 1 || res.Reason != "passed" || res.Statuses[0] != engine.Resigned {
		t.Fatalf("result %+v", res)
	}
	if !strings.HasSuffix(strings.TrimSpace(res.Games[0]), "resign") {
		t.Errorf("game text does not end in resign:\n%s", res.Games[0])
	}
	moves, _ := f.store.Moves(t.Context(), "r1")
	if last := moves[len(moves)-1]; last.Move == "resign" {
		t.Errorf("the log ends with seat 0's resignation, not seat 1's winning move")
	}
}

func TestBestOfThree(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	r, err := svc.Create(race.Options{BestOf: 3})
	if err != nil {
		t.Fatal(err)
	}
	subs := [2]*recorder{{}, {}}
	var toks [2]string
	for s := range 2 {
		tk, err := r.Join("p", "", subs[s])
		if err != nil {
			t.Fatal(err)
		}
		toks[s] = tk.Token
	}
	for round := 1; ; round++ {
		clock.Advance(race.DefaultCountdown)
		if r.State() != race.Running {
			t.Fatalf("round %d: %s", round, r.State())
		}
		// Both move once; then seat 1 leaves and forfeits.
		for s := range 2 {
			var st *race.StateEvent
			for _, ev := range subs[s].Events() {
				if e, ok := ev.(*race.StateEvent); ok {
					st = e
				}
			}
			if err := r.Move(s, engine.PlaceMove(st.You.Turned[0], engine.W(0)).String(), ""); err != nil {
				t.Fatal(err)
			}
		}
		r.Leave(1, subs[1])
		clock.Advance(race.DefaultGrace)
		var next *race.NextEvent
		var final *race.StateEvent
		for _, ev := range subs[0].Events() {
			switch e := ev.(type) {
			case *race.NextEvent:
				next = e
			case *race.StateEvent:
				if e.Result != nil && e.Race == r.ID() {
					final = e
				}
			}
		}
		if final == nil || final.Result.Match == nil || final.Result.Match.Wins[0] != round {
			t.Fatalf("round %d: final %+v", round, final)
		}
		if round == 2 {
			m := final.Result.Match
			if !m.Over || m.Winner == nil || *m.Winner != 0 {
				t.Fatalf("match after two wins: %+v", m)
			}
			if next != nil && next.Race == r.ID() {
				t.Fatal("a next round after the match was decided")
			}
			return
		}
		if next == nil || next.Race != r.ID() || next.Match.Round != round+1 {
			t.Fatalf("round %d: next %+v", round, next)
		}
		if r, err = svc.Get(next.Next); err != nil {
			t.Fatal(err)
		}
		subs = [2]*recorder{{}, {}}
		for s := range 2 {
			tk, err := r.Resume(toks[s], "", "", subs[s])
			if err != nil {
				t.Fatalf("resume round %d: %v", round+1, err)
			}
			toks[s] = tk.Token // the one given is spent
		}
	}
}

func TestRematch(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	r, _ := svc.Create(race.Options{Deal: 3, DealNamed: true})
	subs := [2]*recorder{{}, {}}
	for s := range 2 {
		if _, err := r.Join("p", "", subs[s]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Rematch(0); race.ErrorCode(err) != race.CodeNotOver {
		t.Fatalf("rematch during the race: %v", err)
	}
	r.Abort("test")
	if id, err := r.Rematch(0); err != nil || id != "" {
		t.Fatalf("first ask: %q %v", id, err)
	}
	if _, ok := subs[1].Last().(*race.RematchEvent); !ok {
		t.Fatalf("the other player was not asked: %#v", subs[1].Last())
	}
	id, err := r.Rematch(1)
	if err != nil || id == "" {
		t.Fatalf("second ask: %q %v", id, err)
	}
	next, _ := svc.Get(id)
	if next.Commitment() == "" {
		t.Error("a rematch must be on a new, secret deal")
	}
	// Nobody comes over: the new race is aborted after the grace period.
	clock.Advance(race.DefaultGrace)
	if next.State() != race.Aborted {
		t.Fatalf("unclaimed rematch is %s", next.State())
	}
}

func TestLeavingAfterBeingStuckForfeitsNothing(t *testing.T) {
	var deal uint64
	for d := uint64(1); d < 500; d++ {
		a, _ := finalScore(d, racetest.Greedy)
		if b, _ := finalScore(d, racetest.Dumb); a > b+1 && a < 52 {
			deal = d
			break
		}
	}
	f := newRace(t, named(deal))
	f.seatBoth(t)
	g0, g1 := newGame(deal), newGame(deal)
	f.playOut(t, 1, &g1, racetest.Dumb, func() bool { return g1.Plies() >= 1 })
	f.playOut(t, 0, &g0, racetest.Greedy, nil) // stuck, ahead of what seat 1 will reach
	f.race.Leave(0, f.subs[0])
	f.clock.Advance(2 * race.DefaultGrace)
	if f.race.State() != race.Running {
		t.Fatalf("race %s: the stuck player forfeited by leaving", f.race.State())
	}
	f.playOut(t, 1, &g1, racetest.Dumb, nil)
	in, err := f.race.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if in.Result == nil || in.Result.Winner == nil || *in.Result.Winner != 0 || in.Result.Reason != "more-cards" {
		t.Fatalf("result %+v, want seat 0 on more cards", in.Result)
	}
}

// TestNoCardBeforeTheStart checks that nobody sees a turned card before the
// start instant: not the first player to join while waiting, not either
// player in the countdown, not a spectator; and that both get it at the
// start.
func TestNoCardBeforeTheStart(t *testing.T) {
	f := newRace(t, race.Options{DealNamed: true, Deal: 7})
	watcher := &recorder{}
	defer f.race.Watch(watcher)()
	f.seatBoth(t)
	sawStart := [2]bool{}
	check := func(who string, v *engine.View, state race.State) {
		t.Helper()
		if (state == race.Waiting || state == race.Countdown) && len(v.Turned) > 0 {
			t.Errorf("%s saw %v while the race was %s", who, v.Turned, state)
		}
	}
	for s := range 2 {
		for _, ev := range f.subs[s].Events() {
			st, ok := ev.(*race.StateEvent)
			if !ok || st.You == nil {
				continue
			}
			check("a player", st.You, st.State)
			if st.State == race.Running && len(st.You.Turned) == 1 {
				sawStart[s] = true
			}
		}
	}
	if !sawStart[0] || !sawStart[1] {
		t.Errorf("the players were not shown their first card at the start: %v", sawStart)
	}
	for _, ev := range watcher.Events() {
		if st, ok := ev.(*race.StateEvent); ok && st.Boards != nil {
			for i := range st.Boards {
				check("a spectator", &st.Boards[i], st.State)
			}
		}
	}
}

// TestDelayedBacklogDroppedAtTheEnd: when a public race ends, what the
// spectators' delay still holds back is not sent in a burst (a fast race
// would overflow their send queues); the final state shows both boards.
func TestDelayedBacklogDroppedAtTheEnd(t *testing.T) {
	f := newRace(t, race.Options{Public: true, SpectatorDelay: time.Minute})
	w := &recorder{}
	defer f.race.Watch(w)()
	f.seatBoth(t)
	moves := 0
	for s := range 2 {
		for i := range 5 {
			v := lastView(f.subs[s])
			m := engine.PlaceMove(v.Turned[0], engine.W(i%4))
			if err := f.race.Move(s, m.String(), ""); err != nil {
				t.Fatal(err)
			}
			moves++
		}
	}
	for s := range 2 {
		if err := f.race.Resign(s, ""); err != nil {
			t.Fatal(err)
		}
	}
	final, ok := w.Last().(*race.StateEvent)
	if !ok || !final.State.Over() || final.Boards == nil {
		t.Fatalf("last spectator event %#v is not a final state with boards", w.Last())
	}
	if got := final.Boards[0].Moves + final.Boards[1].Moves; got != moves {
		t.Errorf("final boards show %d moves, want %d", got, moves)
	}
	for _, ev := range w.Events() {
		if _, ok := ev.(*race.BoardEvent); ok {
			t.Errorf("a held-back board event was sent after the end: %#v", ev)
		}
	}
}

// lastView is the latest view of their own game a seat was sent.
func lastView(r *recorder) *engine.View {
	evs := r.Events()
	for i := len(evs) - 1; i >= 0; i-- {
		switch ev := evs[i].(type) {
		case *race.MovedEvent:
			return &ev.View
		case *race.StateEvent:
			if ev.You != nil {
				return ev.You
			}
		}
	}
	return nil
}

// TestSpectatorCountPushed: players and spectators hear how many watch,
// once for a crowd arriving together, and again when some leave.
func TestSpectatorCountPushed(t *testing.T) {
	f := newRace(t, race.Options{Public: true, SpectatorDelay: 10 * time.Second})
	f.seatBoth(t)
	counts := func(rec *recorder) []int {
		var out []int
		for _, ev := range rec.Events() {
			if e, ok := ev.(*race.SpectatorsEvent); ok {
				out = append(out, e.Count)
			}
		}
		return out
	}
	var watchers [3]*recorder
	var cancels [3]func()
	for i := range watchers {
		watchers[i] = &recorder{}
		cancels[i] = f.race.Watch(watchers[i])
	}
	if st, ok := watchers[2].Events()[0].(*race.StateEvent); !ok || st.Spectators != 3 {
		t.Fatalf("the third spectator's first event is %+v, want a state counting 3", watchers[2].Events()[0])
	}
	f.clock.Advance(time.Second)
	cancels[0]()
	cancels[1]()
	f.clock.Advance(time.Second)
	f.clock.Advance(time.Second) // nothing changed: no message
	for s := range 2 {
		if got := counts(f.subs[s]); fmt.Sprint(got) != "[3 1]" {
			t.Errorf("seat %d heard spectator counts %v, want [3 1]", s, got)
		}
	}
	if got := counts(watchers[2]); fmt.Sprint(got) != "[3 1]" {
		t.Errorf("a spectator heard counts %v, want [3 1] (not delayed)", got)
	}
}

// TestWaitingRaceExpires: a race whose seats are not both taken within its
// WaitTimeout is aborted as expired; one that filled in time is not.
func TestWaitingRaceExpires(t *testing.T) {
	f := newRace(t, race.Options{WaitTimeout: time.Minute})
	if _, err := f.race.Join("ann", "", &recorder{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute - time.Second)
	if st := f.race.State(); st != race.Waiting {
		t.Fatalf("state %s before the timeout", st)
	}
	f.clock.Advance(time.Second)
	if res := f.race.Result(); f.race.State() != race.Aborted || res == nil || res.Reason != "expired" || res.Rated {
		t.Fatalf("after the timeout: %s, %+v; want aborted as expired", f.race.State(), res)
	}

	full := newRace(t, race.Options{WaitTimeout: time.Minute, FirstMoveTimeout: time.Hour})
	full.seatBoth(t)
	full.clock.Advance(2 * time.Minute)
	if st := full.race.State(); st != race.Running {
		t.Errorf("a race that filled in time is %s after the wait timeout", st)
	}
}
