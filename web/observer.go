package web

import "time"

// Observer is told what the server does, for metrics (web/metrics
// implements it with Prometheus). Deps.Observer may be nil: the server then
// observes nothing. Its methods run on the connections' goroutines and
// must be quick and safe for concurrent use.
type Observer interface {
	// MoveHandled is called after each move request a seated player sent:
	// d is the time the race took to judge it and queue the replies, err
	// its refusal (nil when accepted).
	MoveHandled(d time.Duration, err error)
}

// observeMove tells the observer, if any, about a handled move.
func (s *Server) observeMove(d time.Duration, err error) {
	if s.deps.Observer != nil {
		s.deps.Observer.MoveHandled(d, err)
	}
}
