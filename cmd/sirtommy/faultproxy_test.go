package main

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// faultProxy is a TCP proxy between one server process and its Redis,
// which cuts that server off in the ways a network does:
//
//   - hold (a blackhole): connections stay open, old and new, but no byte
//     gets through in either direction; what was sent waits in the proxy;
//   - release: the held bytes go on, late, in order;
//   - closeAll: every connection is closed (what was held is lost);
//   - refuse: every connection is closed and new ones are closed as soon
//     as they are accepted, until allow;
//   - latency: each chunk is passed on that long after it arrived.
//
// With only set, the faults touch only the connections whose client's
// first bytes hold it (the client name a server sends in its HELLO):
// on a Redis Cluster each node's proxy carries every server's
// connections, the node announcing the proxy's port, and cuts off one.
type faultProxy struct {
	ln       net.Listener
	upstream string
	only     []byte

	mu      sync.Mutex
	cond    *sync.Cond
	held    bool
	refused bool
	delay   time.Duration
	conns   map[net.Conn]*link
	wg      sync.WaitGroup
	// faulty counts the connections the faults touch.
	faulty atomic.Int64
}

// link is one connection through the proxy: whether the faults touch it
// (with only set, known from the client's first bytes).
type link struct {
	faulty atomic.Bool
}

// faults are what a scenario does to one server's Redis connections:
// one faultProxy's, or a proxyGroup's.
type faults interface {
	hold()
	release()
	closeAll()
	refuse()
	allow()
	latency(d time.Duration)
	// touched is how many connections the faults touch: none would
	// mean the scenario cut nothing off.
	touched() int64
}

// proxyGroup is the proxies of a Redis Cluster's nodes, faulted as one.
type proxyGroup []*faultProxy

// each does f to every proxy of the group.
func (g proxyGroup) each(f func(*faultProxy)) {
	for _, p := range g {
		f(p)
	}
}

func (g proxyGroup) hold()                   { g.each((*faultProxy).hold) }
func (g proxyGroup) release()                { g.each((*faultProxy).release) }
func (g proxyGroup) closeAll()               { g.each((*faultProxy).closeAll) }
func (g proxyGroup) refuse()                 { g.each((*faultProxy).refuse) }
func (g proxyGroup) allow()                  { g.each((*faultProxy).allow) }
func (g proxyGroup) latency(d time.Duration) { g.each(func(p *faultProxy) { p.latency(d) }) }

func (g proxyGroup) touched() int64 {
	var n int64
	g.each(func(p *faultProxy) { n += p.touched() })
	return n
}

// touched is how many connections the faults touch.
func (p *faultProxy) touched() int64 { return p.faulty.Load() }

// proxyChunkQueue is how many chunks read from one side may wait for the
// other side's writer (held or delayed) before the reader waits too.
const proxyChunkQueue = 4096

// startFaultProxy listens on a free port of the loopback and passes every
// connection on to upstream until the test ends.
func startFaultProxy(t *testing.T, upstream string) *faultProxy {
	return startFaultProxyFor(t, upstream, "")
}

// startFaultProxyFor is startFaultProxy whose faults touch only the
// connections of the client named only ("": all).
func startFaultProxyFor(t *testing.T, upstream, only string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{ln: ln, upstream: upstream, conns: make(map[net.Conn]*link)}
	if only != "" {
		p.only = []byte(only)
	}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.release()
		p.closeConns(true)
		p.wg.Wait()
	})
	return p
}

// addr is the proxy's address, for a redis:// URL.
func (p *faultProxy) addr() string { return p.ln.Addr().String() }

func (p *faultProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refused := p.refused
		p.mu.Unlock()
		if refused && p.only == nil {
			_ = c.Close()
			continue
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = c.Close()
			continue
		}
		l := &link{}
		if p.only == nil {
			l.faulty.Store(true)
			p.faulty.Add(1)
		}
		p.mu.Lock()
		p.conns[c], p.conns[u] = l, l
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(u, c, l, true)
		go p.pipe(c, u, l, false)
	}
}

// chunk is what one read got, and when.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst through a queue, so that a held or delayed
// writer does not stop the reading (the sender sees its bytes taken, as
// on a network that swallows them). fromClient is the client's side,
// whose first bytes tell, with only set, whether the faults touch l.
func (p *faultProxy) pipe(dst, src net.Conn, l *link, fromClient bool) {
	defer p.wg.Done()
	q := make(chan chunk, proxyChunkQueue)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			if l.faulty.Load() {
				p.wait(c.at)
			}
			if _, err := dst.Write(c.b); err != nil {
				break
			}
		}
		p.drop(dst, src)
		for range q { // let the reader finish
		}
	}()
	buf := make([]byte, 32<<10)
	first := fromClient && p.only != nil
	for {
		n, err := src.Read(buf)
		if first && n > 0 {
			first = false
			if bytes.Contains(buf[:n], p.only) {
				l.faulty.Store(true)
				p.faulty.Add(1)
			}
			p.mu.Lock()
			refused := p.refused
			p.mu.Unlock()
			if refused && l.faulty.Load() {
				break
			}
		}
		if n > 0 {
			q <- chunk{b: append([]byte(nil), buf[:n]...), at: time.Now()}
		}
		if err != nil {
			break
		}
	}
	close(q)
	<-done
	p.drop(dst, src)
}

// wait blocks while the proxy holds bytes, then until the chunk that
// arrived at at is due.
func (p *faultProxy) wait(at time.Time) {
	p.mu.Lock()
	for p.held {
		p.cond.Wait()
	}
	d := p.delay
	p.mu.Unlock()
	if wait := time.Until(at.Add(d)); wait > 0 {
		time.Sleep(wait)
	}
}

// drop closes both ends of a connection.
func (p *faultProxy) drop(a, b net.Conn) {
	_ = a.Close()
	_ = b.Close()
	p.mu.Lock()
	delete(p.conns, a)
	delete(p.conns, b)
	p.mu.Unlock()
}

// hold starts a blackhole.
func (p *faultProxy) hold() {
	p.mu.Lock()
	p.held = true
	p.mu.Unlock()
}

// release ends a blackhole: the held bytes go on.
func (p *faultProxy) release() {
	p.mu.Lock()
	p.held = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// closeAll closes every connection through the proxy that the faults
// touch.
func (p *faultProxy) closeAll() { p.closeConns(false) }

// closeConns closes the connections the faults touch, or with every all
// of them.
func (p *faultProxy) closeConns(every bool) {
	p.mu.Lock()
	conns := make([]net.Conn, 0, len(p.conns))
	for c, l := range p.conns {
		if every || l.faulty.Load() {
			conns = append(conns, c)
		}
	}
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// refuse closes every connection and refuses new ones until allow.
func (p *faultProxy) refuse() {
	p.mu.Lock()
	p.refused = true
	p.mu.Unlock()
	p.closeAll()
}

// allow accepts connections again.
func (p *faultProxy) allow() {
	p.mu.Lock()
	p.refused = false
	p.mu.Unlock()
}

// latency delays every chunk by d from now on (0: none).
func (p *faultProxy) latency(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}
