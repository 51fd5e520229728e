package memlobby_test

import (
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
)

func TestRatingsConformance(t *testing.T) {
	lobbytest.RatingsSuite(t, func(*testing.T) lobby.Ratings { return memlobby.NewRatings() })
}

// TestMemoryShared runs the shared stores' conformance suite against the
// in-memory ones, every instance seeing the same stores.
func TestMemoryShared(t *testing.T) {
	lobbytest.SharedSuite(t, func(t *testing.T, clock race.Clock, n int) []lobby.Stores {
		sh := memlobby.NewStores(lobby.MatchConfig{}, clock)
		out := make([]lobby.Stores, n)
		for i := range out {
			out[i] = sh
		}
		return out
	})
}

func TestMemoryGhosts(t *testing.T) {
	lobbytest.GhostsSuite(t, func(*testing.T) [2]lobby.Ghosts {
		g := memlobby.NewGhosts()
		return [2]lobby.Ghosts{g, g}
	})
}

func TestMemoryDailies(t *testing.T) {
	lobbytest.DailiesSuite(t, func(*testing.T) [2]lobby.Dailies {
		d := memlobby.NewDailies()
		return [2]lobby.Dailies{d, d}
	})
}

func TestMemoryArenas(t *testing.T) {
	lobbytest.ArenasSuite(t, func(*testing.T) [2]lobby.Arenas {
		a := memlobby.NewArenas()
		return [2]lobby.Arenas{a, a}
	})
}
