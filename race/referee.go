package race

import "sirtommy/engine"

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
		return decide(r.gameRefsLocked(make([]*engine.Game, 0, seatCount))) // on the stack: a move asks
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

// gameRefsLocked appends every seat's game, by seat, to dst.
func (r *Race) gameRefsLocked(dst []*engine.Game) []*engine.Game {
	for s := range r.seats {
		dst = append(dst, &r.seats[s].game)
	}
	return dst
}

// decide is the referee of the racers' games, by seat. It looks at them
// after every change and says whether the race is decided, who won (-1
// for a draw) and why:
//   - the first to win the deal wins ("won-deal");
//   - when every racer is out, the most foundation cards wins
//     ("more-cards"), several with as many is a draw ("equal-cards");
//   - when all but one are out, the one still playing wins as soon as
//     they have more cards on the foundations than any other ("passed"):
//     nothing can change that any more.
func decide(games []*engine.Game) (winner int, reason Reason, done bool) {
	for s, g := range games {
		if g.Status() == engine.Won {
			return s, ReasonWonDeal, true
		}
	}
	playing, best := -1, -1 // the one seat still playing; the best score of those out
	for s, g := range games {
		if !out(g) {
			if playing >= 0 {
				return 0, "", false // two still playing: nothing is decided
			}
			playing = s
			continue
		}
		best = max(best, g.Score())
	}
	if playing < 0 {
		return compare(games, ReasonMoreCards)
	}
	if games[playing].Score() > best {
		return playing, ReasonPassed, true
	}
	return 0, "", false
}

// decideOnTime is the referee when the time limit is reached: the most
// cards on the foundations wins, several with as many is a draw.
func decideOnTime(games []*engine.Game) (winner int, reason Reason) {
	w, r, _ := compare(games, ReasonTime)
	return w, r
}

// compare decides games by their foundation cards: the one seat with the
// most wins for reason; several with as many is a draw ("equal-cards").
func compare(games []*engine.Game, reason Reason) (int, Reason, bool) {
	winner, best, tied := -1, -1, false
	for s, g := range games {
		switch sc := g.Score(); {
		case sc > best:
			winner, best, tied = s, sc, false
		case sc == best:
			tied = true
		}
	}
	if tied {
		return -1, ReasonEqualCards, true
	}
	return winner, reason, true
}
