package race

import (
	"time"

	"sirtommy/engine"
)

// Event is something a race publishes on its topics. Each concrete type is
// one server message of the protocol; the web package adds the envelope
// (protocol version and type) and writes it as JSON.
type Event interface {
	// EventType is the message's type field.
	EventType() string
}

// Counts is what a player may know of the opponent's game: no cards.
type Counts struct {
	Score     int           `json:"score"` // cards on the foundations
	Stock     int           `json:"stock"` // face-down cards left
	Status    engine.Status `json:"status"`
	Moves     int           `json:"moves"`
	Connected bool          `json:"connected"`
}

// PlayerInfo describes who sits in a seat.
type PlayerInfo struct {
	Name string `json:"name,omitempty"`
	// Player is the lobby's player id of a seat the lobby reserved (public,
	// as on the leaderboard); empty otherwise.
	Player string `json:"player,omitempty"`
	// Rating is that player's rating in the race's variant when the race
	// was made; 0 (absent) when they had none.
	Rating   float64 `json:"rating,omitempty"`
	Taken    bool    `json:"taken"`
	Computer bool    `json:"computer,omitempty"`
	// Level is a computer player's level ("easy", "medium", "hard"), so
	// that a result can say which computer won; empty for people.
	Level string `json:"level,omitempty"`
	// Ghost marks a recorded game raced again (Race.SeatGhost): its
	// moves come from a recording, at their recorded times.
	Ghost bool `json:"ghost,omitempty"`
	// Solo marks the empty seat of a solo race (the day's deal): nobody.
	Solo      bool `json:"solo,omitempty"`
	Connected bool `json:"connected"`
	// Berserk marks a racer who halved their own time (Race.Berserk).
	Berserk bool `json:"berserk,omitempty"`
}

// Result is how a race ended.
type Result struct {
	// Outcome is "win", "draw" or "aborted" (the Outcome constants).
	Outcome Outcome `json:"outcome"`
	// Winner is the winning seat, absent for a draw or an abort.
	Winner *int `json:"winner,omitempty"`
	// Reason is why: "won-deal", "more-cards" (both out), "passed" (the
	// other was out and this one got more cards), "time", "equal-cards",
	// "forfeit", "no-first-move", "left", "expired" (nobody came in time),
	// "shutdown" (the Reason constants).
	Reason Reason `json:"reason"`
	// Scores and Statuses are every racer's cards on the foundations and
	// game status at the end, by seat.
	Scores   []int           `json:"scores"`
	Statuses []engine.Status `json:"statuses"`
	// Ranking is every racer's place, first place first (the referee's
	// rules in referee.go); absent for aborted and solo races.
	Ranking []Place `json:"ranking,omitempty"`
	// Rated is false for aborted races.
	Rated bool `json:"rated"`
	// Deal and Salt open the commitment (Deal in decimal: JSON numbers
	// cannot hold every uint64).
	Deal       string `json:"deal"`
	Salt       string `json:"salt,omitempty"`
	Commitment string `json:"commitment,omitempty"`
	// Grade is the grade the secret deal was drawn from ("easy",
	// "medium", "hard"), in graded races: the commitment is then
	// GradedCommitment's, and `sirtommy grade --deal N` re-checks it.
	Grade string `json:"grade,omitempty"`
	// Games are every racer's game in notation (engine.Record), by seat.
	Games []string `json:"games"`
	// Match is the match after this round, in best-of-N matches.
	Match *Match `json:"match,omitempty"`
}

// StateEvent ("state") is a full picture for its receiver: sent on join,
// watch and resume, and on every change of the race's state.
type StateEvent struct {
	Race    string `json:"race"`
	State   State  `json:"state"`
	Variant string `json:"variant"`
	// Seat is the receiver's seat, absent for spectators.
	Seat *int `json:"seat,omitempty"`
	// Players are the race's seats, by seat.
	Players []PlayerInfo `json:"players"`
	// Deal is set when the deal is public from the start (a private race
	// that named it); otherwise Commitment is, and Result reveals the deal.
	Deal        string `json:"deal,omitempty"`
	Commitment  string `json:"commitment,omitempty"`
	TimeLimitMs int64  `json:"timeLimitMs"`
	// Now is the server's clock when the event was made, for clock offsets.
	Now     time.Time  `json:"now"`
	StartAt *time.Time `json:"startAt,omitempty"` // set from the countdown on
	EndsAt  *time.Time `json:"endsAt,omitempty"`  // start plus the time limit
	// You and Opponent are set for players: their own view and the
	// opponent's counts.
	You      *engine.View `json:"you,omitempty"`
	Opponent *Counts      `json:"opponent,omitempty"`
	// Opponents is set for players of a race of more than two: every
	// seat's counts, by seat (the receiver's own included, so that the
	// index is the seat); Opponent is then the other racer with the most
	// cards.
	Opponents []Counts `json:"opponents,omitempty"`
	// Boards and Counts are set for spectators: every seat's view and
	// counts, by seat.
	Boards []engine.View `json:"boards,omitempty"`
	Counts []Counts      `json:"counts,omitempty"`
	Result *Result       `json:"result,omitempty"`
	// Match is set for rounds of a best-of-N match and for rematches.
	Match *Match `json:"match,omitempty"`
	// Spectators is how many are watching the race now.
	Spectators int `json:"spectators"`
	// Ver is the spectators' feed version (spectators only; see fair.go):
	// it grows by one with each event sent to them.
	Ver uint64 `json:"ver,omitempty"`
	// SpectatorDelayMs is how far behind live the spectators' feed runs
	// (public races), set for spectators only, so that the page can say so.
	SpectatorDelayMs int64 `json:"spectatorDelayMs,omitempty"`
}

// EventType is "state".
func (*StateEvent) EventType() string { return "state" }

// MovedEvent ("moved") goes to the player whose move was accepted.
type MovedEvent struct {
	Race string `json:"race"`
	// ID echoes the request's id.
	ID   string      `json:"id,omitempty"`
	Seat int         `json:"seat"`
	Seq  int         `json:"seq"`
	Move string      `json:"move"` // "resign" for a resignation
	AtMs int64       `json:"atMs"`
	View engine.View `json:"view"`
}

// EventType is "moved".
func (*MovedEvent) EventType() string { return "moved" }

// OpponentEvent ("opponent") tells a player the opponent's new counts.
type OpponentEvent struct {
	Race   string `json:"race"`
	Seat   int    `json:"seat"` // the opponent's seat
	Counts Counts `json:"counts"`
}

// EventType is "opponent".
func (*OpponentEvent) EventType() string { return "opponent" }

// BoardEvent ("board") shows spectators one player's move and new view.
type BoardEvent struct {
	Race   string      `json:"race"`
	Seat   int         `json:"seat"`
	Seq    int         `json:"seq"`
	Move   string      `json:"move"`
	AtMs   int64       `json:"atMs"`
	View   engine.View `json:"view"`
	Counts Counts      `json:"counts"`
	// Reveal marks a board sent again, with no new move, because cards on
	// it that were face down may be shown now.
	Reveal bool `json:"reveal,omitempty"`
	// Ver is the spectators' feed version (spectators only; see fair.go):
	// it grows by one with each event sent to them.
	Ver uint64 `json:"ver,omitempty"`
}

// EventType is "board".
func (*BoardEvent) EventType() string { return "board" }

// PresenceEvent ("presence") says a player disconnected or came back.
type PresenceEvent struct {
	Race      string `json:"race"`
	Seat      int    `json:"seat"`
	Connected bool   `json:"connected"`
	// GraceUntil is when a disconnected player forfeits.
	GraceUntil *time.Time `json:"graceUntil,omitempty"`
	// Ver is the spectators' feed version (spectators only; see fair.go):
	// it grows by one with each event sent to them.
	Ver uint64 `json:"ver,omitempty"`
}

// EventType is "presence".
func (*PresenceEvent) EventType() string { return "presence" }

// SpectatorsEvent ("spectators") tells players and spectators how many
// are watching, at most once a second while it changes.
type SpectatorsEvent struct {
	Race  string `json:"race"`
	Count int    `json:"count"`
	// Ver is the spectators' feed version (spectators only; see fair.go):
	// it grows by one with each event sent to them.
	Ver uint64 `json:"ver,omitempty"`
}

// EventType is "spectators".
func (*SpectatorsEvent) EventType() string { return "spectators" }

// ReplacedEvent ("replaced") tells a connection that another one resumed
// its seat; the server then closes it.
type ReplacedEvent struct {
	Race string `json:"race"`
	Seat int    `json:"seat"`
}

// EventType is "replaced".
func (*ReplacedEvent) EventType() string { return "replaced" }

// JoinedEvent ("joined") answers join and resume: the seat and the token
// that resumes it. Only its connection receives it.
type JoinedEvent struct {
	Race  string `json:"race"`
	ID    string `json:"id,omitempty"` // echoes the request's id
	Seat  int    `json:"seat"`
	Token string `json:"token"`
}

// EventType is "joined".
func (*JoinedEvent) EventType() string { return "joined" }

// RecordEvent ("record") is a move that the holder of its seat (an
// instance other than the race's owner: HeldSeat) played and logged,
// sent to the owner on the race's RecordsTopic for the race to count
// (Race.ApplyRemote). It goes between instances only, never to a client.
type RecordEvent struct {
	Race   string     `json:"race"`
	Record MoveRecord `json:"record"`
	// Told are the seats whose connections on the holder's instance the
	// holder told of the move (their OpponentEvent): the owner sends
	// them nothing more of it on other instances.
	Told []int `json:"told,omitempty"`
}

// EventType is "record".
func (*RecordEvent) EventType() string { return "record" }
