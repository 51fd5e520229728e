package redisrace

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// TestEncodeIsJSONMarshal: the hand-built envelope is valid JSON that
// encoding/json reads back as wire{...} with the same event, and so does
// decode; an instance's own messages start with its originPrefix.
func TestEncodeIsJSONMarshal(t *testing.T) {
	evs := []race.Event{
		&race.MovedEvent{Race: "r1", ID: `<&> "q"`, Seat: 1, Seq: 3, Move: "3H>F2"},
		&race.OpponentEvent{Race: "r1", Counts: race.Counts{Score: 4, Moves: 9}},
		&race.RematchEvent{Race: "r2"},
	}
	for _, origin := range []string{"3b2dec2b75f96288", `odd "origin" <x>`} {
		for _, ev := range evs {
			got, err := encode(originPrefix(origin), ev)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got) {
				t.Fatalf("not JSON: %s", got)
			}
			o, slow, err := decodeSlow(string(got))
			if err != nil || o != origin || !reflect.DeepEqual(slow, ev) {
				t.Fatalf("encoding/json reads %s as %q %#v (%v), not %#v", got, o, slow, err, ev)
			}
			if !strings.HasPrefix(string(got), originPrefix(origin)) {
				t.Fatalf("%s does not start with %s", got, originPrefix(origin))
			}
			o, back, err := decode(string(got))
			if err != nil || o != origin || !reflect.DeepEqual(back, ev) {
				t.Fatalf("decode: %q %v %v", o, back, err)
			}
		}
	}
}

// decodeSlow is decode through encoding/json alone, envelope included.
func decodeSlow(payload string) (string, race.Event, error) {
	var w wire
	if err := json.Unmarshal([]byte(payload), &w); err != nil {
		return "", nil, err
	}
	ev, err := newEvent(w.Type)
	if err != nil {
		return w.Origin, nil, err
	}
	if err := json.Unmarshal(w.Event, ev); err != nil {
		return w.Origin, nil, err
	}
	return w.Origin, ev, nil
}

// FuzzDecodeFastEnvelope: what decode reads through its hand-read envelope
// is what encoding/json reads from the same bytes; encode's messages take
// that path.
func FuzzDecodeFastEnvelope(f *testing.F) {
	for _, ev := range []race.Event{
		&race.MovedEvent{Race: "r1", ID: "m7", Seat: 1, Seq: 3, Move: "3H>F2"},
		&race.OpponentEvent{Race: "r1", Counts: race.Counts{Score: 4, Moves: 9}},
		&race.PresenceEvent{Race: "r1", Seat: 1},
	} {
		b, err := encode(originPrefix("3b2dec2b75f96288"), ev)
		if err != nil {
			f.Fatal(err)
		}
		if _, _, _, ok := splitWire(string(b)); !ok {
			f.Fatalf("encode's message %s does not take the fast path", b)
		}
		f.Add(string(b))
	}
	f.Add(`{"o":"a\"b","t":"moved","e":{}}`)
	f.Add(`{"o":"a","t":"moved","e":{"race":"x"},"t":"state"}`)
	f.Fuzz(func(t *testing.T, p string) {
		if _, _, _, ok := splitWire(p); !ok {
			return
		}
		o, ev, err := decode(p)
		if err != nil {
			return
		}
		so, sev, serr := decodeSlow(p)
		if serr != nil || so != o || sev.EventType() != ev.EventType() {
			t.Fatalf("%q: fast %q %T, slow %q %T %v", p, o, ev, so, sev, serr)
		}
		a, _ := json.Marshal(ev)
		b, _ := json.Marshal(sev)
		if !bytes.Equal(a, b) {
			t.Fatalf("%q: fast %s, slow %s", p, a, b)
		}
	})
}

// midGameMoved is a "moved" event 20 moves into a classic game.
func midGameMoved(b *testing.B) *race.MovedEvent {
	g := engine.New(engine.Variants()[0], 3)
	for range 20 {
		if err := g.Apply(racetest.Greedy(&g)); err != nil {
			b.Fatal(err)
		}
	}
	return &race.MovedEvent{Race: "r1", ID: "m7", Seat: 1, Seq: 21, Move: "3H>F2", AtMs: 61234, View: g.View()}
}

// BenchmarkEncodeMoved encodes a mid-game "moved" event for the bus.
func BenchmarkEncodeMoved(b *testing.B) {
	ev := midGameMoved(b)
	prefix := originPrefix("3b2dec2b75f96288")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encode(prefix, ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeMoved decodes what BenchmarkEncodeMoved encodes.
func BenchmarkDecodeMoved(b *testing.B) {
	p, err := encode(originPrefix("3b2dec2b75f96288"), midGameMoved(b))
	if err != nil {
		b.Fatal(err)
	}
	payload := string(p)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := decode(payload); err != nil {
			b.Fatal(err)
		}
	}
}
