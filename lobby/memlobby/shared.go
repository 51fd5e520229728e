package memlobby

import (
	"context"
	"sync"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
)

// The in-memory stores of lobby/shared.go's interfaces, for one instance
// on its own. Each has its own mutex, so each claim is atomic.

// Queue is a lobby.Queue in memory: the lobby.Matchmaker, with names.
type Queue struct {
	mm *lobby.Matchmaker

	mu    sync.Mutex        // taken before the seats' (Seats.Claim)
	names map[string]string // queued player -> display name
	seats *Seats            // whose marks Join checks (NewStores)
}

var _ lobby.Queue = (*Queue)(nil)

// NewQueue makes empty queues (cfg's zero fields take the
// defaults).
func NewQueue(cfg lobby.MatchConfig, clock race.Clock) *Queue {
	return &Queue{mm: lobby.NewMatchmaker(cfg, clock), names: make(map[string]string)}
}

// Join queues s.
func (q *Queue) Join(_ context.Context, s lobby.Seeker) error {
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
func (q *Queue) Leave(_ context.Context, player string) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.names, player)
	return q.mm.Leave(player), nil
}

// Queued reports player's queue.
func (q *Queue) Queued(_ context.Context, player string) (string, bool, error) {
	v, ok := q.mm.Queued(player)
	return v, ok, nil
}

// Pair pairs every queue.
func (q *Queue) Pair(context.Context) ([]lobby.Pair, error) {
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

// Challenges is lobby.Challenges in memory.
type Challenges struct {
	mu   sync.Mutex
	byID map[string]lobby.ChallengeInfo
}

var _ lobby.Challenges = (*Challenges)(nil)

// NewChallenges makes an empty list.
func NewChallenges() *Challenges {
	return &Challenges{byID: make(map[string]lobby.ChallengeInfo)}
}

// Open lists c.
func (m *Challenges) Open(_ context.Context, c lobby.ChallengeInfo) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.byID {
		if o.Player == c.Player {
			return race.Errorf(lobby.CodeAlreadyQueued, "you already have challenge %s open", o.ID)
		}
	}
	m.byID[c.ID] = c
	return nil
}

// Take withdraws challenge id.
func (m *Challenges) Take(_ context.Context, id string) (lobby.ChallengeInfo, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.byID[id]
	delete(m.byID, id)
	return c, ok, nil
}

// Get finds challenge id.
func (m *Challenges) Get(_ context.Context, id string) (lobby.ChallengeInfo, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.byID[id]
	return c, ok, nil
}

// Of is player's open challenge.
func (m *Challenges) Of(_ context.Context, player string) (string, bool, error) {
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
func (m *Challenges) List(context.Context) ([]lobby.ChallengeInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]lobby.ChallengeInfo, 0, len(m.byID))
	for _, c := range m.byID {
		out = append(out, c)
	}
	return out, nil
}

// Keep does nothing: in memory, challenges die with their sessions.
func (m *Challenges) Keep(context.Context, []string) error { return nil }

// Invites is lobby.Invites in memory.
type Invites struct {
	clock race.Clock

	mu     sync.Mutex
	byCode map[string]memInvite
}

type memInvite struct {
	inv   lobby.Invite
	until time.Time
}

var _ lobby.Invites = (*Invites)(nil)

// NewInvites makes an empty store; clock times the keeping.
func NewInvites(clock race.Clock) *Invites {
	return &Invites{clock: clock, byCode: make(map[string]memInvite)}
}

// Put stores inv until keep has passed (and drops those past theirs).
func (m *Invites) Put(_ context.Context, inv lobby.Invite, keep time.Duration) error {
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
func (m *Invites) Get(_ context.Context, code string) (lobby.Invite, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mi, ok := m.byCode[code]
	if !ok || !m.clock.Now().Before(mi.until) {
		return lobby.Invite{}, false, nil
	}
	return mi.inv, true, nil
}

// Take uses invite code up.
func (m *Invites) Take(_ context.Context, code string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mi, ok := m.byCode[code]
	delete(m.byCode, code)
	return ok && m.clock.Now().Before(mi.until), nil
}

// Seats is lobby.Seats in memory; marks do not lapse (the lobby frees
// them when its races end).
type Seats struct {
	queue *Queue // whose players Claim takes out (NewStores)

	mu     sync.Mutex
	racing map[string]string // player -> race ("" while made)
}

// NewStores makes every in-memory store of one lobby on its own: its
// Ratings, Queue, Challenges, Invites and Seats (the queue and the seats
// tied together as the interfaces ask), Ghosts, Dailies, Rooms, Arenas
// and Mistakes. Courier, Races and Presence stay nil: every connection is here.
func NewStores(cfg lobby.MatchConfig, clock race.Clock) lobby.Stores {
	q, s := NewQueue(cfg, clock), NewSeats()
	q.seats, s.queue = s, q
	return lobby.Stores{Ratings: NewRatings(), Queue: q, Challenges: NewChallenges(), Invites: NewInvites(clock), Seats: s,
		Ghosts: NewGhosts(), Dailies: NewDailies(), Rooms: NewRooms(clock), Arenas: NewArenas(),
		Mistakes: NewMistakes()}
}

// inRace is the lobby's refusal for a player in race id ("" while it is
// made), as Queue.Join answers it.
func inRace(id string) error {
	if id == "" {
		return race.Errorf(lobby.CodeInRace, "you were just paired: your race is being made")
	}
	return race.Errorf(lobby.CodeInRace, "you are in race %s until it is over", id)
}

var _ lobby.Seats = (*Seats)(nil)

// NewSeats makes an empty store.
func NewSeats() *Seats {
	return &Seats{racing: make(map[string]string)}
}

// Claim marks players as being paired unless one is busy, and takes them
// out of the queue.
func (m *Seats) Claim(_ context.Context, players []string, _ time.Duration) (string, error) {
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
func (m *Seats) Assign(_ context.Context, raceID string, players []string, _ time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range players {
		m.racing[p] = raceID
	}
	return nil
}

// Racing is player's race.
func (m *Seats) Racing(_ context.Context, player string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.racing[player]
	return id, ok, nil
}

// Free ends raceID's marks.
func (m *Seats) Free(_ context.Context, raceID string, players []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range players {
		if id, ok := m.racing[p]; ok && id == raceID {
			delete(m.racing, p)
		}
	}
	return nil
}
