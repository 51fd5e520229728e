package lobby_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

func newClock() *racetest.Clock {
	return racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

func pairNames(ps []lobby.Pair) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.A.Player+"-"+p.B.Player)
	}
	return out
}

func join(t *testing.T, m *lobby.Matchmaker, player, variant string, rating float64) {
	t.Helper()
	if err := m.Join(player, variant, rating); err != nil {
		t.Fatal(err)
	}
}

func TestMatchmakerPairsClosestRatings(t *testing.T) {
	clock := newClock()
	m := lobby.NewMatchmaker(lobby.MatchConfig{}, clock)
	join(t, m, "a", "classic", 1500)
	join(t, m, "b", "classic", 1590)
	join(t, m, "c", "classic", 1530)
	join(t, m, "d", "classic", 1580)
	// a waited longest and takes the closest (c); b then takes d.
	got := pairNames(m.Pair())
	if fmt.Sprint(got) != "[a-c b-d]" {
		t.Fatalf("pairs %v, want [a-c b-d]", got)
	}
	if m.Len() != 0 {
		t.Fatalf("%d left in the queue", m.Len())
	}
}

func TestMatchmakerQueuesByVariantAndNeverSelf(t *testing.T) {
	clock := newClock()
	m := lobby.NewMatchmaker(lobby.MatchConfig{}, clock)
	join(t, m, "a", "classic", 1500)
	join(t, m, "b", "strict", 1500)
	if err := m.Join("a", "strict", 1500); race.ErrorCode(err) != lobby.CodeAlreadyQueued {
		t.Fatalf("second queue: %v, want %s", err, lobby.CodeAlreadyQueued)
	}
	if err := m.Join("a", "classic", 1500); race.ErrorCode(err) != lobby.CodeAlreadyQueued {
		t.Fatalf("same queue twice: %v", err)
	}
	clock.Advance(time.Minute)
	if got := m.Pair(); len(got) != 0 {
		t.Fatalf("paired across variants or with self: %v", pairNames(got))
	}
	if c := m.Counts(); c["classic"] != 1 || c["strict"] != 1 {
		t.Fatalf("counts %v", c)
	}
}

func TestMatchmakerWidensWithWaiting(t *testing.T) {
	clock := newClock()
	m := lobby.NewMatchmaker(lobby.MatchConfig{}, clock)
	join(t, m, "a", "classic", 1500)
	join(t, m, "b", "classic", 1650) // 150 apart: allowed after 5 s
	join(t, m, "c", "classic", 2500) // 850 apart from b: only after 30 s
	for _, step := range []struct {
		advance time.Duration
		want    string
	}{
		{0, "[]"},
		{4 * time.Second, "[]"},
		{time.Second, "[a-b]"},
		{20 * time.Second, "[]"},
	} {
		clock.Advance(step.advance)
		if got := fmt.Sprint(pairNames(m.Pair())); got != step.want {
			t.Fatalf("after %v more: pairs %s, want %s", step.advance, got, step.want)
		}
	}
	join(t, m, "d", "classic", 1000) // 1500 from c, who has waited 25 s
	clock.Advance(4 * time.Second)
	if got := m.Pair(); len(got) != 0 {
		t.Fatalf("paired at 29 s: %v", pairNames(got))
	}
	clock.Advance(time.Second)
	if got := fmt.Sprint(pairNames(m.Pair())); got != "[c-d]" {
		t.Fatalf("at 30 s: %s, want [c-d]", got)
	}
}

func TestMatchmakerFairOrder(t *testing.T) {
	clock := newClock()
	m := lobby.NewMatchmaker(lobby.MatchConfig{}, clock)
	// Equal ratings: the earliest arrivals are paired first, in order, and
	// the last one waits.
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		join(t, m, p, "classic", 1500)
		clock.Advance(time.Millisecond)
	}
	if got := fmt.Sprint(pairNames(m.Pair())); got != "[a-b c-d]" {
		t.Fatalf("pairs %s, want [a-b c-d]", got)
	}
	// Equal gaps either side: the earlier arrival is chosen.
	join(t, m, "f", "classic", 1450) // e (1500) waits longest; f and g are both 50 away
	join(t, m, "g", "classic", 1550)
	if got := fmt.Sprint(pairNames(m.Pair())); got != "[e-f]" {
		t.Fatalf("pairs %s, want [e-f]", got)
	}
}

func TestMatchmakerLeaveAndOverdue(t *testing.T) {
	clock := newClock()
	m := lobby.NewMatchmaker(lobby.MatchConfig{}, clock)
	join(t, m, "a", "classic", 1500)
	if !m.Leave("a") || m.Leave("a") {
		t.Fatal("leave should report true once")
	}
	join(t, m, "b", "classic", 1500)
	if got := m.Pair(); len(got) != 0 {
		t.Fatalf("paired a player who left: %v", pairNames(got))
	}
	clock.Advance(20 * time.Second)
	join(t, m, "c", "strict", 1500)
	if got := m.Overdue(20 * time.Second); len(got) != 1 || got[0].Player != "b" {
		t.Fatalf("overdue %v, want b", got)
	}
	if got := m.Overdue(20 * time.Second); len(got) != 0 {
		t.Fatalf("overdue twice: %v", got)
	}
}

// TestMatchmakerConcurrentJoinsAndLeaves runs joins, leaves and pairing
// passes at once (run it with -race): nobody is paired twice or with
// themselves, and nobody who left is paired.
func TestMatchmakerConcurrentJoinsAndLeaves(t *testing.T) {
	clock := newClock()
	m := lobby.NewMatchmaker(lobby.MatchConfig{}, clock)
	const workers, perWorker = 8, 200
	var (
		mu     sync.Mutex
		pairs  []lobby.Pair
		left   = make(map[string]bool)
		wg     sync.WaitGroup
		stopMu sync.Mutex
		done   bool
	)
	pairer := func() {
		defer wg.Done()
		for {
			got := m.Pair()
			mu.Lock()
			pairs = append(pairs, got...)
			mu.Unlock()
			stopMu.Lock()
			d := done
			stopMu.Unlock()
			if d {
				return
			}
		}
	}
	wg.Add(2)
	go pairer()
	go pairer()
	var joiners sync.WaitGroup
	for w := range workers {
		joiners.Add(1)
		go func() {
			defer joiners.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range perWorker {
				p := fmt.Sprintf("w%d-%d", w, i)
				if err := m.Join(p, "classic", 1200+rng.Float64()*600); err != nil {
					t.Error(err)
					return
				}
				if rng.IntN(3) == 0 && m.Leave(p) {
					mu.Lock()
					left[p] = true
					mu.Unlock()
				}
				if rng.IntN(10) == 0 {
					clock.Advance(time.Second)
				}
			}
		}()
	}
	joiners.Wait()
	clock.Advance(time.Minute)
	stopMu.Lock()
	done = true
	stopMu.Unlock()
	wg.Wait()
	pairs = append(pairs, m.Pair()...)
	seen := make(map[string]bool)
	for _, p := range pairs {
		if p.A.Player == p.B.Player {
			t.Fatalf("%s paired with themselves", p.A.Player)
		}
		for _, who := range []string{p.A.Player, p.B.Player} {
			if seen[who] {
				t.Fatalf("%s paired twice", who)
			}
			if left[who] {
				t.Fatalf("%s paired after leaving", who)
			}
			seen[who] = true
		}
	}
	if want := workers*perWorker - len(left); len(seen)+m.Len() != want {
		t.Fatalf("%d paired + %d queued, want %d", len(seen), m.Len(), want)
	}
	if m.Len() > 1 {
		t.Fatalf("%d still queued after a minute", m.Len())
	}
}

// BenchmarkPair10000 pairs 10,000 queued players with ratings spread like a
// real population, half of them waiting long enough for a wide gap.
func BenchmarkPair10000(b *testing.B) {
	const players = 10000
	rng := rand.New(rand.NewPCG(1, 2))
	ratings := make([]float64, players)
	for i := range ratings {
		ratings[i] = 1500 + rng.NormFloat64()*300
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		clock := newClock()
		m := lobby.NewMatchmaker(lobby.MatchConfig{}, clock)
		for i, r := range ratings {
			if i == players/2 {
				clock.Advance(10 * time.Second)
			}
			_ = m.Join(fmt.Sprintf("p%d", i), "classic", r)
		}
		b.StartTimer()
		got := m.Pair()
		if len(got) < players/2-10 {
			b.Fatalf("only %d pairs", len(got))
		}
	}
}
