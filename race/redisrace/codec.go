package redisrace

import (
	"encoding/json"
	"fmt"

	"sirtommy/race"
)

// wire is one event on a pub/sub channel: the publishing instance (so that
// it skips its own messages, already delivered locally), the event's type
// and the event.
type wire struct {
	Origin string          `json:"o"`
	Type   string          `json:"t"`
	Event  json.RawMessage `json:"e"`
}

func encode(origin string, ev race.Event) ([]byte, error) {
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.EventType(), err)
	}
	out, err := json.Marshal(wire{Origin: origin, Type: ev.EventType(), Event: b})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.EventType(), err)
	}
	return out, nil
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
	}
	return nil, fmt.Errorf("unknown event type %q", t)
}

func decode(payload string) (origin string, ev race.Event, err error) {
	var w wire
	if err := json.Unmarshal([]byte(payload), &w); err != nil {
		return "", nil, fmt.Errorf("decode envelope: %w", err)
	}
	ev, err = newEvent(w.Type)
	if err != nil {
		return w.Origin, nil, err
	}
	if err := json.Unmarshal(w.Event, ev); err != nil {
		return w.Origin, nil, fmt.Errorf("decode %s: %w", w.Type, err)
	}
	return w.Origin, ev, nil
}
