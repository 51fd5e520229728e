package redisrace

import (
	"sync"
	"sync/atomic"
	"time"
)

// Extensions remembers when each race's lease was last extended by one of
// its moves: the append script extends the lease of the instance that owns
// the race, so that a race whose players are moving needs no renewal of
// its own, and Renew sends one only for races that went quiet. That takes
// about a third of a Redis command off every move (a renewal a second for
// every race, against a few moves a second each).
//
// The times are this process's monotonic clock, not the race Clock: a
// lease runs out in Redis's real time whatever the race's clock says. A
// time is taken before the append is sent, so the lease it extended ends
// no sooner than that time plus LeaseTTL.
type Extensions struct {
	start time.Time
	// last maps a race id to *atomic.Int64, the time since start of the
	// latest extension: one allocation per race, none per move.
	last sync.Map
}

// NewExtensions makes an empty Extensions, shared by an instance's Store
// (which records) and Cluster (which reads and forgets). A nil
// *Extensions records nothing, and every race is renewed.
func NewExtensions() *Extensions { return &Extensions{start: time.Now()} }

// now is the time since e was made (0 for a nil e, which records nothing).
func (e *Extensions) now() time.Duration {
	if e == nil {
		return 0
	}
	return time.Since(e.start)
}

// extended records that race id's lease was extended by an append sent at
// at (a time from now).
func (e *Extensions) extended(id string, at time.Duration) {
	if e == nil {
		return
	}
	if v, ok := e.last.Load(id); ok {
		v.(*atomic.Int64).Store(int64(at))
		return
	}
	n := new(atomic.Int64)
	n.Store(int64(at))
	if v, loaded := e.last.LoadOrStore(id, n); loaded {
		v.(*atomic.Int64).Store(int64(at))
	}
}

// since reports whether race id's lease was extended at or after at.
func (e *Extensions) since(id string, at time.Duration) bool {
	if e == nil {
		return false
	}
	v, ok := e.last.Load(id)
	return ok && time.Duration(v.(*atomic.Int64).Load()) >= at
}

// forget drops race id (released or lost).
func (e *Extensions) forget(id string) {
	if e != nil {
		e.last.Delete(id)
	}
}
