package engine

import (
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"testing"
)

// FuzzApply plays a game from bytes: the first byte picks the variant, the
// next eight (little-endian) the deal, and each later byte is one step:
//
//	0x00-0xBF  a legal move, the byte modulo the number of legal moves
//	0xC0-0xEF  a raw move: bit 0 the kind, bits 1-2 the pile kind, bits 3-5
//	           the pile index (0 to 5), and the next byte the card, as it is
//	0xF0-0xFE  a move in notation: the low nibble is its length, the text
//	           follows
//	0xFF       resign
//
// After every step the invariants of the property tests hold, a refused
// move has changed nothing and an accepted one was among the legal moves;
// at the end the game's record replays to the same game.
func FuzzApply(f *testing.F) {
	f.Add([]byte("\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02\x03"))
	f.Fuzz(fuzzApply)
}

// fuzzApply is FuzzApply's body.
func fuzzApply(t *testing.T, data []byte) {
	variants := Variants()
	if len(data) == 0 {
		return
	}
	r := variants[int(data[0])%len(variants)]
	var deal [8]byte
	copy(deal[:], data[1:])
	g := New(r, binary.LittleEndian.Uint64(deal[:]))
	ops := data[min(len(data), 9):]
	if len(ops) > 600 {
		ops = ops[:600]
	}
	tr := track(&g)
	var played []Move
	for i := 0; i < len(ops); i++ {
		b := ops[i]
		var m Move
		switch {
		case b < 0xC0:
			legal := g.Moves()
			if len(legal) == 0 {
				continue
			}
			m = legal[int(b)%len(legal)]
		case b < 0xF0:
			if i+1 >= len(ops) {
				return
			}
			i++
			m = Move{Kind: MoveKind(b & 1), Card: Card(ops[i]), To: Pile{PileKind(b >> 1 & 3), b >> 3 & 7}}
			if b&0x31 == 0x31 {
				m.Kind = Turn // a turn, with a card and pile that mean nothing
			}
		case b < 0xFF:
			n := int(b & 0x0f)
			text := string(ops[i+1 : min(i+1+n, len(ops))])
			i += n
			var err error
			if m, err = ParseMove(text); err != nil {
				continue
			}
		default:
			g.Resign()
			continue
		}
		legal := g.Moves()
		before := g
		err := g.Apply(m)
		if err != nil {
			var ie *IllegalMoveError
			if !errors.As(err, &ie) || ie.Move != m {
				t.Fatalf("Apply(%v) = %v, want an *IllegalMoveError for it", m, err)
			}
			if g != before {
				t.Fatalf("refused %v (%v) changed the game", m, ie.Reason)
			}
			if slices.Contains(legal, m) {
				t.Fatalf("listed move %v refused: %v", m, err)
			}
			continue
		}
		if m.Kind != Place {
			m = Move{Kind: m.Kind} // a redeal's or turn's card and pile mean nothing
		}
		if !slices.Contains(legal, m) {
			t.Fatalf("unlisted move %v (%#v) applied; legal were %v", m, m, legal)
		}
		tr.observe(m)
		played = append(played, m)
		if err := checkInvariants(&g, &tr); err != nil {
			t.Fatalf("after %v: %v", played, err)
		}
	}
	if err := checkInvariants(&g, &tr); err != nil {
		t.Fatalf("at the end, after %v: %v", played, err)
	}
	checkReplay(t, &g, played)
}

// FuzzParseRecord reads any text as a record: it never panics, and a record
// it accepts, written out again, reads back the same. Replaying it never
// panics either.
func FuzzParseRecord(f *testing.F) {
	f.Add("[Variant \"classic\"]\n[Deal \"1\"]\n7H>W1 9S>W2 resign\n")
	f.Fuzz(func(t *testing.T, text string) {
		rec, err := ParseRecord(text)
		if err != nil {
			return
		}
		out := rec.String()
		back, err := ParseRecord(out)
		if err != nil {
			t.Fatalf("record %+v written as\n%s\ndoes not read back: %v", rec, out, err)
		}
		if !reflect.DeepEqual(back, rec) {
			t.Fatalf("record %+v written as\n%s\nreads back as %+v", rec, out, back)
		}
		if len(rec.Moves) > 2000 {
			return
		}
		g, err := rec.Replay()
		if err != nil {
			return
		}
		// A record that replays describes its game: written afresh, it
		// replays to the same game.
		again, err := mustParse(t, RecordOf(&g, rec.Moves).String()).Replay()
		if err != nil || again != g {
			t.Fatalf("RecordOf the replayed game does not replay to it: %v", err)
		}
	})
}
