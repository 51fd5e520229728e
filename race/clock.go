package race

import "time"

// Clock is the race's source of time. The server uses SystemClock; tests use
// racetest.Clock to drive countdowns, time limits and grace periods without
// waiting.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not happened yet and reports whether
	// it did so.
	Stop() bool
}

// SystemClock is the real clock.
type SystemClock struct{}

var _ Clock = SystemClock{}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
