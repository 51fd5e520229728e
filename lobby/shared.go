package lobby

import (
	"context"
	"time"
)

// The lobby's waiting state lives behind the small interfaces below, so
// that several instances can share it: in memory (memlobby, one instance)
// or in Redis (redislobby). Every
// method that claims something (a pair, a challenge, an invite, a player
// for a race) does so atomically: when two instances claim the same thing
// at once, exactly one wins.

// Queue is the quick-play queues, one per variant. A player waits in at
// most one.
type Queue interface {
	// Join puts s.Player in s.Variant's queue (s.Since is set by the
	// queue); a player in a queue already is refused with
	// CodeAlreadyQueued, one marked racing by the Seats of the same store
	// with CodeInRace (checked together, so that nobody joins the queue
	// while their pairing is being claimed).
	Join(ctx context.Context, s Seeker) error
	// Leave takes player out of their queue and reports whether they were
	// in one: false once they were paired.
	Leave(ctx context.Context, player string) (bool, error)
	// Queued reports the queue player is in.
	Queued(ctx context.Context, player string) (variant string, ok bool, err error)
	// Pair claims every pair it can make now, taking both players out of
	// their queue, and returns them, longest waiting first. Nobody is
	// paired twice, however many instances pair at once.
	Pair(ctx context.Context) ([]Pair, error)
}

// Challenges is the open challenges. A player has at most one open.
type Challenges interface {
	// Open lists c; a player with a challenge open already is refused
	// with CodeAlreadyQueued.
	Open(ctx context.Context, c ChallengeInfo) error
	// Take withdraws challenge id and returns it; ok is false when it is
	// not open (never opened, taken, withdrawn or expired): only one of
	// several takers gets it.
	Take(ctx context.Context, id string) (c ChallengeInfo, ok bool, err error)
	// Get finds open challenge id, leaving it open.
	Get(ctx context.Context, id string) (c ChallengeInfo, ok bool, err error)
	// Of is the id of player's open challenge.
	Of(ctx context.Context, player string) (id string, ok bool, err error)
	// List is every open challenge, in no particular order.
	List(ctx context.Context) ([]ChallengeInfo, error)
	// Keep says that the instance holding the connections behind ids is
	// alive: a shared store drops a challenge that nobody kept for a few
	// heartbeats (its instance died).
	Keep(ctx context.Context, ids []string) error
}

// Invites is the private races' invites, each usable once.
type Invites interface {
	// Put stores inv, to be found until keep has passed.
	Put(ctx context.Context, inv Invite, keep time.Duration) error
	// Get finds an invite by its (normalized) code.
	Get(ctx context.Context, code string) (inv Invite, ok bool, err error)
	// Take uses invite code up: ok is true for one caller only.
	Take(ctx context.Context, code string) (ok bool, err error)
}

// Seats records which players are in a lobby race not over: nobody plays
// two at once. (Which seat is whose is in the race's record.)
type Seats interface {
	// Claim marks players as being paired, unless one of them is in a
	// race (or being paired) already: then it changes nothing and returns
	// that player's id. It takes the players it marks out of the Queue of
	// the same store (in the same step). The mark lapses after keep
	// unless Assign renews it.
	Claim(ctx context.Context, players []string, keep time.Duration) (busy string, err error)
	// Assign records the race made for claimed players, kept until Free
	// or until keep has passed.
	Assign(ctx context.Context, raceID string, players []string, keep time.Duration) error
	// Racing is the race player is in ("" while it is being made).
	Racing(ctx context.Context, player string) (raceID string, ok bool, err error)
	// Free ends raceID's marks of players (raceID "": a claim whose race
	// was not made).
	Free(ctx context.Context, raceID string, players []string) error
}

// Notice carries a matched event to the connection of a player that
// another instance holds.
type Notice struct {
	// Player is who it is for.
	Player string `json:"player"`
	// To is which of the player's sessions get it: ToQueued (the one that
	// queued), ToChallenger (the one that opened challenge Ref) or ToAll.
	To  Recipient `json:"to"`
	Ref string    `json:"ref,omitempty"`
	// Matched is the event; or Ghost, a ghost race's run for its author;
	// or Room, a room of theirs as it is now.
	Matched *MatchedEvent    `json:"matched,omitempty"`
	Ghost   *GhostRacedEvent `json:"ghost,omitempty"`
	Room    *RoomEvent       `json:"room,omitempty"`
}

// Recipient is which of a player's sessions a Notice is for. Its values
// travel between instances (the courier's JSON), so they never change.
type Recipient string

// Notice recipients.
const (
	// ToQueued is the session that queued.
	ToQueued Recipient = "queued"
	// ToChallenger is the session that opened challenge Notice.Ref.
	ToChallenger Recipient = "challenger"
	// ToAll is every session of the player.
	ToAll Recipient = "all"
)

// Courier carries notices between the instances: each listens for the
// players it holds connections of.
type Courier interface {
	// Start delivers every notice for a listened-to player, sent by
	// another instance, to receive, and calls changed when another
	// instance announces a change of the open challenges (called once,
	// before any Listen).
	Start(receive func(Notice), changed func())
	// Listen and Unlisten start and stop receiving player's notices.
	Listen(ctx context.Context, player string) error
	Unlisten(ctx context.Context, player string) error
	// Send hands n to the other instances listening for n.Player and
	// reports whether any was.
	Send(ctx context.Context, n Notice) (reached bool, err error)
	// Listening reports whether another instance listens for player (has
	// a connection of theirs).
	Listening(ctx context.Context, player string) (bool, error)
	// Changed tells the other instances that the open challenges changed,
	// so that they show it at once.
	Changed(ctx context.Context) error
}

// ListedRace is a live public race with its creation time, which orders
// the list.
type ListedRace struct {
	RaceSummary
	Created time.Time `json:"created"`
}

// RaceListShare shares the live race lists between instances.
type RaceListShare interface {
	// ShareRaces stores this instance's live public races, to be seen
	// until a few heartbeats pass without a new ShareRaces, and returns
	// the other live instances' races.
	ShareRaces(ctx context.Context, own []ListedRace) (others []ListedRace, err error)
}
