package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// echoReadLimit bounds the frames the echo server reads, like the race
// server's hard limit.
const echoReadLimit = 64 << 10

// EchoHandler is a bare websocket echo server with no game logic: each text
// message comes straight back. It is the baseline the race server's
// latency is compared with: same machine, same websocket library, nothing
// else.
func EchoHandler() http.Handler { return echoHandler(nil) }

// PairEchoHandler is EchoHandler with a move's shape: connections are
// paired in the order they arrive, and each message comes back to its
// sender and goes, as pairCopy, to the sender's partner too. A race
// server answers a move with two writes, the mover's reply and the
// opponent's update; this is what those cost with no game between
// (docs/performance.md, issue 42).
func PairEchoHandler() http.Handler { return echoHandler(new(echoPairs)) }

// pairCopy is what a partner gets: an id no sender uses, so that the
// load client's senders, which wait for their own id, pass over it.
var pairCopy = []byte(`{"v":1,"type":"copy","id":"-"}`)

// echoConn is one echo connection: gorilla takes one writer at a time, and
// with pairs both the connection's reader and its partner's write to it.
type echoConn struct {
	ws      *websocket.Conn
	mu      sync.Mutex
	partner *echoConn // set once paired, under echoPairs.mu
}

func (c *echoConn) write(t int, b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return c.ws.WriteMessage(t, b)
}

// echoPairs pairs connections as they arrive.
type echoPairs struct {
	mu      sync.Mutex
	waiting *echoConn
}

// join pairs c with the connection waiting, or makes c wait.
func (p *echoPairs) join(c *echoConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting == nil {
		p.waiting = c
		return
	}
	p.waiting.partner, c.partner = c, p.waiting
	p.waiting = nil
}

// leave unpairs c: its partner gets copies no more, and waits for no one.
func (p *echoPairs) leave(c *echoConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting == c {
		p.waiting = nil
	}
	if c.partner != nil {
		c.partner.partner = nil
		c.partner = nil
	}
}

// partnerOf is c's partner, if any.
func (p *echoPairs) partnerOf(c *echoConn) *echoConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return c.partner
}

// echoHandler echoes every message, and with pairs (not nil) copies it to
// the sender's partner.
func echoHandler(pairs *echoPairs) http.Handler {
	up := websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 4096}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // the upgrader has replied
		}
		defer ws.Close()
		ws.SetReadLimit(echoReadLimit)
		c := &echoConn{ws: ws}
		if pairs != nil {
			pairs.join(c)
			defer pairs.leave(c)
		}
		for {
			t, b, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if err := c.write(t, b); err != nil {
				return
			}
			if pairs == nil {
				continue
			}
			if o := pairs.partnerOf(c); o != nil {
				_ = o.write(websocket.TextMessage, pairCopy) // the partner's own reader sees it gone
			}
		}
	})
}

// EchoConfig is a load run against an echo server: Conns connections, of
// which Senders send a message every 1/Rate seconds and wait for it back
// (the race run's players); the rest stay open (its spectators).
type EchoConfig struct {
	URL      string
	Conns    int
	Senders  int
	Rate     float64
	Duration time.Duration
	// Warmup is Config.Warmup: round trips started before it are not in
	// the percentiles.
	Warmup time.Duration
}

// EchoReport is what an echo run measured.
type EchoReport struct {
	URL         string  `json:"url"`
	Connections int64   `json:"connections"`
	Seconds     float64 `json:"seconds"`
	// WarmupSeconds is EchoConfig.Warmup.
	WarmupSeconds float64          `json:"warmupSeconds,omitempty"`
	Messages      int64            `json:"messages"`
	RoundTrip     Quantiles        `json:"roundTrip"`
	Errors        map[string]int64 `json:"errorsByCode"`
	Dropped       int64            `json:"droppedConnections"`
}

// echoPayload is about the size of a move message, so both servers carry
// comparable frames.
const echoPayload = `{"v":1,"type":"move","id":"%s","move":"3H>F2"}`

// RunEcho drives an echo server with the same connection count and
// message rate as a race run.
func RunEcho(ctx context.Context, cfg EchoConfig) (EchoReport, error) {
	if cfg.Conns < 1 || cfg.Senders > cfg.Conns {
		return EchoReport{}, errors.New("loadtest: echo needs connections, senders among them")
	}
	if cfg.Rate <= 0 {
		cfg.Rate = DefaultRate
	}
	r := &run{start: time.Now(), from: time.Now().Add(cfg.Warmup), own: newLatency()}
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	sem := make(chan struct{}, dialConcurrency)
	var msgs atomic.Int64
	var wg sync.WaitGroup
	for i := range cfg.Conns {
		wg.Go(func() {
			c, err := r.dial(ctx, sem, cfg.URL)
			if err != nil {
				if ctx.Err() == nil {
					r.errs.add("dial-failed")
				}
				return
			}
			defer c.close()
			if i >= cfg.Senders {
				select {
				case _, ok := <-c.inbox:
					if !ok {
						r.connEnded(ctx, c)
					}
				case <-ctx.Done():
				}
				return
			}
			if err := echoSender(ctx, c, cfg.Rate, uint64(i), r, &msgs); err != nil && ctx.Err() == nil {
				if errors.Is(err, errConnEnded) {
					r.connEnded(ctx, c)
				} else {
					r.errs.add("client-write")
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(r.start)
	rep := EchoReport{
		URL: cfg.URL, Connections: r.conns.Load(), Seconds: elapsed.Seconds(), WarmupSeconds: cfg.Warmup.Seconds(), Messages: msgs.Load(),
		RoundTrip: r.own.quantiles(), Errors: r.errs.snapshot(), Dropped: r.dropped.Load(),
	}
	if rep.Errors == nil {
		rep.Errors = map[string]int64{}
	}
	return rep, nil
}

func echoSender(ctx context.Context, c *wsConn, rate float64, seed uint64, r *run, msgs *atomic.Int64) error {
	period := time.Duration(float64(time.Second) / rate)
	rng := rand.New(rand.NewPCG(seed, 0xec40))
	select {
	case <-time.After(time.Duration(rng.Int64N(int64(period)))):
	case <-ctx.Done():
		return nil
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	n := 0
	inFlight := ""
	var sentAt time.Time
	for {
		select {
		case <-tick.C:
			if inFlight != "" {
				continue
			}
			n++
			inFlight = strconv.Itoa(n)
			sentAt = time.Now()
			_ = c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
			if err := c.ws.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, echoPayload, inFlight)); err != nil {
				return fmt.Errorf("write: %w", err)
			}
		case m, ok := <-c.inbox:
			if !ok {
				return errConnEnded
			}
			if inFlight != "" && m.ID == inFlight {
				r.own.recordSince(sentAt, r.from)
				msgs.Add(1)
				inFlight = ""
			}
		case <-ctx.Done():
			return nil
		}
	}
}
