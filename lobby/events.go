package lobby

import (
	"encoding/json"
	"fmt"
	"time"

	"sirtommy/race"
)

// The lobby's events are race.Events, so that the same connections and
// encoder carry them; each is one server message of PROTOCOL.md.

// MatchedEvent ("matched") tells a player the race and seat they were paired
// into; both players get it at the same moment. They take the seat with a
// "join" of that race; the countdown starts when both are in.
type MatchedEvent struct {
	Race    string `json:"race"`
	Seat    int    `json:"seat"`
	Variant string `json:"variant"`
	Via     string `json:"via"` // a Via: how the race was made
	Rated   bool   `json:"rated"`
	// Opponent is the other seat's player in a race of two; Players are
	// every seat's in a race of more (a room's), Opponent then empty.
	Opponent  PlayerRef   `json:"opponent"`
	Players   []PlayerRef `json:"players,omitempty"`
	Rating    *float64    `json:"opponentRating,omitempty"`
	Room      string      `json:"room,omitempty"`      // the room's code, for a room's race
	Invite    string      `json:"invite,omitempty"`    // the invite code, for invites
	Challenge string      `json:"challenge,omitempty"` // the challenge id, for challenges
	Ghost     string      `json:"ghost,omitempty"`     // the ghost challenge's id, for ghost races
	Arena     string      `json:"arena,omitempty"`     // the arena's id, for an arena's race
	At        time.Time   `json:"at"`
}

// EventType is "matched".
func (*MatchedEvent) EventType() string { return "matched" }

// OfferEvent ("computer-offer") tells a queued player that nobody came and
// offers a race against the computer ("play-computer" accepts; staying in
// the queue is fine).
type OfferEvent struct {
	Variant  string `json:"variant"`
	WaitedMs int64  `json:"waitedMs"`
}

// EventType is "computer-offer".
func (*OfferEvent) EventType() string { return "computer-offer" }

// ChallengeInfo is an open challenge as the lobby lists it.
type ChallengeInfo struct {
	ID               string    `json:"id"`
	Player           string    `json:"player"`
	Name             string    `json:"name"`
	Rating           float64   `json:"rating"`
	Variant          string    `json:"variant"`
	TimeLimitSeconds int       `json:"timeLimitSeconds"`
	BestOf           int       `json:"bestOf"`
	Rated            bool      `json:"rated"`
	Grade            string    `json:"grade,omitempty"` // the deal's grade asked for, if any
	Since            time.Time `json:"since"`
}

// RaceSummary is a live public race as the lobby lists it for spectators.
type RaceSummary struct {
	Race       string      `json:"race"`
	Variant    string      `json:"variant"`
	State      race.State  `json:"state"`
	Players    []PlayerRef `json:"players"` // by seat
	Scores     []int       `json:"scores"`  // cards on the foundations, by seat
	Spectators int         `json:"spectators"`
	StartAt    *time.Time  `json:"startAt,omitempty"`
}

// Presence counts the players: online (with a lobby connection), in a
// quick-play queue, and in a race that is not over.
type Presence struct {
	Online int            `json:"online"`
	Queued int            `json:"queued"`
	Racing int            `json:"racing"`
	Queues map[string]int `json:"queues"` // players per variant's queue
}

// add adds o's counts to p's.
func (p *Presence) add(o Presence) {
	p.Online += o.Online
	p.Queued += o.Queued
	p.Racing += o.Racing
	for v, n := range o.Queues {
		if p.Queues == nil {
			p.Queues = make(map[string]int)
		}
		p.Queues[v] += n
	}
}

// LobbyEvent ("lobby") is the lobby as a whole: presence, open challenges
// and live public races. Sent on hello and whenever it changes.
type LobbyEvent struct {
	Presence   Presence        `json:"presence"`
	Challenges []ChallengeInfo `json:"challenges"`
	Races      []RaceSummary   `json:"races"`
	// Mass is every variant's open mass race with someone in it.
	Mass []MassRace `json:"mass,omitempty"`
	// Arenas are the arenas running, starting soon or just over.
	Arenas []ArenaBrief `json:"arenas,omitempty"`
	// Daily is today's deal in every variant: its commitment, public from
	// 00:00 UTC (absent without a day's deal).
	Daily []DailyBrief `json:"daily,omitempty"`
	// Now is the server's time as the message is written (RFC 3339 with
	// milliseconds): a browser draws the mass races' countdowns from it,
	// not from its own clock, which may be off. It is left zero in the
	// event and written by AppendJSON from the lobby's clock, for each
	// connection as it sends: an update held back while its connection
	// raced, sent later, is not stale. Set only in a decoded message.
	Now time.Time `json:"now,omitzero"`
	// clock is the lobby's, for Now.
	clock race.Clock
	// encoded is the event's JSON without Now, made once for every
	// connection it goes to; set before the event is delivered and never
	// changed after.
	encoded []byte
}

// nowLayout is RFC 3339 with milliseconds, always three digits: the
// browser's Date.parse reads it, and a countdown wants no finer.
const nowLayout = "2006-01-02T15:04:05.000Z07:00"

// body is the event's JSON without Now: the same bytes for every
// connection, and what Publish compares with the last it sent.
func (e *LobbyEvent) body() ([]byte, error) {
	if e.encoded != nil {
		return e.encoded, nil
	}
	type plain LobbyEvent // without the methods
	p := *e
	p.Now = time.Time{}
	b, err := json.Marshal((*plain)(&p))
	if err != nil {
		return nil, fmt.Errorf("lobby event: %w", err)
	}
	return b, nil
}

// AppendJSON appends the event's JSON, with Now as the lobby's clock has
// it at this call, to dst: the body is encoded once however many
// connections send it, only the time is written for each
// (race.JSONAppender, the web layer's fast path).
func (e *LobbyEvent) AppendJSON(dst []byte) ([]byte, error) {
	b, err := e.body()
	if err != nil {
		return dst, err
	}
	now := e.Now
	if e.clock != nil {
		now = e.clock.Now()
	}
	if now.IsZero() || len(b) < 2 {
		return append(dst, b...), nil
	}
	dst = append(dst, `{"now":"`...)
	dst = now.UTC().AppendFormat(dst, nowLayout)
	dst = append(dst, '"')
	if len(b) > 2 { // more than {}
		dst = append(dst, ',')
	}
	return append(dst, b[1:]...), nil
}

// MarshalJSON is AppendJSON's JSON, for encoding/json (the API's
// GET /api/lobby).
func (e *LobbyEvent) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil) }

// EventType is "lobby".
func (*LobbyEvent) EventType() string { return "lobby" }

var (
	_ race.JSONAppender = (*LobbyEvent)(nil)
	_ race.Event        = (*MatchedEvent)(nil)
	_ race.Event        = (*OfferEvent)(nil)
	_ race.Event        = (*LobbyEvent)(nil)
)
