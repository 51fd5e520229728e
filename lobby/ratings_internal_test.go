package lobby

import (
	"testing"

	"sirtommy/lobby/glicko2"
)

func TestStreaksAndWinPercent(t *testing.T) {
	s := NewStanding("p", "ann", "classic")
	r := s.Rating
	for _, c := range []struct {
		score              float64
		streak, best       int
		wins, losses, drws int
		pct                float64
	}{
		{glicko2.Win, 1, 1, 1, 0, 0, 100},
		{glicko2.Win, 2, 2, 2, 0, 0, 100},
		{glicko2.Loss, -1, 2, 2, 1, 0, 100 * 2.0 / 3},
		{glicko2.Loss, -2, 2, 2, 2, 0, 50},
		{glicko2.Draw, 0, 2, 2, 2, 1, 50},
		{glicko2.Win, 1, 2, 3, 2, 1, 100 * 3.5 / 6},
	} {
		s = ApplyResult(s, c.score, r)
		if s.Streak != c.streak || s.BestStreak != c.best || s.Wins != c.wins || s.Losses != c.losses || s.Draws != c.drws || s.WinPercent != c.pct {
			t.Fatalf("after %v: %+v, want streak %d best %d %d-%d-%d %.2f%%", c.score, s, c.streak, c.best, c.wins, c.losses, c.drws, c.pct)
		}
	}
	if s.Games != 6 {
		t.Errorf("games %d", s.Games)
	}
}
