package race

// The referee, after the French rules: the first to win the deal wins;
// when every racer still playing is stuck, more cards on the foundations
// ranks higher; the time limit ranks the same way; equal cards share a
// place. In a race of two this is the race's winner; in a race of more,
// a ranking of every racer, and the race runs until no place can change.

import (
	"cmp"
	"slices"

	"sirtommy/engine"
)

// out reports whether a game can take no more moves in the race: stuck or
// resigned (a won game is not "out", it has won).
func out(g *engine.Game) bool {
	s := g.Status()
	return s == engine.Stuck || s == engine.Resigned
}

// refereeLocked decides the race from every seat's game: the referee, or
// in a solo race the player's game alone.
func (r *Race) refereeLocked() (winner int, reason Reason, done bool) {
	if !r.opts.Solo {
		var games [MaxSeats]*engine.Game // on the stack: a move asks
		var finished [MaxSeats]int64
		return decide(r.gameRefsLocked(games[:0]), r.finishedLocked(finished[:0]))
	}
	for s := range r.seats {
		if r.seats[s].solo() {
			continue
		}
		switch g := &r.seats[s].game; {
		case g.Status() == engine.Won:
			return s, ReasonWonDeal, true
		case out(g):
			return -1, ReasonOut, true
		}
	}
	return 0, "", false
}

// finishedLocked appends, by seat, when each seat's game ended in ms
// since the start: its last logged entry's time, or -1 while it plays.
func (r *Race) finishedLocked(dst []int64) []int64 {
	for s := range r.seats {
		at := int64(-1)
		if r.seats[s].game.Status().Over() {
			at = r.seats[s].last.AtMs
		}
		dst = append(dst, at)
	}
	return dst
}

// gameRefsLocked appends every seat's game, by seat, to dst.
func (r *Race) gameRefsLocked(dst []*engine.Game) []*engine.Game {
	for s := range r.seats {
		dst = append(dst, &r.seats[s].game)
	}
	return dst
}

// settled reports whether no racer's place can change any more: a racer
// still playing can pass or join any racer out with as many cards or
// more, and any other racer still playing, but never a racer who won
// the deal before it (a later win ranks after) nor one out with fewer
// cards (its cards only grow). So the places are settled once at most
// one racer plays on, with more cards than every racer out. In a race
// of two that is: one won the deal, both are out, or the one playing
// passed the one out.
func settled(games []*engine.Game) bool {
	playing, best := -1, -1 // the one seat still playing; the best score of those out
	for s, g := range games {
		switch {
		case g.Status() == engine.Won:
		case out(g):
			best = max(best, g.Score())
		case playing >= 0:
			return false // two still playing
		default:
			playing = s
		}
	}
	return playing < 0 || games[playing].Score() > best
}

// decide is the referee of a race whose games are settled or not:
// whether it is over and, when it is, who won (-1 for a draw) and why.
// finished[s] is when seat s's game ended (ms since the start; read for
// won games, the first to win ranking first).
func decide(games []*engine.Game, finished []int64) (winner int, reason Reason, done bool) {
	if !settled(games) {
		return 0, "", false
	}
	w, why := verdict(rank(games, finished, -1), ReasonMoreCards)
	return w, why, true
}

// decideOnTime is the referee when the time limit is reached: the ranking
// as the games stand.
func decideOnTime(games []*engine.Game, finished []int64) (winner int, reason Reason) {
	return verdict(rank(games, finished, -1), ReasonTime)
}

// verdict is the winner and the reason of a ranking: the racer alone in
// first place wins, for having won the deal first (ReasonWonDeal), for
// having passed every racer out while still playing (ReasonPassed), or
// else for reason (more cards when all are out, or on time); a shared
// first place is a draw (ReasonEqualCards).
func verdict(places []Place, reason Reason) (winner int, why Reason) {
	if len(places) > 1 && places[1].Place == 1 {
		return -1, ReasonEqualCards
	}
	first := places[0]
	switch {
	case first.Status == engine.Won:
		return first.Seat, ReasonWonDeal
	case first.Status == engine.Playing && reason == ReasonMoreCards:
		return first.Seat, ReasonPassed
	}
	return first.Seat, reason
}

// Place is one racer's place in a race's result (Result.Ranking).
type Place struct {
	Seat int `json:"seat"`
	// Place is 1 for the first; racers level share a place, and the next
	// place counts them (1, 1, 3).
	Place int `json:"place"`
	// Cards are the racer's cards on the foundations at the end.
	Cards  int           `json:"cards"`
	Status engine.Status `json:"status"`
	// FinishedMs is when the racer's game ended (won, stuck, resigned), in
	// ms after the start; absent for a game still playing at the end.
	FinishedMs *int64 `json:"finishedMs,omitempty"`
}

// rank places every racer: those who won the deal first, in the order
// they won it (in the same millisecond, they share a place); then every
// other racer by cards on the foundations, most first, equal cards
// sharing a place. first, when not -1, is a seat placed first alone
// whatever its game (the one left when the other forfeits), the others
// ranked after it.
func rank(games []*engine.Game, finished []int64, first int) []Place {
	places := make([]Place, len(games))
	for s, g := range games {
		places[s] = Place{Seat: s, Cards: g.Score(), Status: g.Status()}
		if g.Status().Over() {
			at := finished[s]
			places[s].FinishedMs = &at
		}
	}
	// ahead orders two racers; 0 is level.
	ahead := func(a, b *Place) int {
		aw, bw := a.Status == engine.Won, b.Status == engine.Won
		switch {
		case (a.Seat == first) != (b.Seat == first):
			if a.Seat == first {
				return -1
			}
			return 1
		case aw && bw:
			return cmp.Compare(*a.FinishedMs, *b.FinishedMs)
		case aw != bw:
			if aw {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.Cards, a.Cards)
	}
	slices.SortStableFunc(places, func(a, b Place) int { return ahead(&a, &b) })
	for i := range places {
		places[i].Place = i + 1
		if i > 0 && ahead(&places[i-1], &places[i]) == 0 {
			places[i].Place = places[i-1].Place
		}
	}
	return places
}
