package race

import (
	"context"
	"sync"
)

// Service keeps the races of one server: it makes them, finds them by id,
// keeps finished ones for replays, and drains them on shutdown.
type Service struct {
	deps Deps

	mu       sync.Mutex
	races    map[string]*Race
	draining bool
}

// NewService makes an empty Service whose races share deps.
func NewService(deps Deps) *Service {
	return &Service{deps: deps, races: make(map[string]*Race)}
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
func (s *Service) Drain(ctx context.Context) int {
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	races := s.snapshot()
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
