package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// Record is a whole game in notation, like a PGN for chess: tag lines, then
// the moves in order, separated by white space:
//
//	[Variant "classic"]
//	[Deal "1"]
//	[Result "stuck 23"]
//	7C>W1 AS>F1 KD>W2 ...
//
// Variant and Deal are required; Result ("won 52", "stuck 23", "resigned 9")
// is written by Format and checked by Replay when present; other tags are
// kept as they are. A last word "resign" records a resignation. Everything
// from ";" to the end of a line is a comment.
//
// In four-at-a-time the move T turns the next four. Texts written before
// that move existed (the next four were turned as the last was placed)
// still replay: Replay turns them where such a text places a card of the
// next four, which is where the player turned them (see Replay).
type Record struct {
	Variant  string
	Deal     uint64
	Moves    []Move
	Resigned bool
	// Result is "STATUS SCORE" after replay, or empty when not known.
	Result string
	// Tags are other tags, written in order after the standard ones.
	Tags [][2]string
}

// RecordOf returns the record of a game played from its start with moves.
func RecordOf(g *Game, moves []Move) Record {
	return Record{
		Variant:  g.rules.Name,
		Deal:     g.deal,
		Moves:    append([]Move(nil), moves...),
		Resigned: g.status == Resigned,
		Result:   fmt.Sprintf("%s %d", g.status, g.score),
	}
}

// LineRecord plays line from the start of deal and returns its record: how
// a solver's line (Solution.Line) becomes a game text. An error names the
// first move the rules refuse.
func LineRecord(rules *Rules, deal uint64, line []Move) (Record, error) {
	g := New(rules, deal)
	for i, m := range line {
		if err := g.Apply(m); err != nil {
			return Record{}, fmt.Errorf("move %d: %w", i+1, err)
		}
	}
	return RecordOf(&g, line), nil
}

// String writes the record in notation, ten moves to a line.
func (r Record) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Variant %s]\n[Deal %s]\n", quoteTag(r.Variant), quoteTag(strconv.FormatUint(r.Deal, 10)))
	if r.Result != "" {
		fmt.Fprintf(&b, "[Result %s]\n", quoteTag(r.Result))
	}
	for _, t := range r.Tags {
		fmt.Fprintf(&b, "[%s %s]\n", t[0], quoteTag(t[1]))
	}
	for i, m := range r.Moves {
		switch {
		case i > 0 && i%10 == 0:
			b.WriteByte('\n')
		case i > 0:
			b.WriteByte(' ')
		}
		b.WriteString(m.String())
	}
	if r.Resigned {
		if len(r.Moves) > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("resign")
	}
	b.WriteByte('\n')
	return b.String()
}

// quoteTag writes a tag value as a quoted Go string, with ";" (which starts
// a comment) escaped as \x3b so that the line reads back. Quote never
// writes ";" inside an escape, so every one it writes is the value's own.
func quoteTag(s string) string { return strings.ReplaceAll(strconv.Quote(s), ";", `\x3b`) }

// ParseRecord reads a record in notation. It checks the form only; Replay
// checks that the moves are legal.
func ParseRecord(text string) (Record, error) {
	var r Record
	seen := map[string]bool{}
	for ln, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		at := func(err error) error { return fmt.Errorf("line %d: %w", ln+1, err) }
		if strings.HasPrefix(line, "[") {
			if len(r.Moves) > 0 || r.Resigned {
				return r, at(fmt.Errorf("tag after the moves"))
			}
			name, value, err := parseTag(line)
			if err != nil {
				return r, at(err)
			}
			if seen[name] {
				return r, at(fmt.Errorf("tag %s given twice", name))
			}
			seen[name] = true
			switch name {
			case "Variant":
				rules, err := Variant(value)
				if err != nil {
					return r, at(err)
				}
				r.Variant = rules.Name
			case "Deal":
				n, err := strconv.ParseUint(value, 10, 64)
				if err != nil {
					return r, at(fmt.Errorf("deal %q is not a number from 0 to 18446744073709551615", value))
				}
				r.Deal = n
			case "Result":
				r.Result = value
			default:
				r.Tags = append(r.Tags, [2]string{name, value})
			}
			continue
		}
		for _, word := range strings.Fields(line) {
			if r.Resigned {
				return r, at(fmt.Errorf("%q after resign", word))
			}
			if strings.EqualFold(word, "resign") {
				r.Resigned = true
				continue
			}
			m, err := ParseMove(word)
			if err != nil {
				return r, at(fmt.Errorf("move %d: %w", len(r.Moves)+1, err))
			}
			r.Moves = append(r.Moves, m)
		}
	}
	if !seen["Variant"] || !seen["Deal"] {
		return r, fmt.Errorf("engine: a game text needs [Variant \"...\"] and [Deal \"...\"] tags")
	}
	return r, nil
}

func parseTag(line string) (name, value string, err error) {
	if !strings.HasSuffix(line, "]") {
		return "", "", fmt.Errorf("tag %q does not end with ]", line)
	}
	inner := strings.TrimSpace(line[1 : len(line)-1])
	name, quoted, ok := strings.Cut(inner, " ")
	if !ok || name == "" {
		return "", "", fmt.Errorf("tag %q is not [Name \"value\"]", line)
	}
	value, err = strconv.Unquote(strings.TrimSpace(quoted))
	if err != nil {
		return "", "", fmt.Errorf("tag %s: value %s is not a quoted string", name, quoted)
	}
	return name, value, nil
}

// Replay plays the record's moves through the engine from the deal and
// returns the final game. An illegal move is reported with its number; a
// Result tag that disagrees with the final state is an error too.
//
// Moves are applied with ApplyRecorded, so a four-at-a-time text written
// before the move T existed replays as the same game.
func (r Record) Replay() (Game, error) {
	rules, err := Variant(r.Variant)
	if err != nil {
		return Game{}, err
	}
	g := New(rules, r.Deal)
	for i, m := range r.Moves {
		if err := g.ApplyRecorded(m); err != nil {
			return g, fmt.Errorf("move %d (%s): %w", i+1, m, err)
		}
	}
	if r.Resigned {
		if g.status != Playing {
			return g, fmt.Errorf("resign after the game ended (%s)", g.status)
		}
		g.Resign()
	}
	if got := fmt.Sprintf("%s %d", g.status, g.score); r.Result != "" && r.Result != got {
		return g, fmt.Errorf("the moves end in %q, not the recorded result %q", got, r.Result)
	}
	return g, nil
}

// ApplyRecorded applies a move that was accepted once and recorded (in a
// game text or a race's log), as Apply does, except that a four-at-a-time
// record written before the move T existed, when the next four were turned
// as the last was placed, plays as the same game: where a move places a
// card that is neither turned nor on a waste pile while the next four wait
// face down, they are turned first. The waste moves such a record makes
// between the last card of one four and the first of the next then come
// before the turn, where the rules now put them; they are the same moves on
// the same piles, so the game is the same but for the turns it counts as
// moves. Only records are read so: Apply never turns by itself, since a
// move naming a card of the stock must not find out whether it is next.
func (g *Game) ApplyRecorded(m Move) error {
	if m.Kind == Place && g.canTurn() && !g.available(m.Card) {
		_ = g.Apply(TurnMove) // canTurn says it is legal
	}
	return g.Apply(m)
}
