package race

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// Service keeps the races of one server: it makes them, finds them by id,
// keeps finished ones for replays, and drains them on shutdown.
type Service struct {
	deps Deps

	mu       sync.Mutex
	races    map[string]*Race
	draining bool

	// Redis mode: one takeover at a time, the connections of other
	// instances attached to races here, and topic numbers for this
	// instance's connections to races elsewhere.
	adoptMu  sync.Mutex
	remoteMu sync.Mutex
	remotes  map[string]*remoteConn
	nextConn atomic.Uint64
}

// NewService makes an empty Service whose races share deps. With a
// Cluster it answers the requests other instances forward to it.
func NewService(deps Deps) *Service {
	s := &Service{deps: deps, races: make(map[string]*Race), remotes: make(map[string]*remoteConn)}
	if deps.Cluster != nil {
		deps.Cluster.Serve(s.serveRequest)
	}
	return s
}

// Create makes a new race waiting for its players.
func (s *Service) Create(opts Options) (*Race, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return nil, Errorf(CodeDraining, "the server is shutting down; try again in a moment")
	}
	return s.createLocked(opts)
}

func (s *Service) createLocked(opts Options) (*Race, error) {
	r, err := New(NewToken(), opts, s.deps)
	if err != nil {
		return nil, err
	}
	r.spawn = s.Create
	if c := s.deps.Cluster; c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
		defer cancel()
		ok, err := c.Claim(ctx, r.id, "")
		if err == nil && !ok {
			err = errors.New("a new race id is already owned")
		}
		if err != nil {
			return nil, &Error{Code: CodeUnavailable, Message: "the race could not be registered; try again shortly", Err: err}
		}
		if err := c.Save(ctx, r.recordLocked()); err != nil {
			_ = c.Release(ctx, r.id)
			return nil, &Error{Code: CodeUnavailable, Message: "the race could not be registered; try again shortly", Err: err}
		}
	}
	s.races[r.ID()] = r
	return r, nil
}

// Get finds a race by id.
func (s *Service) Get(id string) (*Race, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.races[id]
	if !ok {
		return nil, Errorf(CodeNoSuchRace, "no race has id %q", id)
	}
	return r, nil
}

// Live is the number of races not over.
func (s *Service) Live() int {
	n := 0
	for _, r := range s.snapshot() {
		if !r.State().Over() {
			n++
		}
	}
	return n
}

// Races returns every race the service keeps, in no particular order.
func (s *Service) Races() []*Race { return s.snapshot() }

func (s *Service) snapshot() []*Race {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Race, 0, len(s.races))
	for _, r := range s.races {
		out = append(out, r)
	}
	return out
}

// Drain stops making races, aborts those still waiting for players, and
// waits for the others to end until ctx is done; it then aborts what is
// left with reason "shutdown". It returns the number of races aborted that
// way.
//
// In Redis mode it aborts nothing: it stops its copies of the live races
// and hands them over to the other instances, whose players resume them
// there.
func (s *Service) Drain(ctx context.Context) int {
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	races := s.snapshot()
	if c := s.deps.Cluster; c != nil {
		for _, r := range races {
			if r.State().Over() {
				continue
			}
			r.Stop()
			hctx, cancel := context.WithTimeout(ctx, clusterTimeout)
			if err := c.Handover(hctx, r.id); err != nil {
				s.deps.Log.Warn().Err(err).Str("race", r.id).Msg("race not handed over; another instance takes it when its lease runs out")
			}
			cancel()
		}
		return 0
	}
	for _, r := range races {
		if r.State() == Waiting {
			r.Abort("shutdown")
		}
	}
	cut := 0
	for _, r := range races {
		select {
		case <-r.Done():
		case <-ctx.Done():
			if !r.State().Over() {
				r.Abort("shutdown")
				cut++
			}
		}
	}
	return cut
}
