package redislobby_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/lobby/redislobby"
	"sirtommy/race"
	"sirtommy/race/redisrace/redistest"
)

// fixedClock is a race.Clock stopped at one time; the queue only reads Now.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }
func (c fixedClock) AfterFunc(time.Duration, func()) race.Timer {
	panic("the queue sets no timers")
}

func TestQueueJoinLeaveCounts(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := t.Context()
	q := redislobby.NewQueue(srv.Client(t), redislobby.Keys{Prefix: "q:"}, lobby.MatchConfig{}, fixedClock{time.Unix(1000, 0)})
	if err := q.Join(ctx, "a", "classic", 1500, "i1"); err != nil {
		t.Fatal(err)
	}
	var re *race.Error
	if err := q.Join(ctx, "a", "strict", 1500, "i1"); !errors.As(err, &re) || re.Code != lobby.CodeAlreadyQueued {
		t.Fatalf("joining twice: %v", err)
	}
	_ = q.Join(ctx, "b", "strict", 1500, "i2")
	if c, err := q.Counts(ctx); err != nil || c["classic"] != 1 || c["strict"] != 1 {
		t.Fatalf("counts %v, %v", c, err)
	}
	if v, ok, _ := q.Queued(ctx, "a"); !ok || v != "classic" {
		t.Fatalf("a queued in %q %v", v, ok)
	}
	if left, err := q.Leave(ctx, "a"); !left || err != nil {
		t.Fatalf("leave: %v %v", left, err)
	}
	if left, _ := q.Leave(ctx, "a"); left {
		t.Fatal("left twice")
	}
	if c, _ := q.Counts(ctx); len(c) != 1 || c["strict"] != 1 {
		t.Fatalf("counts after leaving %v", c)
	}
}

func TestQueuePairsByRatingAcrossInstances(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := t.Context()
	clock := fixedClock{time.Unix(1000, 0)}
	keys := redislobby.Keys{Prefix: "q:"}
	q1 := redislobby.NewQueue(srv.Client(t), keys, lobby.MatchConfig{}, clock)
	q2 := redislobby.NewQueue(srv.Client(t), keys, lobby.MatchConfig{}, clock)
	for _, j := range []struct {
		q      *redislobby.Queue
		p      string
		rating float64
	}{{q1, "a", 1500}, {q2, "b", 2000}, {q2, "c", 1550}, {q1, "d", 1990}} {
		if err := j.q.Join(ctx, j.p, "classic", j.rating, fmt.Sprint("inst-", j.p)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := q2.Pair(ctx, "classic")
	if err != nil || len(m) != 2 {
		t.Fatalf("pairs %+v, %v", m, err)
	}
	if m[0].A.Player != "a" || m[0].B.Player != "c" || m[0].InstanceA != "inst-a" || m[0].InstanceB != "inst-c" || m[0].Variant != "classic" {
		t.Fatalf("first pair %+v", m[0])
	}
	if m[1].A.Player != "b" || m[1].B.Player != "d" {
		t.Fatalf("second pair %+v", m[1])
	}
	if c, _ := q1.Counts(ctx); len(c) != 0 {
		t.Fatalf("counts after pairing %v", c)
	}
}

// TestQueueThreeInstancesNeverPairTwice has three instances pair one queue
// at once while players keep joining: every player is paired exactly once.
func TestQueueThreeInstancesNeverPairTwice(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := t.Context()
	// Far apart in time, so that any gap will do and everybody pairs.
	clock := fixedClock{time.Now().Add(time.Hour)}
	keys := redislobby.Keys{Prefix: "q:"}
	const instances, players = 3, 120
	qs := make([]*redislobby.Queue, instances)
	for i := range qs {
		qs[i] = redislobby.NewQueue(srv.Client(t), keys, lobby.MatchConfig{}, clock)
	}
	join := fixedClock{time.Now()}
	joiner := redislobby.NewQueue(srv.Client(t), keys, lobby.MatchConfig{}, join)
	var (
		mu     sync.Mutex
		seen   = make(map[string]int)
		wg     sync.WaitGroup
		joined = make(chan struct{})
	)
	go func() {
		defer close(joined)
		for i := range players {
			if err := joiner.Join(ctx, fmt.Sprint("p", i), "classic", 1500+float64(i%7)*40, "j"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for _, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := false
			for {
				select {
				case <-joined:
					done = true
				default:
				}
				m, err := q.Pair(ctx, "classic")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, p := range m {
					seen[p.A.Player]++
					seen[p.B.Player]++
				}
				mu.Unlock()
				if done && len(m) == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	// A last round by one instance pairs whatever the race left.
	m, err := qs[0].Pair(ctx, "classic")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m {
		seen[p.A.Player]++
		seen[p.B.Player]++
	}
	if len(seen) != players {
		t.Errorf("%d of %d players paired", len(seen), players)
	}
	for p, n := range seen {
		if n != 1 {
			t.Errorf("%s paired %d times", p, n)
		}
	}
}

// TestQueueDropsPlayersOfDeadInstances: with DropDead, a player whose
// instance stopped sharing its presence is taken out instead of paired;
// one who just joined on an instance not yet sharing is kept.
func TestQueueDropsPlayersOfDeadInstances(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := t.Context()
	keys := redislobby.Keys{Prefix: "dd:"}
	t0 := time.Unix(1000, 0)
	rdb := srv.Client(t)
	if _, err := redislobby.NewPresence(rdb, keys, "alive", fixedClock{t0}).Share(ctx, lobby.Presence{}); err != nil {
		t.Fatal(err)
	}
	join := redislobby.NewQueue(rdb, keys, lobby.MatchConfig{}, fixedClock{t0.Add(-time.Minute)})
	for _, j := range [][2]string{{"ghost", "dead"}, {"ann", "alive"}} {
		if err := join.Join(ctx, j[0], "classic", 1500, j[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := redislobby.NewQueue(rdb, keys, lobby.MatchConfig{}, fixedClock{t0}).Join(ctx, "new", "classic", 1500, "starting"); err != nil {
		t.Fatal(err)
	}
	m, err := redislobby.NewQueue(rdb, keys, lobby.MatchConfig{}, fixedClock{t0}).DropDead().Pair(ctx, "classic")
	if err != nil || len(m) != 1 || m[0].A.Player != "ann" || m[0].B.Player != "new" {
		t.Fatalf("pairs %+v, %v", m, err)
	}
	if _, ok, _ := join.Queued(ctx, "ghost"); ok {
		t.Fatal("the dead instance's player is still queued")
	}
}

// BenchmarkQueuePair1000 pairs 1,000 queued players of one variant in the
// shared queue (one pass: plan, then a claim script per pair).
func BenchmarkQueuePair1000(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	ctx := b.Context()
	clock := fixedClock{time.Unix(1000, 0)}
	q := redislobby.NewQueue(srv.Client(b), redislobby.Keys{Prefix: "b:"}, lobby.MatchConfig{}, clock)
	paired := 0
	for b.Loop() {
		b.StopTimer()
		for i := range 1000 {
			if err := q.Join(ctx, fmt.Sprint("p", i), "classic", 1500+float64(i%50), "i"); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		m, err := q.Pair(ctx, "classic")
		if err != nil {
			b.Fatal(err)
		}
		paired += 2 * len(m)
	}
	b.ReportMetric(float64(paired)/float64(b.N), "paired/op")
}
