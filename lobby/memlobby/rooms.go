package memlobby

import (
	"context"
	"slices"
	"sync"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
)

// Rooms is lobby.Rooms in memory.
type Rooms struct {
	clock race.Clock

	mu     sync.Mutex
	byCode map[string]memRoom
}

type memRoom struct {
	r     lobby.Room
	until time.Time
}

var _ lobby.Rooms = (*Rooms)(nil)

// NewRooms makes an empty store; clock times the keeping.
func NewRooms(clock race.Clock) *Rooms {
	return &Rooms{clock: clock, byCode: make(map[string]memRoom)}
}

// Put stores r until keep has passed (and drops the rooms past theirs).
func (m *Rooms) Put(_ context.Context, r lobby.Room, keep time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	for code, mr := range m.byCode {
		if !now.Before(mr.until) {
			delete(m.byCode, code)
		}
	}
	m.byCode[r.Code] = memRoom{r: clone(r), until: now.Add(keep)}
	return nil
}

// Make stores r unless its code is taken by a room still kept.
func (m *Rooms) Make(_ context.Context, r lobby.Room, keep time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	if mr, ok := m.byCode[r.Code]; ok && now.Before(mr.until) {
		return false, nil
	}
	m.byCode[r.Code] = memRoom{r: clone(r), until: now.Add(keep)}
	return true, nil
}

// Get finds room code.
func (m *Rooms) Get(_ context.Context, code string) (lobby.Room, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mr, ok := m.byCode[code]
	if !ok || !m.clock.Now().Before(mr.until) {
		return lobby.Room{}, false, nil
	}
	return clone(mr.r), true, nil
}

// GetMany finds the rooms of codes, under one hold of the store's lock.
func (m *Rooms) GetMany(_ context.Context, codes []string) (map[string]lobby.Room, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	found := make(map[string]lobby.Room, len(codes))
	for _, code := range codes {
		if mr, ok := m.byCode[code]; ok && now.Before(mr.until) {
			found[code] = clone(mr.r)
		}
	}
	return found, nil
}

// Change applies change to room code under the store's lock.
func (m *Rooms) Change(_ context.Context, code string, keep time.Duration, change func(*lobby.Room) error) (lobby.Room, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	mr, ok := m.byCode[code]
	if !ok || !now.Before(mr.until) {
		return lobby.Room{}, false, nil
	}
	r := clone(mr.r)
	if err := change(&r); err != nil {
		return lobby.Room{}, true, err
	}
	if len(r.Members) == 0 {
		delete(m.byCode, code)
	} else {
		m.byCode[code] = memRoom{r: clone(r), until: now.Add(keep)}
	}
	return r, true, nil
}

// clone is r with a members list of its own: the store's copy and the
// caller's never share one.
func clone(r lobby.Room) lobby.Room {
	r.Members = slices.Clone(r.Members)
	return r
}
