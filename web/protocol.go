package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"sirtommy/lobby"
	"sirtommy/race"
)

// ProtocolVersion is the "v" of every message; PROTOCOL.md describes it.
const ProtocolVersion = 1

// Error codes the web layer adds to race's (see PROTOCOL.md).
const (
	CodeBadJSON             race.Code = "bad-json"              // the message is not a JSON object of the protocol
	CodeBadVersion          race.Code = "bad-version"           // "v" is not ProtocolVersion
	CodeUnknownType         race.Code = "unknown-type"          // no such message type
	CodeTooLarge            race.Code = "too-large"             // the message is over maxMessageSize
	CodeRateLimited         race.Code = "rate-limited"          // over the message budget; slow down
	CodeNotJoined           race.Code = "not-joined"            // move or resign before join or resume
	CodeAlreadyJoined       race.Code = "already-joined"        // a connection takes one role
	CodeSpectatorCannotMove race.Code = "spectator-cannot-move" // watchers do not play
	CodeForbidden           race.Code = "forbidden"             // the seat authorizer said no
	CodeNoComputer          race.Code = lobby.CodeNoComputer    // this server has no computer players
	CodeNoLobby             race.Code = "no-lobby"              // this server runs races without a lobby
)

// clientMsg is every message a client may send; Type says which fields count.
type clientMsg struct {
	V     int    `json:"v"`
	Type  string `json:"type"`
	ID    string `json:"id,omitempty"`
	Race  string `json:"race,omitempty"`
	Name  string `json:"name,omitempty"`
	Token string `json:"token,omitempty"`
	Move  string `json:"move,omitempty"`
	// Lobby requests (lobby.go).
	Code      string `json:"code,omitempty"`
	Challenge string `json:"challenge,omitempty"`
	// Ghost races: the ghost challenge's id (race-ghost), and the seat
	// whose game of Race becomes one (ghost).
	Ghost string `json:"ghost,omitempty"`
	Seat  *int   `json:"seat,omitempty"`
	Best  bool   `json:"best,omitempty"`
	// Arena is the arena of arena-join, arena-pause and arena-watch.
	Arena string `json:"arena,omitempty"`
	// The race's options (invite, challenge; queue: variant and grade):
	// absent (nil) takes the default, a present value must be in range
	// (race.Choice), 0 included.
	lobby.RaceOptions
}

// errorMsg is the reply to a refused request.
type errorMsg struct {
	V       int       `json:"v"`
	Type    string    `json:"type"` // "error"
	ID      string    `json:"id,omitempty"`
	Code    race.Code `json:"code"`
	Reason  string    `json:"reason,omitempty"`
	Message string    `json:"message"`
}

func newError(id string, code race.Code, format string, args ...any) *errorMsg {
	return &errorMsg{V: ProtocolVersion, Type: "error", ID: id, Code: code, Message: fmt.Sprintf(format, args...)}
}

func raceError(id string, err error) *errorMsg {
	var e *race.Error
	if errors.As(err, &e) {
		return &errorMsg{V: ProtocolVersion, Type: "error", ID: id, Code: e.Code, Reason: e.Reason, Message: e.Message}
	}
	if race.ErrorCode(err) == race.CodeUnavailable {
		return newError(id, race.CodeUnavailable, "storage is unavailable; nothing changed, try again shortly")
	}
	return newError(id, race.CodeInternal, "the server failed; nothing changed")
}

// watchingMsg is the reply to watch.
type watchingMsg struct {
	V    int    `json:"v"`
	Type string `json:"type"` // "watching"
	ID   string `json:"id,omitempty"`
	Race string `json:"race"`
}

// pongMsg is the reply to ping.
type pongMsg struct {
	V    int    `json:"v"`
	Type string `json:"type"` // "pong"
	ID   string `json:"id,omitempty"`
}

// encodeEvent writes a race event with the protocol's envelope: the event's
// own fields after "v" and "type".
func encodeEvent(ev race.Event) ([]byte, error) {
	body, err := marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.EventType(), err)
	}
	head := fmt.Sprintf(`{"v":%d,"type":%q`, ProtocolVersion, ev.EventType())
	out := make([]byte, 0, len(head)+len(body)+1)
	out = append(out, head...)
	if len(body) > 2 {
		out = append(out, ',')
		out = append(out, body[1:]...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}

// marshal is json.Marshal without HTML escaping, so that moves read "3H>F2"
// rather than "3H\u003eF2".
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
