package redislobby_test

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/lobby/memlobby"
	"sirtommy/lobby/redislobby"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// holdProxy forwards TCP connections to a Redis, and holds every byte
// in both directions while paused: to its clients, a Redis that stopped
// answering (as one SIGSTOPped does).
type holdProxy struct {
	ln     net.Listener
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
}

func startHoldProxy(t *testing.T, upstream string) *holdProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &holdProxy{ln: ln}
	p.cond = sync.NewCond(&p.mu)
	t.Cleanup(func() { p.resume(); _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				_ = c.Close()
				continue
			}
			go p.pipe(c, u)
			go p.pipe(u, c)
		}
	}()
	return p
}

// pipe copies src to dst, holding what it read while paused.
func (p *holdProxy) pipe(dst, src net.Conn) {
	defer func() { _ = dst.Close(); _ = src.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.paused {
				p.cond.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *holdProxy) pause() { p.mu.Lock(); p.paused = true; p.mu.Unlock() }

func (p *holdProxy) resume() { p.mu.Lock(); p.paused = false; p.cond.Broadcast(); p.mu.Unlock() }

// TestRaceEndNeverWaitsForRedis: a rated race made by a lobby on Redis
// ends while that Redis answers nothing (its connections held). The race
// service's end hook must return all the same, the players' ratings (in
// the durable store) are recorded meanwhile but the players stay marked
// in the race, and once Redis answers again, Close must have recorded
// them once and freed the players. With a client without
// timeouts, a call waits for as long as Redis does: on the code that
// freed the players in the hook, the resignation that ended the race
// waited for Redis. With timeouts, the calls fail until Redis is back,
// and the lobby tries again (on the code before, the ratings were lost).
func TestRaceEndNeverWaitsForRedis(t *testing.T) {
	t.Run("no timeouts", func(t *testing.T) {
		raceEndWhileRedisAway(t, -1, nil)
	})
	t.Run("timeouts", func(t *testing.T) {
		raceEndWhileRedisAway(t, 100*time.Millisecond, func(log *syncBuffer) {
			waitFor(t, "a failed try", func() bool { return strings.Contains(log.String(), "players not freed") })
		})
	})
}

// syncBuffer is a log's output, written and read concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// raceEndWhileRedisAway ends a rated race while the lobby's Redis
// answers nothing, on a client with timeout io (-1: none); whilePaused
// runs after the end, before Redis answers again.
func raceEndWhileRedisAway(t *testing.T, io time.Duration, whilePaused func(*syncBuffer)) {
	srv := redistest.Start(t, redistest.Options{})
	proxy := startHoldProxy(t, srv.Addr())
	slow := redis.NewClient(&redis.Options{Addr: proxy.ln.Addr().String(), ReadTimeout: io, WriteTimeout: io, MaxRetries: -1})
	t.Cleanup(func() { _ = slow.Close() })
	direct := srv.Client(t)
	ctx := t.Context()
	keys := redislobby.Keys{Prefix: "e:"}

	clock := racetest.NewClock(time.Unix(1_000_000, 0))
	races := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	tokens, err := lobby.NewTokens([]byte("a test secret of at least thirty-two bytes"), clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	ratings := memlobby.NewRatings() // the durable store's outages are sqlstore's tests
	st := storesOn(slow, keys, "inst", clock, nil, ratings)
	st.Courier = nil // one instance: nobody to tell elsewhere
	logs := &syncBuffer{}
	l := lobby.New(lobby.Config{}, lobby.Deps{
		Clock: clock, Log: zerolog.New(logs), Races: races, Tokens: tokens,
		Stores: st,
	})
	closed := false
	t.Cleanup(func() {
		if !closed {
			l.Close()
		}
	})
	// First (cleanups run last first): a Close while the proxy holds
	// everything would wait for ever on the client without timeouts.
	t.Cleanup(proxy.resume)
	ann, bob := enter(t, l, "ann"), enter(t, l, "bob")
	inv, err := ann.s.Invite(lobby.RaceOptions{Rated: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := bob.s.AcceptInvite(inv.Code); err != nil {
		t.Fatal(err)
	}
	m := ann.waitMatched(t, "invite")
	rc, err := races.Get(m.Race)
	if err != nil {
		t.Fatal(err)
	}
	var seats [2]int
	for i, p := range []*player{ann, bob} {
		_, tok, err := l.AuthorizeSeat(p.w.Token, m.Race, "")
		if err != nil {
			t.Fatal(err)
		}
		tk, err := rc.Resume(tok, p.w.ID, "", &racetest.Recorder{})
		if err != nil {
			t.Fatal(err)
		}
		seats[i] = tk.Seat
	}
	clock.Advance(race.DefaultCountdown)

	proxy.pause()
	ended := make(chan error, 1)
	go func() {
		if err := rc.Resign(seats[0], ""); err != nil {
			ended <- err
			return
		}
		ended <- rc.Resign(seats[1], "") // ends the race: the hook runs here
	}()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // a hang bound, not a measure
		proxy.resume()
		t.Fatal("the race's end waited for a Redis that does not answer")
	}
	if res := rc.Result(); res.Outcome != race.OutcomeDraw || !res.Rated {
		t.Fatalf("result %+v", res)
	}
	// The ratings are in the durable store, which answers: the race is
	// recorded meanwhile, and its players stay marked in it until Redis
	// answers, so that their next request waits for what the race gave
	// them (the lobby frees them last).
	marks := redislobby.NewSeats(direct, keys)
	for _, p := range []*player{ann, bob} {
		waitFor(t, p.w.Name+"'s rating", func() bool {
			st, err := ratings.Standing(ctx, "classic", p.w.ID)
			return err == nil && st.Games == 1
		})
		if id, ok, err := marks.Racing(ctx, p.w.ID); !ok || id != m.Race || err != nil {
			t.Fatalf("%s freed while Redis answered nothing: %q %v %v", p.w.Name, id, ok, err)
		}
	}
	if whilePaused != nil {
		whilePaused(logs)
	}
	proxy.resume()
	l.Close() // the work queued while Redis was away is done before it returns
	closed = true
	for _, p := range []*player{ann, bob} {
		st, err := ratings.Standing(ctx, "classic", p.w.ID)
		if err != nil || st.Games != 1 || st.Draws != 1 {
			t.Errorf("%s after Redis came back: %+v %v", p.w.Name, st, err)
		}
		if h, err := ratings.History(ctx, p.w.ID, 10); err != nil || len(h) != 1 || h[0].Race != m.Race {
			t.Errorf("%s's history %+v %v, want the race once", p.w.Name, h, err)
		}
		if id, ok, err := marks.Racing(ctx, p.w.ID); ok || err != nil {
			t.Errorf("%s still marked racing in %q (%v)", p.w.Name, id, err)
		}
	}
}
