package redisrace

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// A quiet subscription connection is pinged (a dead one is found by the
// ping's failed write and made again), and a ping's answer does not
// reach the bus's subscribers. The bus reads its subscription itself, so
// nothing of go-redis's channel pings it any more.
func TestBusPingsAQuietSubscription(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	b := newBus(srv.Client(t), Keys{}, "instance-a", zerolog.Nop(), 20*time.Millisecond)
	t.Cleanup(func() { _ = b.Close() })
	var got racetest.Recorder
	defer b.Subscribe("R/all", &got)()
	if err := b.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := srv.CommandCalls(t)["ping"]
	deadline := time.Now().Add(10 * time.Second)
	for srv.CommandCalls(t)["ping"] < before+3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d pings in 10 s of a quiet subscription; want 3 or more", srv.CommandCalls(t)["ping"]-before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(got.Events()); n != 0 {
		t.Fatalf("the subscriber got %d events from pings", n)
	}
	if b.Stats.DecodeErrs.Load() != 0 || b.Stats.Lapses.Load() != 0 {
		t.Fatalf("decode errors %d, lapses %d; want none", b.Stats.DecodeErrs.Load(), b.Stats.Lapses.Load())
	}
}

// muteProxy passes TCP connections through to addr until mute, after
// which the connections open then swallow every byte both ways and stay
// open (half-open, as a peer gone without a word leaves them); later
// connections pass again.
type muteProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []*muted
	nets  []net.Conn
}

type muted struct{ on atomic.Bool }

func startMuteProxy(t *testing.T, addr string) *muteProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &muteProxy{ln: ln}
	t.Cleanup(p.close)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", addr)
			if err != nil {
				_ = c.Close()
				continue
			}
			m := &muted{}
			p.mu.Lock()
			p.conns = append(p.conns, m)
			p.nets = append(p.nets, c, up)
			p.mu.Unlock()
			go m.pipe(up, c)
			go m.pipe(c, up)
		}
	}()
	return p
}

// pipe copies src to dst while the connection is not muted, and drops
// what it reads once it is.
func (m *muted) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		if m.on.Load() {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// close stops the proxy and closes every connection through it.
func (p *muteProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.nets {
		_ = c.Close()
	}
}

// mute silences every connection open now.
func (p *muteProxy) mute() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.conns {
		m.on.Store(true)
	}
}

// A subscription connection that takes writes and never answers (a ping
// is written, so it does not fail) is taken for deaf once it stayed
// silent for deafAfter, pinged: go-redis makes it again with its
// subscriptions (a lapse), and what is published after reaches the
// subscriber. Without the read's deadline the bus stayed deaf until TCP
// gave up on the connection, many minutes later.
func TestBusRenewsADeafSubscription(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	proxy := startMuteProxy(t, srv.Addr())
	rdb := redis.NewClient(&redis.Options{Addr: proxy.ln.Addr().String()})
	t.Cleanup(func() { _ = rdb.Close() })
	b := newBus(rdb, Keys{}, "instance-a", zerolog.Nop(), 50*time.Millisecond)
	t.Cleanup(func() { _ = b.Close() })
	var got racetest.Recorder
	defer b.Subscribe("R/all", &got)()
	if err := b.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	lapsed := make(chan struct{}, 1)
	b.OnLapse(func() {
		select {
		case lapsed <- struct{}{}:
		default:
		}
	})
	proxy.mute()
	select {
	case <-lapsed:
	case <-time.After(b.deafAfter() + 20*time.Second):
		t.Fatalf("the deaf subscription was not made again in %v", b.deafAfter()+20*time.Second)
	}
	other := NewBus(srv.Client(t), Keys{}, "instance-b", zerolog.Nop())
	t.Cleanup(func() { _ = other.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for len(got.Events()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nothing published after the lapse reached the subscriber")
		}
		other.Publish("R/all", &race.PresenceEvent{Race: "R"})
		time.Sleep(50 * time.Millisecond)
	}
}
