package lobby

import (
	"context"
	"sort"
	"sync"
)

// MemoryDailies is the in-memory Dailies, for one instance.
type MemoryDailies struct {
	mu      sync.Mutex
	begun   map[string]bool                  // day/variant/player
	boards  map[string]map[string]DailyEntry // day/variant -> player -> entry
	history map[string][]DailyEntry          // player -> newest first
}

var _ Dailies = (*MemoryDailies)(nil)

// NewMemoryDailies makes an empty store.
func NewMemoryDailies() *MemoryDailies {
	return &MemoryDailies{begun: make(map[string]bool), boards: make(map[string]map[string]DailyEntry), history: make(map[string][]DailyEntry)}
}

func boardKey(day, variant string) string { return day + "/" + variant }

// Begin records the attempt, once.
func (m *MemoryDailies) Begin(_ context.Context, day, variant, player string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := boardKey(day, variant) + "/" + player
	if m.begun[k] {
		return false, nil
	}
	m.begun[k] = true
	return true, nil
}

// Undo forgets the attempt.
func (m *MemoryDailies) Undo(_ context.Context, day, variant, player string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.begun, boardKey(day, variant)+"/"+player)
	return nil
}

// Begun reports the attempt.
func (m *MemoryDailies) Begun(_ context.Context, day, variant, player string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.begun[boardKey(day, variant)+"/"+player], nil
}

// Finish records e once.
func (m *MemoryDailies) Finish(_ context.Context, e DailyEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := boardKey(e.Day, e.Variant)
	b := m.boards[k]
	if b == nil {
		b = make(map[string]DailyEntry)
		m.boards[k] = b
	}
	if _, ok := b[e.Player]; ok {
		return nil
	}
	b[e.Player] = e
	h := append([]DailyEntry{e}, m.history[e.Player]...)
	m.history[e.Player] = h[:min(len(h), maxDailyHistory)]
	return nil
}

// ranked is the board sorted, ranks set.
func (m *MemoryDailies) ranked(day, variant string) []DailyEntry {
	var out []DailyEntry
	for _, e := range m.boards[boardKey(day, variant)] {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := out[i].rankKey(), out[j].rankKey(); a != b {
			return a < b
		}
		return out[i].Player < out[j].Player
	})
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

// Board is the n best, ranked.
func (m *MemoryDailies) Board(_ context.Context, day, variant string, n int) ([]DailyEntry, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := m.ranked(day, variant)
	return all[:min(n, len(all))], len(all), nil
}

// Entry is player's entry, ranked.
func (m *MemoryDailies) Entry(_ context.Context, day, variant, player string) (DailyEntry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.ranked(day, variant) {
		if e.Player == player {
			return e, true, nil
		}
	}
	return DailyEntry{}, false, nil
}

// History is player's last n entries.
func (m *MemoryDailies) History(_ context.Context, player string, n int) ([]DailyEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.history[player]
	return append([]DailyEntry(nil), h[:min(n, len(h))]...), nil
}
