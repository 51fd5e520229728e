package fleet

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/racetest"
)

// wires joins instances' forwarders: each Send hands the frame to the
// named instance's listener after a delay (a Redis round trip), and
// counts the frames each instance sent.
type wires struct {
	mu     sync.Mutex
	listen map[string]func([]byte)
	frames map[string]int
	delay  time.Duration
}

// wireEnd is one instance's Cluster on the wires; only what the
// forwarder uses is implemented (the embedded interfaces are nil).
type wireEnd struct {
	race.Records
	Leases
	w     *wires
	name  string
	owner string // every race's lease holder
}

func (e *wireEnd) Instance() string { return e.name }

func (e *wireEnd) Owners(_ context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		out[id] = e.owner
	}
	return out, nil
}

func (e *wireEnd) Send(_ context.Context, to string, frame []byte) (bool, error) {
	time.Sleep(e.w.delay)
	e.w.mu.Lock()
	fn := e.w.listen[to]
	e.w.frames[e.name]++
	e.w.mu.Unlock()
	if fn == nil {
		return false, nil
	}
	fn(slices.Clone(frame))
	return true, nil
}

func (e *wireEnd) Listen(fn func([]byte)) {
	e.w.mu.Lock()
	defer e.w.mu.Unlock()
	e.w.listen[e.name] = fn
}

// TestFramesCarryManyRequests: requests forwarded at once while the wire
// is busy share frames, and each caller gets its own reply: 50 requests
// to the owner (each answered with its seat plus 100) go out in far
// fewer frames, and their replies come back in far fewer too.
func TestFramesCarryManyRequests(t *testing.T) {
	w := &wires{listen: map[string]func([]byte){}, frames: map[string]int{}, delay: 5 * time.Millisecond}
	deps := race.Deps{Clock: racetest.NewClock(time.Now()), Log: zerolog.Nop()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := newForwarder(ctx, &wireEnd{w: w, name: "a", owner: "b"}, nil, deps)
	newForwarder(ctx, &wireEnd{w: w, name: "b", owner: "b"}, func(req *Request) *Reply {
		return &Reply{Seat: req.Seat + 100}
	}, deps)
	const n = 50
	errs := make(chan error, n)
	for i := range n {
		go func() {
			cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
			defer ccancel()
			rep, err := a.call(cctx, &Request{Op: OpState, Race: "R", Topic: fmt.Sprint("R/conn/a/", i), Seat: i})
			if err == nil && rep.Seat != i+100 {
				err = fmt.Errorf("request %d answered %d", i, rep.Seat)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.frames["a"] > n/4 || w.frames["b"] > n/4 {
		t.Errorf("%d requests went in %d frames and came back in %d: want them to share frames", n, w.frames["a"], w.frames["b"])
	}
	t.Logf("%d requests, %d frames out, %d back", n, w.frames["a"], w.frames["b"])
}
