package race_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// marshalNoHTML is encoding/json without HTML escaping, the form the
// events' AppendJSON promise.
func marshalNoHTML(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestEventAppendJSON: the per-move events write what encoding/json
// writes, byte for byte, over whole games of every variant, with ids that
// need escaping, hidden cards, reveals and versions.
func TestEventAppendJSON(t *testing.T) {
	const maxMoves = 400 // a game the greedy player does not end (waste to waste) stops here
	ids := []string{"", "7", `q"uote`, `back\slash`, "tab\there", "<&>", "é ü 漢", "bad \xff utf8", "line\u2028sep", "ctl\x01"}
	for _, rules := range engine.Variants() {
		g := engine.New(rules, 5)
		for n := 0; g.Status() == engine.Playing && n < maxMoves; n++ {
			m := racetest.Greedy(&g)
			if err := g.Apply(m); err != nil {
				t.Fatalf("%s: %v", rules.Name, err)
			}
			v := g.View()
			counts := race.Counts{Score: g.Score(), Stock: g.StockLeft(), Status: g.Status(), Moves: g.Plies(), Connected: n%2 == 0}
			id := ids[n%len(ids)]
			masked := g.View()
			for i := range masked.Turned {
				masked.Turned[i] = engine.Hidden
			}
			evs := []race.JSONAppender{
				&race.MovedEvent{Race: "r" + id, ID: id, Seat: n % 2, Seq: n + 1, Move: m.String(), AtMs: int64(n * 517), View: v},
				&race.OpponentEvent{Race: "r" + id, Seat: 1, Counts: counts},
				&race.BoardEvent{Race: "r", Seat: 0, Seq: n + 1, Move: m.String(), AtMs: int64(n), View: v, Counts: counts},
				&race.BoardEvent{Race: "r", Seat: 1, Seq: n, Move: "??>W1", View: masked, Counts: counts, Reveal: n%2 == 1, Ver: uint64(n)<<32 + 7},
			}
			if n == 0 {
				evs = append(evs, &race.MovedEvent{Race: "r"}, // nil slices
					&race.OpponentEvent{Counts: race.Counts{Status: engine.Status(99)}}) // "unknown"
			}
			for _, ev := range evs {
				got, err := ev.AppendJSON([]byte("prefix"))
				if err != nil {
					t.Fatal(err)
				}
				if want := append([]byte("prefix"), marshalNoHTML(t, ev)...); !bytes.Equal(got, want) {
					t.Fatalf("%s move %d:\n got %s\nwant %s", rules.Name, n, got, want)
				}
			}
		}
	}
}

// TestEventAppendJSONRefusesWhatJSONCannotWrite: an invalid card is an
// error, as it is for encoding/json.
func TestEventAppendJSONRefusesWhatJSONCannotWrite(t *testing.T) {
	bad := []race.JSONAppender{
		&race.MovedEvent{Race: "r", View: engine.View{Turned: []engine.Card{engine.Card(0xff)}}},
		&race.BoardEvent{Race: "r", View: engine.View{Turned: []engine.Card{engine.Card(0xff)}}},
	}
	for _, ev := range bad {
		if _, err := json.Marshal(ev); err == nil {
			t.Fatalf("encoding/json wrote %#v", ev)
		}
		if b, err := ev.AppendJSON(nil); err == nil {
			t.Fatalf("AppendJSON wrote %s", b)
		}
	}
}
