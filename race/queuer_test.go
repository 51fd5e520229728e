package race_test

import (
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace"
	"sirtommy/race/redisrace/redistest"
)

// queuer is a race.Queuer that checks the race's lock: held when an event
// is queued, free when it is written.
type queuer struct {
	t    *testing.T
	race *race.Race

	mu       sync.Mutex
	queued   []race.Event
	written  []race.Event
	pending  bool // a Queue took the writing side and awaits Flush
	flushes  int
	heldOnce bool // Queue saw the lock held at least once
}

// Deliver writes ev at once: never with the race's lock held, where the
// race should have queued it.
func (q *queuer) Deliver(ev race.Event) {
	if !race.LockFreeForTest(q.race) {
		q.t.Errorf("%T written with the race's lock held", ev)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.written = append(q.written, ev)
}

func (q *queuer) Queue(ev race.Event) bool {
	held := !race.LockFreeForTest(q.race)
	q.mu.Lock()
	defer q.mu.Unlock()
	if held {
		q.heldOnce = true
	}
	q.queued = append(q.queued, ev)
	take := !q.pending
	q.pending = true
	return take
}

func (q *queuer) Flush() {
	if !race.LockFreeForTest(q.race) {
		q.t.Error("Flush ran with the race's lock held")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.written = append(q.written, q.queued...)
	q.queued, q.pending = nil, false
	q.flushes++
}

// TestQueuedEventsAreWrittenAfterTheLock: a seat that can queue (as the
// web's connections do) gets its opponent's moves queued under the race's
// lock and written once it is released, in order, none left behind, the
// last state included.
// It holds on a bus that relays to other instances (Redis mode) too,
// where the race's own connections get its events from the bus.
func TestQueuedEventsAreWrittenAfterTheLock(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		testQueuedEventsAreWrittenAfterTheLock(t, memrace.NewBus())
	})
	t.Run("redis", func(t *testing.T) {
		rdb := redistest.Start(t, redistest.Options{}).Client(t)
		bus := redisrace.NewBus(rdb, redisrace.Keys{}, "instance-a", zerolog.Nop())
		t.Cleanup(func() { _ = bus.Close() })
		testQueuedEventsAreWrittenAfterTheLock(t, bus)
	})
}

func testQueuedEventsAreWrittenAfterTheLock(t *testing.T, bus race.Bus) {
	const deal = 7
	f := newRaceOn(t, named(deal), bus)
	q := &queuer{t: t, race: f.race}
	var mover recorder
	if _, err := f.race.Join("a", "", &mover); err != nil {
		t.Fatal(err)
	}
	if _, err := f.race.Join("b", "", q); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(race.DefaultCountdown)
	g := newGame(deal)
	moves := 0
	for g.Status() == engine.Playing && f.race.State() == race.Running && moves < 30 {
		m := racetest.Greedy(&g)
		if err := f.race.Move(0, m.String(), ""); err != nil {
			t.Fatalf("move %s: %v", m, err)
		}
		_ = g.Apply(m)
		moves++
	}
	if err := f.race.Resign(1, ""); err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.heldOnce {
		t.Error("no event was queued under the race's lock")
	}
	if len(q.queued) != 0 || q.pending {
		t.Errorf("%d events left queued, never written", len(q.queued))
	}
	if q.flushes == 0 {
		t.Fatal("nothing was flushed")
	}
	var moved, last int
	for i, ev := range q.written {
		if o, ok := ev.(*race.OpponentEvent); ok && o.Seat == 0 {
			moved++
			if o.Counts.Moves != moved {
				t.Errorf("the opponent's move %d written with %d moves: out of order", moved, o.Counts.Moves)
			}
		}
		if st, ok := ev.(*race.StateEvent); ok && st.Result != nil {
			last = i
		}
	}
	if moved != moves {
		t.Errorf("%d of the opponent's %d moves written", moved, moves)
	}
	if last == 0 {
		t.Error("the final state was not written")
	}
}
