package redisrace_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/fleet"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace"
	"sirtommy/race/redisrace/redistest"
)

// instance is one server's race side on a shared Redis.
type instance struct {
	name    string
	rdb     *redis.Client
	cluster *redisrace.Cluster
	bus     *redisrace.Bus
	svc     *race.Service
	fleet   *fleet.Fleet
}

func newInstance(t testing.TB, rdb *redis.Client, name string, clock race.Clock, more ...func(*race.Deps)) *instance {
	t.Helper()
	keys := redisrace.Keys{Prefix: "test:"}
	c, err := redisrace.NewCluster(t.Context(), rdb, redisrace.ClusterOptions{Keys: keys, Instance: name, Clock: clock, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	bus := redisrace.NewBus(rdb, keys, name, zerolog.Nop())
	var once sync.Once
	in := &instance{name: name, rdb: rdb, cluster: c, bus: bus}
	deps := race.Deps{
		Clock: clock, Log: zerolog.Nop(), Bus: bus, Records: c,
		Store: redisrace.NewStore(rdb, redisrace.StoreOptions{Keys: keys, Instance: name}),
	}
	for _, f := range more {
		f(&deps)
	}
	in.svc = race.NewService(deps)
	in.fleet = fleet.New(in.svc, c)
	t.Cleanup(func() { once.Do(in.kill) })
	return in
}

// newCluster makes a Cluster on rdb, closed when the test ends.
func newCluster(t *testing.T, rdb *redis.Client, o redisrace.ClusterOptions) *redisrace.Cluster {
	t.Helper()
	c, err := redisrace.NewCluster(t.Context(), rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// kill stops the instance as a crash would: it stops listening, and its
// leases stay until they expire.
func (in *instance) kill() {
	_ = in.cluster.Close()
	_ = in.bus.Close()
	in.fleet.Close()
}

// crash kills the instance and lets its leases run out at once, as
// they would LeaseTTL later: only a race whose lease is gone is taken
// over, and the tests need not wait for it.
func (in *instance) crash(t testing.TB) {
	t.Helper()
	in.kill()
	keys, err := in.rdb.Keys(t.Context(), "test:{race:*}:owner").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if in.rdb.Get(t.Context(), k).Val() == in.name {
			in.rdb.Del(t.Context(), k)
		}
	}
}

// recorder keeps the events a subscriber got.
type recorder struct{ racetest.Recorder }

// waitFor waits until the recorder got an event ok accepts.
func (r *recorder) waitFor(t *testing.T, what string, ok func(race.Event) bool) race.Event {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, ev := range r.Events() {
			if ok(ev) {
				return ev
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %s event arrived", what)
	return nil
}

// play makes n first-legal moves for seat s on h, following the game g.
func play(t *testing.T, h race.Handle, g *engine.Game, s, n int) {
	t.Helper()
	for range n {
		if g.Status().Over() {
			return
		}
		legal := g.AppendMoves(nil)
		m := legal[0]
		if err := h.Move(s, m.String(), ""); err != nil {
			t.Fatalf("seat %d move %s: %v", s, m, err)
		}
		if err := g.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
}

const testDeal = 7

// runningOn makes a race of testDeal with opts on instance in, seats two
// players (p0 and p1) and runs the countdown: the players' recorders and
// resume tokens.
func runningOn(t *testing.T, in *instance, clock *racetest.Clock, opts race.Options) (*race.Race, *[2]recorder, [2]string) {
	t.Helper()
	opts.Deal, opts.DealNamed = testDeal, true
	r, err := in.svc.Create(opts)
	if err != nil {
		t.Fatal(err)
	}
	var subs [2]recorder
	var toks [2]string
	for s := range 2 {
		tk, err := r.Join(fmt.Sprint("p", s), "", &subs[s])
		if err != nil {
			t.Fatal(err)
		}
		toks[s] = tk.Token
	}
	clock.Advance(race.DefaultCountdown)
	return r, &subs, toks
}

func TestRaceRebuiltOnSecondInstance(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	a, b := twoInstances(t, clock)
	r, _, toks := runningOn(t, a, clock, race.Options{})
	rules, _ := engine.Variant("")
	games := [2]engine.Game{engine.New(rules, testDeal), engine.New(rules, testDeal)}
	play(t, r, &games[0], 0, 5)
	play(t, r, &games[1], 1, 3)

	// Instance a dies and its lease runs out; seat 1 resumes on b, which
	// takes the race over and rebuilds it from the log.
	a.crash(t)
	h, err := b.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	var again recorder
	if tk, err := h.Resume(toks[1], "", "r1", &again); err != nil || tk.Seat != 1 {
		t.Fatalf("resume on b: seat %d, %v", tk.Seat, err)
	}
	st := again.waitFor(t, "state", func(ev race.Event) bool { _, ok := ev.(*race.StateEvent); return ok }).(*race.StateEvent)
	if st.State != race.Running || st.You.Moves != games[1].Plies() || st.Opponent.Moves != games[0].Plies() {
		t.Fatalf("rebuilt state %s, you %d moves, opponent %d; want running, %d and %d",
			st.State, st.You.Moves, st.Opponent.Moves, games[1].Plies(), games[0].Plies())
	}
	if got, want := fmt.Sprint(*st.You), fmt.Sprint(games[1].View()); got != want {
		t.Errorf("rebuilt view\n%s\nwant\n%s", got, want)
	}
	// The race goes on on b.
	play(t, h, &games[1], 1, 2)
	if local, err := b.svc.Get(r.ID()); err != nil || local.State() != race.Running {
		t.Fatalf("b does not run the race: %v", err)
	}
}

func TestResultDecidedOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	clock := racetest.NewClock(time.Now())
	c := newCluster(t, rdb, redisrace.ClusterOptions{Instance: "x", Clock: clock, Log: zerolog.Nop()})
	w0, w1 := 0, 1
	first := &race.Result{Outcome: "win", Winner: &w0, Reason: "won-deal"}
	got, st, err := c.Decide(t.Context(), "R", first, race.Finished)
	if err != nil || got.Reason != "won-deal" || st != race.Finished {
		t.Fatalf("first decision: %+v %s %v", got, st, err)
	}
	got, st, err = c.Decide(t.Context(), "R", &race.Result{Outcome: "win", Winner: &w1, Reason: "forfeit"}, race.Finished)
	if err != nil || got.Reason != "won-deal" || *got.Winner != 0 {
		t.Fatalf("second decision replaced the first: %+v %s %v", got, st, err)
	}
}

func TestAppendFencedByTheLease(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	clock := racetest.NewClock(time.Now())
	a := newCluster(t, rdb, redisrace.ClusterOptions{Instance: "a", Clock: clock, Log: zerolog.Nop()})
	b := newCluster(t, rdb, redisrace.ClusterOptions{Instance: "b", Clock: clock, Log: zerolog.Nop()})
	storeA := redisrace.NewStore(rdb, redisrace.StoreOptions{Instance: "a"})
	if ok, err := a.Claim(t.Context(), "R"); !ok || err != nil {
		t.Fatalf("a claims: %v %v", ok, err)
	}
	if ok, _ := b.Claim(t.Context(), "R"); ok {
		t.Fatal("b claimed a race a holds")
	}
	if err := storeA.Append(t.Context(), "R", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"}); err != nil {
		t.Fatal(err)
	}
	// a's lease runs out and b takes the race: a's writes are refused from
	// then on.
	rdb.Del(t.Context(), redisrace.Keys{}.Owner("R"))
	if ok, err := b.Claim(t.Context(), "R"); !ok || err != nil {
		t.Fatalf("b takes over: %v %v", ok, err)
	}
	err := storeA.Append(t.Context(), "R", race.MoveRecord{Seat: 0, Seq: 2, Move: "2S>W1"})
	if !errors.Is(err, race.ErrNotOwner) || !errors.Is(err, race.ErrUnavailable) {
		t.Errorf("append by the old owner: %v, want ErrNotOwner", err)
	}
	if lost, err := a.Renew(t.Context(), []string{"R"}); err != nil || len(lost) != 1 {
		t.Errorf("a renews: lost %v, %v", lost, err)
	}
	if _, _, err := a.Decide(t.Context(), "R", &race.Result{Outcome: "aborted"}, race.Aborted); !errors.Is(err, race.ErrNotOwner) {
		t.Errorf("decision by the old owner: %v", err)
	}
}

// firstLegalComputers makes the "first" level's computer, which plays the
// first legal move.
func firstLegalComputers(d *race.Deps) {
	d.Computers = func(level string, _ uint64) (race.Player, error) {
		if level != "first" {
			return nil, fmt.Errorf("no level %q", level)
		}
		return racetest.FirstLegal{}, nil
	}
}

// TestComputerSurvivesItsInstance: a race against the computer goes on
// when its instance dies: the instance that takes it over makes the
// computer player again, which moves on from where it was, and the race's
// end is reported to that instance's OnEnd hook with both players.
func TestComputerSurvivesItsInstance(t *testing.T) {
	rdb := redistest.Start(t, redistest.Options{}).Client(t)
	start := time.Now()
	clockA, clockB := racetest.NewClock(start), racetest.NewClock(start)
	a := newInstance(t, rdb, "a", clockA, firstLegalComputers)
	ended := make(chan race.Ended, 2)
	b := newInstance(t, rdb, "b", clockB, firstLegalComputers, func(d *race.Deps) {
		d.OnEnd = func(e race.Ended) { ended <- e }
	})

	const pace = time.Second
	r, err := a.svc.Create(race.Options{Deal: testDeal, DealNamed: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.SeatComputer("bot", race.Computer{Player: racetest.FirstLegal{}, Level: "first", Seed: 1, Pace: pace}); err != nil {
		t.Fatal(err)
	}
	tk, err := r.Reserve(race.Reservation{Name: "ann", Player: "p-ann", Rating: 1612})
	if err != nil {
		t.Fatal(err)
	}
	var sub recorder
	if tk, err = r.Resume(tk.Token, "p-ann", "", &sub); err != nil {
		t.Fatal(err)
	}
	clockA.Advance(race.DefaultCountdown)
	clockA.Advance(3 * pace) // the computer makes three moves on a
	before, err := r.Info(t.Context())
	if err != nil || before.Counts[0].Moves != 3 {
		t.Fatalf("before the takeover the computer made %d moves (%v), want 3", before.Counts[0].Moves, err)
	}
	a.crash(t)

	h, err := b.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	var again recorder
	// The token of the last resume, which the record kept.
	if got, err := h.Resume(tk.Token, "p-ann", "", &again); err != nil || got.Seat != tk.Seat {
		t.Fatalf("resume on b: seat %d, %v", got.Seat, err)
	}
	clockB.Advance(race.DefaultCountdown + 2*pace) // b's clock catches up, then two paces
	local, err := b.svc.Get(r.ID())
	if err != nil {
		t.Fatal(err)
	}
	in, _ := local.Info(t.Context())
	if in.Counts[0].Moves <= 3 || !in.Players[0].Computer || !in.Players[0].Connected {
		t.Fatalf("after the takeover the computer seat is %+v with %d moves; want it connected and moving past 3", in.Players[0], in.Counts[0].Moves)
	}
	if err := h.Resign(tk.Seat, ""); err != nil {
		t.Fatal(err)
	}
	// The computer plays on until it has passed the resigned player.
	for i := 0; i < 100 && !local.State().Over(); i++ {
		clockB.Advance(pace)
	}
	select {
	case e := <-ended:
		if e.Race != r.ID() || e.Result.Winner == nil || *e.Result.Winner != 0 || e.Players[1].Player != "p-ann" || e.Players[1].Rating != 1612 || !e.Players[0].Computer {
			t.Errorf("b's OnEnd heard %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("b's OnEnd never heard of the race's end")
	}
}

// TestRetriedMoveAnsweredAfterTakeover: a move whose answer was lost (its
// instance died right after logging it) is sent again, with the same
// request id, to the instance that took the race over: it is answered as
// the logged move, not refused as illegal; the same move under another id
// is a new move, and illegal.
func TestRetriedMoveAnsweredAfterTakeover(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	a, b := twoInstances(t, clock)
	r, _, toks := runningOn(t, a, clock, race.Options{})
	rules, _ := engine.Variant("")
	g := engine.New(rules, testDeal)
	m := g.AppendMoves(nil)[0]
	if err := r.Move(0, m.String(), "m1"); err != nil {
		t.Fatal(err)
	}
	a.crash(t)

	h, err := b.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	var again recorder
	if _, err := h.Resume(toks[0], "", "", &again); err != nil {
		t.Fatal(err)
	}
	if err := h.Move(0, m.String(), "m1"); err != nil {
		t.Fatalf("the move sent again with its id: %v", err)
	}
	ev := again.waitFor(t, "moved", func(ev race.Event) bool { mv, ok := ev.(*race.MovedEvent); return ok && mv.ID == "m1" }).(*race.MovedEvent)
	if ev.Seq != 1 || ev.Move != m.String() || ev.View.Moves != 1 {
		t.Errorf("answer %+v, want the logged move 1 and a game of one move", ev)
	}
	if err := h.Move(0, m.String(), "m2"); race.ErrorCode(err) != race.CodeIllegalMove {
		t.Errorf("the same move under a new id: %v, want illegal-move", err)
	}
	local, _ := b.svc.Get(r.ID())
	if in, _ := local.Info(t.Context()); in.Counts[0].Moves != 1 {
		t.Errorf("seat 0 has %d moves, want 1", in.Counts[0].Moves)
	}
}

// TestTimersSurviveTheirInstance: nobody asks for the race after its
// instance dies, yet another instance adopts it once the lease runs out,
// and the grace period of the player who had left still ends it.
func TestTimersSurviveTheirInstance(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	start := time.Now()
	clockA, clockB := racetest.NewClock(start), racetest.NewClock(start)
	a := newInstance(t, rdb, "a", clockA)
	b := newInstance(t, rdb, "b", clockB)

	r, subs, _ := runningOn(t, a, clockA, race.Options{})
	rules, _ := engine.Variant("")
	games := [2]engine.Game{engine.New(rules, testDeal), engine.New(rules, testDeal)}
	play(t, r, &games[0], 0, 2)
	play(t, r, &games[1], 1, 2)
	r.Leave(1, &subs[1]) // seat 1's grace period starts on a
	a.kill()             // and a dies: its clock never moves again

	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan struct{})
	go func() { b.fleet.Run(ctx, 20*time.Millisecond); close(ran) }()
	defer func() { cancel(); <-ran }()
	clockB.Advance(race.DefaultCountdown + time.Second) // past a's lease, on b's clock
	var adopted *race.Race
	deadline := time.Now().Add(2 * redisrace.LeaseTTL)
	for adopted == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		adopted, _ = b.svc.Get(r.ID())
	}
	if adopted == nil {
		t.Fatal("no instance adopted the orphaned race")
	}
	// Seat 1's grace ends (from a's record) before seat 0's (b gives the
	// player who was on a a full grace period from the takeover).
	clockB.Advance(race.DefaultGrace - time.Second + 500*time.Millisecond)
	if st := adopted.State(); st != race.Finished {
		t.Fatalf("after seat 1's grace the race is %s", st)
	}
	info, err := adopted.Info(t.Context())
	if err != nil || info.Result.Reason != "forfeit" || *info.Result.Winner != 0 {
		t.Fatalf("result %+v, %v", info.Result, err)
	}
	if n := len(info.Moves); n != 4 {
		t.Errorf("%d moves logged, want 4", n)
	}
}

// TestDecisionWaitsForRedis: a race whose time runs out while Redis is
// away is decided once Redis is back, not before, and not twice.
func TestDecisionWaitsForRedis(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	rdb := srv.Client(t)
	clock := racetest.NewClock(time.Now())
	a := newInstance(t, rdb, "a", clock)
	r, _, _ := runningOn(t, a, clock, race.Options{TimeLimit: time.Minute, FirstMoveTimeout: time.Hour})
	rules, _ := engine.Variant("")
	g := engine.New(rules, testDeal)
	play(t, r, &g, 0, 3)
	srv.Stop()
	fresh := engine.New(rules, testDeal)
	if err := r.Move(1, fresh.AppendMoves(nil)[0].String(), ""); race.ErrorCode(err) != race.CodeUnavailable {
		t.Errorf("a move with Redis down: %v, want unavailable", err)
	}
	clock.Advance(time.Minute) // time is up, but the result cannot be stored
	if st := r.State(); st != race.Running {
		t.Fatalf("decided without Redis: %s", st)
	}
	srv.StartAgain()
	// go-redis dials again about once a second after failed dials: wait
	// (in real time) until the client is back, then let the retry run.
	deadline := time.Now().Add(5 * time.Second)
	for rdb.Ping(t.Context()).Err() != nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	clock.Advance(2 * time.Second) // the retry
	if st := r.State(); st != race.Finished {
		t.Fatalf("after Redis came back the race is %s", st)
	}
	info, _ := r.Info(t.Context())
	if info.Result.Reason != "equal-cards" || info.Result.Outcome != "draw" { // 0 cards each on the foundations
		t.Errorf("result %+v", info.Result)
	}
	if n := len(info.Moves); n != 3 {
		t.Errorf("%d moves logged, want the 3 acknowledged", n)
	}
}

// TestConnectionFollowsItsRace: instance b takes a race over while a
// still thinks it runs it. a's next append is fenced off, the player's
// connection on a follows the race to b, and each event reaches it once.
func TestConnectionFollowsItsRace(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	a, b := twoInstances(t, clock)
	r, err := a.svc.Create(race.Options{Deal: testDeal, DealNamed: true})
	if err != nil {
		t.Fatal(err)
	}
	var subs [2]recorder
	var hs [2]race.Handle
	var toks [2]string
	for s := range 2 {
		if hs[s], err = a.svc.Open(t.Context(), r.ID()); err != nil {
			t.Fatal(err)
		}
		tk, err := hs[s].Join("p", "", &subs[s])
		if err != nil {
			t.Fatal(err)
		}
		toks[s] = tk.Token
	}
	clock.Advance(race.DefaultCountdown)
	rules, _ := engine.Variant("")
	g := engine.New(rules, testDeal)
	play(t, hs[0], &g, 0, 2)

	// b takes the race as though a's lease had run out; seat 1 resumes
	// there.
	b.rdb.Del(t.Context(), redisrace.Keys{Prefix: "test:"}.Owner(r.ID()))
	if ok, err := b.cluster.Claim(t.Context(), r.ID()); !ok || err != nil {
		t.Fatalf("b claims: %v %v", ok, err)
	}
	h1, err := b.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	var again recorder
	if _, err := h1.Resume(toks[1], "", "", &again); err != nil {
		t.Fatal(err)
	}
	// Seat 0 plays on through a: the first try meets the fence.
	m := g.AppendMoves(nil)[0]
	if err := hs[0].Move(0, m.String(), "fenced"); race.ErrorCode(err) != race.CodeUnavailable {
		t.Fatalf("a move through the stale copy: %v, want unavailable", err)
	}
	if err := hs[0].Move(0, m.String(), "followed"); err != nil {
		t.Fatalf("the move again: %v", err)
	}
	subs[0].waitFor(t, "moved", func(ev race.Event) bool { mv, ok := ev.(*race.MovedEvent); return ok && mv.ID == "followed" })
	again.waitFor(t, "opponent", func(ev race.Event) bool { op, ok := ev.(*race.OpponentEvent); return ok && op.Counts.Moves == 3 })
	time.Sleep(100 * time.Millisecond) // a duplicate would arrive by now
	n := 0
	for _, ev := range subs[0].Events() {
		if mv, ok := ev.(*race.MovedEvent); ok && mv.ID == "followed" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the connection got the move's acknowledgement %d times", n)
	}
	if info, _ := h1.Info(t.Context()); info.Counts[0].Moves != 3 {
		t.Errorf("b has %d moves for seat 0, want 3", info.Counts[0].Moves)
	}
}

// TestReservedSeatFoundOnAnotherInstance: a seat reserved on instance a is
// found, with its token, by SeatOf on instance b before anyone joins (a
// lobby tells both players at once, and either may join first, through
// either instance).
func TestReservedSeatFoundOnAnotherInstance(t *testing.T) {
	a, b := twoInstances(t, racetest.NewClock(time.Now()))
	r, err := a.svc.Create(race.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := r.Reserve(race.Reservation{Name: "ann", Player: "p-ann"})
	if err != nil {
		t.Fatal(err)
	}
	token, reserved, err := b.svc.SeatOf(t.Context(), r.ID(), "p-ann")
	if err != nil || !reserved || token != tk.Token {
		t.Fatalf("SeatOf on b = %q, %v, %v; want ann's token", token, reserved, err)
	}
}

// TestMovesKeepTheirLease: an append extends the lease of the instance
// that owns the race, and Renew leaves such a race for the next round
// while renewing the quiet ones; a lease that ran out or was taken is
// never extended by an append.
func TestMovesKeepTheirLease(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	clock := racetest.NewClock(time.Now())
	ext := redisrace.NewExtensions()
	a := newCluster(t, rdb, redisrace.ClusterOptions{Instance: "a", Clock: clock, Log: zerolog.Nop(), Extensions: ext})
	b := newCluster(t, rdb, redisrace.ClusterOptions{Instance: "b", Clock: clock, Log: zerolog.Nop()})
	storeA := redisrace.NewStore(rdb, redisrace.StoreOptions{Instance: "a", Extensions: ext})
	owner := func(id string) string { return redisrace.Keys{}.Owner(id) }
	ttl := func(id string) time.Duration {
		t.Helper()
		d, err := rdb.PTTL(t.Context(), owner(id)).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, id := range []string{"moving", "quiet", "expired", "taken"} {
		if ok, err := a.Claim(t.Context(), id); !ok || err != nil {
			t.Fatalf("a claims %s: %v %v", id, ok, err)
		}
	}

	rdb.PExpire(t.Context(), owner("moving"), 500*time.Millisecond)
	if err := storeA.Append(t.Context(), "moving", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"}); err != nil {
		t.Fatal(err)
	}
	if d := ttl("moving"); d < redisrace.LeaseTTL-time.Second {
		t.Fatalf("lease after a move: %v left, want about %v", d, redisrace.LeaseTTL)
	}

	// A mark far beyond any lease shows which leases Renew touched.
	const mark = 100 * time.Second
	for _, id := range []string{"moving", "quiet"} {
		rdb.PExpire(t.Context(), owner(id), mark)
	}
	if lost, err := a.Renew(t.Context(), []string{"moving", "quiet"}); err != nil || len(lost) != 0 {
		t.Fatalf("renew: lost %v, %v", lost, err)
	}
	if d := ttl("moving"); d < mark/2 {
		t.Errorf("a race whose move just kept its lease was renewed too (%v left)", d)
	}
	if d := ttl("quiet"); d > redisrace.LeaseTTL {
		t.Errorf("a quiet race was not renewed (%v left)", d)
	}

	// Half a round later the move no longer counts: Renew renews it.
	time.Sleep(redisrace.RenewEvery/2 + 100*time.Millisecond)
	if lost, err := a.Renew(t.Context(), []string{"moving"}); err != nil || len(lost) != 0 {
		t.Fatalf("renew: lost %v, %v", lost, err)
	}
	if d := ttl("moving"); d > redisrace.LeaseTTL {
		t.Errorf("a race quiet for half a round was not renewed (%v left)", d)
	}

	// A lease that ran out stays out: the append is stored, unfenced, and
	// Renew finds the race lost for the fleet to claim again.
	rdb.Del(t.Context(), owner("expired"))
	if err := storeA.Append(t.Context(), "expired", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"}); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(t.Context(), owner("expired")).Val(); n != 0 {
		t.Error("an append revived a lease that had run out")
	}
	if lost, err := a.Renew(t.Context(), []string{"expired"}); err != nil || len(lost) != 1 {
		t.Errorf("renew of an expired lease: lost %v, %v", lost, err)
	}

	// A race taken over right after a's last move: the refused append
	// leaves b's lease alone, and a's next Renew finds the race lost at
	// once, not a round later.
	if err := storeA.Append(t.Context(), "taken", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"}); err != nil {
		t.Fatal(err)
	}
	rdb.Del(t.Context(), owner("taken")) // a's lease ran out
	if ok, err := b.Claim(t.Context(), "taken"); !ok || err != nil {
		t.Fatalf("b takes over: %v %v", ok, err)
	}
	rdb.PExpire(t.Context(), owner("taken"), mark)
	if err := storeA.Append(t.Context(), "taken", race.MoveRecord{Seat: 0, Seq: 2, Move: "2S>W1"}); !errors.Is(err, race.ErrNotOwner) {
		t.Fatalf("append by the old owner: %v, want ErrNotOwner", err)
	}
	if got := rdb.Get(t.Context(), owner("taken")).Val(); got != "b" {
		t.Errorf("owner after a's refused append: %q", got)
	}
	if d := ttl("taken"); d < mark/2 {
		t.Errorf("a's refused append changed b's lease (%v left)", d)
	}
	if lost, err := a.Renew(t.Context(), []string{"taken"}); err != nil || len(lost) != 1 {
		t.Errorf("a renews a race b took: lost %v, %v", lost, err)
	}
}

// TestSendHeardByListenersOnly: a frame sent to an instance whose inbox
// nobody listens on (its pub/sub connection reconnecting, or the process
// gone) is not heard, which the fleet reads as "send it again while the
// owner's lease is live", never as "the owner is gone"; once the instance
// listens again, frames reach it as they were sent, in order.
func TestSendHeardByListenersOnly(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	clock := race.SystemClock{}
	b := newCluster(t, rdb, redisrace.ClusterOptions{Instance: "b", Clock: clock, Log: zerolog.Nop()})
	a, err := redisrace.NewCluster(t.Context(), rdb, redisrace.ClusterOptions{Instance: "a", Clock: clock, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	inbox := redisrace.Keys{}.Channel("instance:a")
	if n := rdb.PubSubNumSub(t.Context(), inbox).Val()[inbox]; n != 1 {
		t.Fatalf("a's inbox %s has %d subscribers while a listens, want 1", inbox, n)
	}
	_ = a.Close() // a stops listening
	// Redis drops a closed connection's subscriptions when it reads the
	// close, which a PUBLISH on another connection may come before.
	for deadline := time.Now().Add(5 * time.Second); rdb.PubSubNumSub(t.Context(), inbox).Val()[inbox] > 0; {
		if time.Now().After(deadline) {
			t.Fatal("a's inbox still has a subscriber after a closed")
		}
		time.Sleep(time.Millisecond)
	}
	if heard, err := b.Send(t.Context(), "a", []byte(`{"n":0}`)); heard || err != nil {
		t.Fatalf("a frame to an inbox nobody listens on: heard %v, %v; want not heard", heard, err)
	}
	again := newCluster(t, rdb, redisrace.ClusterOptions{Instance: "a", Clock: clock, Log: zerolog.Nop()})
	got := make(chan string, 10)
	again.Listen(func(frame []byte) { got <- string(frame) })
	for i := range 3 {
		if heard, err := b.Send(t.Context(), "a", fmt.Appendf(nil, `{"n":%d,"s":"x\"y"}`, i)); !heard || err != nil {
			t.Fatalf("frame %d to a listening inbox: heard %v, %v", i, heard, err)
		}
	}
	for i := range 3 {
		select {
		case f := <-got:
			if want := fmt.Sprintf(`{"n":%d,"s":"x\"y"}`, i); f != want {
				t.Fatalf("frame %d arrived as %s, want %s", i, f, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("frame %d never arrived", i)
		}
	}
}

// TestFinishedRaceNeverClaimed: once a race's record says it is over,
// nobody takes its lease, free or not, and a claim unlists it from the
// live races (its owner may have died before releasing it). A race whose
// result is stored but whose record is not over yet did not finish
// ending (its owner went in between): it is claimed, so that its next
// owner ends it with the stored result. On the code before, a request
// after the end took the released race over.
func TestFinishedRaceNeverClaimed(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	clock := race.SystemClock{}
	a := newCluster(t, rdb, redisrace.ClusterOptions{Instance: "a", Clock: clock, Log: zerolog.Nop()})
	b := newCluster(t, rdb, redisrace.ClusterOptions{Instance: "b", Clock: clock, Log: zerolog.Nop()})
	owner := redisrace.Keys{}.Owner("R")
	if ok, err := a.Claim(t.Context(), "R"); !ok || err != nil {
		t.Fatalf("a claims: %v %v", ok, err)
	}
	rec := &race.Record{ID: "R", State: race.Running}
	if err := a.Save(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Decide(t.Context(), "R", &race.Result{Outcome: race.OutcomeDraw}, race.Finished); err != nil {
		t.Fatal(err)
	}
	// a goes between its decision and its record: b ends the race.
	rdb.Del(t.Context(), owner)
	if ok, err := b.Claim(t.Context(), "R"); !ok || err != nil {
		t.Fatalf("b claims a race whose end was cut short: %v %v", ok, err)
	}
	rec.State = race.Finished
	if err := b.Save(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	rdb.Del(t.Context(), owner) // b dies before releasing it: the race is an orphan
	rdb.ZAdd(t.Context(), redisrace.Keys{}.Live(), redis.Z{Score: 0, Member: "R"})
	for _, c := range []*redisrace.Cluster{a, b} {
		if ok, err := c.Claim(t.Context(), "R"); ok || !errors.Is(err, fleet.ErrOver) {
			t.Errorf("%s claims a finished race: %v %v, want ErrOver", c.Instance(), ok, err)
		}
	}
	if n := rdb.Exists(t.Context(), owner).Val(); n != 0 {
		t.Error("a finished race got a lease")
	}
	if orphans, err := b.Orphans(t.Context()); err != nil || len(orphans) != 0 {
		t.Errorf("orphans after the claims: %v %v, want none", orphans, err)
	}
}

// TestRetriedResignAnsweredAfterTheRaceEnded: a player on instance b
// resigns, and the resignation that ends the race is logged on a, which
// dies before it answers; b takes the race over as over. Sent again with
// the same id, the resignation is answered: the connection cannot resume
// a finished race, so an answer by the seat's event would reach nobody.
func TestRetriedResignAnsweredAfterTheRaceEnded(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	a, b := twoInstances(t, clock)
	r, _, toks := runningOn(t, a, clock, race.Options{})
	h, err := b.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	var conn recorder
	if _, err := h.Resume(toks[1], "", "", &conn); err != nil {
		t.Fatal(err)
	}
	if err := r.Resign(0, "r0"); err != nil {
		t.Fatal(err)
	}
	if err := r.Resign(1, "last"); err != nil { // as forwarded from b
		t.Fatal(err)
	}
	a.crash(t)
	before := len(conn.Events())
	err = h.Resign(1, "last")
	if code := race.ErrorCode(err); err != nil && code != race.CodeRaceOver {
		t.Fatalf("the resignation sent again: %v, want its answer or race-over", err)
	}
	if err == nil {
		conn.waitFor(t, "moved last", func(ev race.Event) bool {
			mv, ok := ev.(*race.MovedEvent)
			return ok && mv.ID == "last" && slices.Index(conn.Events(), ev) >= before
		})
	}
}
