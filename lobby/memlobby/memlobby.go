// Package memlobby holds the in-memory implementations of the lobby's
// stores, for one server on its own: Ratings (memlobby.go), the queue,
// challenges, invites and seats (shared.go), ghosts (ghosts.go), the
// days' boards (daily.go), the rooms (rooms.go) and the arenas
// (arenas.go); NewStores makes them all, as a lobby.Stores.
package memlobby

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"sirtommy/lobby"
	"sirtommy/race"
)

// maxHistory bounds each player's kept history: enough for any page, and
// memory stays bounded for a player who races all day.
const maxHistory = 200

// Ratings is an in-memory lobby.Ratings.
type Ratings struct {
	mu        sync.Mutex
	standings map[string]map[string]lobby.Standing // variant -> player -> standing
	history   map[string][]lobby.GameRecord        // player -> races, oldest first
	recorded  map[string]struct{}                  // race ids saved
}

var _ lobby.Ratings = (*Ratings)(nil)

// NewRatings makes an empty store.
func NewRatings() *Ratings {
	return &Ratings{standings: make(map[string]map[string]lobby.Standing), history: make(map[string][]lobby.GameRecord), recorded: make(map[string]struct{})}
}

// Standing is a player's standing in a variant.
func (r *Ratings) Standing(_ context.Context, variant, player string) (lobby.Standing, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.standings[variant][player]; ok {
		return s, nil
	}
	return lobby.NewStanding(player, "", variant), nil
}

// Save stores a race and the standings after it, or refuses stale ones
// with lobby.ErrStale; a race saved already is not saved again.
func (r *Ratings) Save(_ context.Context, g lobby.GameRecord, after []lobby.Standing) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.recorded[g.Race]; ok {
		return nil
	}
	for _, s := range after {
		if cur, ok := r.standings[s.Variant][s.Player]; ok && cur.Games >= s.Games {
			return fmt.Errorf("memlobby: save %s in %s with %d games, stored %d: %w", s.Player, s.Variant, s.Games, cur.Games, lobby.ErrStale)
		}
	}
	for _, s := range after {
		m := r.standings[s.Variant]
		if m == nil {
			m = make(map[string]lobby.Standing)
			r.standings[s.Variant] = m
		}
		m[s.Player] = s
	}
	r.recorded[g.Race] = struct{}{}
	for _, p := range g.Players {
		if p.ID == "" {
			continue
		}
		h := append(r.history[p.ID], g)
		if len(h) > maxHistory {
			h = h[len(h)-maxHistory:]
		}
		r.history[p.ID] = h
	}
	return nil
}

// Leaderboard is the n best rated players of a variant.
func (r *Ratings) Leaderboard(_ context.Context, variant string, n int) ([]lobby.Standing, error) {
	r.mu.Lock()
	out := make([]lobby.Standing, 0, len(r.standings[variant]))
	for _, s := range r.standings[variant] {
		if s.Games > 0 {
			out = append(out, s)
		}
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Rating.Rating != out[j].Rating.Rating {
			return out[i].Rating.Rating > out[j].Rating.Rating
		}
		return out[i].Player < out[j].Player
	})
	if n >= 0 && len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// Standings are a player's standings in every variant they played.
func (r *Ratings) Standings(_ context.Context, player string) ([]lobby.Standing, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []lobby.Standing{} // none is [], as the SQL store answers, never null
	for _, m := range r.standings {
		if s, ok := m[player]; ok {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Variant < out[j].Variant })
	return out, nil
}

// History is a player's last n races, newest first.
func (r *Ratings) History(_ context.Context, player string, n int) ([]lobby.GameRecord, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.history[player]
	out := make([]lobby.GameRecord, 0, min(n, len(h)))
	for i := len(h) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, h[i])
	}
	return out, nil
}

// Games is a page of a player's races, newest first; the cursor is the
// number of races skipped, as a decimal.
func (r *Ratings) Games(_ context.Context, player, cursor string, n int) (lobby.GamesPage, error) {
	skip := 0
	if cursor != "" {
		v, err := strconv.Atoi(cursor)
		if err != nil || v < 0 {
			return lobby.GamesPage{}, race.Errorf(lobby.CodeBadCursor, "%q is not a cursor of this server's", cursor)
		}
		skip = v
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.history[player]
	page := lobby.GamesPage{Games: []lobby.GameRecord{}}
	for i := len(h) - 1 - skip; i >= 0 && len(page.Games) < n; i-- {
		page.Games = append(page.Games, h[i])
	}
	if left := len(h) - skip - len(page.Games); left > 0 && n > 0 {
		page.Next = strconv.Itoa(skip + len(page.Games))
	}
	return page, nil
}

// Changes is every change of a player's rating in a variant, oldest first.
func (r *Ratings) Changes(_ context.Context, player, variant string) ([]lobby.RatingChange, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []lobby.RatingChange{}
	for _, g := range r.history[player] {
		if !g.Rated || g.Variant != variant {
			continue
		}
		for s, p := range g.Players {
			if p.ID == player {
				out = append(out, lobby.RatingChange{Race: g.Race, Variant: g.Variant, At: g.At, Before: lobby.RatingAt(g.Before, s), After: lobby.RatingAt(g.After, s)})
			}
		}
	}
	return out, nil
}
