package memlobby_test

import (
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/memlobby"
)

func TestMemoryMistakes(t *testing.T) {
	lobbytest.MistakesSuite(t, func(*testing.T) [2]lobby.Mistakes {
		m := memlobby.NewMistakes()
		return [2]lobby.Mistakes{m, m}
	})
}
