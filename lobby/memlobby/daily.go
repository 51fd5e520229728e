package memlobby

import (
	"context"
	"sort"
	"sync"

	"sirtommy/lobby"
)

// Dailies is the in-memory lobby.Dailies, for one instance.
type Dailies struct {
	mu      sync.Mutex
	begun   map[string]bool                        // day/variant/player
	boards  map[string]map[string]lobby.DailyEntry // day/variant -> player -> entry
	history map[string][]lobby.DailyEntry          // player -> newest first
}

var _ lobby.Dailies = (*Dailies)(nil)

// NewDailies makes an empty store.
func NewDailies() *Dailies {
	return &Dailies{begun: make(map[string]bool), boards: make(map[string]map[string]lobby.DailyEntry), history: make(map[string][]lobby.DailyEntry)}
}

func boardKey(day, variant string) string { return day + "/" + variant }

// Begin records the attempt, once.
func (m *Dailies) Begin(_ context.Context, day, variant, player string) (bool, error) {
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
func (m *Dailies) Undo(_ context.Context, day, variant, player string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.begun, boardKey(day, variant)+"/"+player)
	return nil
}

// Begun reports the attempt.
func (m *Dailies) Begun(_ context.Context, day, variant, player string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.begun[boardKey(day, variant)+"/"+player], nil
}

// Finish records e once.
func (m *Dailies) Finish(_ context.Context, e lobby.DailyEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := boardKey(e.Day, e.Variant)
	b := m.boards[k]
	if b == nil {
		b = make(map[string]lobby.DailyEntry)
		m.boards[k] = b
	}
	if _, ok := b[e.Player]; ok {
		return nil
	}
	b[e.Player] = e
	h := append([]lobby.DailyEntry{e}, m.history[e.Player]...)
	m.history[e.Player] = h[:min(len(h), lobby.MaxDailyHistory)]
	return nil
}

// ranked is the board sorted, ranks set.
func (m *Dailies) ranked(day, variant string) []lobby.DailyEntry {
	var out []lobby.DailyEntry
	for _, e := range m.boards[boardKey(day, variant)] {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := out[i].RankKey(), out[j].RankKey(); a != b {
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
func (m *Dailies) Board(_ context.Context, day, variant string, n int) ([]lobby.DailyEntry, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := m.ranked(day, variant)
	return all[:min(n, len(all))], len(all), nil
}

// Entry is player's entry, ranked.
func (m *Dailies) Entry(_ context.Context, day, variant, player string) (lobby.DailyEntry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.ranked(day, variant) {
		if e.Player == player {
			return e, true, nil
		}
	}
	return lobby.DailyEntry{}, false, nil
}

// History is player's last n entries.
func (m *Dailies) History(_ context.Context, player string, n int) ([]lobby.DailyEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.history[player]
	return append([]lobby.DailyEntry(nil), h[:min(n, len(h))]...), nil
}
