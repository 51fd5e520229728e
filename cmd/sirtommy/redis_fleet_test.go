package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/lobby"
	"sirtommy/race/redisrace/redistest"
)

// fleetGrace is the grace period of the takeover tests: short, so that a
// player who sends nothing for longer than it would have forfeited, yet
// longer than one forwarded request may take (callTimeout, 2 s), which a
// player coming back from the instance that went needs to resume.
const fleetGrace = 3 * time.Second

// fleetRace is one race of the takeover tests, owned by the instance that
// goes away, with its players and a spectator on the one that stays.
type fleetRace struct {
	what    string
	id      string
	p       [2]*player
	onOwner [2]bool // the player's connection is on the instance that goes
	watcher *client
}

// TestRedisOwnerGoneConnectedPlayersCarriedAlong kills (or drains) the
// instance that owns several races: one in its countdown, one mid-race
// whose players are both on the survivor and send nothing, one whose
// players are on both instances (the one on the dying instance comes back
// on the survivor and plays on, the other sends nothing). A spectator on
// the survivor watches each. The survivor's connections must be told of
// the new owner without asking (a fresh joined or state), no seat whose
// connection is alive may be forfeited however long it sends nothing,
// every acknowledged move must be in the final record, and every
// connection must get the final state.
func TestRedisOwnerGoneConnectedPlayersCarriedAlong(t *testing.T) {
	rds := redistest.Start(t, redistest.Options{})
	bin := buildBinary(t)
	rdb := rds.Client(t)
	for _, how := range []string{"SIGKILL", "SIGTERM"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel() // apart by their key prefix
			prefix := "fleet-" + strings.ToLower(how) + ":"
			pg := fleetDatabase(t)
			args := []string{"--redis", rds.URL(), "--database", pg, "--redis-prefix", prefix, "--secret", testSecret, "--grace", fleetGrace.String()}
			a, proc := startProcess(t, bin, append(args, "--drain-timeout", "5s")...)
			b, logB, _, _ := startServe(t, append(args, "--drain-timeout", "100ms")...)
			defer func() {
				if t.Failed() {
					t.Logf("b:\n%s", logB)
				}
			}()
			races := []*fleetRace{
				{what: "mid-race, both players on the survivor"},
				{what: "mid-race, one player on each instance", onOwner: [2]bool{true, false}},
				{what: "ending as the owner goes"},
				{what: "in the countdown"},
			}
			for _, fr := range races {
				fr.id = createRace(t, a) // a owns them
				fr.watcher = dial(t, b)
				fr.watcher.send(map[string]any{"type": "watch", "race": fr.id})
				fr.watcher.next("watching", ofType("watching"))
				for s := range 2 {
					base := b
					if fr.onOwner[s] {
						base = a
					}
					fr.p[s] = join(t, base, fr.id, fmt.Sprint("p", s))
				}
				if fr.what == "in the countdown" {
					for _, p := range fr.p {
						p.c.next("countdown", func(m msg) bool { return m.str("type") == "state" && m.str("state") == "countdown" })
					}
					continue
				}
				for _, p := range fr.p {
					p.c.next("running", func(m msg) bool { return m.str("type") == "state" && m.str("state") == "running" })
				}
				for range 4 {
					fr.p[0].move()
					fr.p[1].move()
				}
				if fr.what == "ending as the owner goes" {
					fr.p[0].resign() // the race ends when seat 1 resigns too
				}
			}
			// The last race made is in its countdown (3 s) when a goes.
			owners := make(map[string]string)
			for _, fr := range races {
				owners[fr.id] = rdb.Get(t.Context(), prefix+"{race:"+fr.id+"}:owner").Val()
				for _, c := range fr.conns() {
					c.drain()
				}
			}
			sig := syscall.SIGKILL
			if how == "SIGTERM" {
				sig = syscall.SIGTERM
			}
			// The last resignation of a race goes to a as a is signalled.
			ending := races[2]
			ending.p[1].c.send(map[string]any{"type": "resign", "id": "last"})
			if err := proc.Signal(sig); err != nil {
				t.Fatal(err)
			}
			ending.p[1].resignAs("last")
			// The players on a come back on b at once.
			for _, fr := range races {
				for s, p := range fr.p {
					if fr.onOwner[s] {
						p.reconnect(t, b)
						p.resume(t)
					}
				}
			}
			// The survivor takes every live race over (the one ending may
			// have ended on a).
			for _, fr := range races {
				if fr == ending {
					continue
				}
				waitFor(t, "race "+fr.what+" taken over", func() bool {
					o := rdb.Get(t.Context(), prefix+"{race:"+fr.id+"}:owner").Val()
					return o != "" && o != owners[fr.id]
				})
			}
			// Nobody sends anything for longer than the grace period.
			time.Sleep(2 * fleetGrace)
			for _, fr := range races {
				if fr == ending {
					continue
				}
				if res, err := rdb.Get(t.Context(), prefix+"{race:"+fr.id+"}:result").Result(); err != redis.Nil {
					t.Fatalf("race %s ended while its players were connected: %s (%v)", fr.what, res, err)
				}
			}
			// Every connection on b heard of the new owner without asking.
			for _, fr := range races {
				if fr == ending {
					continue // over: its connections get the final state below
				}
				for s, p := range fr.p {
					if !fr.onOwner[s] {
						j := p.c.next("a fresh joined after the takeover ("+fr.what+")", ofType("joined"))
						p.token = j.str("token")
					}
					st := p.c.next("a fresh state after the takeover ("+fr.what+")", ofType("state"))
					if st.str("state") != "running" {
						p.c.next("running ("+fr.what+")", func(m msg) bool { return m.str("type") == "state" && m.str("state") == "running" })
					}
				}
				fr.watcher.next("a fresh state for the spectator ("+fr.what+")", ofType("state"))
			}
			for _, fr := range races {
				for fr != ending && (fr.p[0].move() || fr.p[1].move()) {
				}
			}
			for _, fr := range races {
				var first string
				for _, c := range fr.conns() {
					r := c.result()
					if strings.Contains(r, "forfeit") {
						t.Errorf("race %s: a connected player forfeited: %s", fr.what, r)
					}
					if first == "" {
						first = r
					} else if r != first {
						t.Errorf("race %s: results differ:\n%s\n%s", fr.what, first, r)
					}
				}
				n, err := rdb.XLen(t.Context(), prefix+"{race:"+fr.id+"}:log").Result()
				want := int64(fr.p[0].game.Plies() + fr.p[1].game.Plies())
				if fr == ending {
					want += 2 // the resignations
				}
				if err != nil || n != want {
					t.Errorf("race %s: the log holds %d moves (%v), want the %d acknowledged", fr.what, n, err, want)
				}
			}
		})
	}
}

// resign resigns the player's game and waits for its acknowledgement.
func (p *player) resign() {
	p.c.t.Helper()
	p.n++
	id := fmt.Sprint("r", p.n)
	p.c.send(map[string]any{"type": "resign", "id": id})
	p.resignAs(id)
}

// resignAs waits for the answer to the resignation sent with id, sending
// it again with the same id while the server answers unavailable; a
// race-over answer means it ended meanwhile (the resignation stored, its
// answer lost with its instance).
func (p *player) resignAs(id string) {
	p.c.t.Helper()
	for {
		r := p.c.next("answer to "+id, func(x msg) bool { return x.str("id") == id })
		if r.str("type") == "moved" || r.str("code") == "race-over" {
			p.game.Resign()
			return
		}
		if r.str("code") != "unavailable" {
			p.c.t.Fatalf("resign %s refused: %v", id, r)
		}
		time.Sleep(50 * time.Millisecond)
		p.c.send(map[string]any{"type": "resign", "id": id})
	}
}

// conns are the race's connections: both players' and the spectator's.
func (fr *fleetRace) conns() []*client { return []*client{fr.p[0].c, fr.p[1].c, fr.watcher} }

// drain drops the messages received so far.
func (c *client) drain() {
	for {
		select {
		case <-c.in:
		default:
			return
		}
	}
}

// resume takes the player's seat back on its connection, trying again
// while the race is being taken over.
func (p *player) resume(t testing.TB) {
	t.Helper()
	for i := 0; ; i++ {
		id := fmt.Sprint("back", i)
		p.c.send(map[string]any{"type": "resume", "race": p.race, "token": p.token, "id": id})
		r := p.c.next("resume answer", func(m msg) bool { return m.str("id") == id })
		if r.str("type") == "joined" {
			p.token = r.str("token") // a resume spends the token it was given
			return
		}
		if r.str("code") != "unavailable" {
			b, _ := json.Marshal(r)
			t.Fatalf("resume: %s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitFor waits, with a generous bound, until ok.
func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * safetyTimeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRedisClusterTwoInstancesOneRace plays a race across two servers on
// a real three-node Redis Cluster (--redis with several seed nodes): a
// player and a spectator on each side of the race's owner, then a
// takeover when the owner stops.
func TestRedisClusterTwoInstancesOneRace(t *testing.T) {
	cl := redistest.StartCluster(t)
	pg := fleetDatabase(t)
	args := []string{"--redis", cl.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms"}
	a, logA, stopA, doneA := startServe(t, args...)
	b, logB, _, _ := startServe(t, args...)
	defer func() {
		if t.Failed() {
			t.Logf("a:\n%s\nb:\n%s", logA, logB)
		}
	}()
	for _, base := range []string{a, b} {
		if code := readyz(t, base); code != 200 {
			t.Fatalf("%s/readyz on a cluster: %d", base, code)
		}
	}
	id, p0, p1 := raceAcross(t, a, b)
	watcher := dial(t, b)
	watcher.send(map[string]any{"type": "watch", "race": id})
	watcher.next("watching", ofType("watching"))
	for range 4 {
		p0.move()
		p1.move()
	}
	watcher.next("a board from instance a", ofType("board"))
	checkRaceChannelsSharded(t, cl, id)
	// a drains: b takes the race over; the player on b and the spectator
	// are carried along, the player on a comes back on b.
	stopA()
	if err := <-doneA; err != nil {
		t.Fatalf("a stopped with %v", err)
	}
	p1.c.next("a fresh joined on b", ofType("joined"))
	p0.reconnect(t, b)
	p0.resume(t)
	for p0.move() || p1.move() {
	}
	r0, r1, rw := p0.c.result(), p1.c.result(), watcher.result()
	if r0 != r1 || rw != r0 {
		t.Errorf("results differ:\n%s\n%s\n%s", r0, r1, rw)
	}
	rdb := cl.Client(t)
	n, err := rdb.XLen(t.Context(), "sirtommy:{race:"+id+"}:log").Result()
	if want := int64(p0.game.Plies() + p1.game.Plies()); err != nil || n != want {
		t.Errorf("the log holds %d moves (%v), want the %d acknowledged", n, err, want)
	}
}

// TestRedisClusterOwnerKilled: on a real three-node Redis Cluster the
// instance that owns a race is killed with SIGKILL mid-race. Its
// player on the survivor and a spectator there send nothing: with no
// receiver count to tell (it is one node's on a cluster), the survivor
// takes the race over when the owner's lease runs out and both get a
// fresh state without asking; the idle player is not forfeited past the
// grace period, and
// every acknowledged move is in the log at the end.
func TestRedisClusterOwnerKilled(t *testing.T) {
	cl := redistest.StartCluster(t)
	rc := ownerWithIdleSurvivors(t, cl.URL(), "6s")
	p0, p1, watcher, proc := rc.p0, rc.p1, rc.watcher, rc.proc
	if err := proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// p1 and the spectator say nothing; b adopts the race once a's
	// lease (3 s) runs out and attaches them to it.
	p1.c.next("a fresh joined from the new owner", ofType("joined"))
	p1.c.next("its state", ofType("state"))
	watcher.next("a spectator's state from the new owner", ofType("state"))
	// p0, whose instance died, comes back within the grace period; p1
	// then stays idle past it: the new owner armed both seats' grace when
	// it rebuilt the race, and p1's stopped when b attached it.
	p0.reconnect(t, rc.b)
	p0.resume(t)
	time.Sleep(7 * time.Second)
	rc.playOut(t, cl.Client(t))
}

// checkRaceChannelsSharded checks that b's subscriptions to race id's
// channels (the seat of its player, the spectators') and both instances'
// inboxes (where forwarded requests and their replies go) are sharded
// pub/sub on the one node serving their slot, and that no plain pub/sub
// channel is subscribed on any node: a plain PUBLISH goes to every node of
// a Redis Cluster. (On the code before, the inboxes were plain channels.)
func checkRaceChannelsSharded(t *testing.T, cl *redistest.Cluster, id string) {
	t.Helper()
	var mu sync.Mutex
	var sharded, inboxes, plain []string
	err := cl.Client(t).ForEachMaster(t.Context(), func(ctx context.Context, node *redis.Client) error {
		s, err := node.PubSubShardChannels(ctx, "*"+id+"*").Result()
		if err != nil {
			return err
		}
		in, err := node.PubSubShardChannels(ctx, "*:instance:*").Result()
		if err != nil {
			return err
		}
		p, err := node.PubSubChannels(ctx, "*").Result()
		mu.Lock()
		defer mu.Unlock()
		sharded, inboxes, plain = append(sharded, s...), append(inboxes, in...), append(plain, p...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sharded) < 2 || len(inboxes) < 2 || len(plain) != 0 {
		t.Errorf("race %s: sharded channels %v (want a seat's and the spectators'), inboxes %v (want both instances'), plain channels %v (want none)", id, sharded, inboxes, plain)
	}
}

// TestRedisClusterLobbyAcrossInstances: two servers on a real three-node
// Redis Cluster, ann's websocket on one and bob's on the other. Each
// accepts the other's invite, several times over, and a challenge: the
// acceptance must find the author connected (their presence key,
// whichever node is asked) and the author must get matched on their own
// instance, and play. On the code that asked PUBSUB NUMSUB of whichever
// node go-redis picked, an acceptance was refused with inviter-away.
func TestRedisClusterLobbyAcrossInstances(t *testing.T) {
	cl := redistest.StartCluster(t)
	pg := fleetDatabase(t)
	args := []string{"--redis", cl.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms"}
	a, logA, _, _ := startServe(t, args...)
	b, logB, _, _ := startServe(t, args...)
	defer func() {
		if t.Failed() {
			t.Logf("a:\n%s\nb:\n%s", logA, logB)
		}
	}()
	ann, bob := hello(t, a, "ann"), hello(t, b, "bob")
	play := func(via string, author, taker *lobbyClient) {
		t.Helper()
		ma, mt := author.takeSeat(via), taker.takeSeat(via)
		if ma.str("race") != mt.str("race") {
			t.Fatalf("matched %v / %v", ma, mt)
		}
		for _, c := range []*lobbyClient{author, taker} {
			c.running()
			c.request(map[string]any{"type": "resign"}, "moved")
		}
		if ra, rt := author.result(), taker.result(); ra != rt {
			t.Fatalf("results differ:\n%s\n%s", ra, rt)
		}
	}
	for i := range 4 {
		author, taker := ann, bob
		if i%2 == 1 {
			author, taker = bob, ann
		}
		inv := author.request(map[string]any{"type": "invite"}, "invited")
		taker.accept(map[string]any{"type": "accept-invite", "code": inv.str("code")})
		play("invite", author, taker)
	}
	ch := bob.request(map[string]any{"type": "challenge", "variant": "classic"}, "challenged")
	chID, _ := ch["challenge"].(map[string]any)["id"].(string)
	until(t, a, "bob's challenge", func(ev lobby.LobbyEvent) bool {
		return len(ev.Challenges) == 1 && ev.Challenges[0].ID == chID
	})
	ann.accept(map[string]any{"type": "accept-challenge", "challenge": chID})
	play("challenge", bob, ann)
}
