package web

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"sirtommy/engine"
	"sirtommy/race"
)

// The messages sent on every move ("moved" to the mover, "opponent" to the
// other player, "board" to spectators) are written by hand below: the
// profile of a load run had encoding/json's reflection, MarshalText calls
// per card and its re-compaction of Marshaler output at 40% of the server's
// CPU. The output is byte for byte what encodeEvent's generic path writes
// (TestFastEncodingMatchesJSON compares them over whole games of every
// variant), so a field added to an event or to engine.View must be added
// here too, or the test fails.

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
	return appendString(dst, typ)
}

// appendMoveFields writes the fields "moved" and "board" share, in their
// order: seat, seq, move, atMs and view.
func appendMoveFields(dst []byte, seat, seq int, move string, atMs int64, v *engine.View) ([]byte, bool) {
	dst = appendIntField(dst, "seat", int64(seat))
	dst = appendIntField(dst, "seq", int64(seq))
	dst = appendField(dst, "move")
	dst = appendString(dst, move)
	dst = appendIntField(dst, "atMs", atMs)
	dst = appendField(dst, "view")
	return appendView(dst, v)
}

// appendFast writes the per-move events by hand; false means the generic
// path must (an unexpected value, such as an invalid card).
func appendFast(dst []byte, ev race.Event) ([]byte, bool) {
	start := len(dst)
	ok := true
	switch e := ev.(type) {
	case *race.MovedEvent:
		dst = appendHead(dst, "moved")
		dst = appendField(dst, "race")
		dst = appendString(dst, e.Race)
		if e.ID != "" {
			dst = appendField(dst, "id")
			dst = appendString(dst, e.ID)
		}
		dst, ok = appendMoveFields(dst, e.Seat, e.Seq, e.Move, e.AtMs, &e.View)
	case *race.OpponentEvent:
		dst = appendHead(dst, "opponent")
		dst = appendField(dst, "race")
		dst = appendString(dst, e.Race)
		dst = appendIntField(dst, "seat", int64(e.Seat))
		dst = appendField(dst, "counts")
		dst, ok = appendCounts(dst, &e.Counts)
	case *race.BoardEvent:
		dst = appendHead(dst, "board")
		dst = appendField(dst, "race")
		dst = appendString(dst, e.Race)
		dst, ok = appendMoveFields(dst, e.Seat, e.Seq, e.Move, e.AtMs, &e.View)
		if ok {
			dst = appendField(dst, "counts")
			dst, ok = appendCounts(dst, &e.Counts)
		}
		if e.Reveal {
			dst = append(dst, `,"reveal":true`...)
		}
		if e.Ver != 0 {
			dst = strconv.AppendUint(appendField(dst, "ver"), e.Ver, 10)
		}
	default:
		return dst, false
	}
	if !ok {
		return dst[:start], false
	}
	return append(dst, '}'), true
}

// appendField writes ,"name": (every fast field follows another).
func appendField(dst []byte, name string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

func appendIntField(dst []byte, name string, n int64) []byte {
	return strconv.AppendInt(appendField(dst, name), n, 10)
}

func appendCounts(dst []byte, c *race.Counts) ([]byte, bool) {
	st, ok := statusName(c.Status)
	if !ok {
		return dst, false
	}
	dst = append(dst, `{"score":`...)
	dst = strconv.AppendInt(dst, int64(c.Score), 10)
	dst = appendIntField(dst, "stock", int64(c.Stock))
	dst = appendField(dst, "status")
	dst = appendString(dst, st)
	dst = appendIntField(dst, "moves", int64(c.Moves))
	dst = append(dst, `,"connected":`...)
	dst = strconv.AppendBool(dst, c.Connected)
	return append(dst, '}'), true
}

// appendView writes v as the engine writes it (engine.View.AppendJSON).
func appendView(dst []byte, v *engine.View) ([]byte, bool) {
	out, err := v.AppendJSON(dst)
	return out, err == nil
}

func statusName(s engine.Status) (string, bool) {
	switch s {
	case engine.Playing, engine.Won, engine.Stuck, engine.Resigned:
		return s.String(), true
	}
	return "", false
}

// appendString writes s as a JSON string as encoding/json does without
// HTML escaping: ids and names come from clients, so anything may be in
// them. Plain printable ASCII, the usual case, is copied as it is.
func appendString(dst []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b == '"' || b == '\\' || b >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	b, err := marshal(s)
	if err != nil { // a string always encodes
		return append(dst, `""`...)
	}
	return append(dst, b...)
}
