package race

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"sirtommy/engine"
)

// The events of every move ("moved", "opponent", "board") and the states
// write their JSON by hand: encoding/json's reflection, and its
// re-compaction of the views' own JSON, were the largest part of encoding
// them, which happens for every connection's message and every event
// crossing Redis. The bytes are encoding/json's without HTML escaping
// (TestEventAppendJSON compares them over whole games of every variant,
// TestStateAppendJSON over races' states), so a field added to one of
// these events must be added here too, or those tests fail. A state's
// result and match, once a race, go through encoding/json.

// JSONAppender is an event that appends its own JSON to dst, as
// encoding/json would write it without HTML escaping. An error leaves the
// event to encoding/json, which may write it otherwise or fail too.
type JSONAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

var (
	_ JSONAppender = (*MovedEvent)(nil)
	_ JSONAppender = (*OpponentEvent)(nil)
	_ JSONAppender = (*BoardEvent)(nil)
	_ JSONAppender = (*StateEvent)(nil)
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

// AppendJSON appends the event's JSON to dst. It fails where encoding/json
// would (a card that is no card, a rating that is no number, a time
// outside years 0 to 9999) and on a rating encoding/json writes in
// exponent form (under a millionth): the caller's generic path writes
// those.
func (e *StateEvent) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"race":`...)
	dst = engine.AppendJSONString(dst, e.Race)
	dst = engine.AppendJSONString(append(dst, `,"state":`...), string(e.State))
	dst = engine.AppendJSONString(append(dst, `,"variant":`...), e.Variant)
	if e.Seat != nil {
		dst = strconv.AppendInt(append(dst, `,"seat":`...), int64(*e.Seat), 10)
	}
	if dst, err = appendListJSON(append(dst, `,"players":`...), e.Players, (*PlayerInfo).appendJSON); err != nil {
		return dst, fmt.Errorf("state: %w", err)
	}
	if e.Deal != "" {
		dst = engine.AppendJSONString(append(dst, `,"deal":`...), e.Deal)
	}
	if e.Commitment != "" {
		dst = engine.AppendJSONString(append(dst, `,"commitment":`...), e.Commitment)
	}
	dst = strconv.AppendInt(append(dst, `,"timeLimitMs":`...), e.TimeLimitMs, 10)
	if dst, err = appendTimeJSON(append(dst, `,"now":`...), e.Now); err != nil {
		return dst, fmt.Errorf("state: %w", err)
	}
	if e.StartAt != nil {
		if dst, err = appendTimeJSON(append(dst, `,"startAt":`...), *e.StartAt); err != nil {
			return dst, fmt.Errorf("state: %w", err)
		}
	}
	if e.EndsAt != nil {
		if dst, err = appendTimeJSON(append(dst, `,"endsAt":`...), *e.EndsAt); err != nil {
			return dst, fmt.Errorf("state: %w", err)
		}
	}
	if e.You != nil {
		if dst, err = e.You.AppendJSON(append(dst, `,"you":`...)); err != nil {
			return dst, fmt.Errorf("state: %w", err)
		}
	}
	if e.Opponent != nil {
		dst = e.Opponent.appendJSON(append(dst, `,"opponent":`...))
	}
	if len(e.Opponents) > 0 {
		dst, _ = appendListJSON(append(dst, `,"opponents":`...), e.Opponents, func(c *Counts, dst []byte) ([]byte, error) {
			return c.appendJSON(dst), nil
		})
	}
	if len(e.Boards) > 0 {
		if dst, err = appendListJSON(append(dst, `,"boards":`...), e.Boards, (*engine.View).AppendJSON); err != nil {
			return dst, fmt.Errorf("state: %w", err)
		}
	}
	if len(e.Counts) > 0 {
		dst, _ = appendListJSON(append(dst, `,"counts":`...), e.Counts, func(c *Counts, dst []byte) ([]byte, error) {
			return c.appendJSON(dst), nil
		})
	}
	if e.Result != nil {
		if dst, err = appendEncodingJSON(append(dst, `,"result":`...), e.Result); err != nil {
			return dst, fmt.Errorf("state: %w", err)
		}
	}
	if e.Match != nil {
		if dst, err = appendEncodingJSON(append(dst, `,"match":`...), e.Match); err != nil {
			return dst, fmt.Errorf("state: %w", err)
		}
	}
	dst = strconv.AppendInt(append(dst, `,"spectators":`...), int64(e.Spectators), 10)
	if e.Ver != 0 {
		dst = strconv.AppendUint(append(dst, `,"ver":`...), e.Ver, 10)
	}
	if e.SpectatorDelayMs != 0 {
		dst = strconv.AppendInt(append(dst, `,"spectatorDelayMs":`...), e.SpectatorDelayMs, 10)
	}
	return append(dst, '}'), nil
}

func (p *PlayerInfo) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '{')
	if p.Name != "" {
		dst = engine.AppendJSONString(append(dst, `"name":`...), p.Name)
		dst = append(dst, ',')
	}
	if p.Player != "" {
		dst = engine.AppendJSONString(append(dst, `"player":`...), p.Player)
		dst = append(dst, ',')
	}
	if p.Rating != 0 {
		var err error
		if dst, err = appendFloatJSON(append(dst, `"rating":`...), p.Rating); err != nil {
			return dst, err
		}
		dst = append(dst, ',')
	}
	dst = strconv.AppendBool(append(dst, `"taken":`...), p.Taken)
	if p.Computer {
		dst = append(dst, `,"computer":true`...)
	}
	if p.Level != "" {
		dst = engine.AppendJSONString(append(dst, `,"level":`...), p.Level)
	}
	if p.Ghost {
		dst = append(dst, `,"ghost":true`...)
	}
	if p.Solo {
		dst = append(dst, `,"solo":true`...)
	}
	dst = strconv.AppendBool(append(dst, `,"connected":`...), p.Connected)
	if p.Berserk {
		dst = append(dst, `,"berserk":true`...)
	}
	return append(dst, '}'), nil
}

// appendListJSON writes a JSON array of list's elements, each written by
// appendOne (null for a nil list, as encoding/json writes it).
func appendListJSON[T any](dst []byte, list []T, appendOne func(*T, []byte) ([]byte, error)) ([]byte, error) {
	if list == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendOne(&list[i], dst); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// errNotPlain is a value the hand-written JSON leaves to encoding/json.
var errNotPlain = errors.New("a value encoding/json writes otherwise")

// appendFloatJSON writes f as encoding/json does where it uses plain
// decimal form (0, and magnitudes from a millionth to 1e21); it refuses
// the rest (exponent form, NaN, infinities).
func appendFloatJSON(dst []byte, f float64) ([]byte, error) {
	if a := math.Abs(f); math.IsNaN(f) || math.IsInf(f, 0) || (a != 0 && (a < 1e-6 || a >= 1e21)) {
		return dst, fmt.Errorf("rating %v: %w", f, errNotPlain)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64), nil
}

// appendTimeJSON writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds, quoted); it refuses what MarshalJSON refuses (years
// outside 0 to 9999, offsets of a day or more).
func appendTimeJSON(dst []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, fmt.Errorf("time %v: %w", t, errNotPlain)
	}
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
		return dst, fmt.Errorf("time %v: an offset of a day or more: %w", t, errNotPlain)
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), nil
}

// appendEncodingJSON writes v with encoding/json, without HTML escaping.
func appendEncodingJSON(dst []byte, v any) ([]byte, error) {
	b := bytes.NewBuffer(dst)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
