package lobby_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/lobby/glicko2"
	"sirtommy/race"
)

// saveRaces stores n finished races of ann against bob, one a minute from
// the fixture's start, as the lobby records them: every third against the
// computer (unrated), the rated ones alternately in classic and aces-out,
// ann's rating going up by 10 each. It returns the races' ids, oldest
// first.
func saveRaces(t *testing.T, r lobby.Ratings, n int) []string {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	games := map[string]int{}
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("race%03d", i)
		g := lobby.GameRecord{Race: ids[i], Variant: "classic", At: start.Add(time.Duration(i) * time.Minute),
			Players: []lobby.PlayerRef{{ID: "ann", Name: "Ann"}, {ID: "bob", Name: "Bob"}},
			Outcome: race.OutcomeWin, Winner: new(0), Reason: race.ReasonMoreCards, Scores: []int{20 + i%10, 10}}
		if i%3 == 2 {
			g.Players[1] = lobby.PlayerRef{Name: "computer (easy)", Computer: true}
			if err := r.Save(ctx, g, nil); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if i%2 == 1 {
			g.Variant = "aces-out"
		}
		g.Rated = true
		g.Before, g.After = make([]glicko2.Rating, 2), make([]glicko2.Rating, 2)
		var after []lobby.Standing
		for s, p := range g.Players {
			key := g.Variant + "/" + p.ID
			games[key]++
			g.Before[s] = glicko2.Rating{Rating: 1500 + 10*float64(games[key]-1), Deviation: 300, Volatility: 0.06}
			g.After[s] = glicko2.Rating{Rating: 1500 + 10*float64(games[key]), Deviation: 290, Volatility: 0.06}
			st := lobby.NewStanding(p.ID, p.Name, g.Variant)
			st.Rating, st.Games, st.Wins = g.After[s], games[key], games[key]
			after = append(after, st)
		}
		if err := r.Save(ctx, g, after); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

func TestProfileAndGamesPages(t *testing.T) {
	f := newFixture(t)
	ids := saveRaces(t, f.ratings, 45)
	ctx := context.Background()
	p, err := f.lobby.Profile(ctx, "ann", 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.History) != 20 || p.Next == "" || p.History[0].Race != ids[44] || len(p.Standings) != 2 {
		t.Fatalf("profile: %d races, next %q, first %s, %d standings", len(p.History), p.Next, p.History[0].Race, len(p.Standings))
	}
	seen := map[string]bool{}
	for _, g := range p.History {
		seen[g.Race] = true
	}
	var sizes []int
	for cursor := p.Next; cursor != ""; {
		page, err := f.lobby.Games(ctx, "ann", cursor, 20)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.Games))
		for _, g := range page.Games {
			if seen[g.Race] {
				t.Fatalf("race %s on two pages", g.Race)
			}
			seen[g.Race] = true
		}
		cursor = page.Next
	}
	if fmt.Sprint(sizes) != "[20 5]" || len(seen) != 45 {
		t.Errorf("pages after the profile's: %v, %d races in all", sizes, len(seen))
	}
	first, err := f.lobby.Games(ctx, "ann", "", 20)
	if err != nil || len(first.Games) != 20 || first.Next != p.Next || first.Games[19].Race != p.History[19].Race {
		t.Errorf("first page %d races, next %q (profile's %q), err %v", len(first.Games), first.Next, p.Next, err)
	}
}

func TestGamesAndRatingChangesRefuseBadInput(t *testing.T) {
	f := newFixture(t)
	saveRaces(t, f.ratings, 5)
	ctx := context.Background()
	tests := []struct {
		name string
		call func() error
		want race.Code
	}{
		{"n 0", func() error { _, err := f.lobby.Games(ctx, "ann", "", 0); return err }, race.CodeBadOptions},
		{"n 101", func() error { _, err := f.lobby.Games(ctx, "ann", "", lobby.MaxGamesPage+1); return err }, race.CodeBadOptions},
		{"forged cursor", func() error { _, err := f.lobby.Games(ctx, "ann", "not-a-cursor", 20); return err }, lobby.CodeBadCursor},
		{"unknown player's games", func() error { _, err := f.lobby.Games(ctx, "nobody", "", 20); return err }, lobby.CodeNoSuchPlayer},
		{"unknown variant", func() error { _, err := f.lobby.RatingChanges(ctx, "ann", "chess"); return err }, race.CodeBadOptions},
		{"unknown player's chart", func() error { _, err := f.lobby.RatingChanges(ctx, "nobody", "classic"); return err }, lobby.CodeNoSuchPlayer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := race.ErrorCode(tc.call()); got != tc.want {
				t.Errorf("code %q, want %q", got, tc.want)
			}
		})
	}
	// Nothing changed: ann's five races are all there.
	if page, err := f.lobby.Games(ctx, "ann", "", 20); err != nil || len(page.Games) != 5 || page.Next != "" {
		t.Errorf("after the refusals: %d races, next %q, err %v", len(page.Games), page.Next, err)
	}
}

func TestRatingChanges(t *testing.T) {
	f := newFixture(t)
	saveRaces(t, f.ratings, 12) // rated: 0 4 6 10 in classic, 1 3 7 9 in aces-out
	ctx := context.Background()
	tests := []struct {
		variant string
		races   []string
	}{
		{"classic", []string{"race000", "race004", "race006", "race010"}},
		{"ACES-OUT", []string{"race001", "race003", "race007", "race009"}},
		{"strict", nil},
	}
	for _, tc := range tests {
		t.Run(tc.variant, func(t *testing.T) {
			ch, err := f.lobby.RatingChanges(ctx, "ann", tc.variant)
			if err != nil {
				t.Fatal(err)
			}
			if ch == nil || len(ch) != len(tc.races) {
				t.Fatalf("%d changes (%v), want %d", len(ch), ch, len(tc.races))
			}
			for i, c := range ch {
				want := 1500 + 10*float64(i+1)
				if c.Race != tc.races[i] || c.After.Rating != want || c.Before.Rating != want-10 {
					t.Errorf("change %d: %+v, want race %s from %v to %v", i, c, tc.races[i], want-10, want)
				}
			}
		})
	}
}
