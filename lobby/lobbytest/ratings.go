// Package lobbytest holds conformance suites that every implementation of
// the lobby's stores must pass: the memory stores, redislobby's live ones
// and sqlstore's durable ones run the same tests.
package lobbytest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/lobby/glicko2"
	"sirtommy/race"
)

// epoch is when the suite's races are played: a time a millisecond
// clock holds exactly.
var epoch = time.Unix(1_700_000_000, 0).UTC()

func standing(player string, rating float64, games int) lobby.Standing {
	s := lobby.NewStanding(player, "n-"+player, "classic")
	s.Rating.Rating, s.Games, s.Wins = rating, games, games
	return s
}

// RatingsSuite runs the conformance tests against fresh stores made by
// newRatings (each call must return an empty store).
func RatingsSuite(t *testing.T, newRatings func(t *testing.T) lobby.Ratings) {
	t.Run("LeaderboardStandingsAndHistory", func(t *testing.T) { leaderboardStandingsAndHistory(t, newRatings(t)) })
	t.Run("TiesAndVariants", func(t *testing.T) { tiesAndVariants(t, newRatings(t)) })
	t.Run("HistoryIsCapped", func(t *testing.T) { historyIsCapped(t, newRatings(t)) })
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, newRatings(t)) })
	t.Run("ConcurrentSavesLoseNothing", func(t *testing.T) { concurrentSaves(t, newRatings(t)) })
	t.Run("RaceRecordedOnce", func(t *testing.T) { recordedOnce(t, newRatings(t)) })
	t.Run("StaleSaveChangesNothing", func(t *testing.T) { staleSave(t, newRatings(t)) })
	t.Run("GamesPages", func(t *testing.T) { gamesPages(t, newRatings(t)) })
	t.Run("Changes", func(t *testing.T) { changes(t, newRatings(t)) })
}

// recordedOnce: saving a race a second time (another instance ended it
// again) changes nothing and is no error.
func recordedOnce(t *testing.T, r lobby.Ratings) {
	ctx := context.Background()
	g := lobby.GameRecord{Race: "once", Variant: "classic", Players: []lobby.PlayerRef{{ID: "p"}, {Computer: true}}}
	if err := r.Save(ctx, g, []lobby.Standing{standing("p", 1600, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := r.Save(ctx, g, []lobby.Standing{standing("p", 1700, 2)}); err != nil {
		t.Fatalf("the race saved again: %v, want nil", err)
	}
	if s, err := r.Standing(ctx, "classic", "p"); err != nil || s.Games != 1 || s.Rating.Rating != 1600 {
		t.Errorf("after the second save the standing is %+v (%v), want the first save's", s, err)
	}
	if h, err := r.History(ctx, "p", 10); err != nil || len(h) != 1 {
		t.Errorf("history %+v (%v), want the race once", h, err)
	}
	if board, err := r.Leaderboard(ctx, "classic", 10); err != nil || len(board) != 1 || board[0].Rating.Rating != 1600 {
		t.Errorf("leaderboard %+v (%v)", board, err)
	}
	g.Race = "twice"
	if err := r.Save(ctx, g, []lobby.Standing{standing("p", 1700, 2)}); err != nil {
		t.Errorf("another race: %v", err)
	}
}

func leaderboardStandingsAndHistory(t *testing.T, r lobby.Ratings) {
	ctx := context.Background()
	if s, err := r.Standing(ctx, "classic", "nobody"); err != nil || s.Rating != glicko2.New() || s.Games != 0 || s.Player != "nobody" || s.Variant != "classic" {
		t.Fatalf("a new player's standing %+v, %v", s, err)
	}
	for i, rating := range []float64{1500, 1700, 1600} {
		p := fmt.Sprintf("p%d", i)
		g := lobby.GameRecord{Race: fmt.Sprintf("r%d", i), Variant: "classic",
			Players: []lobby.PlayerRef{{ID: p}, {Name: "computer", Computer: true}}}
		if err := r.Save(ctx, g, []lobby.Standing{standing(p, rating, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Save(ctx, lobby.GameRecord{Race: "r3", Variant: "classic", Players: []lobby.PlayerRef{{ID: "p0"}, {ID: "p2"}}},
		[]lobby.Standing{standing("p0", 1400, 2), standing("p2", 1650, 2)}); err != nil {
		t.Fatal(err)
	}
	board, err := r.Leaderboard(ctx, "classic", 2)
	if err != nil || len(board) != 2 || board[0].Player != "p1" || board[1].Player != "p2" {
		t.Fatalf("leaderboard %+v, %v", board, err)
	}
	if all, _ := r.Leaderboard(ctx, "classic", 10); len(all) != 3 || all[2].Player != "p0" || all[2].Rating.Rating != 1400 {
		t.Fatalf("whole leaderboard %+v", all)
	}
	if other, err := r.Leaderboard(ctx, "strict", 10); err != nil || len(other) != 0 {
		t.Fatalf("another variant's board %+v, %v", other, err)
	}
	h, err := r.History(ctx, "p0", 10)
	if err != nil || len(h) != 2 || h[0].Race != "r3" || h[1].Race != "r0" {
		t.Fatalf("history newest first: %+v, %v", h, err)
	}
	if h, _ := r.History(ctx, "p0", 1); len(h) != 1 {
		t.Fatalf("history of 1: %d", len(h))
	}
	if h, err := r.History(ctx, "nobody", 10); err != nil || len(h) != 0 {
		t.Fatalf("history of nobody: %+v, %v", h, err)
	}
	if st, _ := r.Standings(ctx, "p2"); len(st) != 1 || st[0].Rating.Rating != 1650 || st[0].Games != 2 {
		t.Fatalf("standings %+v", st)
	}
	if s, _ := r.Standing(ctx, "classic", "p2"); s.Rating.Rating != 1650 || s.Name != "n-p2" {
		t.Fatalf("standing %+v", s)
	}
}

func tiesAndVariants(t *testing.T, r lobby.Ratings) {
	ctx := context.Background()
	for _, p := range []string{"b", "c", "a"} {
		if err := r.Save(ctx, lobby.GameRecord{Race: "r" + p, Variant: "classic", Players: []lobby.PlayerRef{{ID: p}, {Computer: true}}},
			[]lobby.Standing{standing(p, 1500, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	board, _ := r.Leaderboard(ctx, "classic", 10)
	if len(board) != 3 || board[0].Player != "a" || board[1].Player != "b" || board[2].Player != "c" {
		t.Fatalf("ties go by player id: %+v", board)
	}
	s := standing("a", 1800, 1)
	s.Variant = "strict"
	if err := r.Save(ctx, lobby.GameRecord{Race: "ra2", Variant: "strict", Players: []lobby.PlayerRef{{ID: "a"}, {Computer: true}}},
		[]lobby.Standing{s}); err != nil {
		t.Fatal(err)
	}
	st, _ := r.Standings(ctx, "a")
	if len(st) != 2 || st[0].Variant != "classic" || st[1].Variant != "strict" || st[1].Rating.Rating != 1800 {
		t.Fatalf("standings in order of variant: %+v", st)
	}
	if b, _ := r.Leaderboard(ctx, "strict", 10); len(b) != 1 || b[0].Player != "a" {
		t.Fatalf("strict board %+v", b)
	}
}

func historyIsCapped(t *testing.T, r lobby.Ratings) {
	ctx := context.Background()
	const n = 250
	for i := range n {
		if err := r.Save(ctx, lobby.GameRecord{Race: fmt.Sprint(i), Variant: "classic", At: epoch.Add(time.Duration(i) * time.Second),
			Players: []lobby.PlayerRef{{ID: "p"}, {Computer: true}}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	h, _ := r.History(ctx, "p", 1000)
	if len(h) < 100 || len(h) >= n || h[0].Race != fmt.Sprint(n-1) {
		t.Fatalf("history of %d races keeps %d, newest %q", n, len(h), h[0].Race)
	}
}

func roundTrip(t *testing.T, r lobby.Ratings) {
	ctx := context.Background()
	w := 1
	s := lobby.Standing{Player: "x", Name: "Ex", Variant: "classic", Rating: glicko2.Rating{Rating: 1612.5, Deviation: 80.25, Volatility: 0.06},
		Games: 5, Wins: 3, Losses: 1, Draws: 1, Streak: -1, BestStreak: 2, WinPercent: 70}
	g := lobby.GameRecord{Race: "rt", Variant: "classic", Players: []lobby.PlayerRef{{ID: "y", Name: "Why"}, {ID: "x", Name: "Ex"}},
		Outcome: "win", Winner: &w, Reason: "finished", Scores: []int{20, 52}, Rated: true}
	g.Before, g.After = make([]glicko2.Rating, 2), make([]glicko2.Rating, 2)
	g.After[1] = s.Rating
	if err := r.Save(ctx, g, []lobby.Standing{s}); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Standing(ctx, "classic", "x"); got != s {
		t.Fatalf("standing %+v, want %+v", got, s)
	}
	h, _ := r.History(ctx, "y", 5)
	if len(h) != 1 || h[0].Winner == nil || *h[0].Winner != 1 || !slices.Equal(h[0].Scores, g.Scores) || !slices.Equal(h[0].After, g.After) || !slices.Equal(h[0].Players, g.Players) {
		t.Fatalf("history %+v", h)
	}
}

// concurrentSaves has several writers (as several instances would) read,
// update and save one player's standing at once; with the retry that
// ErrStale asks for, every update counts.
func concurrentSaves(t *testing.T, r lobby.Ratings) {
	ctx := context.Background()
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				for {
					s, err := r.Standing(ctx, "classic", "p")
					if err != nil {
						errs <- err
						return
					}
					s.Games++
					s.Wins++
					g := lobby.GameRecord{Race: fmt.Sprintf("w%d-%d", w, i), Variant: "classic", Players: []lobby.PlayerRef{{ID: "p"}, {Computer: true}}}
					err = r.Save(ctx, g, []lobby.Standing{s})
					if errors.Is(err, lobby.ErrStale) {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if s, _ := r.Standing(ctx, "classic", "p"); s.Games != writers*each || s.Wins != writers*each {
		t.Fatalf("after %d saves: %+v", writers*each, s)
	}
	if h, _ := r.History(ctx, "p", 1000); len(h) != writers*each {
		t.Fatalf("history has %d races, want %d", len(h), writers*each)
	}
}

// staleSave: a save with a stale standing saves nothing of the race, not
// even the other player's standing or the race itself, which may be saved
// anew with fresh standings.
func staleSave(t *testing.T, r lobby.Ratings) {
	ctx := context.Background()
	vs := []lobby.PlayerRef{{ID: "p", Name: "n-p"}, {ID: "q", Name: "n-q"}}
	if err := r.Save(ctx, lobby.GameRecord{Race: "r1", Variant: "classic", At: epoch, Players: []lobby.PlayerRef{vs[0], {Computer: true}}},
		[]lobby.Standing{standing("p", 1600, 1)}); err != nil {
		t.Fatal(err)
	}
	g := lobby.GameRecord{Race: "r2", Variant: "classic", At: epoch.Add(time.Minute), Players: vs, Rated: true}
	err := r.Save(ctx, g, []lobby.Standing{standing("q", 1550, 1), standing("p", 1650, 1)})
	if !errors.Is(err, lobby.ErrStale) {
		t.Fatalf("a save with p's standing as old as the stored one: %v, want ErrStale", err)
	}
	if s, _ := r.Standing(ctx, "classic", "q"); s.Games != 0 {
		t.Errorf("q's standing was saved with the stale one: %+v", s)
	}
	if s, _ := r.Standing(ctx, "classic", "p"); s.Games != 1 || s.Rating.Rating != 1600 {
		t.Errorf("p's standing %+v, want the first save's", s)
	}
	if h, _ := r.History(ctx, "q", 10); len(h) != 0 {
		t.Errorf("q's history has the refused race: %+v", h)
	}
	if h, _ := r.History(ctx, "p", 10); len(h) != 1 || h[0].Race != "r1" {
		t.Errorf("p's history %+v, want r1 only", h)
	}
	if c, _ := r.Changes(ctx, "q", "classic"); len(c) != 0 {
		t.Errorf("q's rating changes have the refused race: %+v", c)
	}
	if err := r.Save(ctx, g, []lobby.Standing{standing("q", 1550, 1), standing("p", 1650, 2)}); err != nil {
		t.Fatalf("the refused race saved with fresh standings: %v", err)
	}
	if h, _ := r.History(ctx, "q", 10); len(h) != 1 || h[0].Race != "r2" {
		t.Errorf("q's history %+v, want r2", h)
	}
}

// gamesPages: Games pages through a player's races, newest first, each
// once; the last page has no Next, even when it is full; a cursor the
// store did not make is refused and changes nothing.
func gamesPages(t *testing.T, r lobby.Ratings) {
	ctx := context.Background()
	const races = 8
	for i := range races {
		g := lobby.GameRecord{Race: fmt.Sprintf("r%d", i), Variant: "classic", At: epoch.Add(time.Duration(i) * time.Minute),
			Players: []lobby.PlayerRef{{ID: "p", Name: "Pat"}, {Name: "computer", Computer: true}}, Outcome: "win", Scores: []int{i, 52}}
		if i >= 2 { // q races p in the last 6: two full pages of 3
			g.Players[1] = lobby.PlayerRef{ID: "q", Name: "Quinn"}
		}
		if err := r.Save(ctx, g, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		player string
		pages  []int // the length of each page
	}{
		{"p", []int{3, 3, 2}},
		{"q", []int{3, 3}},
	} {
		t.Run(c.player, func(t *testing.T) {
			var got []string
			cursor := ""
			for i, want := range c.pages {
				page, err := r.Games(ctx, c.player, cursor, 3)
				if err != nil {
					t.Fatalf("page %d: %v", i, err)
				}
				if len(page.Games) != want {
					t.Fatalf("page %d has %d races, want %d: %+v", i, len(page.Games), want, page.Games)
				}
				for _, g := range page.Games {
					got = append(got, g.Race)
				}
				if last := i == len(c.pages)-1; last != (page.Next == "") {
					t.Fatalf("page %d of %d: next %q", i, len(c.pages), page.Next)
				}
				cursor = page.Next
			}
			var want []string
			for i := races - 1; i >= races-len(got); i-- {
				want = append(want, fmt.Sprintf("r%d", i))
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("pages hold %v, want %v", got, want)
			}
		})
	}
	first, err := r.Games(ctx, "p", "", 3)
	if err != nil || len(first.Games) != 3 || first.Games[0].Race != "r7" || first.Games[0].Players[0].Name != "Pat" ||
		!slices.Equal(first.Games[0].Scores, []int{7, 52}) || !first.Games[0].At.Equal(epoch.Add(7*time.Minute)) {
		t.Fatalf("first page %+v, %v", first, err)
	}
	for _, forged := range []string{"not a cursor!", "%%%", first.Next + "!"} {
		page, err := r.Games(ctx, "p", forged, 3)
		if race.ErrorCode(err) != lobby.CodeBadCursor || len(page.Games) != 0 {
			t.Errorf("forged cursor %q: %+v, %v; want %s", forged, page, err, lobby.CodeBadCursor)
		}
	}
	if again, err := r.Games(ctx, "p", "", 3); err != nil || !reflect.DeepEqual(racesOf(again.Games), racesOf(first.Games)) || again.Next == "" {
		t.Errorf("after forged cursors the first page is %+v, %v; was %+v", again, err, first)
	}
	if h, _ := r.History(ctx, "p", 100); len(h) != races {
		t.Errorf("after forged cursors the history has %d races, want %d", len(h), races)
	}
	if page, err := r.Games(ctx, "nobody", "", 3); err != nil || len(page.Games) != 0 || page.Next != "" {
		t.Errorf("games of nobody: %+v, %v", page, err)
	}
}

func racesOf(games []lobby.GameRecord) []string {
	out := make([]string, len(games))
	for i, g := range games {
		out[i] = g.Race
	}
	return out
}

// changes: one rating change per rated race of the variant, oldest first,
// with the ratings the race record gave for that player's seat.
func changes(t *testing.T, r lobby.Ratings) {
	ctx := context.Background()
	rating := func(x float64) glicko2.Rating {
		return glicko2.Rating{Rating: 1500 + x, Deviation: 200 - x, Volatility: 0.06 + x/1e4}
	}
	humans := []lobby.PlayerRef{{ID: "p", Name: "Pat"}, {ID: "q", Name: "Quinn"}}
	var saved []lobby.GameRecord
	for i, c := range []struct {
		variant string
		rated   bool
	}{
		{"classic", true}, {"classic", false}, {"strict", true}, {"classic", true}, {"strict", false}, {"classic", true},
	} {
		g := lobby.GameRecord{Race: fmt.Sprintf("r%d", i), Variant: c.variant, At: epoch.Add(time.Duration(i) * time.Hour),
			Players: humans, Rated: c.rated}
		if c.rated {
			x := float64(10 * i)
			g.Before, g.After = []glicko2.Rating{rating(x), rating(x + 1)}, []glicko2.Rating{rating(x + 2), rating(x + 3)}
		}
		if err := r.Save(ctx, g, nil); err != nil {
			t.Fatal(err)
		}
		saved = append(saved, g)
	}
	for _, c := range []struct {
		player, variant string
		seat            int
		races           []int
	}{
		{"p", "classic", 0, []int{0, 3, 5}},
		{"q", "classic", 1, []int{0, 3, 5}},
		{"p", "strict", 0, []int{2}},
		{"p", "open", 0, nil},
		{"nobody", "classic", 0, nil},
	} {
		t.Run(c.player+"/"+c.variant, func(t *testing.T) {
			got, err := r.Changes(ctx, c.player, c.variant)
			if err != nil || len(got) != len(c.races) {
				t.Fatalf("changes %+v, %v; want %d", got, err, len(c.races))
			}
			for i, ri := range c.races {
				g := saved[ri]
				want := lobby.RatingChange{Race: g.Race, Variant: g.Variant, At: g.At, Before: g.Before[c.seat], After: g.After[c.seat]}
				if got[i].Race != want.Race || got[i].Variant != want.Variant || !got[i].At.Equal(want.At) ||
					got[i].Before != want.Before || got[i].After != want.After {
					t.Errorf("change %d: %+v, want %+v", i, got[i], want)
				}
			}
		})
	}
}
