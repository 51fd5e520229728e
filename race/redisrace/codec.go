package redisrace

import (
	"encoding/json"
	"fmt"

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

// encode writes wire{origin, type, event} as json.Marshal would, but
// without its second pass over the event's bytes (a json.RawMessage field
// is validated and compacted again): a load run's profile had the bus's
// JSON at a third of a Redis-mode instance's CPU.
func encode(origin string, ev race.Event) ([]byte, error) {
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.EventType(), err)
	}
	t, err := json.Marshal(ev.EventType())
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.EventType(), err)
	}
	head := originPrefix(origin)
	out := make([]byte, 0, len(head)+len(t)+len(b)+8)
	out = append(out, head...)
	out = append(out, `"t":`...)
	out = append(out, t...)
	out = append(out, `,"e":`...)
	out = append(out, b...)
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
	case "owner":
		return &fleet.OwnerEvent{}, nil
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
