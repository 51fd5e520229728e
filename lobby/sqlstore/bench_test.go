package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/lobby/glicko2"
	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race/racetest"
)

// Sizes of the benchmarks' data.
const (
	// profileGames is a keen player's races over years: a hundred a week
	// for two years.
	profileGames = 10_000
	// profileOpponents is how many players they raced.
	profileOpponents = 100
	// boardPlayers is the players rated in one variant.
	boardPlayers = 100_000
	// boardLength is what a leaderboard page shows.
	boardLength = 50
	// gamesPage is a profile's first page of races.
	gamesPage = 20
)

// benchEach sets up a database of each kind with fill, then runs bench as
// a sub-benchmark named by the kind: the setup runs once, however many
// rounds the benchmark takes.
func benchEach(b *testing.B, fill func(b *testing.B, db *sqlstore.DB), bench func(b *testing.B, db *sqlstore.DB)) {
	for _, c := range []struct {
		kind sqlstore.Kind
		open func(testing.TB) *sqlstore.DB
	}{{sqlstore.SQLite, sqltest.SQLite}, {sqlstore.Postgres, sqltest.Postgres}} {
		db := c.open(b)
		fill(b, db)
		b.Run(string(c.kind), func(b *testing.B) { bench(b, db) })
	}
}

// bulk runs insert once per i in [0, n) with the arguments args(i), in
// one transaction through one prepared statement: the fast way to fill a
// benchmark's tables.
func bulk(b *testing.B, db *sqlstore.DB, insert string, n int, args func(i int) []any) {
	b.Helper()
	ctx := context.Background()
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, insert)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := stmt.ExecContext(ctx, args(i)...); err != nil {
			b.Fatalf("%s (row %d): %v", insert, i, err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	// What autovacuum would do soon after on PostgreSQL, so that the
	// planner knows the tables' sizes; SQLite's planner needs no such
	// statistics to use an index.
	if db.Kind() == sqlstore.Postgres {
		if _, err := db.SQL().ExecContext(ctx, "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
}

// fillProfile records profileGames races of "star" against
// profileOpponents others: the even ones rated, in classic, the odd ones
// unrated, in strict.
func fillProfile(b *testing.B, db *sqlstore.DB) {
	start := time.Unix(1_600_000_000, 0).UTC()
	opponent := func(i int) string { return fmt.Sprintf("opp%03d", i%profileOpponents) }
	game := func(i int) lobby.GameRecord {
		w := i % 2
		g := lobby.GameRecord{Race: fmt.Sprintf("race%05d", i), Variant: "strict", At: start.Add(time.Duration(i) * time.Hour),
			Players: []lobby.PlayerRef{{ID: "star", Name: "Star"}, {ID: opponent(i), Name: "Opponent"}},
			Outcome: "win", Winner: &w, Reason: "finished", Scores: []int{52 - w, 40 + w}}
		if i%2 == 0 {
			g.Variant, g.Rated = "classic", true
			r := glicko2.Rating{Rating: 1500 + float64(i%300), Deviation: 60, Volatility: 0.06}
			g.Before, g.After = []glicko2.Rating{r, r}, []glicko2.Rating{r, r}
		}
		return g
	}
	bulk(b, db, "INSERT INTO games (race, variant, at_ms, rated, record) VALUES ($1, $2, $3, $4, $5)", profileGames, func(i int) []any {
		g := game(i)
		record, err := json.Marshal(g)
		if err != nil {
			b.Fatal(err)
		}
		return []any{g.Race, g.Variant, g.At.UnixMilli(), g.Rated, string(record)}
	})
	bulk(b, db, "INSERT INTO game_players (player, race, seat, at_ms) VALUES ($1, $2, $3, $4)", 2*profileGames, func(i int) []any {
		g := game(i / 2)
		return []any{g.Players[i%2].ID, g.Race, i % 2, g.At.UnixMilli()}
	})
	bulk(b, db, "INSERT INTO rating_changes (player, race, variant, at_ms, before_rating, before_deviation, before_volatility,"+
		" after_rating, after_deviation, after_volatility) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)", profileGames, func(i int) []any {
		g := game(i / 2 * 2) // each rated (even) race twice, once per seat
		r := g.After[i%2]
		return []any{g.Players[i%2].ID, g.Race, g.Variant, g.At.UnixMilli(), r.Rating, r.Deviation, r.Volatility, r.Rating, r.Deviation, r.Volatility}
	})
	bulk(b, db, "INSERT INTO standings (player, variant, name, rating, deviation, volatility, games, wins, losses, draws, streak, best_streak)"+
		" VALUES ($1, $2, 'Star', 1700, 60, 0.06, $3, $4, $5, 0, 1, 9)", 2, func(i int) []any {
		return []any{"star", []string{"classic", "strict"}[i], profileGames / 2, profileGames / 4, profileGames / 4}
	})
}

// BenchmarkProfile10000Games is what a profile page reads of a player
// with profileGames races: their standings, their first page of races and
// their rating's changes in one variant (half of them).
func BenchmarkProfile10000Games(b *testing.B) {
	benchEach(b, fillProfile, func(b *testing.B, db *sqlstore.DB) {
		r := sqlstore.NewRatings(db)
		ctx := context.Background()
		for b.Loop() {
			st, err := r.Standings(ctx, "star")
			if err != nil || len(st) != 2 {
				b.Fatalf("standings %d, %v", len(st), err)
			}
			page, err := r.Games(ctx, "star", "", gamesPage)
			if err != nil || len(page.Games) != gamesPage || page.Next == "" || page.Games[0].Race != fmt.Sprintf("race%05d", profileGames-1) {
				b.Fatalf("first page of %d, next %q, %v", len(page.Games), page.Next, err)
			}
			ch, err := r.Changes(ctx, "star", "classic")
			if err != nil || len(ch) != profileGames/2 {
				b.Fatalf("changes %d, %v", len(ch), err)
			}
		}
	})
}

// fillBoard rates boardPlayers players in classic, each with a rating of
// their own.
func fillBoard(b *testing.B, db *sqlstore.DB) {
	bulk(b, db, "INSERT INTO standings (player, variant, name, rating, deviation, volatility, games, wins, losses, draws, streak, best_streak)"+
		" VALUES ($1, 'classic', $2, $3, 80, 0.06, $4, $5, $6, 0, 0, 3)", boardPlayers, func(i int) []any {
		// A permutation of the ratings, so that the insertion order is not
		// the board's.
		rating := 800 + float64((i*7919)%boardPlayers)/50
		games := 1 + i%200
		return []any{fmt.Sprintf("p%06d", i), fmt.Sprintf("Player %d", i), rating, games, games / 2, games - games/2}
	})
}

// BenchmarkLeaderboard100000 reads the first page of a variant's
// leaderboard among boardPlayers rated players.
func BenchmarkLeaderboard100000(b *testing.B) {
	benchEach(b, fillBoard, func(b *testing.B, db *sqlstore.DB) {
		r := sqlstore.NewRatings(db)
		ctx := context.Background()
		for b.Loop() {
			board, err := r.Leaderboard(ctx, "classic", boardLength)
			if err != nil || len(board) != boardLength || board[0].Rating.Rating < board[boardLength-1].Rating.Rating {
				b.Fatalf("leaderboard of %d, %v", len(board), err)
			}
		}
	})
}

// BenchmarkSaveRace saves one rated race between two players, with
// their standings and rating changes: one transaction, committed.
func BenchmarkSaveRace(b *testing.B) {
	benchEach(b, func(*testing.B, *sqlstore.DB) {}, func(b *testing.B, db *sqlstore.DB) {
		r := sqlstore.NewRatings(db)
		ctx := context.Background()
		start := time.Unix(1_600_000_000, 0).UTC()
		// b.Run may run this more than once on the same database: each
		// round goes on from the standings and races the last one left.
		var st [2]lobby.Standing
		for s, p := range []string{"ann", "bob"} {
			var err error
			if st[s], err = r.Standing(ctx, "classic", p); err != nil {
				b.Fatal(err)
			}
			st[s].Name = p
		}
		w := 0
		for b.Loop() {
			n := st[0].Games
			st[0].Games++
			st[1].Games++
			g := lobby.GameRecord{Race: fmt.Sprintf("race%06d", n), Variant: "classic", At: start.Add(time.Duration(n) * time.Minute),
				Players: []lobby.PlayerRef{{ID: "ann", Name: "ann"}, {ID: "bob", Name: "bob"}}, Outcome: "win", Winner: &w,
				Reason: "finished", Scores: []int{52, 30}, Rated: true}
			if err := r.Save(ctx, g, st[:]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkArchiveRace archives one finished race of about a hundred
// moves a seat (a typical game), then marks it followed, as the archiver
// and the lobby do at a race's end: two commits.
func BenchmarkArchiveRace(b *testing.B) {
	benchEach(b, func(*testing.B, *sqlstore.DB) {}, func(b *testing.B, db *sqlstore.DB) {
		a := sqlstore.NewArchive(db)
		ctx := context.Background()
		ended := time.Unix(1_600_000_000, 0).UTC()
		round := 0
		for b.Loop() {
			round++
			rec := racetest.LongArchived(fmt.Sprintf("%s-%07d", b.Name(), round), ended)
			rec.Info.Moves = rec.Info.Moves[:200]
			if err := a.Put(ctx, rec); err != nil {
				b.Fatal(err)
			}
			if err := a.Followed(ctx, rec.Info.Race); err != nil {
				b.Fatal(err)
			}
		}
	})
}
