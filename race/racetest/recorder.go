package racetest

import (
	"sync"

	"sirtommy/race"
)

// Recorder is a race.Subscriber that keeps every event it is given, for
// tests to look at. Its zero value is ready to use.
type Recorder struct {
	mu  sync.Mutex
	evs []race.Event
}

var _ race.Subscriber = (*Recorder)(nil)

// Deliver keeps ev.
func (r *Recorder) Deliver(ev race.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

// Events returns a copy of the events kept so far, in order.
func (r *Recorder) Events() []race.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]race.Event(nil), r.evs...)
}

// Last is the latest event, or nil.
func (r *Recorder) Last() race.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.evs) == 0 {
		return nil
	}
	return r.evs[len(r.evs)-1]
}
