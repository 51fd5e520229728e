package lobby

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
)

// Ghost races: a finished game raced again by someone who has not seen
// its deal (docs/ghosts.md). The recording, the challenge that names it,
// who has seen which deal and every run against a ghost live behind the
// Ghosts interface: in memory (memlobby.Ghosts) or in Redis
// (redislobby.Ghosts), so that any instance of a fleet finds them.

// Error codes of ghost races (PROTOCOL.md, section 5).
const (
	CodeNoSuchGhost  race.Code = "no-such-ghost"   // no ghost challenge has that id (or it was forged)
	CodeGhostExpired race.Code = "ghost-expired"   // the ghost challenge is too old
	CodeDealSeen     race.Code = "deal-seen"       // you played or raced this deal already: its cards are no secret to you
	CodeNoGame       race.Code = "no-game"         // the race was aborted or is not over: there is no game to race
	CodeBadGhost     race.Code = race.CodeBadGhost // a recording that does not replay on its deal
)

// DefaultGhostTTL is how long a ghost challenge can be raced: a week, time
// to pass a link around.
const DefaultGhostTTL = 7 * 24 * time.Hour

// Kinds of ghost challenges.
const (
	GhostGame = "game" // "beat my game": one game of a finished race
	GhostBest = "best" // "my best game on this deal"
)

// BestGame is a player's best game on a deal so far: the most cards on
// the foundations (the first such game on a tie).
type BestGame struct {
	Race  string `json:"race"`
	Seat  int    `json:"seat"`
	Score int    `json:"score"`
}

// GhostInfo is a ghost challenge as its author and challengers see it:
// who made it, whose game it is and how it went in counts, never the deal
// or a card.
type GhostInfo struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	Author     string `json:"author"`
	AuthorName string `json:"authorName"`
	// Name is the recorded racer's display name, shown on the ghost's seat.
	Name        string        `json:"name"`
	Variant     string        `json:"variant"`
	TimeLimitMs int64         `json:"timeLimitMs"`
	Score       int           `json:"score"`  // cards on the foundations at the end of the recording
	Status      engine.Status `json:"status"` // how the recorded game ended
	Made        time.Time     `json:"madeAt"`
	Expires     time.Time     `json:"expiresAt"`
}

// GhostRecord is a ghost challenge as the store keeps it: with its deal
// and recording, which stay on the server.
type GhostRecord struct {
	GhostInfo
	Deal      uint64     `json:"deal,string"`
	Recording race.Ghost `json:"recording"`
	// Source is the race the recording comes from.
	Source string `json:"source"`
}

// GhostRun is one race against a ghost, as its author and its challenger
// see it afterwards.
type GhostRun struct {
	Ghost     string      `json:"ghost"`  // the challenge id
	Author    string      `json:"author"` // who made the challenge
	Race      string      `json:"race"`   // the ghost race, a public replay now
	Player    string      `json:"player"` // the challenger
	Name      string      `json:"name"`
	GhostName string      `json:"ghostName"`
	Outcome   string      `json:"outcome"` // for the challenger: "won", "lost" or "draw"
	Reason    race.Reason `json:"reason"`
	// Scores are the challenger's cards on the foundations, then the ghost's.
	Scores [2]int    `json:"scores"`
	At     time.Time `json:"at"`
}

// GhostTally is a player's record against ghosts (their own, apart from
// the Glicko ratings: ghost races are unrated).
type GhostTally struct {
	Races  int `json:"races"`
	Wins   int `json:"wins"`
	Losses int `json:"losses"`
	Draws  int `json:"draws"`
}

// GhostProfile is a player's ghost races on their profile: the
// challenges they made and are open, everyone who raced one and how it
// went, their own runs and their record.
type GhostProfile struct {
	Open    []GhostInfo `json:"open"`
	Against []GhostRun  `json:"against"` // runs against ghosts this player made, newest first
	Raced   []GhostRun  `json:"raced"`   // this player's runs against ghosts, newest first
	Record  GhostTally  `json:"record"`
}

// GhostRacedEvent ("ghost-raced") tells a ghost's author, if they are
// online, that someone raced it and how it went.
type GhostRacedEvent struct {
	Run GhostRun `json:"run"`
}

// EventType is "ghost-raced".
func (*GhostRacedEvent) EventType() string { return "ghost-raced" }

var _ race.Event = (*GhostRacedEvent)(nil)

// Ghosts keeps ghost challenges, who has seen which deal, and the runs.
// Every method is safe for concurrent use by several instances.
type Ghosts interface {
	// Put stores a challenge, to be found until keep has passed.
	Put(ctx context.Context, g GhostRecord, keep time.Duration) error
	// Get finds a challenge by id.
	Get(ctx context.Context, id string) (g GhostRecord, ok bool, err error)
	// Mine lists the challenges player made, newest first, expired ones
	// included while they are kept.
	Mine(ctx context.Context, player string) ([]GhostInfo, error)
	// See marks that player has seen deal in variant and reports whether
	// they had already (atomically: of two callers, one only gets false).
	See(ctx context.Context, variant string, deal uint64, player string) (already bool, err error)
	// Seen reports whether player has seen deal in variant.
	Seen(ctx context.Context, variant string, deal uint64, player string) (bool, error)
	// AddRun records a run, for its author and its challenger, once per
	// race (a race ended twice across a takeover is recorded once).
	AddRun(ctx context.Context, r GhostRun) error
	// Runs are the last n runs against player's ghosts and player's own
	// last n runs, newest first, and player's record.
	Runs(ctx context.Context, player string, n int) (against, raced []GhostRun, tally GhostTally, err error)
	// KeepBest records b as player's best game on the deal if it has more
	// cards than the best so far.
	KeepBest(ctx context.Context, variant string, deal uint64, player string, b BestGame) error
	// Best is player's best game on the deal.
	Best(ctx context.Context, variant string, deal uint64, player string) (BestGame, bool, error)
}

// DealSeer is implemented by a Ghosts store that marks a finished race's
// deal seen by its players and keeps their games as bests in one write
// (sqlstore: one transaction, where See and KeepBest for each player are
// four commits). The lobby uses it at every finished race's end when the
// store has it, See and KeepBest otherwise.
type DealSeer interface {
	// SeeDeal does, for each of games, See and KeepBest of its player's
	// game on deal in variant: all of them, or none and an error.
	SeeDeal(ctx context.Context, variant string, deal uint64, games []SeenGame) error
}

// SeenGame is a player's game of a finished race, for DealSeer.
type SeenGame struct {
	Player string
	Best   BestGame
}

// MakeGhost turns seat's game of finished race raceID into a ghost
// challenge made by this session's player: anyone who has not seen the
// deal may race it from its link until it expires.
//
// With best, the challenge is the player's best game on that race's deal
// ("my best game on this deal"), whichever race it was.
func (s *Session) MakeGhost(raceID string, seat int, best bool) (GhostInfo, error) {
	l := s.l
	who := s.Player()
	ctx, cancel := opCtx()
	defer cancel()
	kind := GhostGame
	if best {
		in, err := l.finishedInfo(ctx, raceID)
		if err != nil {
			return GhostInfo{}, err
		}
		deal, err := strconv.ParseUint(in.Result.Deal, 10, 64)
		if err != nil || in.Result.Deal == "" {
			return GhostInfo{}, race.Errorf(CodeNotRevealed, "race %s's deal is sealed until the day ends", raceID)
		}
		b, ok, err := l.deps.Stores.Ghosts.Best(ctx, in.Variant, deal, who.ID)
		if err != nil {
			return GhostInfo{}, unavailable(err)
		}
		if !ok {
			return GhostInfo{}, race.Errorf(CodeNoGame, "you have no finished game on the deal of race %s", raceID)
		}
		raceID, seat, kind = b.Race, b.Seat, GhostBest
	}
	h, err := l.deps.Races.Open(ctx, raceID)
	if err != nil {
		return GhostInfo{}, err
	}
	in, err := h.Info(ctx)
	if err != nil {
		return GhostInfo{}, err
	}
	if in.State != race.Finished || in.Result == nil {
		return GhostInfo{}, race.Errorf(CodeNoGame, "race %s is %s: only a finished race's games can be raced again", raceID, in.State)
	}
	if seat < 0 || seat >= len(in.Players) {
		return GhostInfo{}, race.Errorf(race.CodeBadOptions, "seat must be from 0 to %d, not %d", len(in.Players)-1, seat)
	}
	if in.Players[seat].Solo {
		return GhostInfo{}, race.Errorf(race.CodeBadOptions, "seat %d of race %s is nobody: there is no game there", seat, raceID)
	}
	if in.Result.Deal == "" {
		return GhostInfo{}, race.Errorf(CodeNotRevealed, "race %s is on the day's deal, sealed until the day ends: its games can be raced again after that", raceID)
	}
	rec, err := race.GhostOf(in, seat)
	if err != nil {
		return GhostInfo{}, err
	}
	deal, err := strconv.ParseUint(in.Result.Deal, 10, 64)
	if err != nil {
		return GhostInfo{}, race.Errorf(race.CodeInternal, "race %s has no deal", raceID)
	}
	now := l.deps.Clock.Now()
	g := GhostRecord{
		GhostInfo: GhostInfo{ID: newGhostID(), Kind: kind, Author: who.ID, AuthorName: who.Name,
			Name: in.Players[seat].Name, Variant: in.Variant, TimeLimitMs: in.TimeLimit,
			Score: in.Result.Scores[seat], Status: in.Result.Statuses[seat], Made: now, Expires: now.Add(l.ghostTTL())},
		Deal: deal, Recording: rec, Source: raceID,
	}
	// The author has the deal at hand: it is seen.
	if _, err := l.deps.Stores.Ghosts.See(ctx, g.Variant, deal, who.ID); err != nil {
		return GhostInfo{}, unavailable(err)
	}
	if err := l.deps.Stores.Ghosts.Put(ctx, g, 2*l.ghostTTL()); err != nil {
		return GhostInfo{}, unavailable(err)
	}
	l.log.Info().Str("ghost", g.ID).Str("source", raceID).Int("seat", seat).Str("author", who.ID).Msg("ghost made")
	return g.GhostInfo, nil
}

func (l *Lobby) ghostTTL() time.Duration {
	if l.cfg.GhostTTL > 0 {
		return l.cfg.GhostTTL
	}
	return DefaultGhostTTL
}

// newGhostID is a challenge id: 128 random bits, so that a link cannot be
// guessed or forged.
func newGhostID() string { return race.NewToken() }

// Ghost is a ghost challenge as its link shows it.
func (l *Lobby) Ghost(ctx context.Context, id string) (GhostInfo, error) {
	g, err := l.ghost(ctx, id)
	return g.GhostInfo, err
}

func (l *Lobby) ghost(ctx context.Context, id string) (GhostRecord, error) {
	g, ok, err := l.deps.Stores.Ghosts.Get(ctx, id)
	switch {
	case err != nil:
		return GhostRecord{}, unavailable(err)
	case !ok:
		return GhostRecord{}, race.Errorf(CodeNoSuchGhost, "no ghost challenge has id %q", id)
	case !l.deps.Clock.Now().Before(g.Expires):
		return GhostRecord{}, race.Errorf(CodeGhostExpired, "the ghost challenge %s expired at %s", id, g.Expires.Format(time.RFC3339))
	}
	return g, nil
}

// RaceGhost starts a race of this session's player against ghost
// challenge id, on its deal behind a fresh commitment, with the recorded
// race's time limit; unrated. Refused with CodeNoSuchGhost,
// CodeGhostExpired, CodeOwnChallenge (the author), CodeDealSeen (anyone
// who played or raced the deal, the recorded racers included),
// CodeInRace; a refusal changes nothing.
func (s *Session) RaceGhost(id string) error {
	l := s.l
	who := s.Player()
	ctx, cancel := opCtx()
	defer cancel()
	g, err := l.ghost(ctx, id)
	if err != nil {
		return err
	}
	if g.Author == who.ID {
		return race.Errorf(CodeOwnChallenge, "that is your own ghost: send the link to someone who has not seen the deal")
	}
	if err := l.checkRacing(ctx, who.ID); err != nil {
		return err
	}
	seen, err := l.deps.Stores.Ghosts.Seen(ctx, g.Variant, g.Deal, who.ID)
	if err != nil {
		return unavailable(err)
	}
	if seen {
		return race.Errorf(CodeDealSeen, "you have played this deal already: its cards are no secret to you")
	}
	busy, err := l.deps.Stores.Seats.Claim(ctx, []string{who.ID}, claimKeep)
	if err != nil {
		return unavailable(err)
	}
	if busy != "" {
		return inRace("")
	}
	// The claim is the player's; marking the deal seen is the attempt.
	if already, err := l.deps.Stores.Ghosts.See(ctx, g.Variant, g.Deal, who.ID); err != nil || already {
		_ = l.deps.Stores.Seats.Free(ctx, "", []string{who.ID})
		if err != nil {
			return unavailable(err)
		}
		return race.Errorf(CodeDealSeen, "you have played this deal already: its cards are no secret to you")
	}
	if l.dropWaiting(s) {
		l.challengesChanged()
	}
	rec := g.Recording
	rec.Ref = g.ID
	return l.start(pairing{
		opts: race.Options{Variant: g.Variant, TimeLimit: time.Duration(g.TimeLimitMs) * time.Millisecond,
			Deal: g.Deal, DealFixed: true, Unrated: true},
		via:     ViaGhost,
		code:    g.ID,
		players: []PlayerRef{{Name: g.Name, Ghost: true}, {ID: who.ID, Name: who.Name}},
		dests:   []dest{{}, {s: s}},
		ghost:   &rec,
		claimed: true,
	})
}

// ghostEnded records a finished ghost race: the run for the author and
// the challenger, and a notice to the author (any instance). It runs on
// the rating goroutine.
func (l *Lobby) ghostEnded(ctx context.Context, e race.Ended, at time.Time) error {
	gs := -1
	for s, ref := range e.Ghosts {
		if ref != "" {
			gs = s
		}
	}
	if gs < 0 || e.Players[1-gs].Player == "" {
		return nil
	}
	g, ok, err := l.deps.Stores.Ghosts.Get(ctx, e.Ghosts[gs])
	if err != nil {
		return err
	}
	if !ok {
		l.log.Warn().Str("ghost", e.Ghosts[gs]).Str("race", e.Race).Msg("ghost race of a challenge gone: not recorded")
		return nil
	}
	me := 1 - gs
	run := GhostRun{Ghost: g.ID, Author: g.Author, Race: e.Race, Player: e.Players[me].Player, Name: e.Players[me].Name,
		GhostName: g.Name, Outcome: "draw", Reason: e.Result.Reason,
		Scores: [2]int{e.Result.Scores[me], e.Result.Scores[gs]}, At: at}
	if w := e.Result.Winner; w != nil {
		run.Outcome = "lost"
		if *w == me {
			run.Outcome = "won"
		}
	}
	if err := l.deps.Stores.Ghosts.AddRun(ctx, run); err != nil {
		return err
	}
	l.tell(Notice{Player: g.Author, To: ToAll, Ghost: &GhostRacedEvent{Run: run}})
	return nil
}

// ghostProfile is player's ghost races for their profile.
func (l *Lobby) ghostProfile(ctx context.Context, player string, n int) (*GhostProfile, error) {
	mine, err := l.deps.Stores.Ghosts.Mine(ctx, player)
	if err != nil {
		return nil, err
	}
	against, raced, tally, err := l.deps.Stores.Ghosts.Runs(ctx, player, n)
	if err != nil {
		return nil, err
	}
	gp := &GhostProfile{Open: []GhostInfo{}, Against: against, Raced: raced, Record: tally}
	now := l.deps.Clock.Now()
	for _, g := range mine {
		if now.Before(g.Expires) {
			gp.Open = append(gp.Open, g)
		}
	}
	if gp.Against == nil {
		gp.Against = []GhostRun{}
	}
	if gp.Raced == nil {
		gp.Raced = []GhostRun{}
	}
	if len(mine) == 0 && len(against) == 0 && len(raced) == 0 {
		return nil, nil
	}
	return gp, nil
}

// errGhostStore wraps a ghost store's failure.
func errGhostStore(what string, err error) error {
	return fmt.Errorf("lobby: ghosts: %s: %w", what, err)
}

// seeDeal marks the deal of a finished race seen by its players (they
// may not race a ghost of it) and keeps each one's best game on it. It
// stops at the first step the store fails, for the caller to try again:
// each step done twice changes nothing.
func (l *Lobby) seeDeal(raceID, variant string, res race.Result, players []PlayerRef) error {
	d, err := strconv.ParseUint(res.Deal, 10, 64)
	if err != nil {
		return nil // no deal revealed: nothing to mark
	}
	ctx, cancel := opCtx()
	defer cancel()
	games := make([]SeenGame, 0, len(players))
	for s, p := range players {
		if p.ID == "" || p.Computer || p.Ghost || p.Solo {
			continue
		}
		games = append(games, SeenGame{Player: p.ID, Best: BestGame{Race: raceID, Seat: s, Score: res.Scores[s]}})
	}
	if len(games) == 0 {
		return nil
	}
	if ds, ok := l.deps.Stores.Ghosts.(DealSeer); ok {
		if err := ds.SeeDeal(ctx, variant, d, games); err != nil {
			return fmt.Errorf("lobby: mark the deal of race %s seen and keep its best games: %w", raceID, err)
		}
		return nil
	}
	for _, g := range games {
		if _, err := l.deps.Stores.Ghosts.See(ctx, variant, d, g.Player); err != nil {
			return fmt.Errorf("lobby: mark the deal of race %s seen by %s: %w", raceID, g.Player, err)
		}
		if err := l.deps.Stores.Ghosts.KeepBest(ctx, variant, d, g.Player, g.Best); err != nil {
			return fmt.Errorf("lobby: keep %s's game of race %s as a best: %w", g.Player, raceID, err)
		}
	}
	return nil
}

// finishedInfo is a race's public record.
func (l *Lobby) finishedInfo(ctx context.Context, raceID string) (race.Info, error) {
	h, err := l.deps.Races.Open(ctx, raceID)
	if err != nil {
		return race.Info{}, err
	}
	in, err := h.Info(ctx)
	if err != nil {
		return race.Info{}, err
	}
	if in.State != race.Finished || in.Result == nil {
		return race.Info{}, race.Errorf(CodeNoGame, "race %s is %s: only a finished race's games can be raced again", raceID, in.State)
	}
	return in, nil
}

func formatDeal(d uint64) string { return strconv.FormatUint(d, 10) }
