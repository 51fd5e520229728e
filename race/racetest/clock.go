// Package racetest has test helpers for code built on package race: a fake
// clock and a trivial computer player.
package racetest

import (
	"sort"
	"sync"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
)

// Clock is a fake race.Clock: time moves only when Advance is called, and
// due timers run then, in order of their time, in Advance's goroutine.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers []*timer
}

type timer struct {
	c       *Clock
	at      time.Time
	seq     int
	f       func()
	stopped bool
}

var _ race.Clock = (*Clock)(nil)

// NewClock makes a fake clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f for d after the fake now.
func (c *Clock) AfterFunc(d time.Duration, f func()) race.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &timer{c: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

// Stop cancels the timer.
func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	for i, x := range t.c.timers {
		if x == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			return was
		}
	}
	return false
}

// Advance moves the clock forward by d, running every timer that falls due,
// each with the clock set to its time; timers that those set up run too if
// they fall due within d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		sort.Slice(c.timers, func(i, j int) bool {
			if c.timers[i].at.Equal(c.timers[j].at) {
				return c.timers[i].seq < c.timers[j].seq
			}
			return c.timers[i].at.Before(c.timers[j].at)
		})
		if len(c.timers) == 0 || c.timers[0].at.After(end) {
			c.now = end
			c.mu.Unlock()
			return
		}
		t := c.timers[0]
		c.timers = c.timers[1:]
		t.stopped = true
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
	}
}

// Pending is the number of timers waiting.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// FirstLegal is a computer player that plays the first legal move, preferring
// foundations: a test stand-in for the engine's bot.
type FirstLegal struct{}

// Choose picks the first legal move to a foundation, or else the first
// legal move; it resigns only when there is none.
func (FirstLegal) Choose(_ *engine.View, legal []engine.Move) (engine.Move, bool) {
	for _, m := range legal {
		if m.Kind == engine.Place && m.To.Kind == engine.Foundation {
			return m, true
		}
	}
	if len(legal) == 0 {
		return engine.Move{}, false
	}
	return legal[0], true
}
