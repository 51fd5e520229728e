package lobby

import (
	"time"

	"sirtommy/lobby/glicko2"
)

// Defaults for Config fields left zero.
const (
	// DefaultComputerOfferAfter is how long a queued player waits before
	// being offered a race against the computer: a little less than the
	// matchmaker's 30 s to "any opponent", which a quiet server will not
	// fill either.
	DefaultComputerOfferAfter = 20 * time.Second
	// DefaultComputerPace is the computer's time per move: about a person's.
	DefaultComputerPace = 2 * time.Second
	// DefaultComputerLevel is the computer's level (the engine bot's names).
	DefaultComputerLevel = "easy"
	// DefaultInviteTTL is how long an invite code works: time to send it to
	// a friend and for them to open it, not long enough to guess one.
	DefaultInviteTTL = 30 * time.Minute
	// DefaultTick is the lobby's heartbeat: matchmaking passes (the gap
	// widens with time), computer offers, expired invites, and the lobby
	// message with presence and the live races. Presence changes wait for
	// it, so that a thousand players arriving make one message each, not a
	// thousand; challenges are published at once.
	DefaultTick = time.Second
	// DefaultMaxListed bounds the races listed in a lobby message: a
	// screenful; most recent first.
	DefaultMaxListed = 50
	// DefaultFlushTimeout is how long Close waits for ended races'
	// ratings to be recorded while the stores fail: a short outage's
	// worth, within an orchestrator's grace after a drain.
	DefaultFlushTimeout = 10 * time.Second
)

// Config tunes the lobby; zero fields take the defaults.
type Config struct {
	ComputerOfferAfter time.Duration
	ComputerPace       time.Duration
	ComputerLevel      string
	InviteTTL          time.Duration
	Tick               time.Duration
	MaxListed          int
	// Tau is Glicko-2's system constant (default glicko2.DefaultTau).
	Tau float64
	// SpectatorDelay and Grace are passed to the races the lobby makes
	// (zero: race's defaults; public races delay spectators).
	SpectatorDelay time.Duration
	Grace          time.Duration
	// GhostTTL is how long a ghost challenge can be raced (default
	// DefaultGhostTTL).
	GhostTTL time.Duration
	// FlushTimeout bounds how long Close waits for the work of races that
	// ended to reach failing stores (default DefaultFlushTimeout).
	FlushTimeout time.Duration
	// Arenas are the arenas made on a schedule (none by default).
	Arenas []ArenaSchedule
}

func (c *Config) fill() {
	if c.ComputerOfferAfter <= 0 {
		c.ComputerOfferAfter = DefaultComputerOfferAfter
	}
	if c.ComputerPace <= 0 {
		c.ComputerPace = DefaultComputerPace
	}
	if c.ComputerLevel == "" {
		c.ComputerLevel = DefaultComputerLevel
	}
	if c.InviteTTL <= 0 {
		c.InviteTTL = DefaultInviteTTL
	}
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.MaxListed <= 0 {
		c.MaxListed = DefaultMaxListed
	}
	if c.Tau <= 0 {
		c.Tau = glicko2.DefaultTau
	}
	if c.FlushTimeout <= 0 {
		c.FlushTimeout = DefaultFlushTimeout
	}
}
