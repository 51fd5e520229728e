package memlobby

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"sirtommy/lobby"
)

// Mistakes is the in-memory lobby.Mistakes, for one instance.
type Mistakes struct {
	mu sync.Mutex
	by map[string][]lobby.Mistake // player -> their list, in no order
}

var _ lobby.Mistakes = (*Mistakes)(nil)

// NewMistakes makes an empty store.
func NewMistakes() *Mistakes { return &Mistakes{by: make(map[string][]lobby.Mistake)} }

// Add keeps m once per race and seat.
func (s *Mistakes) Add(_ context.Context, m lobby.Mistake) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.by[m.Player] {
		if o.Race == m.Race && o.Seat == m.Seat {
			return false, nil
		}
	}
	m.SolvedAt = nil // solved only by Solve
	s.by[m.Player] = append(s.by[m.Player], m)
	return true, nil
}

// Solve marks the mistake solved, once.
func (s *Mistakes) Solve(_ context.Context, player, race string, seat, position int, t time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.by[player]
	for i := range list {
		m := &list[i]
		if m.Race == race && m.Seat == seat && m.Position == position && m.SolvedAt == nil {
			t := t.UTC()
			m.SolvedAt = &t
			return true, nil
		}
	}
	return false, nil
}

// List is the player's list, the latest added first.
func (s *Mistakes) List(_ context.Context, player string, n int) ([]lobby.Mistake, error) {
	s.mu.Lock()
	out := slices.Clone(s.by[player])
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b lobby.Mistake) int {
		return cmp.Or(b.AddedAt.Compare(a.AddedAt), cmp.Compare(a.Race, b.Race), cmp.Compare(a.Seat, b.Seat))
	})
	if n >= 0 && len(out) > n {
		out = out[:n]
	}
	for i := range out { // the caller's copy
		if t := out[i].SolvedAt; t != nil {
			c := *t
			out[i].SolvedAt = &c
		}
	}
	if out == nil {
		out = []lobby.Mistake{}
	}
	return out, nil
}
