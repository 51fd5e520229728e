package redisrace

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sirtommy/race"
)

// TestEncodeIsJSONMarshal: the hand-built envelope is byte for byte what
// json.Marshal(wire{...}) wrote, and decodes back; an instance's own
// messages start with its originPrefix.
func TestEncodeIsJSONMarshal(t *testing.T) {
	evs := []race.Event{
		&race.MovedEvent{Race: "r1", ID: `<&> "q"`, Seat: 1, Seq: 3, Move: "3H>F2"},
		&race.OpponentEvent{Race: "r1", Counts: race.Counts{Score: 4, Moves: 9}},
		&race.RematchEvent{Race: "r2"},
	}
	for _, origin := range []string{"3b2dec2b75f96288", `odd "origin" <x>`} {
		for _, ev := range evs {
			got, err := encode(origin, ev)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(ev)
			want, _ := json.Marshal(wire{Origin: origin, Type: ev.EventType(), Event: body})
			if !bytes.Equal(got, want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			if !strings.HasPrefix(string(got), originPrefix(origin)) {
				t.Fatalf("%s does not start with %s", got, originPrefix(origin))
			}
			o, back, err := decode(string(got))
			if err != nil || o != origin || back.EventType() != ev.EventType() {
				t.Fatalf("decode: %q %v %v", o, back, err)
			}
		}
	}
}
