package memlobby

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"sirtommy/lobby"
)

// Arenas (temporary, for local tests).
type Arenas struct {
	mu sync.Mutex
	m  map[string][]byte
}

func NewArenas() *Arenas { return &Arenas{m: map[string][]byte{}} }

func (s *Arenas) Make(_ context.Context, a lobby.Arena) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[a.ID]; ok {
		return false, nil
	}
	b, _ := json.Marshal(a)
	s.m[a.ID] = b
	return true, nil
}

func (s *Arenas) Get(_ context.Context, id string) (lobby.Arena, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	var a lobby.Arena
	if ok {
		_ = json.Unmarshal(b, &a)
	}
	return a, ok, nil
}

func (s *Arenas) Change(_ context.Context, id string, f func(*lobby.Arena) error) (lobby.Arena, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	var a lobby.Arena
	if !ok {
		return a, false, nil
	}
	_ = json.Unmarshal(b, &a)
	if err := f(&a); err != nil {
		var old lobby.Arena
		_ = json.Unmarshal(b, &old)
		return old, true, err
	}
	b, _ = json.Marshal(a)
	s.m[id] = b
	return a, true, nil
}

func (s *Arenas) Current(_ context.Context, now time.Time) ([]lobby.Arena, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []lobby.Arena
	for _, b := range s.m {
		var a lobby.Arena
		_ = json.Unmarshal(b, &a)
		if a.EndAt.After(now) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(x, y lobby.Arena) int { return x.StartAt.Compare(y.StartAt) })
	return out, nil
}
