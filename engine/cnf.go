package engine

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// WriteCNF writes the SAT encoding of a question about g in DIMACS CNF,
// the form every SAT solver reads, so that anyone can check the engine's
// proofs with a solver of their choosing: with atLeast 0, "can g be won?";
// otherwise "is there a game from g that ends with at least atLeast cards
// on the foundations?". The formula is satisfiable exactly when the answer
// is yes (in strategy, where the encoding leaves out waste-to-waste moves,
// only a yes is an answer). It fails where the encoding does not cover the
// position (in-suit and redeal while a redeal is left) or g is over.
func WriteCNF(w io.Writer, g *Game, atLeast int) error {
	p, ok := satCovers(g)
	if !ok {
		return fmt.Errorf("engine: the SAT encoding does not cover %s from this position", g.rules.Name)
	}
	if atLeast < 0 || atLeast > g.rules.Deck() {
		return fmt.Errorf("engine: at least %d cards: want 0 (a win) to %d", atLeast, g.rules.Deck())
	}
	if atLeast == g.rules.Deck() {
		atLeast = 0 // every card up is a win: the smaller encoding
	}
	p.atLeast = atLeast
	e := encodeChains(p)
	bw := bufio.NewWriter(w)
	what := "a win"
	if atLeast > 0 {
		what = fmt.Sprintf("a game with at least %d cards on the foundations", atLeast)
	}
	fmt.Fprintf(bw, "c sirtommy: %s, %s from this position; satisfiable exactly when there is one\n", g.rules.Name, what)
	fmt.Fprintf(bw, "p cnf %d %d\n", e.nVars, len(e.clauses))
	buf := make([]byte, 0, 64)
	for _, c := range e.clauses {
		buf = buf[:0]
		for _, l := range c {
			buf = strconv.AppendInt(buf, int64(l), 10)
			buf = append(buf, ' ')
		}
		buf = append(buf, '0', '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}
