package lobby

import (
	"context"
	"sync"
	"time"

	"sirtommy/race"
)

// The in-memory Shared stores: one instance on its own, the default. Each
// has its own mutex, so each claim is atomic.

// MemoryQueue is a Queue in memory: the Matchmaker, with names.
type MemoryQueue struct {
	mm *Matchmaker

	mu    sync.Mutex        // taken before the seats' (MemorySeats.Claim)
	names map[string]string // queued player -> display name
	seats *MemorySeats      // whose marks Join checks (NewMemoryShared)
}

var _ Queue = (*MemoryQueue)(nil)

// NewMemoryQueue makes empty queues (cfg's zero fields take the
// defaults).
func NewMemoryQueue(cfg MatchConfig, clock race.Clock) *MemoryQueue {
	return &MemoryQueue{mm: NewMatchmaker(cfg, clock), names: make(map[string]string)}
}

// Join queues s.
func (q *MemoryQueue) Join(_ context.Context, s Seeker) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.seats != nil {
		if id, ok, _ := q.seats.Racing(context.Background(), s.Player); ok {
			return inRace(id)
		}
	}
	if err := q.mm.Join(s.Player, s.Variant, s.Rating); err != nil {
		return err
	}
	q.names[s.Player] = s.Name
	return nil
}

// Leave unqueues player.
func (q *MemoryQueue) Leave(_ context.Context, player string) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.names, player)
	return q.mm.Leave(player), nil
}

// Queued reports player's queue.
func (q *MemoryQueue) Queued(_ context.Context, player string) (string, bool, error) {
	v, ok := q.mm.Queued(player)
	return v, ok, nil
}

// Pair pairs every queue.
func (q *MemoryQueue) Pair(context.Context) ([]Pair, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	pairs := q.mm.Pair()
	for i := range pairs {
		p := &pairs[i]
		p.A.Name, p.B.Name = q.names[p.A.Player], q.names[p.B.Player]
		delete(q.names, p.A.Player)
		delete(q.names, p.B.Player)
	}
	return pairs, nil
}

// MemoryChallenges is Challenges in memory.
type MemoryChallenges struct {
	mu   sync.Mutex
	byID map[string]ChallengeInfo
}

var _ Challenges = (*MemoryChallenges)(nil)

// NewMemoryChallenges makes an empty list.
func NewMemoryChallenges() *MemoryChallenges {
	return &MemoryChallenges{byID: make(map[string]ChallengeInfo)}
}

// Open lists c.
func (m *MemoryChallenges) Open(_ context.Context, c ChallengeInfo) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.byID {
		if o.Player == c.Player {
			return race.Errorf(CodeAlreadyQueued, "you already have challenge %s open", o.ID)
		}
	}
	m.byID[c.ID] = c
	return nil
}

// Take withdraws challenge id.
func (m *MemoryChallenges) Take(_ context.Context, id string) (ChallengeInfo, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.byID[id]
	delete(m.byID, id)
	return c, ok, nil
}

// Get finds challenge id.
func (m *MemoryChallenges) Get(_ context.Context, id string) (ChallengeInfo, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.byID[id]
	return c, ok, nil
}

// Of is player's open challenge.
func (m *MemoryChallenges) Of(_ context.Context, player string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, c := range m.byID {
		if c.Player == player {
			return id, true, nil
		}
	}
	return "", false, nil
}

// List is every open challenge.
func (m *MemoryChallenges) List(context.Context) ([]ChallengeInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ChallengeInfo, 0, len(m.byID))
	for _, c := range m.byID {
		out = append(out, c)
	}
	return out, nil
}

// Keep does nothing: in memory, challenges die with their sessions.
func (m *MemoryChallenges) Keep(context.Context, []string) error { return nil }

// MemoryInvites is Invites in memory.
type MemoryInvites struct {
	clock race.Clock

	mu     sync.Mutex
	byCode map[string]memInvite
}

type memInvite struct {
	inv   Invite
	until time.Time
}

var _ Invites = (*MemoryInvites)(nil)

// NewMemoryInvites makes an empty store; clock times the keeping.
func NewMemoryInvites(clock race.Clock) *MemoryInvites {
	return &MemoryInvites{clock: clock, byCode: make(map[string]memInvite)}
}

// Put stores inv until keep has passed (and drops those past theirs).
func (m *MemoryInvites) Put(_ context.Context, inv Invite, keep time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	for code, mi := range m.byCode {
		if !now.Before(mi.until) {
			delete(m.byCode, code)
		}
	}
	m.byCode[inv.Code] = memInvite{inv: inv, until: now.Add(keep)}
	return nil
}

// Get finds invite code.
func (m *MemoryInvites) Get(_ context.Context, code string) (Invite, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mi, ok := m.byCode[code]
	if !ok || !m.clock.Now().Before(mi.until) {
		return Invite{}, false, nil
	}
	return mi.inv, true, nil
}

// Take uses invite code up.
func (m *MemoryInvites) Take(_ context.Context, code string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mi, ok := m.byCode[code]
	delete(m.byCode, code)
	return ok && m.clock.Now().Before(mi.until), nil
}

// MemorySeats is Seats in memory; marks do not lapse (the lobby frees
// them when its races end).
type MemorySeats struct {
	queue *MemoryQueue // whose players Claim takes out (NewMemoryShared)

	mu     sync.Mutex
	racing map[string]string // player -> race ("" while made)
}

// NewMemoryShared makes the in-memory Queue, Challenges, Invites and
// Seats of one lobby, the queue and the seats tied together as the
// interfaces ask.
func NewMemoryShared(cfg MatchConfig, clock race.Clock) Shared {
	q, s := NewMemoryQueue(cfg, clock), NewMemorySeats()
	q.seats, s.queue = s, q
	return Shared{Queue: q, Challenges: NewMemoryChallenges(), Invites: NewMemoryInvites(clock), Seats: s}
}

var _ Seats = (*MemorySeats)(nil)

// NewMemorySeats makes an empty store.
func NewMemorySeats() *MemorySeats {
	return &MemorySeats{racing: make(map[string]string)}
}

// Claim marks players as being paired unless one is busy, and takes them
// out of the queue.
func (m *MemorySeats) Claim(_ context.Context, players []string, _ time.Duration) (string, error) {
	if m.queue != nil {
		m.queue.mu.Lock() // first, as in Join
		defer m.queue.mu.Unlock()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range players {
		if _, ok := m.racing[p]; ok {
			return p, nil
		}
	}
	for _, p := range players {
		m.racing[p] = ""
		if m.queue != nil {
			m.queue.mm.Leave(p)
			delete(m.queue.names, p)
		}
	}
	return "", nil
}

// Assign records raceID for players.
func (m *MemorySeats) Assign(_ context.Context, raceID string, players []string, _ time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range players {
		m.racing[p] = raceID
	}
	return nil
}

// Racing is player's race.
func (m *MemorySeats) Racing(_ context.Context, player string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.racing[player]
	return id, ok, nil
}

// Free ends raceID's marks.
func (m *MemorySeats) Free(_ context.Context, raceID string, players []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range players {
		if id, ok := m.racing[p]; ok && id == raceID {
			delete(m.racing, p)
		}
	}
	return nil
}
