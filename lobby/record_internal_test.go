package lobby

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/race"
)

// sharedRatings is a Ratings whose first Save finds that another instance
// saved one more race for "a" since the lobby read a's standing.
type sharedRatings struct {
	mu         sync.Mutex
	standings  map[string]Standing // by player; one variant
	saves      int
	interfered bool
}

func (r *sharedRatings) Standing(_ context.Context, variant, player string) (Standing, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.standings[player]; ok {
		return s, nil
	}
	return NewStanding(player, "", variant), nil
}

func (r *sharedRatings) Save(_ context.Context, _ GameRecord, after []Standing) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.saves++
	if !r.interfered {
		r.interfered = true
		s := NewStanding("a", "A", "classic")
		s.Games, s.Wins, s.Streak, s.BestStreak = 1, 1, 1, 1
		r.standings["a"] = s // the other instance's save
	}
	for _, s := range after {
		if cur, ok := r.standings[s.Player]; ok && cur.Games >= s.Games {
			return fmt.Errorf("stale %s: %w", s.Player, ErrStale)
		}
	}
	for _, s := range after {
		r.standings[s.Player] = s
	}
	return nil
}

func (r *sharedRatings) Leaderboard(context.Context, string, int) ([]Standing, error) {
	return nil, nil
}
func (r *sharedRatings) Standings(context.Context, string) ([]Standing, error) { return nil, nil }
func (r *sharedRatings) History(context.Context, string, int) ([]GameRecord, error) {
	return nil, nil
}
func (r *sharedRatings) Games(context.Context, string, string, int) (GamesPage, error) {
	return GamesPage{}, nil
}
func (r *sharedRatings) Changes(context.Context, string, string) ([]RatingChange, error) {
	return nil, nil
}

// TestRecordRetriesStaleStandings checks that a result saved against a
// standing another instance changed meanwhile is recomputed, not lost.
func TestRecordRetriesStaleStandings(t *testing.T) {
	r := &sharedRatings{standings: make(map[string]Standing)}
	cfg := Config{}
	cfg.fill()
	l := &Lobby{deps: Deps{Stores: Stores{Ratings: r}}, cfg: cfg, log: zerolog.Nop()}
	w := 0
	err := l.record("r1", "classic", []PlayerRef{{ID: "a", Name: "A"}, {ID: "b", Name: "B"}},
		race.Result{Outcome: "win", Winner: &w, Rated: true}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if r.saves != 2 {
		t.Errorf("%d saves, want a stale one and a retry", r.saves)
	}
	if a := r.standings["a"]; a.Games != 2 || a.Wins != 2 || a.Streak != 2 {
		t.Errorf("a after both instances' races: %+v", a)
	}
	if b := r.standings["b"]; b.Games != 1 || b.Losses != 1 {
		t.Errorf("b: %+v", b)
	}
}
