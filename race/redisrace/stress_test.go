package redisrace_test

import (
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sirtommy/race"
	"sirtommy/race/racetest"
)

// hangAfter turns a deadlock of the stress test into a failure with every
// goroutine's stack; a run that works takes seconds. It asserts no speed.
const hangAfter = 90 * time.Second

// discard is a connection that reads nothing.
type discard struct{}

func (discard) Deliver(race.Event) {}

// finish waits for wg, or fails with every goroutine's stack once
// hangAfter has passed.
func finish(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(hangAfter):
		var sb strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&sb, 2)
		t.Fatalf("deadlock in %s after %s; goroutines:\n%s", what, hangAfter, sb.String())
	}
}

// evictUntil evicts and counts the races of the instances until stop is
// closed.
func evictUntil(stop <-chan struct{}, in ...*instance) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		for _, i := range in {
			i.svc.Evict(0)
			_ = i.svc.Live()
		}
	}
}

// TestTakeoverRematchEvictDrainUnderStress: on two instances sharing a
// Redis, one makes races, ends and rematches most of them, while the
// other resumes the seats of the rest (forwarded to the first) and both
// evict. Then the first dies, and the second takes its live races over
// while it evicts and drains. Nothing holds a lock while waiting for one
// held by a goroutine that waits for it: the test finishes.
func TestTakeoverRematchEvictDrainUnderStress(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	a, b := twoInstances(t, clock)
	const races = 90
	type seatRef struct{ id, tok string }
	refs := make(chan seatRef, races)
	var live []string // the races left running on a when it dies

	var work, evictor sync.WaitGroup
	stop := make(chan struct{})
	evictor.Go(func() { evictUntil(stop, a, b) })
	work.Go(func() { // on a
		defer close(refs)
		for i := range races {
			r, err := a.svc.Create(race.Options{})
			if err != nil {
				continue
			}
			var tok string
			for s := range 2 {
				if tk, err := r.Join(fmt.Sprint("p", s), "", discard{}); err == nil && s == 0 {
					tok = tk.Token
				}
			}
			if i%3 == 0 {
				live = append(live, r.ID())
				refs <- seatRef{r.ID(), tok}
				continue
			}
			for range 2 {
				r.Abort(race.ReasonLeft)
				_, _ = r.Rematch(0)
				next, _ := r.Rematch(1)
				if next == "" {
					break
				}
				if r, err = a.svc.Get(next); err != nil {
					break
				}
			}
		}
	})
	work.Go(func() { // on b, forwarded to a
		for ref := range refs {
			if h, err := b.svc.Open(context.Background(), ref.id); err == nil {
				_, _ = h.Resume(ref.tok, "", "", discard{})
			}
		}
	})
	finish(t, &work, "rematches, forwarded resumes and evictions")
	close(stop)
	finish(t, &evictor, "evictions")

	// a dies: b takes its live races over, evicting and draining at once.
	a.crash(t)
	var taken, tried atomic.Int64
	stop = make(chan struct{})
	evictor = sync.WaitGroup{}
	evictor.Go(func() { evictUntil(stop, b) })
	for w := range 2 {
		work.Go(func() {
			for i := w; i < len(live); i += 2 {
				tried.Add(1)
				h, err := b.svc.Open(context.Background(), live[i])
				if err != nil {
					continue
				}
				_ = h.State() // a request: b finds a gone and takes the race over
				if _, err := b.svc.Get(live[i]); err == nil {
					taken.Add(1)
				}
			}
		})
	}
	work.Go(func() {
		for tried.Load() < int64(len(live)/2) {
			time.Sleep(time.Millisecond)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		b.svc.Drain(ctx)
	})
	finish(t, &work, "takeovers and the drain")
	close(stop)
	finish(t, &evictor, "evictions")
	if taken.Load() == 0 {
		t.Errorf("none of the %d live races was taken over", len(live))
	}
	t.Logf("%d live races, %d taken over before or during the drain", len(live), taken.Load())
}
