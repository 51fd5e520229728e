package race

import (
	"fmt"
	"strconv"

	"sirtommy/engine"
)

// The events of every move ("moved", "opponent", "board") write their JSON
// by hand: encoding/json's reflection, and its re-compaction of the view's
// own JSON, were the largest part of encoding them, which happens for
// every connection's message and every event crossing Redis. The bytes are
// encoding/json's without HTML escaping (TestEventAppendJSON compares them
// over whole games of every variant), so a field added to one of these
// events must be added here too, or that test fails.

// JSONAppender is an event that appends its own JSON to dst, as
// encoding/json would write it without HTML escaping.
type JSONAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

var (
	_ JSONAppender = (*MovedEvent)(nil)
	_ JSONAppender = (*OpponentEvent)(nil)
	_ JSONAppender = (*BoardEvent)(nil)
)

// AppendJSON appends the event's JSON to dst.
func (e *MovedEvent) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"race":`...)
	dst = engine.AppendJSONString(dst, e.Race)
	if e.ID != "" {
		dst = engine.AppendJSONString(append(dst, `,"id":`...), e.ID)
	}
	dst, err := appendMoveJSON(dst, e.Seat, e.Seq, e.Move, e.AtMs, &e.View)
	if err != nil {
		return dst, fmt.Errorf("moved: %w", err)
	}
	return append(dst, '}'), nil
}

// AppendJSON appends the event's JSON to dst.
func (e *OpponentEvent) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"race":`...)
	dst = engine.AppendJSONString(dst, e.Race)
	dst = strconv.AppendInt(append(dst, `,"seat":`...), int64(e.Seat), 10)
	dst = e.Counts.appendJSON(append(dst, `,"counts":`...))
	return append(dst, '}'), nil
}

// AppendJSON appends the event's JSON to dst.
func (e *BoardEvent) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"race":`...)
	dst = engine.AppendJSONString(dst, e.Race)
	dst, err := appendMoveJSON(dst, e.Seat, e.Seq, e.Move, e.AtMs, &e.View)
	if err != nil {
		return dst, fmt.Errorf("board: %w", err)
	}
	dst = e.Counts.appendJSON(append(dst, `,"counts":`...))
	if e.Reveal {
		dst = append(dst, `,"reveal":true`...)
	}
	if e.Ver != 0 {
		dst = strconv.AppendUint(append(dst, `,"ver":`...), e.Ver, 10)
	}
	return append(dst, '}'), nil
}

// appendMoveJSON writes the fields "moved" and "board" share, in their
// order: seat, seq, move, atMs and view.
func appendMoveJSON(dst []byte, seat, seq int, move string, atMs int64, v *engine.View) ([]byte, error) {
	dst = strconv.AppendInt(append(dst, `,"seat":`...), int64(seat), 10)
	dst = strconv.AppendInt(append(dst, `,"seq":`...), int64(seq), 10)
	dst = engine.AppendJSONString(append(dst, `,"move":`...), move)
	dst = strconv.AppendInt(append(dst, `,"atMs":`...), atMs, 10)
	return v.AppendJSON(append(dst, `,"view":`...))
}

func (c *Counts) appendJSON(dst []byte) []byte {
	dst = strconv.AppendInt(append(dst, `{"score":`...), int64(c.Score), 10)
	dst = strconv.AppendInt(append(dst, `,"stock":`...), int64(c.Stock), 10)
	dst = engine.AppendJSONString(append(dst, `,"status":`...), c.Status.String())
	dst = strconv.AppendInt(append(dst, `,"moves":`...), int64(c.Moves), 10)
	dst = strconv.AppendBool(append(dst, `,"connected":`...), c.Connected)
	return append(dst, '}')
}
