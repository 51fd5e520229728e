package engine

// A nested Monte-Carlo search (Cazenave, "Nested Monte-Carlo Search",
// IJCAI 2009) finds wins that the depth-first searches find late: at each
// step it tries every candidate move, scores each by a search one level
// lower from the child, and plays the first move of the best sequence found
// so far at this level. Level 0 is a playout that takes the first candidate
// (in the order of priority) whose bound does not rule out the score
// sought, at every turn. A child whose bound rules it out is not scored.
//
// Unlike a depth-first search, which judges a move only by the subtree
// under it, a playout scores a move by how far the whole game gets, so a
// level-2 search picks out openings (a pile kept as a dump, the Kings
// stacked on one pile) that the move ordering ranks low. It proves nothing:
// it can win, but not show a deal lost.

// nestedLevel is the level of the nested search the solver runs; level 2
// costs a few hundred thousand positions a deal, level 3 a hundred times more.
const nestedLevel = 2

// nested runs a nested search of the given level from g, whose moves so
// far are prefix, and returns the best score it reached and the moves
// (prefix included) that reach it. It records a better score than the
// solver's best in s.best and s.bestLine, and stops at a win or when the
// node budget runs out.
func (s *solver) nested(g Game, level int, prefix []Move) (int, []Move) {
	played := append([]Move(nil), prefix...)
	best, bestSeq := -1, []Move(nil)
	deck := g.rules.Deck()
	var buf [64]Move
	for {
		played = s.applySafe(&g, played)
		if g.status != Playing {
			break
		}
		var pileKey [4]uint64
		for p := range 4 {
			pileKey[p] = s.pileHash(&g, p)
		}
		moves := s.candidates(&g, buf[:0], &pileKey)
		for _, m := range moves {
			s.nodes++
			child := g
			if child.Apply(m) != nil {
				continue
			}
			if child.status == Playing && s.upperBound(&child) <= s.floor {
				continue
			}
			var score int
			var seq []Move
			if level <= 1 {
				score, seq = s.playout(child, append(played, m))
			} else {
				score, seq = s.nested(child, level-1, append(played, m))
			}
			if score > best {
				best, bestSeq = score, append(bestSeq[:0], seq...)
			}
			if best == deck || s.aborted {
				return best, bestSeq
			}
		}
		if len(bestSeq) <= len(played) {
			break // every move was cut by the bound
		}
		next := bestSeq[len(played)]
		if g.Apply(next) != nil {
			panic("engine: the nested search's best line has an illegal move")
		}
		played = append(played, next)
	}
	if int(g.score) > best {
		best, bestSeq = int(g.score), played
		s.record(best, played)
	}
	return best, bestSeq
}

// record keeps line as the solver's best line if score beats its best.
func (s *solver) record(score int, line []Move) {
	if score > s.best {
		s.best = score
		s.bestLine = append(s.bestLine[:0], line...)
	}
}

// playout plays the first candidate whose bound does not rule out the
// score sought (or the first, if every one does) at every turn from g,
// whose moves so far are line, to the end of the game, counting each
// position whose bound it computes as a node.
// It returns the final score and line with the playout's moves appended
// (in line's storage: the caller copies what it keeps).
func (s *solver) playout(g Game, line []Move) (int, []Move) {
	var buf [64]Move
	for {
		line = s.applySafe(&g, line)
		if g.status != Playing {
			break
		}
		var pileKey [4]uint64
		for p := range 4 {
			pileKey[p] = s.pileHash(&g, p)
		}
		moves := s.candidates(&g, buf[:0], &pileKey)
		next := moves[0] // when every move is cut, play on to score the game
		for _, m := range moves {
			s.nodes++
			child := g
			if child.Apply(m) != nil {
				continue
			}
			if child.status != Playing || s.upperBound(&child) > s.floor {
				next = m
				break
			}
		}
		if s.nodes > s.maxNodes {
			s.aborted = true
			break
		}
		if g.Apply(next) != nil {
			panic("engine: a playout's move was refused")
		}
		line = append(line, next)
	}
	s.record(int(g.score), line)
	return int(g.score), line
}

// applySafe plays the safe moves from g and appends them to line.
func (s *solver) applySafe(g *Game, line []Move) []Move {
	for {
		m, ok := s.safeMove(g)
		if !ok {
			return line
		}
		_ = g.Apply(m) // safeMove only returns legal moves
		line = append(line, m)
	}
}
