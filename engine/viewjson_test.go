package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// View's hand-written JSON is encoding/json's, byte for byte: over whole
// games of every variant, as the player sees them (strict hides buried
// cards), as a spectator sees them (face-down cards), before the start
// (nothing turned), with nil slices, and with a variant name that needs
// escaping; through json.Marshal (HTML escaping on) and an Encoder with it
// off, as the web package writes.
func TestViewJSONIsEncodingJSON(t *testing.T) {
	check := func(what string, v View) {
		t.Helper()
		for _, html := range []bool{true, false} {
			got, want := encodeJSON(t, v, html), encodeJSON(t, plainView(v), html)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s (HTML escaping %v):\n got %s\nwant %s", what, html, got, want)
			}
		}
		direct, err := v.AppendJSON([]byte("x"))
		if err != nil || !bytes.Equal(direct[1:], encodeJSON(t, plainView(v), false)) {
			t.Fatalf("%s: AppendJSON gave %s, %v", what, direct, err)
		}
	}
	check("a zero view", View{})
	check("odd variant", View{Variant: "a <b> & \"c\" é\x01\u2028", Turned: []Card{}})
	const maxMoves = 300 // strategy games the greedy policy never ends
	for _, rules := range Variants() {
		for deal := uint64(1); deal <= 3; deal++ {
			g := New(rules, deal)
			for n := 0; g.Status() == Playing && n < maxMoves; n++ {
				m, ok := mediumMove(&g)
				if !ok || g.Apply(m) != nil {
					break
				}
				check(rules.Name+" view", g.View())
				check(rules.Name+" memory", g.Memory())
				masked := g.View()
				for i := range masked.Turned {
					masked.Turned[i] = Hidden
				}
				if f := &masked.Foundations[n%4]; f.Top != NoCard {
					f.Top = Hidden
				}
				for p := range masked.Waste {
					if k := len(masked.Waste[p].Cards); k > 0 {
						masked.Waste[p].Cards[k-1] = Hidden
					}
				}
				check(rules.Name+" spectator", masked)
			}
			check(rules.Name+" end", g.View())
		}
	}
}

// A card that is no card fails, as encoding/json fails on it.
func TestViewJSONRefusesBadCards(t *testing.T) {
	for _, v := range []View{
		{Turned: []Card{Card(0x7f)}},
		{Waste: [4]WasteView{{Cards: []Card{NoCard}}}},
		{Foundations: [4]FoundationView{{Top: Card(0x7f), Count: 1}}},
		{Foundations: [4]FoundationView{{Wants: Rank(14)}}},
	} {
		if _, err := json.Marshal(plainView(v)); err == nil {
			t.Fatalf("encoding/json took %+v", v)
		}
		if b, err := json.Marshal(v); err == nil {
			t.Fatalf("MarshalJSON took %+v: %s", v, b)
		}
	}
}

func encodeJSON(t *testing.T, v any, html bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// A View read back from its JSON is the View written, over whole games
// of every variant; and what the hand-written reader takes it reads as
// encoding/json does (FuzzViewUnmarshalJSON).
func TestViewJSONRoundTrip(t *testing.T) {
	const maxMoves = 300
	for _, rules := range Variants() {
		g := New(rules, 2)
		for n := 0; g.Status() == Playing && n < maxMoves; n++ {
			m, ok := mediumMove(&g)
			if !ok || g.Apply(m) != nil {
				break
			}
			for _, v := range []View{g.View(), g.Memory()} {
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				var back View
				if !readViewJSON(b, &back) {
					t.Fatalf("%s: the fast reader refused %s", rules.Name, b)
				}
				if !reflect.DeepEqual(back, v) {
					t.Fatalf("%s: read back %+v, want %+v", rules.Name, back, v)
				}
			}
		}
	}
}

// FuzzViewUnmarshalJSON: on any input, View.UnmarshalJSON and
// encoding/json's reflection (plainView) agree on whether it is a View
// and, when it is, on the View, starting from the same one (fields the
// input does not name keep their values in both).
func FuzzViewUnmarshalJSON(f *testing.F) {
	g := New(mustVariant(f, "four-at-a-time"), 3)
	for range 30 {
		m, _ := mediumMove(&g)
		_ = g.Apply(m)
		b, _ := json.Marshal(g.View())
		f.Add(b)
	}
	f.Add([]byte(`{"variant":"x","stock":-3,"turned":[],"foundations":[{"count":0,"step":1},{"top":"??","count":1,"wants":"T","step":2},{"count":0,"step":1},{"count":0,"step":1}],"waste":[{"cards":["??"],"count":5},{"cards":[],"count":0},{"cards":[],"count":0},{"cards":[],"count":0}],"redealsLeft":0,"wasteLocked":true,"status":"won","score":52,"target":52,"moves":104}`))
	f.Add([]byte(`{"variant":"classic","stock":1,"turned":null}`))
	f.Add([]byte(`{"variant":"classic","stock":01}`))
	f.Add([]byte(`{"variant":"classic","stock":-0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		start := View{Variant: "before", Stock: 9, Turned: []Card{Hidden}, Foundations: [4]FoundationView{{Top: NewCard(Ace, Spades), Count: 1, Wants: 2, Step: 1}}, Score: 7}
		fast, slow := start, start
		fast.Turned, slow.Turned = []Card{Hidden}, []Card{Hidden}
		errFast := json.Unmarshal(data, &fast)
		errSlow := json.Unmarshal(data, (*plainView)(&slow))
		if (errFast == nil) != (errSlow == nil) {
			t.Fatalf("%q: UnmarshalJSON err %v, encoding/json err %v", data, errFast, errSlow)
		}
		if errFast == nil && !reflect.DeepEqual(fast, View(slow)) {
			t.Fatalf("%q:\n fast %+v\n json %+v", data, fast, View(slow))
		}
	})
}
