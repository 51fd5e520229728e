package race_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

// holdingStore is the memory store with seats held as Redis mode's log
// holds them (redisrace.Store.ClaimSeat): the latest claim of a seat is
// its only writer, and the seal refuses every new move. It holds the
// memory store as a race.Store, so that memrace's OpenLog is not passed
// through.
type holdingStore struct {
	race.Store
	mu      sync.Mutex
	holders map[int]string
	claims  int
	sealed  bool
}

func (s *holdingStore) ClaimSeat(_ context.Context, _ string, seat int) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sealed {
		return "", race.ErrRaceEnded
	}
	s.claims++
	if s.holders == nil {
		s.holders = map[int]string{}
	}
	s.holders[seat] = fmt.Sprintf("b#%d", s.claims)
	return s.holders[seat], nil
}

func (s *holdingStore) AppendHeld(ctx context.Context, id, holder string, m race.MoveRecord, _ []race.Carried) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holders[m.Seat] != holder {
		return false, fmt.Errorf("%w (%w)", race.ErrNotHolder, race.ErrUnavailable)
	}
	if s.sealed {
		return false, race.ErrRaceEnded
	}
	return false, s.Store.Append(ctx, id, m)
}

// Append is the owner's append: refused while another holds the seat.
func (s *holdingStore) Append(ctx context.Context, id string, m race.MoveRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holders[m.Seat] != "" {
		return fmt.Errorf("%w (%w)", race.ErrNotHolder, race.ErrUnavailable)
	}
	if s.sealed {
		return race.ErrRaceEnded
	}
	return s.Store.Append(ctx, id, m)
}

func (s *holdingStore) ReleaseSeat(_ context.Context, _ string, seat int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.holders, seat)
	return nil
}

func (s *holdingStore) Seal(ctx context.Context, id, why string, seats int) (string, []int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sealed = true
	moves, err := s.Store.Moves(ctx, id)
	last := make([]int, seats)
	for _, m := range moves {
		last[m.Seat] = m.Seq
	}
	return why, last, err
}

// decidingRecords stores nothing and decides every result as given.
type decidingRecords struct{}

func (decidingRecords) Save(context.Context, *race.Record) error { return nil }
func (decidingRecords) Load(context.Context, string) (*race.Record, bool, error) {
	return nil, false, nil
}
func (decidingRecords) Decide(_ context.Context, _ string, res *race.Result, st race.State) (*race.Result, race.State, error) {
	return res, st, nil
}

// heldFixture is a race of two on deal 5 run by its owner, whose seat 1
// is held on another instance (its own bus).
type heldFixture struct {
	clock   *racetest.Clock
	store   *holdingStore
	owner   *race.Race
	p, q    racetest.Recorder // seat 0's connection on the owner; seat 1's stand-in there
	records racetest.Recorder // what the holder sends the owner
	rec     *race.Record
	deps    race.Deps // the holder's instance
}

func newHeldFixture(t *testing.T) *heldFixture { return newHeldFixtureWith(t, nil) }

// newHeldFixtureWith is newHeldFixture whose owner has records (Redis
// mode's end: the result stored, after the log's seal).
func newHeldFixtureWith(t *testing.T, records race.Records) *heldFixture {
	t.Helper()
	f := &heldFixture{clock: racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), store: &holdingStore{Store: memrace.NewStore()}}
	r, err := race.New("r1", named(5), race.Deps{Clock: f.clock, Log: zerolog.Nop(), Store: f.store, Bus: memrace.NewBus(), Records: records})
	if err != nil {
		t.Fatal(err)
	}
	f.owner = r
	if _, err := r.Join("p", "", &f.p); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Join("q", "", &f.q); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(race.DefaultCountdown)
	f.rec = &race.Record{ID: "r1", Options: named(5), Deal: 5, State: race.Running, StartAt: f.clock.Now(),
		Seats: []race.SeatState{{Taken: true, Name: "p"}, {Taken: true, Name: "q"}}}
	bus := memrace.NewBus()
	bus.Subscribe(race.RecordsTopic("r1"), &f.records)
	f.deps = race.Deps{Clock: f.clock, Log: zerolog.Nop(), Store: f.store, Bus: bus}
	return f
}

func (f *heldFixture) open(t *testing.T) *race.HeldSeat {
	t.Helper()
	h, err := race.OpenHeld(t.Context(), f.rec, 1, func(ctx context.Context) ([]race.MoveRecord, error) { return f.store.Moves(ctx, "r1") }, f.deps)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// sent is what the holder sent the owner so far.
func (f *heldFixture) sent() []race.MoveRecord {
	var out []race.MoveRecord
	for _, ev := range f.records.Events() {
		out = append(out, ev.(*race.RecordEvent).Record)
	}
	return out
}

// playHeldOneOnItsWay plays the first two legal moves of deal 5 on h,
// and has the owner count the first one only: the second is on its way.
// It returns seat 1's game as the holder has it.
func (f *heldFixture) playHeldOneOnItsWay(t *testing.T, h *race.HeldSeat) engine.Game {
	t.Helper()
	ref := newGame(5)
	for i := range 2 {
		m := ref.AppendMoves(nil)[0]
		if _, err := h.Move(m.String(), fmt.Sprintf("q%d", i)); err != nil {
			t.Fatal(err)
		}
		if err := ref.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.owner.ApplyRemote(f.sent()[0]); err != nil {
		t.Fatal(err)
	}
	return ref
}

func codeOf(err error) race.Code {
	var re *race.Error
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}

// TestHeldSeatPlaysAndOwnerCounts: the seat's holder checks, logs and
// answers its moves, and sends each to the owner, which counts them for
// the others (not for the seat's own connection: its holder answered
// it), in log order, whatever order or repeats they come in.
func TestHeldSeatPlaysAndOwnerCounts(t *testing.T) {
	f := newHeldFixture(t)
	h := f.open(t)
	ref := newGame(5)
	for i := range 3 {
		m := ref.AppendMoves(nil)[0]
		moved, err := h.Move(m.String(), fmt.Sprintf("q%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := ref.Apply(m); err != nil {
			t.Fatal(err)
		}
		if moved.Seat != 1 || moved.Seq != i+1 || moved.View.Moves != ref.View().Moves || moved.View.Score != ref.Score() {
			t.Fatalf("move %d answered %+v, want seq %d and the game's view", i, moved, i+1)
		}
	}
	// The same request again is answered again, and logged once.
	last := f.sent()[2]
	if again, err := h.Move(last.Move, "q2"); err != nil || again.Seq != 3 {
		t.Fatalf("the last move sent again: %+v, %v; want it answered as seq 3", again, err)
	}
	if _, err := h.Move("9S>F4", "bad"); codeOf(err) != race.CodeIllegalMove {
		t.Fatalf("an illegal move: %v; want illegal-move", err)
	}

	sent := f.sent()
	logged, _ := f.store.Moves(t.Context(), "r1")
	if len(sent) != len(logged) || len(logged) < 3 {
		t.Fatalf("sent the owner %d records for %d logged", len(sent), len(logged))
	}
	// Out of order: the third before the second is a gap, counted once
	// the log is read.
	if gap, err := f.owner.ApplyRemote(sent[0]); gap || err != nil {
		t.Fatalf("the first record: gap %v, %v", gap, err)
	}
	if gap, err := f.owner.ApplyRemote(sent[2]); !gap || err != nil {
		t.Fatalf("the third record before the second: gap %v, %v; want a gap", gap, err)
	}
	if gap, err := f.owner.ApplyRemote(logged...); gap || err != nil {
		t.Fatalf("the log: gap %v, %v", gap, err)
	}
	if gap, err := f.owner.ApplyRemote(sent...); gap || err != nil {
		t.Fatalf("the records again: gap %v, %v", gap, err)
	}
	info, err := f.owner.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Counts[1]; got.Moves != ref.Plies() || got.Score != ref.Score() {
		t.Fatalf("the owner counts seat 1 at %+v, want %d moves and %d cards", got, ref.Plies(), ref.Score())
	}
	var opp int
	for _, ev := range f.p.Events() {
		if o, ok := ev.(*race.OpponentEvent); ok && o.Seat == 1 {
			opp++
		}
	}
	if opp != len(logged) {
		t.Errorf("seat 0 heard of %d of seat 1's moves, want %d", opp, len(logged))
	}
	for _, ev := range f.q.Events() {
		if m, ok := ev.(*race.MovedEvent); ok {
			t.Errorf("the owner answered a held seat's move: %+v", m)
		}
	}
}

// TestHeldSeatShutOut: once the seat is claimed again (its player resumed
// elsewhere) the holder's moves are refused as unavailable, and once the
// race's end sealed the log, as race over; nothing is logged or sent.
func TestHeldSeatShutOut(t *testing.T) {
	f := newHeldFixture(t)
	h := f.open(t)
	g := newGame(5)
	move := g.AppendMoves(nil)[0].String()
	if _, err := f.store.ClaimSeat(t.Context(), "r1", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Move(move, "q1"); codeOf(err) != race.CodeUnavailable || !errors.Is(err, race.ErrNotHolder) {
		t.Fatalf("a move by the earlier holder: %v; want unavailable", err)
	}
	h = f.open(t)
	f.store.sealed = true
	if _, err := h.Move(move, "q1"); codeOf(err) != race.CodeRaceOver {
		t.Fatalf("a move after the seal: %v; want race over", err)
	}
	if logged, _ := f.store.Moves(t.Context(), "r1"); len(logged) != 0 || len(f.sent()) != 0 {
		t.Fatalf("logged %v and sent %v; want nothing", logged, f.sent())
	}
	if _, err := race.OpenHeld(t.Context(), f.rec, 1, func(context.Context) ([]race.MoveRecord, error) { return nil, nil }, f.deps); !errors.Is(err, race.ErrRaceEnded) {
		t.Fatalf("a claim after the seal: %v; want race ended", err)
	}
}

// TestHeldSeatKeepsTheRaceTimes: the holder refuses what the owner would
// for the race's time: a move before the start, after the time limit, and
// a berserk racer's after half of it.
func TestHeldSeatKeepsTheRaceTimes(t *testing.T) {
	f := newHeldFixture(t)
	g := newGame(5)
	move := g.AppendMoves(nil)[0].String()
	start := f.rec.StartAt
	f.rec.StartAt = start.Add(time.Second)
	if _, err := f.open(t).Move(move, ""); codeOf(err) != race.CodeNotStarted {
		t.Fatalf("before the start: %v; want not started", err)
	}
	f.rec.StartAt = start
	f.rec.Seats[1].Berserk = true
	f.clock.Advance(race.DefaultTimeLimit / 2)
	if _, err := f.open(t).Move(move, ""); codeOf(err) != race.CodeIllegalMove {
		t.Fatalf("a berserk racer after half the time: %v; want illegal move", err)
	}
	f.rec.Seats[1].Berserk = false
	f.clock.Advance(race.DefaultTimeLimit / 2)
	if _, err := f.open(t).Move(move, ""); codeOf(err) != race.CodeRaceOver {
		t.Fatalf("after the time limit: %v; want race over", err)
	}
	if logged, _ := f.store.Moves(t.Context(), "r1"); len(logged) != 0 {
		t.Fatalf("logged %v; want nothing", logged)
	}
}

// TestTheEndCountsHeldMoves: the race's end seals the log and counts
// every move the seat's holder logged before it, one still on its way to
// the owner included, and decides from the games as they stand then; the
// holder's moves after it are refused as race over.
func TestTheEndCountsHeldMoves(t *testing.T) {
	f := newHeldFixtureWith(t, decidingRecords{})
	h := f.open(t)
	mine := newGame(5)
	first := mine.AppendMoves(nil)[0]
	if err := f.owner.Move(0, first.String(), "p1"); err != nil {
		t.Fatal(err)
	}
	ref := f.playHeldOneOnItsWay(t, h)
	f.clock.Advance(race.DefaultTimeLimit)
	res := f.owner.Result()
	if res == nil || f.owner.State() != race.Finished {
		t.Fatalf("after the time limit: state %s, result %+v", f.owner.State(), res)
	}
	if res.Scores[1] != ref.Score() || !strings.Contains(res.Games[1], f.sent()[1].Move) {
		t.Fatalf("the result counts seat 1 at %d cards, game %q; want %d cards and both its moves", res.Scores[1], res.Games[1], ref.Score())
	}
	if _, err := h.Move(ref.AppendMoves(nil)[0].String(), "q9"); codeOf(err) != race.CodeRaceOver {
		t.Fatalf("the holder's move after the end: %v; want race over", err)
	}
}

// TestOwnerTakesTheSeatBack: a request of a held seat's that comes to the
// owner (a move forwarded, a resignation) takes the seat back from its
// holder: the holder's moves are counted first, those still on their way
// included, the request is played on them, and the holder's moves are
// refused from then on.
func TestOwnerTakesTheSeatBack(t *testing.T) {
	f := newHeldFixture(t)
	h := f.open(t)
	ref := f.playHeldOneOnItsWay(t, h)
	holders := ref // the holder's game: it hears nothing of the owner's moves
	m := ref.AppendMoves(nil)[0]
	if err := f.owner.Move(1, m.String(), "fwd"); err != nil {
		t.Fatalf("a move forwarded to the owner: %v", err)
	}
	if err := ref.Apply(m); err != nil {
		t.Fatal(err)
	}
	if moved, ok := f.q.Last().(*race.MovedEvent); !ok || moved.Seq != 3 || moved.ID != "fwd" {
		t.Fatalf("the forwarded move answered %#v, want seq 3", f.q.Last())
	}
	if _, err := h.Move(holders.AppendMoves(nil)[0].String(), "q9"); !errors.Is(err, race.ErrNotHolder) {
		t.Fatalf("the holder's move once the owner took the seat back: %v; want not the holder", err)
	}
	if err := f.owner.Resign(1, "bye"); err != nil {
		t.Fatalf("a resignation: %v", err)
	}
	logged, _ := f.store.Moves(t.Context(), "r1")
	var seqs []int
	for _, l := range logged {
		if l.Seat == 1 {
			seqs = append(seqs, l.Seq)
		}
	}
	if fmt.Sprint(seqs) != "[1 2 3 4]" || logged[len(logged)-1].Move != "resign" {
		t.Fatalf("seat 1's log %v (last %+v), want 1 to 4 ending with the resignation", seqs, logged[len(logged)-1])
	}
}

// TestHeldFirstMoveLostOnItsWay: at the first-move deadline, a held
// seat's first move that the holder logged but the owner never heard of
// (its record lost to a pub/sub lapse) is read from the log, and the
// race goes on; a first move after the deadline is refused by the holder,
// and the race is aborted.
func TestHeldFirstMoveLostOnItsWay(t *testing.T) {
	f := newHeldFixtureWith(t, decidingRecords{})
	h := f.open(t)
	g := newGame(5)
	first := g.AppendMoves(nil)[0].String()
	if err := f.owner.Move(0, first, "p1"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(race.DefaultFirstMoveTimeout / 2)
	if _, err := h.Move(first, "q1"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(race.DefaultFirstMoveTimeout / 2) // the record never reached the owner
	if st := f.owner.State(); st != race.Running {
		t.Fatalf("at the first-move deadline with seat 1's first move logged: %s; want running", st)
	}
	opp, ok := f.p.Last().(*race.OpponentEvent)
	if !ok || opp.Seat != 1 || opp.Counts.Moves != 1 {
		t.Fatalf("seat 0 last heard %#v; want seat 1's first move", f.p.Last())
	}

	late := newHeldFixtureWith(t, decidingRecords{})
	if err := late.owner.Move(0, first, "p1"); err != nil {
		t.Fatal(err)
	}
	start := late.rec.StartAt
	late.rec.StartAt = start.Add(-race.DefaultFirstMoveTimeout) // the holder's clock at the deadline, the owner's before it
	if _, err := late.open(t).Move(first, "q0"); codeOf(err) != race.CodeRaceOver {
		t.Fatalf("the holder's first move at its deadline: %v; want race over", err)
	}
	late.rec.StartAt = start
	h = late.open(t)
	late.clock.Advance(race.DefaultFirstMoveTimeout)
	if res := late.owner.Result(); res == nil || res.Reason != race.ReasonNoFirstMove {
		t.Fatalf("no first move of seat 1 by the deadline: result %+v; want aborted, no first move", res)
	}
	if _, err := h.Move(first, "q1"); codeOf(err) != race.CodeRaceOver {
		t.Fatalf("the holder's first move after the deadline: %v; want race over", err)
	}
	if logged, _ := late.store.Moves(t.Context(), "r1"); len(logged) != 1 {
		t.Fatalf("logged %v; want seat 0's move alone", logged)
	}
}

// stallingStore is a holdingStore whose AppendHeld, once armed, waits
// until released: a held move stopped in the middle of its append, its
// seat's lock held.
type stallingStore struct {
	*holdingStore
	entered, release chan struct{}
}

func (s *stallingStore) AppendHeld(ctx context.Context, id, holder string, m race.MoveRecord, ev []race.Carried) (bool, error) {
	if s.entered != nil {
		close(s.entered)
		<-s.release
	}
	return s.holdingStore.AppendHeld(ctx, id, holder, m, ev)
}

// TestHeldViewAheadDoesNotWaitForAMove: the seat's view ahead is read
// while a move of the seat's is in the middle of its append. A state
// reaches the seat's connection under the race's lock, and when the
// holder's instance runs the race too (it took it over), the move waits
// for that lock to have the race count it: had the view waited for the
// move, the two would have waited for each other for ever (the race and
// its players stuck, as a partition test found).
func TestHeldViewAheadDoesNotWaitForAMove(t *testing.T) {
	f := newHeldFixture(t)
	stall := &stallingStore{holdingStore: f.store}
	f.deps.Store = stall
	h := f.open(t)
	g := newGame(5)
	for i := range 2 {
		m := g.AppendMoves(nil)[0]
		if i == 1 {
			stall.entered, stall.release = make(chan struct{}), make(chan struct{})
		}
		moved := make(chan error, 1)
		go func() {
			_, err := h.Move(m.String(), fmt.Sprintf("q%d", i))
			moved <- err
		}()
		if i == 1 {
			<-stall.entered
			viewed := make(chan engine.View, 1)
			go func() {
				v, _ := h.ViewAhead(0)
				viewed <- v
			}()
			select {
			case v := <-viewed:
				if v.Moves != 1 {
					t.Errorf("the view ahead during the second move counts %d moves; want the first move's view", v.Moves)
				}
			case <-time.After(10 * time.Second):
				t.Error("the view ahead waited for the move in the middle of its append")
			}
			close(stall.release)
		}
		if err := <-moved; err != nil {
			t.Fatal(err)
		}
		if err := g.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok := h.ViewAhead(1); !ok || v.Moves != 2 || v.Score != g.Score() {
		t.Fatalf("the view ahead of one move after two: %+v, %v; want the game after both", v, ok)
	}
	if _, ok := h.ViewAhead(2); ok {
		t.Fatal("a view ahead of two moves after two; want none")
	}
}
