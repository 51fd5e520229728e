package memlobby_test

import (
	"context"
	"fmt"
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/glicko2"
	"sirtommy/lobby/memlobby"
)

func standing(player string, rating float64, games int) lobby.Standing {
	s := lobby.NewStanding(player, "n-"+player, "classic")
	s.Rating.Rating, s.Games = rating, games
	return s
}

func TestLeaderboardStandingsAndHistory(t *testing.T) {
	ctx := context.Background()
	r := memlobby.NewRatings()
	if s, _ := r.Standing(ctx, "classic", "nobody"); s.Rating != glicko2.New() || s.Games != 0 {
		t.Fatalf("a new player's standing %+v", s)
	}
	for i, rating := range []float64{1500, 1700, 1600} {
		p := fmt.Sprintf("p%d", i)
		g := lobby.GameRecord{Race: fmt.Sprintf("r%d", i), Variant: "classic",
			Players: [2]lobby.PlayerRef{{ID: p}, {Name: "computer", Computer: true}}}
		if err := r.Save(ctx, g, []lobby.Standing{standing(p, rating, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	_ = r.Save(ctx, lobby.GameRecord{Race: "r3", Variant: "classic", Players: [2]lobby.PlayerRef{{ID: "p0"}, {ID: "p2"}}},
		[]lobby.Standing{standing("p0", 1400, 2), standing("p2", 1650, 2)})
	board, _ := r.Leaderboard(ctx, "classic", 2)
	if len(board) != 2 || board[0].Player != "p1" || board[1].Player != "p2" {
		t.Fatalf("leaderboard %+v", board)
	}
	if other, _ := r.Leaderboard(ctx, "strict", 10); len(other) != 0 {
		t.Fatalf("another variant's board %+v", other)
	}
	h, _ := r.History(ctx, "p0", 10)
	if len(h) != 2 || h[0].Race != "r3" || h[1].Race != "r0" {
		t.Fatalf("history newest first: %+v", h)
	}
	if h, _ := r.History(ctx, "p0", 1); len(h) != 1 {
		t.Fatalf("history of 1: %d", len(h))
	}
	if st, _ := r.Standings(ctx, "p2"); len(st) != 1 || st[0].Rating.Rating != 1650 || st[0].Games != 2 {
		t.Fatalf("standings %+v", st)
	}
}
