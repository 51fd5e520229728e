package race

import "sirtommy/engine"

// out reports whether a game can take no more moves in the race: stuck or
// resigned (a won game is not "out", it has won).
func out(g *engine.Game) bool {
	s := g.Status()
	return s == engine.Stuck || s == engine.Resigned
}

// refereeLocked decides the race from both games: the referee, or in a
// solo race the player's game alone.
func (r *Race) refereeLocked() (winner int, reason Reason, done bool) {
	games := [2]engine.Game{r.seats[0].game, r.seats[1].game}
	if !r.opts.Solo {
		return decide(&games)
	}
	switch g := &games[1]; {
	case g.Status() == engine.Won:
		return 1, ReasonWonDeal, true
	case out(g):
		return -1, ReasonOut, true
	}
	return 0, "", false
}

// decide is the referee of two games. It looks at both after every
// change and says whether the race is decided, who won (-1 for a draw)
// and why:
//   - the first to win the deal wins ("won-deal");
//   - when both are out, more foundation cards wins ("more-cards"), equal is
//     a draw ("equal-cards");
//   - when one is out, the other wins as soon as they have more cards on the
//     foundations ("passed"): nothing can change that any more.
func decide(g *[2]engine.Game) (winner int, reason Reason, done bool) {
	for s := range 2 {
		if g[s].Status() == engine.Won {
			return s, ReasonWonDeal, true
		}
	}
	out0, out1 := out(&g[0]), out(&g[1])
	a, b := g[0].Score(), g[1].Score()
	switch {
	case out0 && out1:
		return compare(a, b, ReasonMoreCards)
	case out0 && b > a:
		return 1, ReasonPassed, true
	case out1 && a > b:
		return 0, ReasonPassed, true
	}
	return 0, "", false
}

// decideOnTime is the referee when the time limit is reached: more cards on
// the foundations wins, equal is a draw.
func decideOnTime(g *[2]engine.Game) (winner int, reason Reason) {
	w, r, _ := compare(g[0].Score(), g[1].Score(), ReasonTime)
	return w, r
}

func compare(a, b int, reason Reason) (int, Reason, bool) {
	switch {
	case a > b:
		return 0, reason, true
	case b > a:
		return 1, reason, true
	}
	return -1, ReasonEqualCards, true
}
