package memlobby

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"sirtommy/lobby"
)

// Arenas is lobby.Arenas in memory, for one instance on its own. It
// keeps copies: an arena handed in or out shares no slice with the
// store's, so that a caller changing what it got (as the lobby does
// with an arena it read) never changes the arena behind the store's
// lock.
type Arenas struct {
	mu   sync.Mutex
	byID map[string]lobby.Arena
	// results are each arena's counted races, in order; counted the race
	// ids of each.
	results map[string][]lobby.ArenaResult
	counted map[string]map[string]bool
}

var _ lobby.Arenas = (*Arenas)(nil)

// NewArenas makes an empty store.
func NewArenas() *Arenas {
	return &Arenas{byID: make(map[string]lobby.Arena), results: make(map[string][]lobby.ArenaResult), counted: make(map[string]map[string]bool)}
}

// Make stores a unless an arena has its id already.
func (m *Arenas) Make(_ context.Context, a lobby.Arena) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[a.ID]; ok {
		return false, nil
	}
	m.byID[a.ID] = a.Clone()
	return true, nil
}

// Get finds arena id.
func (m *Arenas) Get(_ context.Context, id string) (lobby.Arena, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.byID[id]
	if !ok {
		return lobby.Arena{}, false, nil
	}
	return a.Clone(), true, nil
}

// Change applies change to a copy of arena id under the store's lock,
// and stores the copy unless change refused: change runs once, as no
// other writer can come in between. The id stays the arena's, whatever
// change did to it, as the durable store's row keeps its id.
func (m *Arenas) Change(_ context.Context, id string, change func(*lobby.Arena) error) (lobby.Arena, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.byID[id]
	if !ok {
		return lobby.Arena{}, false, nil
	}
	a := old.Clone()
	a.Counted = nil
	if err := change(&a); err != nil {
		return lobby.Arena{}, true, err
	}
	a.ID = id
	if m.counted[id] == nil {
		m.counted[id] = make(map[string]bool)
	}
	for _, r := range a.Counted {
		if !m.counted[id][r.Race] {
			m.counted[id][r.Race] = true
			m.results[id] = append(m.results[id], r)
		}
	}
	a.Counted = nil
	m.byID[id] = a.Clone()
	return a, true, nil
}

// Results lists arena id's counted races in order; with player, only
// theirs.
func (m *Arenas) Results(_ context.Context, id, player string) ([]lobby.ArenaResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []lobby.ArenaResult{}
	for _, r := range m.results[id] {
		if player == "" || r.Players[0] == player || r.Players[1] == player {
			out = append(out, r)
		}
	}
	return out, nil
}

// Current lists the arenas that end after now, by start, then id.
func (m *Arenas) Current(_ context.Context, now time.Time) ([]lobby.Arena, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []lobby.Arena{}
	for _, a := range m.byID {
		if a.EndAt.After(now) {
			out = append(out, a.Clone())
		}
	}
	slices.SortFunc(out, byStart)
	return out, nil
}

// byStart orders arenas by start, then id: Current's order.
func byStart(a, b lobby.Arena) int {
	if c := a.StartAt.Compare(b.StartAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}
