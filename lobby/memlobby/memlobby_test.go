package memlobby_test

import (
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/memlobby"
)

func TestRatingsConformance(t *testing.T) {
	lobbytest.RatingsSuite(t, func(*testing.T) lobby.Ratings { return memlobby.NewRatings() })
}
