package redislobby_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/redislobby"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// TestRedisClusterConformance runs the lobby's conformance suites (the
// shared stores, the ratings) against a real three-node Redis Cluster:
// every script's keys must share a slot.
func TestRedisClusterConformance(t *testing.T) {
	cl := redistest.StartCluster(t)
	t.Run("shared", func(t *testing.T) {
		lobbytest.SharedSuite(t, sharedStores("c", func(t *testing.T) redis.UniversalClient { return cl.Client(t) }))
	})
}

// TestLobbiesAcrossInstancesOnCluster: two lobbies on a real three-node
// Redis Cluster, ann on one and bob on the other. Each accepts the
// other's invites and challenges, several times over: every acceptance
// must find the author connected (their presence, whichever node is
// asked) and tell them on their instance. On the code that asked
// PUBSUB NUMSUB of whichever node go-redis picked, most acceptances were
// refused with inviter-away.
func TestLobbiesAcrossInstancesOnCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	clock := racetest.NewClock(time.Unix(1_000_000, 0))
	ls, races := lobbiesOn(t, 2, clock, func() redis.UniversalClient { return cl.Client(t) })
	ann, bob := enter(t, ls[0].lobby, "ann"), enter(t, ls[1].lobby, "bob")
	end := func(id string) {
		t.Helper()
		rc, err := races.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		rc.Abort("test")
	}
	for i := range 6 {
		author, taker := ann, bob
		if i%2 == 1 {
			author, taker = bob, ann
		}
		inv, err := author.s.Invite(lobby.RaceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := taker.s.AcceptInvite(inv.Code); err != nil {
			t.Fatalf("round %d: %s accepting %s's invite: %v", i, taker.w.Name, author.w.Name, err)
		}
		ma := author.waitMatchedN(t, "invite", i+1)
		mt := taker.waitMatchedN(t, "invite", i+1)
		if ma.Race != mt.Race || ma.Invite != inv.Code {
			t.Fatalf("round %d: matched %+v / %+v", i, ma, mt)
		}
		end(ma.Race)

		ch, err := author.s.Challenge(lobby.RaceOptions{Choice: race.Choice{Variant: "classic"}})
		for race.ErrorCode(err) == lobby.CodeInRace { // until the end above frees them
			time.Sleep(5 * time.Millisecond)
			ch, err = author.s.Challenge(lobby.RaceOptions{Choice: race.Choice{Variant: "classic"}})
		}
		if err != nil {
			t.Fatal(err)
		}
		err = taker.s.AcceptChallenge(ch.ID)
		for race.ErrorCode(err) == lobby.CodeInRace {
			time.Sleep(5 * time.Millisecond)
			err = taker.s.AcceptChallenge(ch.ID)
		}
		if err != nil {
			t.Fatalf("round %d: %s accepting %s's challenge: %v", i, taker.w.Name, author.w.Name, err)
		}
		mc := author.waitMatchedN(t, "challenge", i+1)
		if mc.Challenge != ch.ID {
			t.Fatalf("round %d: %s matched %+v", i, author.w.Name, mc)
		}
		end(mc.Race)
	}
	// Gone from everywhere: away, whichever node is asked.
	inv, err := ann.s.Invite(lobby.RaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ann.s.Leave()
	for range 6 {
		if err := bob.s.AcceptInvite(inv.Code); race.ErrorCode(err) != lobby.CodeInviterAway {
			t.Fatalf("accepting the invite of ann, who left: %v", err)
		}
	}
}

// TestCourierFollowsReshardedLobbySlot: the lobby's slot moves to another
// node (a resharding) while an instance listens for a player: Redis ends
// the sharded subscriptions of that slot, and the courier must subscribe
// again where the slot now is, so that notices still reach the player.
func TestCourierFollowsReshardedLobbySlot(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := t.Context()
	keys := redislobby.Keys{Prefix: "m:"}
	a, err := redislobby.NewCourier(ctx, cl.Client(t), keys, "A", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	b, err := redislobby.NewCourier(ctx, cl.Client(t), keys, "B", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan lobby.Notice, 16)
	changed := make(chan struct{}, 16)
	a.Start(func(lobby.Notice) {}, func() {})
	b.Start(func(n lobby.Notice) { got <- n }, func() { changed <- struct{}{} })
	defer func() {
		if err := errorsJoin(a.Close(), b.Close()); err != nil {
			t.Error(err)
		}
	}()
	if err := b.Listen(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	send := func(race string) {
		t.Helper()
		n := lobby.Notice{Player: "ann", To: lobby.ToAll, Matched: &lobby.MatchedEvent{Race: race}}
		if reached, err := a.Send(ctx, n); !reached || err != nil {
			t.Fatalf("send %s: %v %v", race, reached, err)
		}
		select {
		case m := <-got:
			if m.Matched.Race != race {
				t.Fatalf("got %+v, want race %s", m, race)
			}
		case <-time.After(10 * time.Second): // a hang bound
			t.Fatalf("notice %s never came", race)
		}
	}
	send("before")
	cl.MoveSlot(t, keys.PlayerChannel("ann"))
	// The first notices may go while B subscribes again: what counts is
	// that B hears again, on the node the slot moved to.
	waitFor(t, "B subscribed where the slot went", func() bool {
		n := lobby.Notice{Player: "ann", To: lobby.ToAll, Matched: &lobby.MatchedEvent{Race: "probe"}}
		if _, err := a.Send(ctx, n); err != nil {
			return false
		}
		select {
		case <-got:
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	})
	for len(got) > 0 {
		<-got
	}
	send("after")
	if err := a.Changed(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("B did not hear of A's change after the resharding")
	}
}
