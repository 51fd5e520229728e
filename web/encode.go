package web

import (
	"encoding/json"
	"fmt"
	"strconv"

	"sirtommy/engine"
	"sirtommy/race"
)

// The messages sent on every move ("moved" to the mover, "opponent" to the
// other player, "board" to spectators) and the states are written by hand
// (the events' race.JSONAppender): the profile of a load run had
// encoding/json's reflection, MarshalText calls per card and its
// re-compaction of Marshaler output at 40% of the server's CPU. The output
// is byte for byte what encodeEvent's generic path writes
// (TestFastEncodingMatchesJSON compares them over whole games of every
// variant; race's TestStateAppendJSON the states).

// appendMessage appends the protocol message for m (a race.Event or a
// reply struct) to dst.
func appendMessage(dst []byte, m any) ([]byte, error) {
	ev, ok := m.(race.Event)
	if !ok {
		b, err := marshal(m)
		if err != nil {
			return dst, fmt.Errorf("encode reply: %w", err)
		}
		return append(dst, b...), nil
	}
	if out, ok := appendFast(dst, ev); ok {
		return out, nil
	}
	return appendEvent(dst, ev)
}

// appendEvent is the generic path: the event's JSON after the envelope.
func appendEvent(dst []byte, ev race.Event) ([]byte, error) {
	var body []byte
	var err error
	if mj, ok := ev.(json.Marshaler); ok {
		// Events that encode themselves once for many connections (the
		// lobby's) are taken as they are: encoding/json would validate and
		// re-compact their bytes for every connection.
		body, err = mj.MarshalJSON()
	} else {
		body, err = marshal(ev)
	}
	if err != nil {
		return dst, fmt.Errorf("encode %s: %w", ev.EventType(), err)
	}
	dst = appendHead(dst, ev.EventType())
	if len(body) > 2 {
		dst = append(dst, ',')
		return append(dst, body[1:]...), nil
	}
	return append(dst, '}'), nil
}

func appendHead(dst []byte, typ string) []byte {
	dst = append(dst, `{"v":`...)
	dst = strconv.AppendInt(dst, ProtocolVersion, 10)
	dst = append(dst, `,"type":`...)
	return engine.AppendJSONString(dst, typ)
}

// appendFast writes the events that write their own JSON (the per-move
// ones, race.JSONAppender) after the envelope's head; false means the
// generic path must (an unexpected value, such as an invalid card).
func appendFast(dst []byte, ev race.Event) ([]byte, bool) {
	j, ok := ev.(race.JSONAppender)
	if !ok {
		return dst, false
	}
	start := len(dst)
	dst = appendHead(dst, ev.EventType())
	brace := len(dst)
	dst, err := j.AppendJSON(dst)
	switch {
	case err != nil || len(dst)-brace < 2:
		return dst[:start], false
	case len(dst)-brace == 2: // {}
		return append(dst[:brace], '}'), true
	}
	dst[brace] = ',' // the event's fields follow the head's
	return dst, true
}
