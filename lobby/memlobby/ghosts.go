package memlobby

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"time"

	"sirtommy/lobby"
)

// Ghosts is the in-memory lobby.Ghosts, for one instance. It keeps
// challenges until they pass their keep time, the deals seen and the
// last maxGhostRuns runs of each player.
type Ghosts struct {
	mu      sync.Mutex
	ghosts  map[string]memGhost
	seen    map[string]bool // variant/deal/player
	against map[string][]lobby.GhostRun
	raced   map[string][]lobby.GhostRun
	tally   map[string]lobby.GhostTally
	runs    map[string]bool // races recorded
	best    map[string]lobby.BestGame
}

type memGhost struct {
	g    lobby.GhostRecord
	keep time.Time
}

var _ lobby.Ghosts = (*Ghosts)(nil)

// maxGhostRuns bounds the runs kept per player and list.
const maxGhostRuns = 100

// NewGhosts makes an empty store.
func NewGhosts() *Ghosts {
	return &Ghosts{ghosts: make(map[string]memGhost), seen: make(map[string]bool),
		against: make(map[string][]lobby.GhostRun), raced: make(map[string][]lobby.GhostRun),
		tally: make(map[string]lobby.GhostTally), runs: make(map[string]bool), best: make(map[string]lobby.BestGame)}
}

// Put stores g until keep has passed (after its Made time).
func (m *Ghosts) Put(_ context.Context, g lobby.GhostRecord, keep time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ghosts[g.ID] = memGhost{g: g, keep: g.Made.Add(keep)}
	for id, x := range m.ghosts { // drop those past their keep
		if x.keep.Before(g.Made) {
			delete(m.ghosts, id)
		}
	}
	return nil
}

// Get finds challenge id.
func (m *Ghosts) Get(_ context.Context, id string) (lobby.GhostRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	x, ok := m.ghosts[id]
	return x.g, ok, nil
}

// Mine lists player's challenges, newest first.
func (m *Ghosts) Mine(_ context.Context, player string) ([]lobby.GhostInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []lobby.GhostInfo
	for _, x := range m.ghosts {
		if x.g.Author == player {
			out = append(out, x.g.GhostInfo)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Made.Equal(out[j].Made) {
			return out[i].Made.After(out[j].Made)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func seenKey(variant string, deal uint64, player string) string {
	return variant + "/" + strconv.FormatUint(deal, 10) + "/" + player
}

// See marks the deal seen by player.
func (m *Ghosts) See(_ context.Context, variant string, deal uint64, player string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := seenKey(variant, deal, player)
	already := m.seen[k]
	m.seen[k] = true
	return already, nil
}

// Seen reports whether player has seen the deal.
func (m *Ghosts) Seen(_ context.Context, variant string, deal uint64, player string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[seenKey(variant, deal, player)], nil
}

// AddRun records r once per race.
func (m *Ghosts) AddRun(_ context.Context, r lobby.GhostRun) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs[r.Race] {
		return nil
	}
	m.runs[r.Race] = true
	push := func(l []lobby.GhostRun) []lobby.GhostRun {
		l = append([]lobby.GhostRun{r}, l...)
		return l[:min(len(l), maxGhostRuns)]
	}
	m.against[r.Author] = push(m.against[r.Author])
	m.raced[r.Player] = push(m.raced[r.Player])
	t := m.tally[r.Player]
	addRun(&t, r.Outcome)
	m.tally[r.Player] = t
	return nil
}

// Runs are player's last n runs each way and their record.
func (m *Ghosts) Runs(_ context.Context, player string, n int) (against, raced []lobby.GhostRun, tally lobby.GhostTally, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, r := m.against[player], m.raced[player]
	return append([]lobby.GhostRun(nil), a[:min(n, len(a))]...), append([]lobby.GhostRun(nil), r[:min(n, len(r))]...), m.tally[player], nil
}

// addRun counts one run's outcome in t.
func addRun(t *lobby.GhostTally, outcome string) {
	t.Races++
	switch outcome {
	case "won":
		t.Wins++
	case "lost":
		t.Losses++
	default:
		t.Draws++
	}
}

// KeepBest keeps b if it has more cards than the best so far.
func (m *Ghosts) KeepBest(_ context.Context, variant string, deal uint64, player string, b lobby.BestGame) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := seenKey(variant, deal, player)
	if cur, ok := m.best[k]; !ok || b.Score > cur.Score {
		m.best[k] = b
	}
	return nil
}

// Best is player's best game on the deal.
func (m *Ghosts) Best(_ context.Context, variant string, deal uint64, player string) (lobby.BestGame, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.best[seenKey(variant, deal, player)]
	return b, ok, nil
}
