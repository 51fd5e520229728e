// Package lobby is where players meet before a race: identities without
// sign-up (signed tokens), quick play with a rating-aware matchmaker,
// private invites, open challenges, the live list of races to watch,
// presence counts, and Glicko-2 ratings with a leaderboard and histories.
// It makes races with package race; the web package speaks for it.
//
// Locking: the Lobby's mutex guards its own maps and the matchmaker's
// queues. It is never held while calling into a race, so that a race's end
// (which runs with the race's lock held) may take it. The live race list is
// read on the heartbeat, outside the lock, and cached.
package lobby

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby/glicko2"
	"sirtommy/race"
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
	// maxTimeLimit is the longest race a player may ask for.
	maxTimeLimit = time.Hour
	// maxBestOf is the longest match a player may ask for (race's limit).
	maxBestOf = 9
)

// Config tunes the lobby; zero fields take the defaults.
type Config struct {
	Match              MatchConfig
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
}

func (c *Config) fill() {
	c.Match.fill()
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
}

// ComputerFactory makes a computer player of a level (the engine bot's
// level names) with a seed: the race package's.
type ComputerFactory = race.ComputerFactory

// Deps are what the lobby needs from the outside.
type Deps struct {
	Clock   race.Clock
	Log     zerolog.Logger
	Races   *race.Service
	Tokens  *Tokens
	Ratings Ratings
	// Computer makes computer players; nil means no races against the
	// computer (and no offers).
	Computer ComputerFactory
	// Presence shares presence counts with the other instances on the same
	// store; nil (memory mode) counts this instance's players only.
	Presence PresenceShare
}

// PresenceShare shares presence counts between instances.
type PresenceShare interface {
	// Share stores this instance's counts, to be seen until a few
	// heartbeats have passed without a new Share, and returns the sum of
	// the other live instances' counts.
	Share(ctx context.Context, own Presence) (others Presence, err error)
}

// RaceOptions are what a player chooses for a private race or a challenge.
type RaceOptions struct {
	Variant          string `json:"variant,omitempty"`
	TimeLimitSeconds int    `json:"timeLimitSeconds,omitempty"`
	BestOf           int    `json:"bestOf,omitempty"`
	// Deal names the deal (private races only; decimal); empty means a
	// secret deal.
	Deal string `json:"deal,omitempty"`
	// Rated asks for a rated race (private races are unrated unless asked).
	Rated bool `json:"rated,omitempty"`
}

// check validates and normalises the options.
func (o *RaceOptions) check(allowDeal bool) (race.Options, error) {
	rules, err := engine.Variant(o.Variant)
	if err != nil {
		return race.Options{}, &race.Error{Code: race.CodeBadOptions, Message: err.Error(), Err: err}
	}
	o.Variant = rules.Name
	if o.TimeLimitSeconds < 0 || time.Duration(o.TimeLimitSeconds)*time.Second > maxTimeLimit {
		return race.Options{}, race.Errorf(race.CodeBadOptions, "timeLimitSeconds must be from 1 to %d", int(maxTimeLimit.Seconds()))
	}
	if o.TimeLimitSeconds == 0 {
		o.TimeLimitSeconds = int(race.DefaultTimeLimit.Seconds())
	}
	if o.BestOf == 0 {
		o.BestOf = 1
	}
	if o.BestOf < 0 || o.BestOf%2 == 0 || o.BestOf > maxBestOf {
		return race.Options{}, race.Errorf(race.CodeBadOptions, "bestOf must be odd, from 1 to %d", maxBestOf)
	}
	opts := race.Options{Variant: o.Variant, TimeLimit: time.Duration(o.TimeLimitSeconds) * time.Second, BestOf: o.BestOf, Unrated: !o.Rated}
	if o.Deal != "" {
		if !allowDeal {
			return race.Options{}, race.Errorf(race.CodeBadOptions, "only private races name their deal")
		}
		n, err := strconv.ParseUint(o.Deal, 10, 64)
		if err != nil {
			return race.Options{}, race.Errorf(race.CodeBadOptions, "deal %q is not a number from 0 to 18446744073709551615", o.Deal)
		}
		opts.Deal, opts.DealNamed = n, true
	}
	return opts, nil
}

// Invite is a private race waiting for the friend who has its code.
type Invite struct {
	Code    string      `json:"code"`
	Player  string      `json:"player"`
	Name    string      `json:"name"`
	Options RaceOptions `json:"options"`
	Expires time.Time   `json:"expiresAt"`
}

type challenge struct {
	info ChallengeInfo
	opts race.Options
	from *Session
}

// Lobby is the meeting place. Its methods are safe for concurrent use.
type Lobby struct {
	deps Deps
	cfg  Config
	log  zerolog.Logger
	mm   *Matchmaker

	mu         sync.Mutex
	closed     bool
	tick       race.Timer
	sessions   map[*Session]struct{}
	online     map[string]int      // player -> open sessions
	queuedBy   map[string]*Session // player -> the session that queued
	invites    map[string]*Invite  // by code
	challenges map[string]*challenge
	busy       map[string]string // player -> their lobby race not over ("" while it is made)
	last       []byte            // the last lobby message sent, to skip repeats
	listed     []RaceSummary     // live public races, as of the last heartbeat
	racing     int               // players seated in live races, as of the last heartbeat
	others     Presence          // the other instances' counts, as of the last heartbeat (Deps.Presence)

	rateMu sync.Mutex     // serializes rating updates (read, compute, save)
	wg     sync.WaitGroup // rating updates in flight
}

// New makes a lobby and starts its heartbeat on the clock; Close stops it.
func New(cfg Config, deps Deps) *Lobby {
	cfg.fill()
	l := &Lobby{
		deps: deps, cfg: cfg, log: deps.Log.With().Str("component", "lobby").Logger(),
		mm:         NewMatchmaker(cfg.Match, deps.Clock),
		sessions:   make(map[*Session]struct{}),
		online:     make(map[string]int),
		queuedBy:   make(map[string]*Session),
		invites:    make(map[string]*Invite),
		challenges: make(map[string]*challenge),
		busy:       make(map[string]string),
		listed:     []RaceSummary{},
	}
	// Under the lock: a short tick may fire, and reschedule itself, before
	// AfterFunc returns.
	l.mu.Lock()
	l.tick = deps.Clock.AfterFunc(cfg.Tick, l.heartbeat)
	l.mu.Unlock()
	deps.Races.OnEnd(l.ended)
	return l
}

// seatLookupTimeout bounds reading a race's reserved seats (a Redis read in
// Redis mode).
const seatLookupTimeout = 2 * time.Second

// Config is the lobby's configuration, defaults filled in.
func (l *Lobby) Config() Config { return l.cfg }

// Close stops the heartbeat and waits for rating updates in flight.
func (l *Lobby) Close() {
	l.mu.Lock()
	l.closed = true
	if l.tick != nil {
		l.tick.Stop()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

func (l *Lobby) heartbeat() {
	l.matchNow()
	l.offerComputer()
	l.mu.Lock()
	now := l.deps.Clock.Now()
	for code, inv := range l.invites {
		if now.Sub(inv.Expires) > l.cfg.InviteTTL { // keep expired ones a while, to say so
			delete(l.invites, code)
		}
	}
	l.mu.Unlock()
	l.refreshRaces()
	l.sharePresence()
	l.Publish()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.tick = l.deps.Clock.AfterFunc(l.cfg.Tick, l.heartbeat)
	}
}

// Session is one connection in the lobby: a player (one player may have
// several sessions, one per tab) and where its events go.
type Session struct {
	l   *Lobby
	sub race.Subscriber
	who Identity // guarded by l.mu
}

// Welcome is the reply to Enter and Rename: the player's identity and a
// fresh token for it.
type Welcome struct {
	Identity
	Token string `json:"token"`
}

// Enter lets a connection into the lobby. With a token, it is that
// player's (refused with CodeInvalidToken or CodeExpiredToken); without,
// a new player is made, named name (checked) or a guest name. A name with
// a token renames the player. The session receives lobby events on sub
// until Leave (Refresh sends it the lobby as it is); the returned Welcome
// carries a renewed token.
func (l *Lobby) Enter(token, name string, sub race.Subscriber) (*Session, Welcome, error) {
	var who Identity
	if token != "" {
		w, err := l.deps.Tokens.Verify(token)
		if err != nil {
			return nil, Welcome{}, err
		}
		who = w
	} else {
		who.ID = NewPlayerID()
		who.Name = "guest-" + who.ID[len(who.ID)-4:]
	}
	if name != "" {
		n, err := CheckName(name)
		if err != nil {
			return nil, Welcome{}, err
		}
		who.Name = n
	}
	tok, who := l.deps.Tokens.Issue(who.ID, who.Name)
	s := &Session{l: l, sub: sub, who: who}
	l.mu.Lock()
	l.sessions[s] = struct{}{}
	l.online[who.ID]++
	l.mu.Unlock()
	l.log.Debug().Str("player", who.ID).Msg("entered the lobby")
	return s, Welcome{Identity: who, Token: tok}, nil
}

// Refresh sends the session the lobby as it is now.
func (s *Session) Refresh() { s.sub.Deliver(s.l.snapshot()) }

// Player is the session's identity.
func (s *Session) Player() Identity {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	return s.who
}

// Rename changes the player's display name (checked) and returns a new
// token carrying it; nothing changes on a refusal.
func (s *Session) Rename(name string) (Welcome, error) {
	n, err := CheckName(name)
	if err != nil {
		return Welcome{}, err
	}
	s.l.mu.Lock()
	tok, who := s.l.deps.Tokens.Issue(s.who.ID, n)
	s.who = who
	s.l.mu.Unlock()
	return Welcome{Identity: who, Token: tok}, nil
}

// Leave takes the session out: out of its queue and its open challenge at
// once. Its player's invites stay until they expire.
func (s *Session) Leave() {
	l := s.l
	l.mu.Lock()
	if _, ok := l.sessions[s]; !ok {
		l.mu.Unlock()
		return
	}
	delete(l.sessions, s)
	if l.online[s.who.ID]--; l.online[s.who.ID] <= 0 {
		delete(l.online, s.who.ID)
	}
	withdrew := l.dropWaitingLocked(s)
	l.mu.Unlock()
	if withdrew {
		l.Publish()
	}
}

// dropWaitingLocked takes s out of the queue and withdraws its challenge;
// it reports whether it withdrew one.
func (l *Lobby) dropWaitingLocked(s *Session) (withdrew bool) {
	if l.queuedBy[s.who.ID] == s {
		l.mm.Leave(s.who.ID)
		delete(l.queuedBy, s.who.ID)
	}
	for id, c := range l.challenges {
		if c.from == s {
			delete(l.challenges, id)
			withdrew = true
		}
	}
	return withdrew
}

// waitingLocked refuses a player who is queued, has a challenge open, or
// is in a lobby race not over.
func (l *Lobby) waitingLocked(player string) error {
	if err := l.racingLocked(player); err != nil {
		return err
	}
	if v, ok := l.mm.Queued(player); ok {
		return race.Errorf(CodeAlreadyQueued, "you are already in the %s queue", v)
	}
	for _, c := range l.challenges {
		if c.info.Player == player {
			return race.Errorf(CodeAlreadyQueued, "you already have challenge %s open", c.info.ID)
		}
	}
	return nil
}

// racingLocked refuses a player who is in a lobby race not over: nobody
// plays two at once.
func (l *Lobby) racingLocked(player string) error {
	if id, ok := l.busy[player]; ok {
		if id == "" {
			return race.Errorf(CodeInRace, "you were just paired: your race is being made")
		}
		return race.Errorf(CodeInRace, "you are in race %s until it is over", id)
	}
	return nil
}

// busyLocked marks the players of a pairing as racing.
func (l *Lobby) busyLocked(players [2]PlayerRef) {
	for _, p := range players {
		if p.ID != "" {
			l.busy[p.ID] = ""
		}
	}
}

func (l *Lobby) rating(variant, player string) float64 {
	st, err := l.deps.Ratings.Standing(context.Background(), variant, player)
	if err != nil {
		l.log.Warn().Err(err).Str("player", player).Msg("rating unavailable; matching as a new player")
		return glicko2.DefaultRating
	}
	return st.Rating.Rating
}

// Queue puts the player in a variant's quick-play queue (empty: the
// default variant) and pairs at once if it can. A player may wait in one
// queue or with one challenge at a time (CodeAlreadyQueued).
func (s *Session) Queue(variant string) (string, error) {
	rules, err := engine.Variant(variant)
	if err != nil {
		return "", &race.Error{Code: race.CodeBadOptions, Message: err.Error(), Err: err}
	}
	l := s.l
	id := s.Player().ID
	rating := l.rating(rules.Name, id)
	l.mu.Lock()
	if err := l.waitingLocked(id); err != nil {
		l.mu.Unlock()
		return "", err
	}
	if err := l.mm.Join(id, rules.Name, rating); err != nil {
		l.mu.Unlock()
		return "", err
	}
	l.queuedBy[id] = s
	l.mu.Unlock()
	l.log.Debug().Str("player", id).Str("variant", rules.Name).Float64("rating", rating).Msg("queued")
	l.matchNow()
	return rules.Name, nil
}

// Unqueue takes the player out of their queue (CodeNotQueued if not in
// one).
func (s *Session) Unqueue() error {
	l := s.l
	l.mu.Lock()
	if l.queuedBy[s.who.ID] == nil {
		l.mu.Unlock()
		return race.Errorf(CodeNotQueued, "you are not in a queue")
	}
	l.mm.Leave(s.who.ID)
	delete(l.queuedBy, s.who.ID)
	l.mu.Unlock()
	return nil
}

type pairing struct {
	opts    race.Options
	via     string
	code    string
	players [2]PlayerRef
	subs    [2][]race.Subscriber
	ratings [2]float64
	bot     race.Computer
}

// matchNow runs a matchmaking pass and starts the races it pairs.
func (l *Lobby) matchNow() {
	l.mu.Lock()
	var todo []pairing
	for _, p := range l.mm.Pair() {
		a, b := l.queuedBy[p.A.Player], l.queuedBy[p.B.Player]
		delete(l.queuedBy, p.A.Player)
		delete(l.queuedBy, p.B.Player)
		if a == nil || b == nil {
			continue // cannot happen: queue and sessions change together under mu
		}
		players := [2]PlayerRef{{ID: a.who.ID, Name: a.who.Name}, {ID: b.who.ID, Name: b.who.Name}}
		l.busyLocked(players)
		todo = append(todo, pairing{
			opts:    race.Options{Variant: p.Variant, Public: true},
			via:     "quick",
			players: players,
			subs:    [2][]race.Subscriber{{a.sub}, {b.sub}},
			ratings: [2]float64{p.A.Rating, p.B.Rating},
		})
	}
	l.mu.Unlock()
	for _, p := range todo {
		if err := l.start(p); err != nil {
			l.log.Error().Err(err).Msg("matched race not started")
		}
	}
}

// start makes the race of a pairing, reserves both seats and tells both
// players, one right after the other. Its players are marked busy.
func (l *Lobby) start(p pairing) error {
	id, err := l.startRace(p)
	l.mu.Lock()
	for _, pl := range p.players {
		if pl.ID == "" {
			continue
		}
		if err != nil {
			delete(l.busy, pl.ID)
		} else if cur, ok := l.busy[pl.ID]; ok && cur == "" {
			l.busy[pl.ID] = id
		}
	}
	l.mu.Unlock()
	if p.via == "challenge" {
		l.Publish() // the challenge is no longer open
	}
	return err
}

func (l *Lobby) startRace(p pairing) (string, error) {
	p.opts.SpectatorDelay, p.opts.Grace = l.cfg.SpectatorDelay, l.cfg.Grace
	variant := p.opts.Variant
	rc, err := l.deps.Races.Create(p.opts)
	if err != nil {
		return "", fmt.Errorf("lobby: create race: %w", err)
	}
	for s := range 2 {
		if p.players[s].Computer {
			if _, err := rc.SeatComputer(p.players[s].Name, p.bot); err != nil {
				rc.Abort("left")
				return "", fmt.Errorf("lobby: seat computer: %w", err)
			}
			continue
		}
		if _, err := rc.Reserve(race.Reservation{Name: p.players[s].Name, Player: p.players[s].ID, Rating: p.ratings[s]}); err != nil {
			rc.Abort("left")
			return "", fmt.Errorf("lobby: reserve seat: %w", err)
		}
	}
	now := l.deps.Clock.Now()
	rated := !p.opts.Unrated && !p.players[0].Computer && !p.players[1].Computer
	for s := range 2 {
		ev := &MatchedEvent{Race: rc.ID(), Seat: s, Variant: variant, Via: p.via, Rated: rated,
			Opponent: p.players[1-s], At: now}
		if p.via == "invite" {
			ev.Invite = p.code
		} else if p.via == "challenge" {
			ev.Challenge = p.code
		}
		if !p.players[1-s].Computer && p.ratings[1-s] != 0 {
			r := p.ratings[1-s]
			ev.Rating = &r
		}
		for _, sub := range p.subs[s] {
			sub.Deliver(ev)
		}
	}
	l.log.Info().Str("race", rc.ID()).Str("via", p.via).Str("p0", p.players[0].ID).Str("p1", p.players[1].ID).Msg("paired")
	return rc.ID(), nil
}

// offerComputer offers the computer to players who waited long enough.
func (l *Lobby) offerComputer() {
	if l.deps.Computer == nil {
		return
	}
	l.mu.Lock()
	now := l.deps.Clock.Now()
	type offer struct {
		sub race.Subscriber
		ev  *OfferEvent
	}
	var offers []offer
	for _, sk := range l.mm.Overdue(l.cfg.ComputerOfferAfter) {
		if s := l.queuedBy[sk.Player]; s != nil {
			offers = append(offers, offer{s.sub, &OfferEvent{Variant: sk.Variant, WaitedMs: now.Sub(sk.Since).Milliseconds()}})
		}
	}
	l.mu.Unlock()
	for _, o := range offers {
		o.sub.Deliver(o.ev)
	}
}

// PlayComputer takes the player out of their queue into a race against the
// computer, in the queue's variant (CodeNotQueued if not queued). The
// race is unrated.
func (s *Session) PlayComputer() error {
	l := s.l
	if l.deps.Computer == nil {
		return race.Errorf(CodeNoComputer, "this server has no computer players")
	}
	seed := randomSeed()
	bot, err := l.deps.Computer(l.cfg.ComputerLevel, seed)
	if err != nil {
		return &race.Error{Code: race.CodeInternal, Message: "the computer player could not be made", Err: fmt.Errorf("lobby: computer: %w", err)}
	}
	l.mu.Lock()
	variant, ok := l.mm.Queued(s.who.ID)
	if !ok || l.queuedBy[s.who.ID] != s {
		l.mu.Unlock()
		return race.Errorf(CodeNotQueued, "you are not in a queue")
	}
	l.mm.Leave(s.who.ID)
	delete(l.queuedBy, s.who.ID)
	l.busyLocked([2]PlayerRef{{ID: s.who.ID}})
	p := pairing{
		opts:    race.Options{Variant: variant, Unrated: true},
		via:     "computer",
		players: [2]PlayerRef{{ID: s.who.ID, Name: s.who.Name}, {Name: "computer", Computer: true}},
		subs:    [2][]race.Subscriber{{s.sub}, nil},
		bot:     race.Computer{Player: bot, Level: l.cfg.ComputerLevel, Seed: seed, Pace: l.cfg.ComputerPace},
	}
	l.mu.Unlock()
	return l.start(p)
}

func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// Invite makes a private race's invite: a code for a friend, valid for
// the lobby's InviteTTL. The race is made when the friend accepts.
func (s *Session) Invite(o RaceOptions) (Invite, error) {
	if _, err := o.check(true); err != nil {
		return Invite{}, err
	}
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	inv := &Invite{Code: newCode(), Player: s.who.ID, Name: s.who.Name, Options: o, Expires: l.deps.Clock.Now().Add(l.cfg.InviteTTL)}
	l.invites[inv.Code] = inv
	return *inv, nil
}

// NormalizeCode makes a typed code comparable: upper case, without spaces
// or dashes, and the letters people confuse with digits read as those.
func NormalizeCode(code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	return strings.NewReplacer("-", "", " ", "", "O", "0", "I", "1", "L", "1").Replace(code)
}

// AcceptInvite starts the private race of an invite: CodeNoSuchInvite
// (also once used), CodeInviteExpired, CodeOwnInvite, CodeInRace or
// CodeInviterAway (the author has no connection) otherwise.
func (s *Session) AcceptInvite(code string) error {
	l := s.l
	code = NormalizeCode(code)
	l.mu.Lock()
	inv, ok := l.invites[code]
	switch {
	case !ok:
		l.mu.Unlock()
		return race.Errorf(CodeNoSuchInvite, "no invite has code %q", code)
	case !l.deps.Clock.Now().Before(inv.Expires):
		l.mu.Unlock()
		return race.Errorf(CodeInviteExpired, "invite %s expired at %s", code, inv.Expires.Format(time.RFC3339))
	case inv.Player == s.who.ID:
		l.mu.Unlock()
		return race.Errorf(CodeOwnInvite, "that is your own invite: send it to a friend")
	}
	if err := l.racingLocked(s.who.ID); err != nil {
		l.mu.Unlock()
		return err
	}
	if err := l.racingLocked(inv.Player); err != nil {
		l.mu.Unlock()
		return race.Errorf(CodeInRace, "%s is racing; try again when they are done", inv.Name)
	}
	authorSubs := l.subsOfLocked(inv.Player)
	if len(authorSubs) == 0 {
		l.mu.Unlock()
		return race.Errorf(CodeInviterAway, "%s is not connected now; the invite stays valid until %s", inv.Name, inv.Expires.Format(time.RFC3339))
	}
	delete(l.invites, code)
	opts, _ := inv.Options.check(true) // checked when made
	p := pairing{
		opts:    opts,
		via:     "invite",
		code:    code,
		players: [2]PlayerRef{{ID: inv.Player, Name: inv.Name}, {ID: s.who.ID, Name: s.who.Name}},
		subs:    [2][]race.Subscriber{authorSubs, {s.sub}},
	}
	l.busyLocked(p.players)
	l.mu.Unlock()
	p.ratings = [2]float64{l.rating(opts.Variant, p.players[0].ID), l.rating(opts.Variant, p.players[1].ID)}
	return l.start(p)
}

// subsOfLocked are where a player's sessions receive events.
func (l *Lobby) subsOfLocked(player string) []race.Subscriber {
	var out []race.Subscriber
	for s := range l.sessions {
		if s.who.ID == player {
			out = append(out, s.sub)
		}
	}
	return out
}

// Challenge opens a challenge that anyone in the lobby may accept; it is
// listed until accepted, withdrawn, or its session leaves. Its race is
// public, and rated when the options ask for it.
func (s *Session) Challenge(o RaceOptions) (ChallengeInfo, error) {
	opts, err := o.check(false)
	if err != nil {
		return ChallengeInfo{}, err
	}
	opts.Public = true
	l := s.l
	id := s.Player().ID
	rating := l.rating(o.Variant, id)
	l.mu.Lock()
	if err := l.waitingLocked(id); err != nil {
		l.mu.Unlock()
		return ChallengeInfo{}, err
	}
	c := &challenge{
		info: ChallengeInfo{ID: newCode(), Player: id, Name: s.who.Name, Rating: rating, Variant: o.Variant,
			TimeLimitSeconds: o.TimeLimitSeconds, BestOf: o.BestOf, Rated: o.Rated, Since: l.deps.Clock.Now()},
		opts: opts, from: s,
	}
	l.challenges[c.info.ID] = c
	l.mu.Unlock()
	l.Publish()
	return c.info, nil
}

// CancelChallenge withdraws the session's open challenge.
func (s *Session) CancelChallenge() error {
	l := s.l
	l.mu.Lock()
	found := false
	for id, c := range l.challenges {
		if c.from == s {
			delete(l.challenges, id)
			found = true
		}
	}
	l.mu.Unlock()
	if !found {
		return race.Errorf(CodeNoSuchChallenge, "you have no open challenge")
	}
	l.Publish()
	return nil
}

// AcceptChallenge starts the race of an open challenge against its
// author: CodeNoSuchChallenge or CodeOwnChallenge otherwise. Accepting
// takes the player out of any queue and withdraws their own challenge.
func (s *Session) AcceptChallenge(id string) error {
	l := s.l
	l.mu.Lock()
	c, ok := l.challenges[NormalizeCode(id)]
	switch {
	case !ok:
		l.mu.Unlock()
		return race.Errorf(CodeNoSuchChallenge, "no open challenge has id %q", id)
	case c.info.Player == s.who.ID:
		l.mu.Unlock()
		return race.Errorf(CodeOwnChallenge, "you cannot accept your own challenge")
	}
	if err := l.racingLocked(s.who.ID); err != nil {
		l.mu.Unlock()
		return err
	}
	delete(l.challenges, c.info.ID)
	l.dropWaitingLocked(s)
	p := pairing{
		opts:    c.opts,
		via:     "challenge",
		code:    c.info.ID,
		players: [2]PlayerRef{{ID: c.info.Player, Name: c.info.Name}, {ID: s.who.ID, Name: s.who.Name}},
		subs:    [2][]race.Subscriber{{c.from.sub}, {s.sub}},
		ratings: [2]float64{c.info.Rating, 0},
	}
	l.busyLocked(p.players)
	l.mu.Unlock()
	p.ratings[1] = l.rating(c.info.Variant, s.Player().ID)
	return l.start(p)
}

// AuthorizeSeat decides who takes a seat in a race: the holder of a valid
// player token (CodeNotIdentified without one). In races the lobby made,
// only the players it paired, each in their own seat: it returns that
// seat's resume token (CodeNotYourSeat for anyone else). In other races
// (made over the API), any free seat under the player's display name.
func (l *Lobby) AuthorizeSeat(playerToken, raceID, name string) (displayName, seatToken string, err error) {
	if playerToken == "" {
		return "", "", race.Errorf(CodeNotIdentified, "say hello with your player token first")
	}
	who, err := l.deps.Tokens.Verify(playerToken)
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), seatLookupTimeout)
	defer cancel()
	token, reserved, err := l.deps.Races.SeatOf(ctx, raceID, who.ID)
	switch {
	case err != nil:
		return "", "", err
	case reserved && token == "":
		return "", "", race.Errorf(CodeNotYourSeat, "the seats of race %s are reserved for other players; watch it instead", raceID)
	}
	return who.Name, token, nil
}

// ended is the race service's OnEnd hook: it hears of every race that ends
// on this instance, even one made by an instance that died since, and
// records those the lobby made (their seats carry player ids). It runs
// with the race's lock held, so it only hands the result to a goroutine
// that rates it.
func (l *Lobby) ended(e race.Ended) {
	var players [2]PlayerRef
	lobbyRace := false
	for s, p := range e.Players {
		players[s] = PlayerRef{ID: p.Player, Name: p.Name, Computer: p.Computer}
		lobbyRace = lobbyRace || p.Player != ""
	}
	if !lobbyRace {
		return // made over the API: nobody to rate
	}
	raceID, variant, res := e.Race, e.Variant, e.Result
	l.mu.Lock()
	for _, p := range players {
		if l.busy[p.ID] == raceID {
			delete(l.busy, p.ID)
		}
	}
	closed := l.closed
	if !closed {
		l.wg.Add(1)
	}
	l.mu.Unlock()
	if closed || res.Outcome == "aborted" {
		if !closed {
			l.wg.Done()
		}
		return
	}
	at := l.deps.Clock.Now()
	go func() {
		defer l.wg.Done()
		if err := l.record(raceID, variant, players, res, at); err != nil {
			l.log.Error().Err(err).Str("race", raceID).Msg("race not recorded")
		}
	}()
}

// maxRecordTries bounds the reads and saves of one race's result when
// other instances keep saving the same players' standings (ErrStale):
// each try loses only to a save that succeeded, so a few are plenty.
const maxRecordTries = 5

// record updates both players' ratings and records after a finished race,
// reading the standings anew when another instance saved one in between.
func (l *Lobby) record(raceID, variant string, players [2]PlayerRef, res race.Result, at time.Time) error {
	l.rateMu.Lock()
	defer l.rateMu.Unlock()
	var err error
	for range maxRecordTries {
		if err = l.recordOnce(raceID, variant, players, res, at); !errors.Is(err, ErrStale) {
			return err
		}
	}
	return err
}

// recordOnce reads, rates and saves once.
func (l *Lobby) recordOnce(raceID, variant string, players [2]PlayerRef, res race.Result, at time.Time) error {
	ctx := context.Background()
	g := GameRecord{Race: raceID, Variant: variant, At: at, Players: players, Outcome: res.Outcome,
		Winner: res.Winner, Reason: res.Reason, Scores: res.Scores}
	var st [2]Standing
	for s := range 2 {
		if players[s].Computer {
			st[s] = NewStanding("", players[s].Name, variant)
			continue
		}
		cur, err := l.deps.Ratings.Standing(ctx, variant, players[s].ID)
		if err != nil {
			return fmt.Errorf("lobby: standing of %s: %w", players[s].ID, err)
		}
		cur.Name = players[s].Name
		st[s] = cur
	}
	g.Rated = res.Rated && !players[0].Computer && !players[1].Computer
	var after []Standing
	for s := range 2 {
		g.Before[s], g.After[s] = st[s].Rating, st[s].Rating
	}
	if g.Rated {
		score := glicko2.Draw
		if res.Winner != nil {
			score = glicko2.Loss
			if *res.Winner == 0 {
				score = glicko2.Win
			}
		}
		scores := [2]float64{score, 1 - score}
		for s := range 2 {
			g.After[s] = glicko2.Update(st[s].Rating, []glicko2.Result{{Opponent: st[1-s].Rating, Score: scores[s]}}, l.cfg.Tau)
		}
		for s := range 2 {
			after = append(after, applyResult(st[s], scores[s], g.After[s]))
		}
	}
	if err := l.deps.Ratings.Save(ctx, g, after); err != nil {
		return fmt.Errorf("lobby: save race %s: %w", raceID, err)
	}
	return nil
}

// Presence counts the players now.
func (l *Lobby) Presence() Presence {
	return l.snapshot().Presence
}

// Snapshot is the lobby as a whole now, as the "lobby" message shows it.
func (l *Lobby) Snapshot() *LobbyEvent { return l.snapshot() }

// snapshot is the lobby as a whole: presence and challenges as they are,
// the races as the last heartbeat saw them.
func (l *Lobby) snapshot() *LobbyEvent {
	ev := &LobbyEvent{Challenges: []ChallengeInfo{}}
	l.mu.Lock()
	ev.Presence = Presence{Online: len(l.online), Queued: l.mm.Len(), Queues: l.mm.Counts(), Racing: l.racing}
	ev.Presence.add(l.others)
	for _, c := range l.challenges {
		ev.Challenges = append(ev.Challenges, c.info)
	}
	ev.Races = l.listed // replaced, never changed in place
	l.mu.Unlock()
	sort.Slice(ev.Challenges, func(i, j int) bool {
		a, b := ev.Challenges[i], ev.Challenges[j]
		if !a.Since.Equal(b.Since) {
			return a.Since.Before(b.Since)
		}
		return a.ID < b.ID
	})
	return ev
}

// sharePresence stores this instance's counts for the others and reads
// theirs (outside the lobby's lock: it waits for the store). On an error
// the last counts read stay.
func (l *Lobby) sharePresence() {
	if l.deps.Presence == nil {
		return
	}
	l.mu.Lock()
	own := Presence{Online: len(l.online), Queued: l.mm.Len(), Queues: l.mm.Counts(), Racing: l.racing}
	l.mu.Unlock()
	others, err := l.deps.Presence.Share(context.Background(), own)
	if err != nil {
		l.log.Warn().Err(err).Msg("presence not shared")
		return
	}
	l.mu.Lock()
	l.others = others
	l.mu.Unlock()
}

// refreshRaces reads the live races (outside the lobby's lock: each read
// takes the race's) for the list and the count of players racing. It runs
// on the heartbeat, so that the lobby's own changes never wait for it.
func (l *Lobby) refreshRaces() {
	type listed struct {
		sum     RaceSummary
		created time.Time
	}
	var live []listed
	racing := 0
	for _, rc := range l.deps.Races.Races() {
		if rc.State().Over() {
			continue
		}
		in, err := rc.Info(context.Background())
		if err != nil {
			continue
		}
		for s := range 2 {
			if in.Players[s].Taken && !in.Players[s].Computer {
				racing++
			}
		}
		if !in.Public || in.State == race.Waiting {
			continue
		}
		sum := RaceSummary{Race: in.Race, Variant: in.Variant, State: in.State, Spectators: in.Spectators, StartAt: in.StartAt}
		for s := range 2 {
			sum.Players[s] = PlayerRef{Name: in.Players[s].Name, Computer: in.Players[s].Computer}
			sum.Scores[s] = in.Counts[s].Score
		}
		live = append(live, listed{sum, in.CreatedAt})
	}
	sort.Slice(live, func(i, j int) bool {
		if !live[i].created.Equal(live[j].created) {
			return live[i].created.After(live[j].created)
		}
		return live[i].sum.Race < live[j].sum.Race
	})
	races := make([]RaceSummary, 0, min(len(live), l.cfg.MaxListed))
	for i := 0; i < len(live) && i < l.cfg.MaxListed; i++ {
		races = append(races, live[i].sum)
	}
	l.mu.Lock()
	l.listed, l.racing = races, racing
	l.mu.Unlock()
}

// Publish sends every session the lobby as it is now, unless it is the
// same as last sent.
func (l *Lobby) Publish() {
	ev := l.snapshot()
	b, err := json.Marshal(ev)
	if err != nil {
		l.log.Error().Err(err).Msg("lobby snapshot")
		return
	}
	l.mu.Lock()
	if bytes.Equal(b, l.last) {
		l.mu.Unlock()
		return
	}
	l.last = b
	ev.encoded = b // every connection sends these bytes
	subs := make([]race.Subscriber, 0, len(l.sessions))
	for s := range l.sessions {
		subs = append(subs, s.sub)
	}
	l.mu.Unlock()
	for _, sub := range subs {
		sub.Deliver(ev)
	}
}

// Leaderboard is the n best rated players of a variant.
func (l *Lobby) Leaderboard(ctx context.Context, variant string, n int) ([]Standing, error) {
	rules, err := engine.Variant(variant)
	if err != nil {
		return nil, &race.Error{Code: race.CodeBadOptions, Message: err.Error(), Err: err}
	}
	out, err := l.deps.Ratings.Leaderboard(ctx, rules.Name, n)
	if err != nil {
		return nil, fmt.Errorf("lobby: leaderboard %s: %w", rules.Name, err)
	}
	return out, nil
}

// Profile is a player's standings in every variant and their last races.
type Profile struct {
	Player    string       `json:"player"`
	Standings []Standing   `json:"standings"`
	History   []GameRecord `json:"history"`
}

// Profile returns a player's standings and last n races.
func (l *Lobby) Profile(ctx context.Context, player string, n int) (Profile, error) {
	st, err := l.deps.Ratings.Standings(ctx, player)
	if err != nil {
		return Profile{}, fmt.Errorf("lobby: standings of %s: %w", player, err)
	}
	h, err := l.deps.Ratings.History(ctx, player, n)
	if err != nil {
		return Profile{}, fmt.Errorf("lobby: history of %s: %w", player, err)
	}
	if len(st) == 0 && len(h) == 0 {
		return Profile{}, race.Errorf(CodeNoSuchPlayer, "no player %q has raced", player)
	}
	return Profile{Player: player, Standings: st, History: h}, nil
}
