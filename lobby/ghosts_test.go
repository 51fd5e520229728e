package lobby_test

import (
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
)

func TestMemoryGhosts(t *testing.T) {
	lobbytest.GhostsSuite(t, func(*testing.T) [2]lobby.Ghosts {
		g := lobby.NewMemoryGhosts()
		return [2]lobby.Ghosts{g, g}
	})
}

func TestMemoryDailies(t *testing.T) {
	lobbytest.DailiesSuite(t, func(*testing.T) [2]lobby.Dailies {
		d := lobby.NewMemoryDailies()
		return [2]lobby.Dailies{d, d}
	})
}
