package redislobby_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/memlobby"
	"sirtommy/lobby/redislobby"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestCourierReachesOtherInstances(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	courierReaches(t, func() redis.UniversalClient { return srv.Client(t) })
}

// TestCourierReachesOtherInstancesOnCluster is the same on a real
// three-node Redis Cluster, where a count of subscribers is one node's:
// whether a player is connected comes from their presence key.
func TestCourierReachesOtherInstancesOnCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	courierReaches(t, func() redis.UniversalClient { return cl.Client(t) })
}

// courierReaches: a notice sent on instance A reaches the player's
// session on instance B, each instance on its own client; A knows
// whether B holds the player; a change of the challenges is heard.
func courierReaches(t *testing.T, client func() redis.UniversalClient) {
	ctx := t.Context()
	keys := redislobby.Keys{Prefix: "c:"}
	a, err := redislobby.NewCourier(ctx, client(), keys, "A", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	b, err := redislobby.NewCourier(ctx, client(), keys, "B", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan lobby.Notice, 4)
	changed := make(chan struct{}, 4)
	a.Start(func(n lobby.Notice) { t.Errorf("A got its own notice %+v", n) }, func() { t.Error("A heard its own change") })
	b.Start(func(n lobby.Notice) { got <- n }, func() { changed <- struct{}{} })
	defer func() {
		if err := errorsJoin(a.Close(), b.Close()); err != nil {
			t.Error(err)
		}
	}()
	if ok, err := a.Listening(ctx, "ann"); ok || err != nil {
		t.Fatalf("ann listened for before anyone listens: %v %v", ok, err)
	}
	if err := b.Listen(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B's subscription", func() bool { ok, _ := a.Listening(ctx, "ann"); return ok })
	if ok, _ := b.Listening(ctx, "ann"); ok {
		t.Fatal("B counts itself as another instance")
	}
	// Every answer counts, not one in a few: on a cluster each call may
	// go to another node.
	for i := range 12 {
		if ok, err := a.Listening(ctx, "ann"); !ok || err != nil {
			t.Fatalf("asking A whether ann is connected, time %d: %v %v", i, ok, err)
		}
		n := lobby.Notice{Player: "ann", To: lobby.ToQueued, Matched: &lobby.MatchedEvent{Race: fmt.Sprint("R", i), Seat: 1, Via: "quick"}}
		if reached, err := a.Send(ctx, n); !reached || err != nil {
			t.Fatalf("send %d: %v %v", i, reached, err)
		}
		select {
		case m := <-got:
			if m.Player != "ann" || m.Matched == nil || m.Matched.Race != n.Matched.Race || m.Matched.Seat != 1 {
				t.Fatalf("got %+v", m)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("B got nothing")
		}
	}
	n := lobby.Notice{Player: "ann", To: lobby.ToQueued, Matched: &lobby.MatchedEvent{Race: "R", Seat: 1, Via: "quick"}}
	if err := a.Changed(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("B did not hear of A's change")
	}
	if err := b.Unlisten(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B's unsubscription", func() bool { ok, _ := a.Listening(ctx, "ann"); return !ok })
	if reached, _ := a.Send(ctx, n); reached {
		t.Fatal("reached ann after B stopped listening")
	}
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestChallengeDiesWithItsInstance: a challenge nobody keeps (its
// instance died) leaves the list after ChallengeTTL, and its author may
// open another.
func TestChallengeDiesWithItsInstance(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := t.Context()
	keys := redislobby.Keys{Prefix: "d:"}
	t0 := time.Unix(1_000_000, 0)
	c := redislobby.NewChallenges(srv.Client(t), keys, fixedClock{t0})
	ch := lobby.ChallengeInfo{ID: "C1", Player: "ann", Variant: "classic"}
	if err := c.Open(ctx, ch); err != nil {
		t.Fatal(err)
	}
	kept := redislobby.NewChallenges(srv.Client(t), keys, fixedClock{t0.Add(redislobby.ChallengeTTL / 2)})
	if err := kept.Keep(ctx, []string{"C1"}); err != nil {
		t.Fatal(err)
	}
	// Kept at TTL/2: still open at TTL + TTL/4.
	if l, _ := redislobby.NewChallenges(srv.Client(t), keys, fixedClock{t0.Add(redislobby.ChallengeTTL * 5 / 4)}).List(ctx); len(l) != 1 {
		t.Fatalf("a kept challenge expired: %+v", l)
	}
	late := redislobby.NewChallenges(srv.Client(t), keys, fixedClock{t0.Add(2 * redislobby.ChallengeTTL)})
	if _, ok, _ := late.Get(ctx, "C1"); ok {
		t.Fatal("an expired challenge found")
	}
	if l, err := late.List(ctx); err != nil || len(l) != 0 {
		t.Fatalf("list %+v %v", l, err)
	}
	if _, ok, _ := late.Take(ctx, "C1"); ok {
		t.Fatal("an expired challenge taken")
	}
	if err := late.Open(ctx, lobby.ChallengeInfo{ID: "C2", Player: "ann"}); err != nil {
		t.Fatalf("ann's next challenge: %v", err)
	}
}

func TestInviteExpires(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := t.Context()
	inv := redislobby.NewInvites(srv.Client(t), redislobby.Keys{Prefix: "i:"})
	if err := inv.Put(ctx, lobby.Invite{Code: "X"}, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the invite to expire", func() bool { _, ok, _ := inv.Get(ctx, "X"); return !ok })
	if ok, _ := inv.Take(ctx, "X"); ok {
		t.Fatal("an expired invite used")
	}
}

func TestRaceListShared(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := t.Context()
	keys := redislobby.Keys{Prefix: "r:"}
	t0 := time.Unix(1000, 0)
	a := redislobby.NewPresence(srv.Client(t), keys, "a", fixedClock{t0})
	b := redislobby.NewPresence(srv.Client(t), keys, "b", fixedClock{t0})
	ra := lobby.ListedRace{RaceSummary: lobby.RaceSummary{Race: "RA", Variant: "classic", State: race.Running}, Created: t0.UTC()}
	if o, err := a.ShareRaces(ctx, []lobby.ListedRace{ra}); err != nil || len(o) != 0 {
		t.Fatalf("alone: %+v %v", o, err)
	}
	o, err := b.ShareRaces(ctx, nil)
	if err != nil || len(o) != 1 || o[0].Race != "RA" || !o[0].Created.Equal(t0) {
		t.Fatalf("b sees %+v, %v", o, err)
	}
	late := redislobby.NewPresence(srv.Client(t), keys, "b", fixedClock{t0.Add(redislobby.PresenceTTL + time.Second)})
	if o, _ := late.ShareRaces(ctx, nil); len(o) != 0 {
		t.Fatalf("a's races listed after its TTL: %+v", o)
	}
	if err := b.Forget(ctx); err != nil {
		t.Fatal(err)
	}
}

// instance is one lobby of a multi-instance test, on its own Redis
// client.
type instance struct {
	lobby   *lobby.Lobby
	courier *redislobby.Courier
}

// lobbies makes n lobbies sharing one Redis (and, to keep the test
// about the lobby, one in-memory race service).
func lobbies(t *testing.T, n int) ([]*instance, *race.Service) {
	ls, races, _ := lobbiesOnClock(t, n)
	return ls, races
}

// firstMove is a computer player that plays the first legal move.
type firstMove struct{}

func (firstMove) Choose(_ *engine.View, legal []engine.Move) (engine.Move, bool) {
	if len(legal) == 0 {
		return engine.Move{}, false
	}
	return legal[0], true
}

// lobbiesOnClock is lobbies with the fake clock that runs their
// heartbeats, and a computer player.
func lobbiesOnClock(t *testing.T, n int) ([]*instance, *race.Service, *racetest.Clock) {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	clock := racetest.NewClock(time.Unix(1_000_000, 0))
	ls, races := lobbiesOn(t, n, clock, func() redis.UniversalClient { return srv.Client(t) })
	return ls, races, clock
}

// lobbiesOn makes n lobbies on the clock, each on its own client of one
// shared Redis (or Redis Cluster).
func lobbiesOn(t *testing.T, n int, clock race.Clock, client func() redis.UniversalClient) ([]*instance, *race.Service) {
	t.Helper()
	races := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	tokens, err := lobby.NewTokens([]byte("a test secret of at least thirty-two bytes"), clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	keys := redislobby.Keys{Prefix: "l:"}
	ratings := memlobby.NewRatings()
	out := make([]*instance, n)
	for i := range out {
		rdb := client()
		id := fmt.Sprint("inst", i)
		c, err := redislobby.NewCourier(t.Context(), rdb, keys, id, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		out[i] = &instance{courier: c, lobby: lobby.New(lobby.Config{}, lobby.Deps{
			Clock: clock, Log: zerolog.Nop(), Races: races, Tokens: tokens,
			Stores:   storesOn(rdb, keys, id, clock, c, ratings),
			Computer: func(string, uint64) (race.Player, error) { return firstMove{}, nil },
		})}
		t.Cleanup(func() {
			out[i].lobby.Close()
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	return out, races
}

func storesOn(rdb redis.UniversalClient, keys redislobby.Keys, id string, clock race.Clock, c *redislobby.Courier, ratings lobby.Ratings) lobby.Stores {
	return lobby.Stores{
		Ratings:    ratings,
		Queue:      redislobby.NewQueue(rdb, keys, lobby.MatchConfig{}, clock).For(id),
		Challenges: redislobby.NewChallenges(rdb, keys, clock),
		Invites:    redislobby.NewInvites(rdb, keys),
		Seats:      redislobby.NewSeats(rdb, keys),
		Courier:    c,
		Ghosts:     memlobby.NewGhosts(),
		Dailies:    memlobby.NewDailies(),
		Rooms:      redislobby.NewRooms(rdb, keys),
		Arenas:     memlobby.NewArenas(),
	}
}

// player is a session with what it received.
type player struct {
	s   *lobby.Session
	w   lobby.Welcome
	rec *racetest.Recorder
}

func enter(t *testing.T, l *lobby.Lobby, name string) *player {
	t.Helper()
	rec := &racetest.Recorder{}
	s, w, err := l.Enter("", name, rec)
	if err != nil {
		t.Fatal(err)
	}
	return &player{s: s, w: w, rec: rec}
}

func (p *player) matched() []*lobby.MatchedEvent {
	var out []*lobby.MatchedEvent
	for _, ev := range p.rec.Events() {
		if m, ok := ev.(*lobby.MatchedEvent); ok {
			out = append(out, m)
		}
	}
	return out
}

// waitMatched waits for the player's matched event of a kind (via).
func (p *player) waitMatched(t *testing.T, via string) *lobby.MatchedEvent {
	t.Helper()
	return p.waitMatchedN(t, via, 1)
}

// waitMatchedN waits for the player's nth matched event of a kind (via).
func (p *player) waitMatchedN(t *testing.T, via string, nth int) *lobby.MatchedEvent {
	t.Helper()
	var got *lobby.MatchedEvent
	waitFor(t, fmt.Sprintf("%s's matched event %d via %s", p.w.Name, nth, via), func() bool {
		n := 0
		for _, m := range p.matched() {
			if m.Via == via {
				if n++; n == nth {
					got = m
					return true
				}
			}
		}
		return false
	})
	return got
}

// TestLobbiesPairAcrossInstances: quick play, a challenge and an invite,
// each between players on different instances; each player takes their
// reserved seat through their own instance.
func TestLobbiesPairAcrossInstances(t *testing.T) {
	ls, races := lobbies(t, 3)
	ann, bob := enter(t, ls[0].lobby, "ann"), enter(t, ls[1].lobby, "bob")
	for _, p := range []*player{ann, bob} {
		if _, err := p.s.Queue("classic"); err != nil {
			t.Fatal(err)
		}
	}
	ma, mb := ann.waitMatched(t, "quick"), bob.waitMatched(t, "quick")
	if ma.Race != mb.Race || ma.Seat == mb.Seat || ma.Opponent.Name != "bob" || mb.Opponent.Name != "ann" || ma.Via != "quick" {
		t.Fatalf("matched %+v / %+v", ma, mb)
	}
	for i, p := range []*player{ann, bob} {
		_, tok, err := ls[i].lobby.AuthorizeSeat(p.w.Token, ma.Race, "")
		if err != nil || tok == "" {
			t.Fatalf("%s's seat on their instance: %q %v", p.w.Name, tok, err)
		}
	}
	cat := enter(t, ls[2].lobby, "cat")
	if _, _, err := ls[2].lobby.AuthorizeSeat(cat.w.Token, ma.Race, ""); race.ErrorCode(err) != lobby.CodeNotYourSeat {
		t.Fatalf("cat took a reserved seat: %v", err)
	}
	if _, err := ann.s.Queue("classic"); race.ErrorCode(err) != lobby.CodeInRace {
		t.Fatalf("ann queued while racing: %v", err)
	}
	rc, _ := races.Get(ma.Race)
	rc.Abort("test")
	waitFor(t, "ann to be free", func() bool {
		_, err := ann.s.Queue("classic")
		return err == nil
	})
	if err := ann.s.Unqueue(); err != nil {
		t.Fatal(err)
	}

	// A challenge on instance 2, seen on instance 0 and accepted there.
	ch, err := cat.s.Challenge(lobby.RaceOptions{Choice: race.Choice{Variant: "classic"}})
	if err != nil {
		t.Fatal(err)
	}
	if snap := ls[0].lobby.Snapshot(); len(snap.Challenges) != 1 || snap.Challenges[0].ID != ch.ID {
		t.Fatalf("instance 0 lists %+v", snap.Challenges)
	}
	// Pushed to ann's session on instance 0 at once (the fake clock runs
	// no heartbeat): the courier carried the change.
	waitFor(t, "the challenge pushed to instance 0", func() bool {
		for _, ev := range ann.rec.Events() {
			if le, ok := ev.(*lobby.LobbyEvent); ok && len(le.Challenges) == 1 && le.Challenges[0].ID == ch.ID {
				return true
			}
		}
		return false
	})
	dan := enter(t, ls[1].lobby, "dan")
	errs := make(chan error, 2)
	for _, p := range []*player{ann, dan} { // two instances accept at once
		go func() { errs <- p.s.AcceptChallenge(ch.ID) }()
	}
	e1, e2 := <-errs, <-errs
	if (e1 == nil) == (e2 == nil) {
		t.Fatalf("accepted by both or neither: %v, %v", e1, e2)
	}
	mc := cat.waitMatched(t, "challenge")
	if mc.Via != "challenge" || mc.Challenge != ch.ID {
		t.Fatalf("cat matched %+v", mc)
	}
	if snap := ls[1].lobby.Snapshot(); len(snap.Challenges) != 0 {
		t.Fatalf("taken challenge still listed %+v", snap.Challenges)
	}
	rc, _ = races.Get(mc.Race)
	rc.Abort("test")

	// An invite made on instance 1, accepted on instance 2, once.
	eve := enter(t, ls[2].lobby, "eve")
	inv, err := dan.s.Invite(lobby.RaceOptions{Choice: race.Choice{Deal: "7"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := eve.s.AcceptInvite(inv.Code); err != nil {
		t.Fatal(err)
	}
	md := dan.waitMatched(t, "invite")
	me := eve.waitMatched(t, "invite")
	if md.Via != "invite" || md.Race != me.Race || md.Invite != inv.Code {
		t.Fatalf("invite matched %+v / %+v", md, me)
	}
	if err := cat.s.AcceptInvite(inv.Code); race.ErrorCode(err) != lobby.CodeNoSuchInvite {
		t.Fatalf("invite used twice: %v", err)
	}
	// An invite whose author has no session anywhere.
	fay := enter(t, ls[0].lobby, "fay")
	inv2, _ := fay.s.Invite(lobby.RaceOptions{})
	fay.s.Leave()
	if err := cat.s.AcceptInvite(inv2.Code); race.ErrorCode(err) != lobby.CodeInviterAway {
		t.Fatalf("accepting an absent author's invite: %v", err)
	}
}

// TestThreeLobbiesNeverPairTwice has players on three instances queue at
// once: nobody gets two matched events or two seats.
func TestThreeLobbiesNeverPairTwice(t *testing.T) {
	ls, _ := lobbies(t, 3)
	const n = 30
	ps := make([]*player, n)
	for i := range ps {
		ps[i] = enter(t, ls[i%3].lobby, fmt.Sprint("p", i))
	}
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.s.Queue("classic"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, p := range ps {
		p.waitMatched(t, "quick")
	}
	time.Sleep(50 * time.Millisecond) // a second matched event would come by now
	seats := make(map[string]string)
	for _, p := range ps {
		ms := p.matched()
		if len(ms) != 1 {
			t.Fatalf("%s matched %d times", p.w.Name, len(ms))
		}
		key := fmt.Sprint(ms[0].Race, "/", ms[0].Seat)
		if o, ok := seats[key]; ok {
			t.Fatalf("seat %s given to %s and %s", key, o, p.w.Name)
		}
		seats[key] = p.w.Name
	}
}

// TestComputerOfferWithSharedQueue: a player offered the computer who
// accepts just as someone on another instance queues is raced either by
// the computer or by that player, never both.
func TestComputerOfferWithSharedQueue(t *testing.T) {
	ls, _, clock := lobbiesOnClock(t, 2)
	for i := range 8 {
		ann := enter(t, ls[0].lobby, fmt.Sprint("ann", i))
		bob := enter(t, ls[1].lobby, fmt.Sprint("bob", i))
		if _, err := ann.s.Queue("classic"); err != nil {
			t.Fatal(err)
		}
		clock.Advance(lobby.DefaultComputerOfferAfter + time.Second)
		offered := false
		for _, ev := range ann.rec.Events() {
			_, ok := ev.(*lobby.OfferEvent)
			offered = offered || ok
		}
		if !offered {
			t.Fatal("ann was not offered the computer")
		}
		errs := make(chan error, 1)
		go func() { errs <- ann.s.PlayComputer() }()
		if _, err := bob.s.Queue("classic"); err != nil {
			t.Fatal(err)
		}
		err := <-errs
		if err == nil {
			ann.waitMatched(t, "computer")
			if err := bob.s.Unqueue(); err != nil {
				t.Fatalf("bob, alone, not in the queue: %v", err)
			}
		} else {
			if race.ErrorCode(err) != lobby.CodeNotQueued {
				t.Fatal(err)
			}
			ann.waitMatched(t, "quick")
			bob.waitMatched(t, "quick")
		}
		time.Sleep(20 * time.Millisecond) // a second matched event would come by now
		if n := len(ann.matched()); n != 1 {
			t.Fatalf("round %d: ann matched %d times", i, n)
		}
	}
}

// TestMassRaceStartsOnceAcrossInstances: three lobbies on one Redis, six
// players joining the classic mass race from all three: when its
// countdown ends every lobby's heartbeat finds it due, and exactly one
// race is made, of all six, each told once.
func TestMassRaceStartsOnceAcrossInstances(t *testing.T) {
	ls, races, clock := lobbiesOnClock(t, 3)
	var ps []*player
	for i := range 6 {
		p := enter(t, ls[i%3].lobby, fmt.Sprint("m", i))
		if _, err := p.s.JoinMass("classic"); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	clock.Advance(lobby.MassWait + 2*time.Second) // every lobby's heartbeat beats meanwhile
	var id string
	for _, p := range ps {
		m := p.waitMatched(t, "mass")
		if id == "" {
			id = m.Race
		}
		if m.Race != id || len(m.Players) != 6 {
			t.Fatalf("%s matched %+v, want race %s of six", p.w.Name, m, id)
		}
	}
	clock.Advance(2 * time.Second)
	for _, p := range ps {
		if n := len(p.matched()); n != 1 {
			t.Errorf("%s was matched %d times", p.w.Name, n)
		}
	}
	if n := len(races.Races()); n != 1 {
		t.Errorf("%d races made, want one", n)
	}
}
