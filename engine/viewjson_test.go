package engine

import (
	"bytes"
	"encoding/json"
	"testing"
)

// plainView has View's fields and tags but not its MarshalJSON: what
// encoding/json's reflection writes, the reference.
type plainView View

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
