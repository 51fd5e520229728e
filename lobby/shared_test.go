package lobby_test

import (
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/race"
)

// TestMemoryShared runs the shared stores' conformance suite against the
// in-memory ones, every instance seeing the same stores.
func TestMemoryShared(t *testing.T) {
	lobbytest.SharedSuite(t, func(t *testing.T, clock race.Clock, n int) []lobby.Shared {
		sh := lobby.NewMemoryShared(lobby.MatchConfig{}, clock)
		out := make([]lobby.Shared, n)
		for i := range out {
			out[i] = sh
		}
		return out
	})
}
