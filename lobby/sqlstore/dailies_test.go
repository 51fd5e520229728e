package sqlstore_test

import (
	"context"
	"testing"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
)

func TestDailiesConformance(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		lobbytest.DailiesSuite(t, func(t *testing.T) [2]lobby.Dailies {
			emptied(t, db)
			return [2]lobby.Dailies{sqlstore.NewDailies(db), sqlstore.NewDailies(db)}
		})
	})
}

// TestDailyBoardCountsFinishedGamesAndRanksTies: an attempt being played
// is not on the board nor counted; equal games rank by player id, as in
// memory; a finished game is not undone; History is newest day first.
func TestDailyBoardCountsFinishedGamesAndRanksTies(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		d := sqlstore.NewDailies(db)
		const day, variant = "2026-01-02", "classic"
		for _, p := range []string{"ann", "bob", "cat", "dan"} {
			if ok, err := d.Begin(ctx, day, variant, p); err != nil || !ok {
				t.Fatalf("%s begins: %v %v", p, ok, err)
			}
		}
		for _, e := range []lobby.DailyEntry{
			{Player: "cat", Won: true, Status: engine.Won, Score: 52, TimeMs: 70_000},
			{Player: "bob", Won: true, Status: engine.Won, Score: 52, TimeMs: 70_000},
			{Player: "ann", Score: 30, TimeMs: 50_000},
		} {
			e.Day, e.Variant = day, variant
			if err := d.Finish(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		board, total, err := d.Board(ctx, day, variant, 2)
		if err != nil || total != 3 || len(board) != 2 || board[0].Player != "bob" || board[1].Player != "cat" || board[1].Rank != 2 {
			t.Fatalf("board %+v, total %d, %v; want bob, cat of 3 (dan is still playing)", board, total, err)
		}
		for p, rank := range map[string]int{"bob": 1, "cat": 2, "ann": 3} {
			if e, ok, err := d.Entry(ctx, day, variant, p); err != nil || !ok || e.Rank != rank {
				t.Errorf("%s's entry: %+v %v %v, want rank %d", p, e, ok, err, rank)
			}
		}
		if _, ok, _ := d.Entry(ctx, day, variant, "dan"); ok {
			t.Error("dan, still playing, has an entry")
		}
		if err := d.Undo(ctx, day, variant, "ann"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := d.Begun(ctx, day, variant, "ann"); !ok {
			t.Error("ann's finished game was undone")
		}
		if err := d.Undo(ctx, day, variant, "dan"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := d.Begun(ctx, day, variant, "dan"); ok {
			t.Error("dan's attempt was not undone")
		}
		if err := d.Finish(ctx, lobby.DailyEntry{Day: "2026-01-01", Variant: variant, Player: "ann", Score: 5}); err != nil {
			t.Fatal(err)
		}
		if h, err := d.History(ctx, "ann", 10); err != nil || len(h) != 2 || h[0].Day != day || h[1].Score != 5 {
			t.Errorf("ann's days %+v, %v; want the 2nd then the 1st", h, err)
		}
	})
}
