package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race/racetest"
)

func TestGhostsConformance(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		lobbytest.GhostsSuite(t, func(t *testing.T) [2]lobby.Ghosts {
			emptied(t, db)
			clock := racetest.NewClock(lobbytest.GhostsNow)
			return [2]lobby.Ghosts{sqlstore.NewGhosts(db, clock), sqlstore.NewGhosts(db, clock)}
		})
	})
}

// TestGhostFoundUntilItsKeepThenKeptUnseen: a challenge is found, expired
// or not, until its keep has passed; then Get and Mine no longer show it,
// but its row stays (durable), as do the runs against it.
func TestGhostFoundUntilItsKeepThenKeptUnseen(t *testing.T) {
	made := time.Unix(1_700_000_000, 0).UTC()
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		clock := racetest.NewClock(made)
		s := sqlstore.NewGhosts(db, clock)
		g := lobby.GhostRecord{GhostInfo: lobby.GhostInfo{ID: "g", Kind: lobby.GhostGame, Author: "ann", Variant: "classic",
			Made: made, Expires: made.Add(time.Hour)}, Deal: 7}
		if err := s.Put(ctx, g, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := s.AddRun(ctx, lobby.GhostRun{Ghost: "g", Author: "ann", Race: "R", Player: "bob", Outcome: "lost", At: made}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			after time.Duration
			found bool
		}{
			{0, true},
			{90 * time.Minute, true}, // expired: the lobby refuses to race it, the store still finds it
			{2 * time.Hour, true},    // the last millisecond of its keep
			{2*time.Hour + time.Millisecond, false},
		} {
			clock.Advance(c.after - clock.Now().Sub(made))
			_, ok, err := s.Get(ctx, "g")
			if err != nil || ok != c.found {
				t.Errorf("%v after it was made: found %v (%v), want %v", c.after, ok, err, c.found)
			}
			mine, err := s.Mine(ctx, "ann")
			if err != nil || (len(mine) == 1) != c.found {
				t.Errorf("%v after it was made: mine %+v (%v), want found %v", c.after, mine, err, c.found)
			}
		}
		var rows int
		if err := db.SQL().QueryRow("SELECT COUNT(*) FROM ghosts WHERE id = $1", "g").Scan(&rows); err != nil || rows != 1 {
			t.Errorf("the challenge's row: %d (%v), want it kept", rows, err)
		}
		if against, _, _, err := s.Runs(ctx, "ann", 10); err != nil || len(against) != 1 {
			t.Errorf("runs against ann's ghost after its keep: %+v, %v", against, err)
		}
	})
}

// TestGhostTallyCountsEveryRun: the record counts all of a player's runs,
// not only the n listed.
func TestGhostTallyCountsEveryRun(t *testing.T) {
	at := time.Unix(1_700_000_000, 0).UTC()
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		s := sqlstore.NewGhosts(db, racetest.NewClock(at))
		outcomes := []string{"won", "lost", "draw", "won", "won", "lost", "won"}
		for i, o := range outcomes {
			run := lobby.GhostRun{Ghost: "g", Author: "ann", Race: string(rune('A' + i)), Player: "bob", Outcome: o, At: at.Add(time.Duration(i) * time.Minute)}
			if err := s.AddRun(ctx, run); err != nil {
				t.Fatal(err)
			}
		}
		against, raced, tally, err := s.Runs(ctx, "bob", 2)
		if err != nil || len(against) != 0 || len(raced) != 2 || raced[0].Race != "G" || raced[1].Race != "F" {
			t.Fatalf("bob's runs: %+v %+v %v", against, raced, err)
		}
		if want := (lobby.GhostTally{Races: 7, Wins: 4, Losses: 2, Draws: 1}); tally != want {
			t.Fatalf("tally %+v, want %+v", tally, want)
		}
		if against, _, tally, _ := s.Runs(ctx, "ann", 3); len(against) != 3 || against[0].Race != "G" || tally != (lobby.GhostTally{}) {
			t.Fatalf("ann's: %+v %+v", against, tally)
		}
	})
}

// TestSeeDealIsSeeAndKeepBest: SeeDeal marks the deal seen by each player
// and keeps each one's game as their best, as See and KeepBest do; a
// second, lower score keeps the first, a higher one replaces it.
func TestSeeDealIsSeeAndKeepBest(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		s := sqlstore.NewGhosts(db, racetest.NewClock(time.Unix(1_700_000_000, 0).UTC()))
		games := []lobby.SeenGame{
			{Player: "ann", Best: lobby.BestGame{Race: "R1", Seat: 0, Score: 30}},
			{Player: "bob", Best: lobby.BestGame{Race: "R1", Seat: 1, Score: 20}},
		}
		if err := s.SeeDeal(ctx, "classic", 7, games); err != nil {
			t.Fatal(err)
		}
		games[0].Best = lobby.BestGame{Race: "R2", Seat: 1, Score: 10} // ann: lower, kept out
		games[1].Best = lobby.BestGame{Race: "R2", Seat: 0, Score: 40} // bob: higher, kept
		if err := s.SeeDeal(ctx, "classic", 7, games); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			player string
			want   lobby.BestGame
		}{{"ann", lobby.BestGame{Race: "R1", Seat: 0, Score: 30}}, {"bob", lobby.BestGame{Race: "R2", Seat: 0, Score: 40}}} {
			if seen, err := s.Seen(ctx, "classic", 7, c.player); err != nil || !seen {
				t.Errorf("%s has seen deal 7: %v (%v), want true", c.player, seen, err)
			}
			if b, ok, err := s.Best(ctx, "classic", 7, c.player); err != nil || !ok || b != c.want {
				t.Errorf("%s's best on deal 7: %+v %v (%v), want %+v", c.player, b, ok, err, c.want)
			}
		}
		if already, err := s.See(ctx, "classic", 7, "ann"); err != nil || !already {
			t.Errorf("See after SeeDeal: already %v (%v), want true", already, err)
		}
	})
}
