package racetest

import (
	"cmp"
	"slices"

	"sirtommy/engine"
	"sirtommy/race"
)

// Ranking is a test's oracle for a result's ranking, worked out apart
// from the race's referee from the result's scores and statuses and the
// time of each game's last entry in the race's log: those who won the
// deal in the order they won it, then the most cards, equal cards
// sharing a place (1, 1, 3).
func Ranking(res *race.Result, log []race.MoveRecord) []race.Place {
	last := make([]int64, len(res.Scores))
	for _, e := range log {
		last[e.Seat] = e.AtMs
	}
	places := make([]race.Place, len(res.Scores))
	for s := range places {
		places[s] = race.Place{Seat: s, Cards: res.Scores[s], Status: res.Statuses[s]}
		if res.Statuses[s] != engine.Playing {
			at := last[s]
			places[s].FinishedMs = &at
		}
	}
	order := func(a, b race.Place) int {
		aw, bw := a.Status == engine.Won, b.Status == engine.Won
		switch {
		case aw && bw:
			return cmp.Compare(*a.FinishedMs, *b.FinishedMs)
		case aw:
			return -1
		case bw:
			return 1
		}
		return cmp.Compare(b.Cards, a.Cards)
	}
	slices.SortStableFunc(places, order)
	for i := range places {
		places[i].Place = i + 1
		if i > 0 && order(places[i-1], places[i]) == 0 {
			places[i].Place = places[i-1].Place
		}
	}
	return places
}

// SamePlaces reports whether two rankings are equal, place by place.
func SamePlaces(a, b []race.Place) bool {
	return slices.EqualFunc(a, b, func(x, y race.Place) bool {
		return x.Seat == y.Seat && x.Place == y.Place && x.Cards == y.Cards && x.Status == y.Status &&
			(x.FinishedMs == nil) == (y.FinishedMs == nil) && (x.FinishedMs == nil || *x.FinishedMs == *y.FinishedMs)
	})
}
