package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
)

// The standings a SQLite store keeps in memory are the database's: what a
// Save commits is read back at once, a Save that does not commit (stale,
// recorded already) leaves the committed standing, and a standing written
// behind the store's back is read once the caches are dropped.
func TestCachedStandingsAreTheDatabases(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		r := sqlstore.NewRatings(emptied(t, db))
		ctx := context.Background()
		fresh, err := r.Standing(ctx, "classic", "ann")
		if err != nil || fresh.Games != 0 {
			t.Fatalf("a new player's standing: %+v, %v", fresh, err)
		}
		if err := saveRated(ctx, r, "r1", [2]string{"ann", "bob"}, 1); err != nil {
			t.Fatal(err)
		}
		want := stored(t, db, "ann")
		if want.Games != 1 {
			t.Fatalf("stored after one race: %+v", want)
		}
		if got, err := r.Standing(ctx, "classic", "ann"); err != nil || got != want {
			t.Errorf("after a Save: %+v, %v; the database has %+v", got, err, want)
		}

		// A Save of a race recorded already commits nothing, whatever it
		// says the standings are.
		g := lobby.GameRecord{Race: "r1", Variant: "classic", At: time.Unix(1_700_000_000, 0).UTC(),
			Players: []lobby.PlayerRef{{ID: "ann", Name: "ann"}, {ID: "bob", Name: "bob"}}}
		bogus := want
		bogus.Games, bogus.Wins = 7, 7
		if err := r.Save(ctx, g, []lobby.Standing{bogus}); err != nil {
			t.Fatalf("saving a recorded race again: %v", err)
		}
		if got, _ := r.Standing(ctx, "classic", "ann"); got != want {
			t.Errorf("after a Save of a recorded race: %+v, want %+v", got, want)
		}

		// Written behind the store's back (as a test or a tool would).
		if _, err := db.SQL().Exec("UPDATE standings SET games = 5 WHERE player = 'ann'"); err != nil {
			t.Fatal(err)
		}
		db.DropCaches()
		if got, _ := r.Standing(ctx, "classic", "ann"); got.Games != 5 {
			t.Errorf("after DropCaches: %d games, want the database's 5", got.Games)
		}
	})
}

// stored is player's standing in classic as the database has it, read
// without the store.
func stored(t *testing.T, db *sqlstore.DB, player string) lobby.Standing {
	t.Helper()
	var s lobby.Standing
	err := db.SQL().QueryRow("SELECT player, variant, name, rating, deviation, volatility, games, wins, losses, draws, streak, best_streak FROM standings WHERE variant = 'classic' AND player = $1", player).
		Scan(&s.Player, &s.Variant, &s.Name, &s.Rating.Rating, &s.Rating.Deviation, &s.Rating.Volatility, &s.Games, &s.Wins, &s.Losses, &s.Draws, &s.Streak, &s.BestStreak)
	if err != nil {
		t.Fatal(err)
	}
	s.WinPercent = lobby.WinPercent(s.Wins, s.Draws, s.Games)
	return s
}
