package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// BenchmarkRacesPerCommit writes the rows a rated race's end saves (the
// game, both players' standings, histories, rating changes and names:
// Ratings.Save's statements, on the writer connection) for races between
// players drawn from 2,000, with 1, 4 or 16 races to a transaction. It
// is why the end of races is not committed in groups (docs/performance.md,
// issue 42): a race costs about as much either way, as what it costs is
// the pages its rows land on (random keys), not the commit.
func BenchmarkRacesPerCommit(b *testing.B) {
	const players, prefill = 2000, 20_000
	record := strings.Repeat("x", 600) // about a game record's JSON
	for _, per := range []int{1, 4, 16} {
		b.Run(fmt.Sprint(per), func(b *testing.B) {
			db, err := OpenSQLite(context.Background(), b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = db.Close() }()
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(1, uint64(per)))
			games := make(map[string]int, players)
			n := 0
			// commit saves k races in one transaction.
			commit := func(k int) {
				tx, release, err := db.begin(ctx)
				if err != nil {
					b.Fatal(err)
				}
				defer release()
				for range k {
					n++
					if err := saveRaceRows(ctx, db, tx, n, rng, players, games, record); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			// A database of some age, the same for every size of group,
			// so that the groups' rounds do not compare a small one with
			// a big one.
			for range prefill / 1000 {
				commit(1000)
			}
			start := n
			for b.Loop() {
				commit(per)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n-start), "ns/race")
		})
	}
}

// saveRaceRows writes race n's rows as Ratings.Save does, between two
// players drawn by rng; games counts each player's games, for the
// standings' guard.
func saveRaceRows(ctx context.Context, db *DB, tx *sql.Tx, n int, rng *rand.Rand, players int, games map[string]int, record string) error {
	race := fmt.Sprintf("%016x", rng.Uint64())
	at := int64(n) * 1000
	if _, err := db.txExec(ctx, tx, insertGame, race, "classic", at, true, record); err != nil {
		return err
	}
	for seat := range 2 {
		p := fmt.Sprintf("player%04d", rng.IntN(players))
		games[p]++
		if _, err := db.txExec(ctx, tx, upsertStanding, p, "classic", p, 1500.0, 50.0, 0.06, games[p], 1, 0, 0, 1, 1); err != nil {
			return err
		}
		if _, err := db.txExec(ctx, tx, insertGamePlayer, p, race, seat, at); err != nil {
			return err
		}
		if _, err := db.txExec(ctx, tx, insertRatingChange, p, race, "classic", at, 1500.0, 50.0, 0.06, 1510.0, 49.0, 0.06); err != nil {
			return err
		}
		if _, err := db.txExec(ctx, tx, upsertPlayer, p, p, at); err != nil {
			return err
		}
	}
	return nil
}
