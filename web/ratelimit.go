package web

import (
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiterIdle is how long an address's budget is kept after its last
// request: past a minute it is full again anyway, so it is dropped.
const limiterIdle = time.Minute

// perClient limits what one client address (the connection's, not a
// forwarded header, which anyone can write) may make: n a minute, as a
// token bucket of n that refills over the minute. A request reserves one
// before it is handled, and gives it back unless it made something (the
// handler answered 201 Created): a refused or invalid request costs
// nothing.
type perClient struct {
	n    int
	now  func() time.Time
	next http.Handler
	// every counts every request, not only those that made something;
	// refusal is the sentence of the 429.
	every   bool
	refusal string

	mu    sync.Mutex
	addrs map[string]*clientBudget
	swept time.Time
}

type clientBudget struct {
	lim  *rate.Limiter
	last time.Time
}

// limitPerClient lets each client address make n races a minute with h
// (POST /api/races); the rest get 429 rate-limited. n <= 0: no limit.
func limitPerClient(n int, h http.HandlerFunc) http.Handler {
	if n <= 0 {
		return h
	}
	return &perClient{n: n, now: time.Now, next: h, addrs: make(map[string]*clientBudget),
		refusal: "too many races made from your address; try again in a minute"}
}

// everyRequestLimiter is one budget per client address shared by every
// handler it wraps: n requests a minute, refused or not (the passkey
// ceremonies: each begun one is kept until it expires); the rest get 429
// rate-limited with refusal. n <= 0: no limit.
func everyRequestLimiter(n int, refusal string) func(http.Handler) http.Handler {
	if n <= 0 {
		return func(h http.Handler) http.Handler { return h }
	}
	p := &perClient{n: n, now: time.Now, addrs: make(map[string]*clientBudget), every: true, refusal: refusal}
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serve(w, r, h) })
	}
}

func (p *perClient) budget(addr string, now time.Time) *rate.Limiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.swept) >= limiterIdle {
		for a, b := range p.addrs {
			if now.Sub(b.last) >= limiterIdle {
				delete(p.addrs, a)
			}
		}
		p.swept = now
	}
	b := p.addrs[addr]
	if b == nil {
		b = &clientBudget{lim: rate.NewLimiter(rate.Every(time.Minute/time.Duration(p.n)), p.n)}
		p.addrs[addr] = b
	}
	b.last = now
	return b.lim
}

// ServeHTTP reserves one of the address's races, and gives it back unless
// the handler made one.
func (p *perClient) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.serve(w, r, p.next) }

// serve reserves one of the address's budget and runs next; it gives the
// reservation back when next made nothing, unless every request counts.
func (p *perClient) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	now := p.now()
	res := p.budget(addr, now).ReserveN(now, 1)
	if !res.OK() || res.DelayFrom(now) > 0 {
		res.CancelAt(now)
		writeError(w, http.StatusTooManyRequests, CodeRateLimited, "%s", p.refusal)
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	next.ServeHTTP(sw, r)
	if !p.every && sw.status != http.StatusCreated {
		// Nothing made: the race is not counted. The cancel is dated at the
		// reservation (rate cancels nothing dated after it was due).
		res.CancelAt(now)
	}
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}
