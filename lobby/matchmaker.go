package lobby

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"sirtommy/race"
)

// Matchmaking defaults.
const (
	// DefaultInitialGap is the largest rating gap allowed between two
	// players who have just joined: about a 64% expected score, a fair race.
	DefaultInitialGap = 100.0
	// DefaultGapGrowth widens the allowed gap by this many rating points per
	// second of waiting: 100 at once, 250 after 15 s, 400 just before 30 s.
	DefaultGapGrowth = 10.0
	// DefaultAnyGapAfter is the wait after which any opponent will do: half
	// a minute is as long as people wait for a quick game.
	DefaultAnyGapAfter = 30 * time.Second
)

// MatchConfig tunes the matchmaker; zero fields take the defaults.
type MatchConfig struct {
	InitialGap  float64       // rating points
	GapGrowth   float64       // rating points per second of waiting
	AnyGapAfter time.Duration // then any gap is allowed
}

func (c *MatchConfig) fill() {
	if c.InitialGap <= 0 {
		c.InitialGap = DefaultInitialGap
	}
	if c.GapGrowth <= 0 {
		c.GapGrowth = DefaultGapGrowth
	}
	if c.AnyGapAfter <= 0 {
		c.AnyGapAfter = DefaultAnyGapAfter
	}
}

// Gap is the rating gap allowed after waiting w.
func (c MatchConfig) Gap(w time.Duration) float64 {
	if w >= c.AnyGapAfter {
		return math.Inf(1)
	}
	return c.InitialGap + c.GapGrowth*w.Seconds()
}

// Seeker is a player in a quick-play queue.
type Seeker struct {
	Player  string
	Name    string // display name, for the opponent's matched event
	Variant string
	Rating  float64
	Since   time.Time // when they joined the queue
	seq     uint64    // join order, to break ties by who came first
	offered bool      // offered a race against the computer already
}

// Pair is two players the matchmaker put together; A waited longer.
type Pair struct {
	Variant string
	A, B    Seeker
}

// Matchmaker keeps one quick-play queue per variant and pairs its players:
// the longest waiting first, each with the closest rating in the same
// queue, if the gap is within what the longer wait of the two allows. A
// player is in at most one queue; pairing takes both out, so that nobody is
// paired twice. Its methods are safe for concurrent use.
type Matchmaker struct {
	cfg   MatchConfig
	clock race.Clock

	mu     sync.Mutex
	seq    uint64
	queues map[string][]*Seeker // by variant, in join order
	where  map[string]*Seeker   // by player
}

// NewMatchmaker makes empty queues.
func NewMatchmaker(cfg MatchConfig, clock race.Clock) *Matchmaker {
	cfg.fill()
	return &Matchmaker{cfg: cfg, clock: clock, queues: make(map[string][]*Seeker), where: make(map[string]*Seeker)}
}

// Config is the matchmaker's configuration, defaults filled in.
func (m *Matchmaker) Config() MatchConfig { return m.cfg }

// Join puts player in variant's queue; a player already in a queue is
// refused with CodeAlreadyQueued.
func (m *Matchmaker) Join(player, variant string, rating float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.where[player]; ok {
		return race.Errorf(CodeAlreadyQueued, "you are already in the %s queue", s.Variant)
	}
	m.seq++
	s := &Seeker{Player: player, Variant: variant, Rating: rating, Since: m.clock.Now(), seq: m.seq}
	m.where[player] = s
	m.queues[variant] = append(m.queues[variant], s)
	return nil
}

// Leave takes player out of their queue and reports whether they were in
// one.
func (m *Matchmaker) Leave(player string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.where[player]
	if !ok {
		return false
	}
	delete(m.where, player)
	q := m.queues[s.Variant]
	for i, x := range q {
		if x == s {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(m.queues, s.Variant)
	} else {
		m.queues[s.Variant] = q
	}
	return true
}

// Queued reports the queue player is in.
func (m *Matchmaker) Queued(player string) (variant string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.where[player]
	if !ok {
		return "", false
	}
	return s.Variant, true
}

// Counts is the number of players in each variant's queue.
func (m *Matchmaker) Counts() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int, len(m.queues))
	for v, q := range m.queues {
		out[v] = len(q)
	}
	return out
}

// Len is the number of players queued.
func (m *Matchmaker) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.where)
}

// Overdue returns the players who have waited at least d and were not
// returned by Overdue before: they are offered the computer.
func (m *Matchmaker) Overdue(d time.Duration) []Seeker {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	var out []Seeker
	for _, q := range m.queues {
		for _, s := range q {
			if !s.offered && now.Sub(s.Since) >= d {
				s.offered = true
				out = append(out, *s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// Pair makes every pair it can now, takes them out of the queues and
// returns them, longest waiting first.
func (m *Matchmaker) Pair() []Pair {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	var out []Pair
	for v, q := range m.queues {
		if len(q) < 2 {
			continue
		}
		pairs, rest := m.pairQueue(q, now)
		for _, p := range pairs {
			delete(m.where, p.A.Player)
			delete(m.where, p.B.Player)
			p.Variant = v
			out = append(out, p)
		}
		if len(rest) == 0 {
			delete(m.queues, v)
		} else {
			m.queues[v] = rest
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].A.seq < out[j].A.seq })
	return out
}

// pairQueue pairs one queue (in join order). It walks the players from the
// longest waiting; each takes the nearest rating among those still
// unpaired (found in O(1) in a list sorted by rating, from which paired
// players are unlinked), the earlier arrival on a tie, if the gap is within
// what the longer wait of the two allows. O(n log n) for the sort.
func (m *Matchmaker) pairQueue(q []*Seeker, now time.Time) (pairs []Pair, rest []*Seeker) {
	return pairQueue(m.cfg, q, now)
}

// PairQueue plans the pairs of one queue the way the Matchmaker makes
// them, for shared queues kept elsewhere (redislobby): q is in join order,
// cfg's zero fields take the defaults, and nothing is taken out of q.
func PairQueue(cfg MatchConfig, q []Seeker, now time.Time) []Pair {
	cfg.fill()
	ptrs := make([]*Seeker, len(q))
	for i := range q {
		ptrs[i] = &q[i]
	}
	pairs, _ := pairQueue(cfg, ptrs, now)
	return pairs
}

// pairQueue pairs q, which is in join order, so that a lower index is an
// earlier arrival.
func pairQueue(cfg MatchConfig, q []*Seeker, now time.Time) (pairs []Pair, rest []*Seeker) {
	n := len(q)
	order := make([]int, n) // queue indexes by rating, then arrival
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		x, y := q[a], q[b]
		if c := cmp.Compare(x.Rating, y.Rating); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	pairs = make([]Pair, 0, n/2)
	pos := make([]int, n)     // queue index -> place in order
	prev := make([]int, n)    // place -> previous unpaired place, or -1
	next := make([]int, n)    // place -> next unpaired place, or n
	paired := make([]bool, n) // by queue index
	for p, i := range order {
		pos[i], prev[p], next[p] = p, p-1, p+1
	}
	unlink := func(p int) {
		if prev[p] >= 0 {
			next[prev[p]] = next[p]
		}
		if next[p] < n {
			prev[next[p]] = prev[p]
		}
	}
	for i, s := range q {
		if paired[i] {
			continue
		}
		p := pos[i]
		best := -1
		bestGap := math.Inf(1)
		for _, c := range [2]int{prev[p], next[p]} {
			if c < 0 || c >= n {
				continue
			}
			o := q[order[c]]
			gap := math.Abs(o.Rating - s.Rating)
			if gap < bestGap || (gap == bestGap && order[c] < order[best]) {
				best, bestGap = c, gap
			}
		}
		if best < 0 {
			continue
		}
		o := q[order[best]]
		first := s.Since // the longer wait of the two counts
		if o.Since.Before(first) {
			first = o.Since
		}
		wait := now.Sub(first)
		if bestGap > cfg.Gap(wait) {
			continue
		}
		paired[i], paired[order[best]] = true, true
		unlink(p)
		unlink(best)
		a, b := *s, *o
		if order[best] < i {
			a, b = b, a
		}
		pairs = append(pairs, Pair{A: a, B: b})
	}
	for i, s := range q {
		if !paired[i] {
			rest = append(rest, s)
		}
	}
	return pairs, rest
}
