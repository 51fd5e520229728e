package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/lobby/glicko2"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// emptied deletes every row of the lobby's tables, so that a conformance
// suite that wants an empty store for each case gets one on the same
// database.
func emptied(t *testing.T, db *sqlstore.DB) *sqlstore.DB {
	t.Helper()
	for _, q := range []string{
		"DELETE FROM rating_changes", "DELETE FROM game_players", "DELETE FROM games", "DELETE FROM standings", "DELETE FROM players",
		"DELETE FROM ghost_runs", "DELETE FROM ghosts", "DELETE FROM seen_deals", "DELETE FROM best_games", "DELETE FROM daily_entries",
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.DropCaches()
	return db
}

func TestRatingsConformance(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		lobbytest.RatingsSuite(t, func(t *testing.T) lobby.Ratings { return sqlstore.NewRatings(emptied(t, db)) })
	})
}

// twoInstances opens the same database twice, as two instances of a
// fleet would: two PostgreSQL connection pools; on SQLite, whose data
// folder one server holds, the same database.
func twoInstances(t *testing.T, kind sqlstore.Kind) [2]*sqlstore.DB {
	t.Helper()
	if kind == sqlstore.SQLite {
		db := sqltest.SQLite(t)
		return [2]*sqlstore.DB{db, db}
	}
	url := sqltest.PostgresURL(t)
	var out [2]*sqlstore.DB
	for i := range out {
		db, err := sqlstore.OpenPostgres(context.Background(), url)
		if err != nil {
			t.Fatalf("open postgres: %v", err)
		}
		t.Cleanup(func() { _ = db.Close() })
		out[i] = db
	}
	return out
}

// TestConcurrentSavesOfTwoPlayersFromTwoInstances: writers on two
// instances save rated races between the same two players at once,
// retrying what is stale as the lobby does; every race counts for both
// and nothing waits forever (PostgreSQL would find a deadlock if two
// saves locked the players' rows in opposite orders).
func TestConcurrentSavesOfTwoPlayersFromTwoInstances(t *testing.T) {
	for _, kind := range []sqlstore.Kind{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(kind), func(t *testing.T) {
			dbs := twoInstances(t, kind)
			stores := [2]*sqlstore.Ratings{sqlstore.NewRatings(dbs[0]), sqlstore.NewRatings(dbs[1])}
			ctx := context.Background()
			const writers, each = 4, 10
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := stores[w%2]
					// Half the writers seat the players the other way round.
					players := [2]string{"ann", "bob"}
					if w%2 == 1 {
						players = [2]string{"bob", "ann"}
					}
					for i := range each {
						if err := saveRated(ctx, r, fmt.Sprintf("w%d-%d", w, i), players, w*each+i); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			for _, p := range []string{"ann", "bob"} {
				s, err := stores[0].Standing(ctx, "classic", p)
				if err != nil || s.Games != writers*each || s.Wins+s.Losses != writers*each {
					t.Errorf("%s after %d races: %+v, %v", p, writers*each, s, err)
				}
				if h, err := stores[1].History(ctx, p, 1000); err != nil || len(h) != writers*each {
					t.Errorf("%s's history has %d races (%v), want %d", p, len(h), err, writers*each)
				}
				if c, err := stores[1].Changes(ctx, p, "classic"); err != nil || len(c) != writers*each {
					t.Errorf("%s has %d rating changes (%v), want %d", p, len(c), err, writers*each)
				}
			}
		})
	}
}

// saveRated reads both players' standings, rates a race that seat 0 wins
// and saves it, again while it is stale.
func saveRated(ctx context.Context, r *sqlstore.Ratings, id string, players [2]string, minute int) error {
	for {
		var st [2]lobby.Standing
		for s, p := range players {
			var err error
			if st[s], err = r.Standing(ctx, "classic", p); err != nil {
				return err
			}
		}
		g := lobby.GameRecord{Race: id, Variant: "classic", At: time.Unix(1_700_000_000, 0).Add(time.Duration(minute) * time.Minute).UTC(),
			Players: []lobby.PlayerRef{{ID: players[0], Name: players[0]}, {ID: players[1], Name: players[1]}}, Rated: true,
			Before: make([]glicko2.Rating, 2), After: make([]glicko2.Rating, 2)}
		after := make([]lobby.Standing, 2)
		for s := range 2 {
			g.Before[s] = st[s].Rating
			g.After[s] = glicko2.Update(st[s].Rating, []glicko2.Result{{Opponent: st[1-s].Rating, Score: float64(1 - s)}}, 0.5)
			after[s] = st[s]
			after[s].Name, after[s].Rating = players[s], g.After[s]
			after[s].Games++
			if s == 0 {
				after[s].Wins++
			} else {
				after[s].Losses++
			}
		}
		err := r.Save(ctx, g, after)
		if errors.Is(err, lobby.ErrStale) {
			continue
		}
		return err
	}
}

// awkward is text that quoting, escaping or a column's encoding could
// spoil: quotes, backslashes, emoji, characters of several bytes, over
// 10 KB. withNUL adds NUL bytes, which only JSON fields may hold.
func awkward(withNUL bool) string {
	var b strings.Builder
	b.WriteString(`Ann "the quick" O'Brien \ back\\slash \n 🃏🂡 é ' ; DROP TABLE games; -- `)
	for b.Len() < 10_240 {
		b.WriteString(`"\🦊é`)
		if withNUL {
			b.WriteString("\x00")
		}
	}
	return b.String()
}

func TestAwkwardTextIsKeptExactly(t *testing.T) {
	name, text := awkward(false), awkward(true)
	at := time.Unix(1_700_000_000, 0).UTC()
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		t.Run("ratings", func(t *testing.T) {
			r := sqlstore.NewRatings(db)
			w := 0
			g := lobby.GameRecord{Race: "awk", Variant: "classic", At: at, Outcome: race.OutcomeWin, Winner: &w, Reason: race.Reason(text),
				Players: []lobby.PlayerRef{{ID: "ann", Name: name}, {Name: text, Ghost: true}}, Scores: []int{52, 3}}
			s := lobby.NewStanding("ann", name, "classic")
			s.Games, s.Wins, s.WinPercent = 1, 1, 100
			if err := r.Save(ctx, g, []lobby.Standing{s}); err != nil {
				t.Fatal(err)
			}
			if h, err := r.History(ctx, "ann", 1); err != nil || len(h) != 1 || !reflect.DeepEqual(h[0], g) {
				t.Fatalf("history: %v; the record came back changed: %t", err, len(h) == 1 && !reflect.DeepEqual(h[0], g))
			}
			if got, err := r.Standing(ctx, "classic", "ann"); err != nil || got != s {
				t.Fatalf("standing: %v; came back changed: %t", err, got != s)
			}
			var stored string
			if err := db.SQL().QueryRow("SELECT name FROM players WHERE id = $1", "ann").Scan(&stored); err != nil || stored != name {
				t.Fatalf("player's name: %v; came back changed: %t", err, stored != name)
			}
		})
		t.Run("ghosts", func(t *testing.T) {
			s := sqlstore.NewGhosts(db, racetest.NewClock(at))
			g := lobby.GhostRecord{GhostInfo: lobby.GhostInfo{ID: "awk", Kind: lobby.GhostGame, Author: "ann", AuthorName: text, Name: text,
				Variant: "classic", Made: at, Expires: at.Add(time.Hour)},
				Deal: 1<<64 - 1, Recording: race.Ghost{Moves: []race.GhostMove{{Move: text, AtMs: 5}}, EndMs: 5}, Source: text}
			if err := s.Put(ctx, g, time.Hour); err != nil {
				t.Fatal(err)
			}
			if got, ok, err := s.Get(ctx, "awk"); err != nil || !ok || !reflect.DeepEqual(got, g) {
				t.Fatalf("ghost: %v %v; came back changed: %t", ok, err, !reflect.DeepEqual(got, g))
			}
			run := lobby.GhostRun{Ghost: "awk", Author: "ann", Race: "R", Player: "bob", Name: text, GhostName: text, Outcome: "won",
				Reason: race.Reason(text), At: at}
			if err := s.AddRun(ctx, run); err != nil {
				t.Fatal(err)
			}
			if _, raced, _, err := s.Runs(ctx, "bob", 1); err != nil || len(raced) != 1 || !reflect.DeepEqual(raced[0], run) {
				t.Fatalf("run: %v; came back changed: %t", err, len(raced) == 1 && !reflect.DeepEqual(raced[0], run))
			}
		})
		t.Run("dailies", func(t *testing.T) {
			d := sqlstore.NewDailies(db)
			e := lobby.DailyEntry{Day: "2026-01-01", Variant: "classic", Player: "ann", Name: text, Race: "R", Game: text, Score: 12,
				Recording: &race.Ghost{Moves: []race.GhostMove{{Move: text, AtMs: 1}}}}
			if err := d.Finish(ctx, e); err != nil {
				t.Fatal(err)
			}
			e.Rank = 1
			if got, ok, err := d.Entry(ctx, e.Day, e.Variant, "ann"); err != nil || !ok || !reflect.DeepEqual(got, e) {
				t.Fatalf("entry: %v %v; came back changed: %t", ok, err, !reflect.DeepEqual(got, e))
			}
		})
	})
}

// TestTextNoColumnHoldsIsRefusedAndFindsNothing: a NUL byte or bytes
// that are not UTF-8 in a value for a plain column (PostgreSQL's TEXT
// holds neither) is refused with a race code, so that the lobby does not
// retry it, and changes nothing; looking such a value up finds nothing
// rather than failing as if the database were away.
func TestTextNoColumnHoldsIsRefusedAndFindsNothing(t *testing.T) {
	at := time.Unix(1_700_000_000, 0).UTC()
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		r, gh, d := sqlstore.NewRatings(db), sqlstore.NewGhosts(db, racetest.NewClock(at)), sqlstore.NewDailies(db)
		for _, bad := range []string{"a\x00b", "a\xffb"} {
			t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
				g := lobby.GameRecord{Race: "R" + bad, Variant: "classic", At: at, Players: []lobby.PlayerRef{{ID: "ann", Name: "Ann"}, {Computer: true}}}
				refusals := map[string]error{
					"race id":       r.Save(ctx, g, nil),
					"standing name": r.Save(ctx, lobby.GameRecord{Race: "R", Variant: "classic", At: at}, []lobby.Standing{lobby.NewStanding("ann", bad, "classic")}),
					"player name":   r.Save(ctx, lobby.GameRecord{Race: "R", Variant: "classic", At: at, Players: []lobby.PlayerRef{{ID: "ann", Name: bad}}}, nil),
					"ghost author":  gh.Put(ctx, lobby.GhostRecord{GhostInfo: lobby.GhostInfo{ID: "G", Author: bad}}, time.Hour),
					"run player":    gh.AddRun(ctx, lobby.GhostRun{Race: "R", Ghost: "G", Author: "ann", Player: bad, Outcome: "won"}),
					"seen by":       func() error { _, err := gh.See(ctx, "classic", 1, bad); return err }(),
					"daily player":  func() error { _, err := d.Begin(ctx, "2026-01-01", "classic", bad); return err }(),
				}
				for what, err := range refusals {
					if race.ErrorCode(err) != race.CodeInternal {
						t.Errorf("%s: %v, want a refusal with %s", what, err, race.CodeInternal)
					}
				}
				for _, count := range []string{
					"SELECT COUNT(*) FROM games", "SELECT COUNT(*) FROM standings", "SELECT COUNT(*) FROM players", "SELECT COUNT(*) FROM ghosts",
					"SELECT COUNT(*) FROM ghost_runs", "SELECT COUNT(*) FROM seen_deals", "SELECT COUNT(*) FROM daily_entries",
				} {
					var n int
					if err := db.SQL().QueryRow(count).Scan(&n); err != nil || n != 0 {
						t.Errorf("%s: %d (%v) after refusals, want 0", count, n, err)
					}
				}
				if s, err := r.Standing(ctx, "classic", bad); err != nil || s.Games != 0 {
					t.Errorf("standing of %q: %+v, %v", bad, s, err)
				}
				if h, err := r.History(ctx, bad, 10); err != nil || len(h) != 0 {
					t.Errorf("history of %q: %+v, %v", bad, h, err)
				}
				if _, ok, err := gh.Get(ctx, bad); ok || err != nil {
					t.Errorf("ghost %q: %v, %v", bad, ok, err)
				}
				if _, ok, err := d.Entry(ctx, "2026-01-01", "classic", bad); ok || err != nil {
					t.Errorf("day's entry of %q: %v, %v", bad, ok, err)
				}
			})
		}
	})
}
