package main

import (
	"net"
	"sync"
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
type faultProxy struct {
	ln       net.Listener
	upstream string

	mu      sync.Mutex
	cond    *sync.Cond
	held    bool
	refused bool
	delay   time.Duration
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// proxyChunkQueue is how many chunks read from one side may wait for the
// other side's writer (held or delayed) before the reader waits too.
const proxyChunkQueue = 4096

// startFaultProxy listens on a free port of the loopback and passes every
// connection on to upstream until the test ends.
func startFaultProxy(t *testing.T, upstream string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{ln: ln, upstream: upstream, conns: make(map[net.Conn]struct{})}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.release()
		p.closeAll()
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
		if refused {
			_ = c.Close()
			continue
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[u] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(u, c)
		go p.pipe(c, u)
	}
}

// chunk is what one read got, and when.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst through a queue, so that a held or delayed
// writer does not stop the reading (the sender sees its bytes taken, as
// on a network that swallows them).
func (p *faultProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	q := make(chan chunk, proxyChunkQueue)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			p.wait(c.at)
			if _, err := dst.Write(c.b); err != nil {
				break
			}
		}
		p.drop(dst, src)
		for range q { // let the reader finish
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
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

// closeAll closes every connection through the proxy.
func (p *faultProxy) closeAll() {
	p.mu.Lock()
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
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
