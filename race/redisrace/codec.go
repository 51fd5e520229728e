package redisrace

import (
	"encoding/json"
	"fmt"
	"strings"

	fastjson "github.com/segmentio/encoding/json"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/fleet"
)

// wire is one event on a pub/sub channel: the publishing instance (so that
// it skips its own messages, already delivered locally), the event's type
// and the event.
type wire struct {
	Origin string          `json:"o"`
	Type   string          `json:"t"`
	Event  json.RawMessage `json:"e"`
}

// encode writes wire{origin, type, event} after prefix (originPrefix of
// the origin) by hand: the per-move events write their own JSON
// (race.JSONAppender), the others go through encoding/json once, without
// the second pass json.Marshal makes over a json.RawMessage field. A load
// run's profile had the bus's JSON at a third of a Redis-mode instance's
// CPU.
func encode(prefix string, ev race.Event) ([]byte, error) {
	out := make([]byte, 0, 640)
	out = append(out, prefix...)
	out = engine.AppendJSONString(append(out, `"t":`...), ev.EventType())
	out = append(out, `,"e":`...)
	start := len(out)
	var err error
	j, fast := ev.(race.JSONAppender)
	if fast {
		out, err = j.AppendJSON(out)
	}
	if !fast || err != nil {
		// An appender leaves what it does not write to encoding/json.
		var b []byte
		b, err = json.Marshal(ev)
		out = append(out[:start], b...)
	}
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.EventType(), err)
	}
	return append(out, '}'), nil
}

// originPrefix is how encode starts every message of origin, so that an
// instance can tell its own messages without decoding them.
func originPrefix(origin string) string {
	o, _ := json.Marshal(origin) // a string always encodes
	return `{"o":` + string(o) + `,`
}

// newEvent returns a zero event of the type the protocol names t.
func newEvent(t string) (race.Event, error) {
	switch t {
	case "state":
		return &race.StateEvent{}, nil
	case "moved":
		return &race.MovedEvent{}, nil
	case "opponent":
		return &race.OpponentEvent{}, nil
	case "board":
		return &race.BoardEvent{}, nil
	case "presence":
		return &race.PresenceEvent{}, nil
	case "replaced":
		return &race.ReplacedEvent{}, nil
	case "spectators":
		return &race.SpectatorsEvent{}, nil
	case "joined":
		return &race.JoinedEvent{}, nil
	case "next":
		return &race.NextEvent{}, nil
	case "rematch":
		return &race.RematchEvent{}, nil
	case "record":
		return &race.RecordEvent{}, nil
	case "owner":
		return &fleet.OwnerEvent{}, nil
	case "frame":
		return &frameEvent{}, nil
	}
	return nil, fmt.Errorf("unknown event type %q", t)
}

// decode reads a message encode wrote. The envelope is read by hand
// (splitWire) where it has encode's form, which spares encoding/json a
// pass over the whole message and a copy of the event (about a third of
// the bus's decoding in a cross-instance load run); any other form takes
// encoding/json's path. The event is read by segmentio's decoder, which
// follows encoding/json's rules at about a third of its cost on a "moved"
// event (BenchmarkDecodeMoved): every instance reads every event of the
// races it follows.
func decode(payload string) (origin string, ev race.Event, err error) {
	origin, typ, body, ok := splitWire(payload)
	if !ok {
		var w wire
		if err := json.Unmarshal([]byte(payload), &w); err != nil {
			return "", nil, fmt.Errorf("decode envelope: %w", err)
		}
		origin, typ, body = w.Origin, w.Type, string(w.Event)
	}
	ev, err = newEvent(typ)
	if err != nil {
		return origin, nil, err
	}
	if f, ok := ev.(*frameEvent); ok {
		f.b = []byte(body) // the fleet reads the frame: not read twice
		return origin, f, nil
	}
	if err := fastjson.Unmarshal([]byte(body), ev); err != nil {
		return origin, nil, fmt.Errorf("decode %s: %w", typ, err)
	}
	return origin, ev, nil
}

// splitWire cuts a message of encode's form, {"o":ORIGIN,"t":TYPE,"e":EVENT},
// into its parts, without looking into the event (which json.Unmarshal
// then checks); ok is false for any other form, a string with escapes
// included.
func splitWire(p string) (origin, typ, event string, ok bool) {
	rest, ok := strings.CutPrefix(p, `{"o":`)
	if ok {
		origin, rest, ok = cutPlainString(rest)
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, `,"t":`)
	}
	if ok {
		typ, rest, ok = cutPlainString(rest)
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, `,"e":`)
	}
	if ok {
		event, ok = strings.CutSuffix(rest, "}")
	}
	return origin, typ, event, ok
}

// cutPlainString reads the JSON string s starts with, if it is plain
// printable ASCII (no escapes, no control characters; encoding/json would
// mend invalid UTF-8), and returns it and what follows.
func cutPlainString(s string) (str, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", s, false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[1:i], s[i+1:], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", s, false
		}
	}
	return "", s, false
}
