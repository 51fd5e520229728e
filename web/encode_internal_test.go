package web

import (
	"bytes"
	"testing"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// TestFastEncodingMatchesJSON plays whole games of every variant and checks
// that the hand-written encoding of each move's events is byte for byte
// encodeEvent's (encoding/json), with request ids that need escaping too.
func TestFastEncodingMatchesJSON(t *testing.T) {
	const maxMoves = 400 // a game the greedy player does not end (waste to waste) stops here
	ids := []string{"", "7", `q"uote`, `back\slash`, "tab\there", "<&>", "é ü 漢", "bad \xff utf8", "line\u2028sep", "ctl\x01"}
	for _, rules := range engine.Variants() {
		for deal := uint64(1); deal <= 3; deal++ {
			g := engine.New(rules, deal)
			for n := 0; g.Status() == engine.Playing && n < maxMoves; n++ {
				m := racetest.Greedy(&g)
				if err := g.Apply(m); err != nil {
					t.Fatalf("%s deal %d: %v", rules.Name, deal, err)
				}
				v := g.View()
				counts := race.Counts{Score: g.Score(), Stock: g.StockLeft(), Status: g.Status(), Moves: g.Plies(), Connected: n%2 == 0}
				id := ids[n%len(ids)]
				evs := []race.Event{
					&race.MovedEvent{Race: "r" + id, ID: id, Seat: n % 2, Seq: n + 1, Move: m.String(), AtMs: int64(n * 517), View: v},
					&race.OpponentEvent{Race: "r", Seat: 1, Counts: counts},
					&race.BoardEvent{Race: "r", Seat: 0, Seq: n + 1, Move: m.String(), AtMs: int64(n), View: v, Counts: counts},
				}
				// A spectator's board: cards face down, a reveal, a version.
				masked := g.View()
				for i := range masked.Turned {
					masked.Turned[i] = engine.Hidden
				}
				for p := range masked.Waste {
					if k := len(masked.Waste[p].Cards); k > 0 {
						masked.Waste[p].Cards[k-1] = engine.Hidden
					}
				}
				if masked.Foundations[n%4].Top != engine.NoCard {
					masked.Foundations[n%4].Top = engine.Hidden
				}
				evs = append(evs, &race.BoardEvent{Race: "r", Seat: 1, Seq: n, Move: "??>W1", View: masked, Counts: counts, Reveal: n%2 == 1, Ver: uint64(n)<<32 + 7})
				if n == 0 { // boards before the start hide the turned cards
					hidden := v
					hidden.Turned = []engine.Card{}
					evs = append(evs, &race.BoardEvent{Race: "r", View: hidden})
					evs = append(evs, &race.MovedEvent{Race: "r", View: engine.View{}}) // nil slices
				}
				for _, ev := range evs {
					want, err := encodeEvent(ev)
					if err != nil {
						t.Fatal(err)
					}
					got, ok := appendFast(nil, ev)
					if !ok {
						t.Fatalf("%s: the fast path refused %#v", rules.Name, ev)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("%s deal %d move %d %s:\n got %s\nwant %s", rules.Name, deal, n, ev.EventType(), got, want)
					}
				}
			}
		}
	}
}

// TestFastEncodingFallsBack: a value encoding/json cannot write (an invalid
// card) is left to it, which reports the error.
func TestFastEncodingFallsBack(t *testing.T) {
	ev := &race.MovedEvent{Race: "r", View: engine.View{Turned: []engine.Card{engine.Card(0xff)}}}
	if _, ok := appendFast([]byte("x"), ev); ok {
		t.Fatal("the fast path wrote an invalid card")
	}
	if _, err := appendMessage(nil, ev); err == nil {
		t.Fatal("an invalid card encoded without an error")
	}
}

// BenchmarkEncodeMove encodes the three messages of one move ("moved",
// "opponent", "board") the generic way (encoding/json, as before) and the
// hand-written way.
func BenchmarkEncodeMove(b *testing.B) {
	rules, err := engine.Variant("classic")
	if err != nil {
		b.Fatal(err)
	}
	g := engine.New(rules, 7)
	for range 20 {
		_ = g.Apply(racetest.Greedy(&g))
	}
	v := g.View()
	c := race.Counts{Score: g.Score(), Stock: g.StockLeft(), Moves: g.Plies(), Connected: true}
	evs := []race.Event{
		&race.MovedEvent{Race: "4a83e4221b9a2f917bdf9fb93585a634", ID: "17", Seat: 0, Seq: 21, Move: "3H>F2", AtMs: 10234, View: v},
		&race.OpponentEvent{Race: "4a83e4221b9a2f917bdf9fb93585a634", Seat: 0, Counts: c},
		&race.BoardEvent{Race: "4a83e4221b9a2f917bdf9fb93585a634", Seat: 0, Seq: 21, Move: "3H>F2", AtMs: 10234, View: v, Counts: c},
	}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, ev := range evs {
				if _, err := encodeEvent(ev); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("hand-written", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			for _, ev := range evs {
				var err error
				if buf, err = appendMessage(buf[:0], ev); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
