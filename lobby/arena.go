package lobby

// The lobby's side of arenas (arenas.go): they are made from the
// configured schedules, players join, pause and watch them, the
// heartbeat pairs each running arena's pool and sends its leaderboard
// to those watching, and a race's end counts its points (arenaEnded,
// from the end worker). Every change goes through the store's Change,
// so that the instances of a fleet pair and count each race once.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"sirtommy/race"
)

// ViaArena is a race an arena paired (MatchedEvent.Arena names it).
const ViaArena Via = "arena"

// arenaTag starts the Options.Tag of an arena's race: "arena:ID".
const arenaTag = "arena:"

// pendingRace starts an entry's Race while its race is made: the
// pairing's time (Unix ms), its instance-unique id and the pair's index
// in it follow ("pending:MS:ID:K"), so that a pairing whose maker died
// can be undone (arenaPendingFor), and a race that ended before it was
// recorded is known by its pair's token (pendingOf).
const pendingRace = "pending:"

// Arena limits and timings.
const (
	// MinArenaDuration and MaxArenaDuration bound an arena's length.
	MinArenaDuration = 5 * time.Minute
	MaxArenaDuration = 180 * time.Minute
	// arenaShownAfter is how long an arena is still listed after its
	// end: for its podium.
	arenaShownAfter = 30 * time.Minute
	// arenaPendingFor is how long a pairing may stay unmade before its
	// players go back to the pool: the maker crashed between the store's
	// change and the race's making.
	arenaPendingFor = time.Minute
	// arenaTop is how many entries an arena's leaderboard message lists
	// (each watcher also gets their own).
	arenaTop = 20
)

// ArenaSpec is what an arena is: its name, its races' variant, grade
// and time limit, and its length.
type ArenaSpec struct {
	Name      string
	Variant   string
	Grade     string
	TimeLimit time.Duration
	Duration  time.Duration
}

// ArenaSchedule makes an arena of Spec every Every, starting at the
// multiples of Every since the Unix epoch (UTC: an hourly arena starts
// on the hour), listed from the end of the one before.
type ArenaSchedule struct {
	Spec  ArenaSpec
	Every time.Duration
}

// check refuses a spec out of range (race.CodeBadOptions, naming the
// field and its range) and returns it normalized.
func (s ArenaSpec) check() (ArenaSpec, error) {
	if s.Duration < MinArenaDuration || s.Duration > MaxArenaDuration {
		return s, race.Errorf(race.CodeBadOptions, "an arena's duration must be from %d to %d minutes, not %v", int(MinArenaDuration/time.Minute), int(MaxArenaDuration/time.Minute), s.Duration)
	}
	secs := int(s.TimeLimit / time.Second)
	opts, err := race.Choice{Variant: s.Variant, Grade: s.Grade, TimeLimitSeconds: &secs}.Options()
	if err != nil {
		return s, err
	}
	if strings.TrimSpace(s.Name) == "" {
		return s, race.Errorf(race.CodeBadOptions, "an arena needs a name")
	}
	s.Variant, s.Grade, s.TimeLimit = opts.Variant, opts.Grade, opts.TimeLimit
	return s, nil
}

// MakeArena makes an arena of spec starting at start, with id (made
// again, an existing id changes nothing: the instances of a fleet make
// the scheduled ones by the same ids).
func (l *Lobby) MakeArena(id string, spec ArenaSpec, start time.Time) (Arena, error) {
	spec, err := spec.check()
	if err != nil {
		return Arena{}, err
	}
	a := Arena{ArenaInfo: ArenaInfo{ID: id, Name: spec.Name, Variant: spec.Variant, Grade: spec.Grade, TimeLimitMs: spec.TimeLimit.Milliseconds(),
		StartAt: start.UTC(), EndAt: start.Add(spec.Duration).UTC()}, Entries: []ArenaEntry{}}
	ctx, cancel := opCtx()
	defer cancel()
	if _, err := l.deps.Stores.Arenas.Make(ctx, a); err != nil {
		return Arena{}, unavailable(err)
	}
	return a, nil
}

// scheduleArenas makes each schedule's current and next arena (once per
// instance: made ids are remembered).
func (l *Lobby) scheduleArenas(now time.Time) {
	for _, sc := range l.cfg.Arenas {
		if sc.Every <= 0 {
			continue
		}
		slot := now.Truncate(sc.Every)
		for _, start := range []time.Time{slot, slot.Add(sc.Every)} {
			if !start.Add(sc.Spec.Duration).After(now) {
				continue
			}
			id := arenaID(sc.Spec.Name, start)
			l.mu.Lock()
			made := l.arenasMade[id]
			l.mu.Unlock()
			if made {
				continue
			}
			if _, err := l.MakeArena(id, sc.Spec, start); err != nil {
				l.log.Warn().Err(err).Str("arena", id).Msg("scheduled arena not made")
				continue
			}
			l.mu.Lock()
			l.arenasMade[id] = true
			l.mu.Unlock()
		}
	}
}

// arenaID is a scheduled arena's id: its name's letters and digits, and
// its start (UTC, to the minute).
func arenaID(name string, start time.Time) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-") + "-" + start.UTC().Format("200601021504")
}

// ArenaStatus is where an arena is in its life.
type ArenaStatus string

// The statuses of an arena.
const (
	ArenaSoon      ArenaStatus = "soon"      // before its start: players may join
	ArenaRunning   ArenaStatus = "running"   // pairing
	ArenaFinishing ArenaStatus = "finishing" // time is up; races under way finish and count
	ArenaOver      ArenaStatus = "over"      // the podium
)

// status is a's status at now.
func (a *Arena) status(now time.Time) ArenaStatus {
	switch {
	case now.Before(a.StartAt):
		return ArenaSoon
	case now.Before(a.EndAt):
		return ArenaRunning
	case len(a.Races) > 0:
		return ArenaFinishing
	}
	return ArenaOver
}

// entry is the index of player's entry, -1 for none.
func (a *Arena) entry(player string) int {
	return slices.IndexFunc(a.Entries, func(e ArenaEntry) bool { return e.Player == player })
}

// ArenaStanding is one player's line on an arena's leaderboard.
type ArenaStanding struct {
	Rank   int    `json:"rank"`
	Player string `json:"player"`
	Name   string `json:"name"`
	Points int    `json:"points"`
	Fire   bool   `json:"fire,omitempty"` // on a streak: their next race counts double
	Races  int    `json:"races"`
	Wins   int    `json:"wins"`
	// Berserks counts their races with half their time.
	Berserks int        `json:"berserks"`
	State    EntryState `json:"state"`
	// Sheet is each race's points in order, a digit each; a race that
	// counted double is followed by "!" (lichess's fire).
	Sheet string `json:"sheet"`
	// WaitingSince is, in the viewer's own line while they wait in the
	// pool, since when: the page counts their wait.
	WaitingSince *time.Time `json:"waitingSince,omitempty"`
}

// ArenaView is an arena as a player or a watcher sees it (the "arena"
// message).
type ArenaView struct {
	ArenaInfo
	Status ArenaStatus `json:"status"`
	// Now is the server's time as the view was made, for countdowns.
	Now time.Time `json:"now"`
	// Players counts the entries; Racing those in a race now; Played
	// the races started.
	Players int `json:"players"`
	Racing  int `json:"racing"`
	Played  int `json:"played"`
	// Standings are the top of the leaderboard; You is the viewer's own
	// line, when they joined.
	Standings []ArenaStanding `json:"standings"`
	You       *ArenaStanding  `json:"you,omitempty"`
	// TopRace is the race under way of the best-placed players, to watch.
	TopRace string `json:"topRace,omitempty"`
	// Podium is the first three once the arena is over.
	Podium []ArenaStanding `json:"podium,omitempty"`
}

// view is a as player (or a watcher, "") sees it at now.
func (a *Arena) view(player string, now time.Time) ArenaView {
	return a.board(now).viewOf(a, player)
}

// arenaBoard is what every viewer of an arena sees alike at one time,
// made once for all of them: its leaderboard's order is a sort of every
// entry, which an arena of a thousand players should not do a thousand
// times a heartbeat.
type arenaBoard struct {
	shared ArenaView             // the view without You
	place  map[string]boardPlace // each player's place on it
}

// boardPlace is a player's rank (from 1) and entry (its index in
// Entries).
type boardPlace struct{ rank, entry int }

// board is a's board at now.
func (a *Arena) board(now time.Time) *arenaBoard {
	v := ArenaView{ArenaInfo: a.ArenaInfo, Status: a.status(now), Now: now, Players: len(a.Entries), Played: a.Played,
		Standings: []ArenaStanding{}}
	order := standings(a)
	place := make(map[string]boardPlace, len(order))
	for r, i := range order {
		e := &a.Entries[i]
		place[e.Player] = boardPlace{rank: r + 1, entry: i}
		if e.State == EntryRacing {
			v.Racing++
		}
		if r < arenaTop {
			v.Standings = append(v.Standings, standingOf(e, r+1))
		}
		if v.TopRace == "" && e.State == EntryRacing && !strings.HasPrefix(e.Race, pendingRace) {
			v.TopRace = e.Race
		}
	}
	if v.Status == ArenaOver {
		v.Podium = v.Standings[:min(3, len(v.Standings))]
	}
	return &arenaBoard{shared: v, place: place}
}

// viewOf is the board as player sees it: with their own line.
func (b *arenaBoard) viewOf(a *Arena, player string) ArenaView {
	v := b.shared
	if p, ok := b.place[player]; ok {
		e := &a.Entries[p.entry]
		st := standingOf(e, p.rank)
		if e.State == EntryWaiting && !e.Since.IsZero() {
			since := e.Since // joined before the start: waiting for a pairing from the start on
			if since.Before(a.StartAt) {
				since = a.StartAt
			}
			st.WaitingSince = &since
		}
		v.You = &st
	}
	return v
}

func standingOf(e *ArenaEntry, rank int) ArenaStanding {
	return ArenaStanding{Rank: rank, Player: e.Player, Name: e.Name, Points: e.Points, Fire: e.OnFire(),
		Races: e.Races, Wins: e.Wins, Berserks: e.Berserks, State: e.State, Sheet: e.Marks}
}

// ArenaEvent ("arena") is an arena as it is now: the reply to
// arena-join, arena-pause and arena-watch, and sent to everyone watching
// it (its players included) when it changes, at most once a heartbeat.
type ArenaEvent struct {
	Arena ArenaView `json:"arena"`
}

// EventType is "arena".
func (*ArenaEvent) EventType() string { return "arena" }

var _ race.Event = (*ArenaEvent)(nil)

// ArenaBrief is an arena as the lobby lists it.
type ArenaBrief struct {
	ArenaInfo
	Status  ArenaStatus `json:"status"`
	Players int         `json:"players"`
}

// errArenaSame leaves an arena as it was: nothing to change.
var errArenaSame = errors.New("lobby: the arena is as it was")

// changeArena is the store's Change with the lobby's refusals: no such
// arena, and store failures as unavailable.
func (l *Lobby) changeArena(id string, change func(*Arena) error) (Arena, error) {
	ctx, cancel := opCtx()
	defer cancel()
	a, ok, err := l.deps.Stores.Arenas.Change(ctx, id, change)
	switch {
	case errors.Is(err, errArenaSame):
		if a.ID == "" { // the store returns no arena with an error of change
			return l.arena(ctx, id)
		}
		return a, nil
	case race.IsRefusal(err):
		return Arena{}, err
	case err != nil:
		return Arena{}, unavailable(err)
	case !ok:
		return Arena{}, race.Errorf(CodeNoSuchArena, "there is no arena %q", id)
	}
	return a, nil
}

// JoinArena puts the session's player in arena id's pool (back in it,
// after a pause) and makes the session watch it: refused when it is
// over, when they are in it already, in another arena, or racing,
// queued or with a challenge open. Joining before the start is fine:
// pairing begins then; so is joining late.
func (s *Session) JoinArena(id string) (ArenaEvent, error) {
	l := s.l
	who := s.Player()
	ctx, cancel := opCtx()
	defer cancel()
	a, err := l.arena(ctx, id)
	if err != nil {
		return ArenaEvent{}, err
	}
	now := l.deps.Clock.Now()
	if !now.Before(a.EndAt) {
		return ArenaEvent{}, race.Errorf(CodeArenaOver, "arena %s is over", a.Name)
	}
	// Racing this arena's race (paused in it, and back before its end),
	// they are not refused as racing.
	if i := a.entry(who.ID); i < 0 || a.Entries[i].State != EntryRacing {
		if err := l.waiting(ctx, who.ID); err != nil {
			return ArenaEvent{}, err
		}
		if err := l.notInMass(ctx, who.ID); err != nil {
			return ArenaEvent{}, err
		}
	}
	if other, err := l.arenaOf(ctx, who.ID, now); err != nil {
		return ArenaEvent{}, err
	} else if other != nil && other.ID != id {
		return ArenaEvent{}, race.Errorf(CodeInArena, "you are in arena %s; pause it first", other.Name)
	}
	a, err = l.changeArena(id, func(a *Arena) error {
		if !now.Before(a.EndAt) {
			return race.Errorf(CodeArenaOver, "arena %s is over", a.Name)
		}
		i := a.entry(who.ID)
		if i < 0 {
			a.Entries = append(a.Entries, ArenaEntry{Player: who.ID, Name: who.Name, State: EntryWaiting, Since: now})
			return nil
		}
		e := &a.Entries[i]
		switch {
		case e.State == EntryPaused:
			e.State, e.Since, e.Name = EntryWaiting, now, who.Name
		case e.PauseAfter:
			e.PauseAfter = false // paused in a race, and back before its end
		default:
			return race.Errorf(CodeInArena, "you are in arena %s already", a.Name)
		}
		return nil
	})
	if err != nil {
		return ArenaEvent{}, err
	}
	l.watchArena(s, id)
	l.log.Info().Str("arena", id).Str("player", who.ID).Msg("arena joined")
	return ArenaEvent{Arena: a.view(who.ID, now)}, nil
}

// PauseArena takes the session's player out of arena id's pool: at once
// when waiting, after their race when racing. Their points stay; joining
// again puts them back.
func (s *Session) PauseArena(id string) (ArenaEvent, error) {
	l := s.l
	who := s.Player()
	now := l.deps.Clock.Now()
	a, err := l.changeArena(id, func(a *Arena) error {
		i := a.entry(who.ID)
		if i < 0 {
			return race.Errorf(CodeNotInArena, "you are not in arena %s", a.Name)
		}
		switch e := &a.Entries[i]; e.State {
		case EntryWaiting:
			e.State = EntryPaused
		case EntryRacing:
			e.PauseAfter = true
		default:
			return errArenaSame
		}
		return nil
	})
	if err != nil {
		return ArenaEvent{}, err
	}
	return ArenaEvent{Arena: a.view(who.ID, now)}, nil
}

// WatchArena makes the session get arena id's changes (its leaderboard)
// without joining it.
func (s *Session) WatchArena(id string) (ArenaEvent, error) {
	l := s.l
	ctx, cancel := opCtx()
	defer cancel()
	a, err := l.arena(ctx, id)
	if err != nil {
		return ArenaEvent{}, err
	}
	l.watchArena(s, id)
	return ArenaEvent{Arena: a.view(s.Player().ID, l.deps.Clock.Now())}, nil
}

// arena reads arena id: CodeNoSuchArena when there is none, a store's
// failure as unavailable.
func (l *Lobby) arena(ctx context.Context, id string) (Arena, error) {
	a, ok, err := l.deps.Stores.Arenas.Get(ctx, id)
	switch {
	case err != nil:
		return Arena{}, unavailable(err)
	case !ok:
		return Arena{}, race.Errorf(CodeNoSuchArena, "there is no arena %q", id)
	}
	return a, nil
}

// ArenaResults are arena id's counted races, in the order they were
// counted; with player, only theirs: after the end, each player's
// races, to replay. An arena that does not exist is CodeNoSuchArena.
func (l *Lobby) ArenaResults(ctx context.Context, id, player string) ([]ArenaResult, error) {
	if _, err := l.arena(ctx, id); err != nil {
		return nil, err
	}
	out, err := l.deps.Stores.Arenas.Results(ctx, id, player)
	if err != nil {
		return nil, unavailable(err)
	}
	return out, nil
}

// UnwatchArena stops the session's arena updates.
func (s *Session) UnwatchArena() {
	l := s.l
	l.mu.Lock()
	delete(l.arenaWatch, s)
	l.mu.Unlock()
}

// watchArena makes s watch arena id (one arena a session: the last).
func (l *Lobby) watchArena(s *Session, id string) {
	l.mu.Lock()
	l.arenaWatch[s] = &arenaWatcher{arena: id}
	l.mu.Unlock()
}

// arenaWatcher is a session's watch of an arena: which, and the last
// view sent (the board's JSON without the time, and the watcher's own
// line's), not to send it again unchanged.
type arenaWatcher struct {
	arena         string
	last, lastYou string
}

// arenaOf is the current arena player is in (waiting or racing), nil
// for none.
func (l *Lobby) arenaOf(ctx context.Context, player string, now time.Time) (*Arena, error) {
	list, err := l.deps.Stores.Arenas.Current(ctx, now)
	if err != nil {
		return nil, unavailable(err)
	}
	for i := range list {
		if j := list[i].entry(player); j >= 0 && list[i].Entries[j].State != EntryPaused {
			return &list[i], nil
		}
	}
	return nil, nil
}

// runArenas, on the heartbeat: the scheduled arenas made, every running
// arena's pool paired, pairings whose maker died undone, the lobby's
// list of arenas, and each watcher's arena sent when it changed.
func (l *Lobby) runArenas() {
	now := l.deps.Clock.Now()
	l.scheduleArenas(now)
	ctx, cancel := opCtx()
	list, err := l.deps.Stores.Arenas.Current(ctx, now.Add(-arenaShownAfter))
	cancel()
	if err != nil {
		l.log.Warn().Err(err).Msg("arenas not read")
		return
	}
	for i := range list {
		a := &list[i]
		if stale := staleEntries(a, now); len(stale) > 0 {
			if b, err := l.changeArena(a.ID, func(a *Arena) error { return undoPending(a, stale, now) }); err == nil && b.ID != "" {
				*a = b
			}
		}
		if a.status(now) == ArenaRunning {
			if b, ok := l.pairArenaPool(a, now); ok {
				*a = b
			}
		}
	}
	briefs := make([]ArenaBrief, 0, len(list))
	for i := range list {
		a := &list[i]
		briefs = append(briefs, ArenaBrief{ArenaInfo: a.ArenaInfo, Status: a.status(now), Players: len(a.Entries)})
	}
	l.mu.Lock()
	l.arenaList = briefs
	l.mu.Unlock()
	l.sendArenas(list, now)
}

// sendArenas sends each session watching one of list's arenas its view,
// unless it is the one it was sent last but for the time. Each arena's
// board is made once, outside the lobby's lock, and compared as JSON
// without the time; each watcher's own line apart.
func (l *Lobby) sendArenas(list []Arena, now time.Time) {
	type arenaNow struct {
		a     *Arena
		board *arenaBoard
		key   string // the board's JSON without the time
	}
	byID := make(map[string]*arenaNow, len(list))
	type watch struct {
		s   *Session
		w   *arenaWatcher
		a   *arenaNow
		who string
		you string // the watcher's own line as JSON
		ev  *ArenaEvent
	}
	var ws []watch
	l.mu.Lock()
	for s, w := range l.arenaWatch {
		for i := range list {
			if list[i].ID == w.arena {
				an := byID[w.arena]
				if an == nil {
					an = &arenaNow{a: &list[i]}
					byID[w.arena] = an
				}
				ws = append(ws, watch{s: s, w: w, a: an, who: s.who.ID})
				break
			}
		}
	}
	l.mu.Unlock()
	for _, an := range byID {
		an.board = an.a.board(now)
		v := an.board.shared
		v.Now = time.Time{}
		key, _ := json.Marshal(&v)
		an.key = string(key)
	}
	for i := range ws {
		v := ws[i].a.board.viewOf(ws[i].a.a, ws[i].who)
		if v.You != nil {
			you, _ := json.Marshal(v.You)
			ws[i].you = string(you)
		}
		ws[i].ev = &ArenaEvent{Arena: v}
	}
	n := 0
	l.mu.Lock()
	for _, x := range ws {
		if x.a.key != x.w.last || x.you != x.w.lastYou {
			x.w.last, x.w.lastYou = x.a.key, x.you
			ws[n] = x
			n++
		}
	}
	l.mu.Unlock()
	for _, x := range ws[:n] {
		x.s.sub.Deliver(x.ev)
	}
}

// staleEntries are the entries of a whose pairing's race was never made
// (its maker died): pending longer than arenaPendingFor.
func staleEntries(a *Arena, now time.Time) []string {
	var out []string
	for _, e := range a.Entries {
		if e.State != EntryRacing || !strings.HasPrefix(e.Race, pendingRace) {
			continue
		}
		ms, _, _ := strings.Cut(strings.TrimPrefix(e.Race, pendingRace), ":")
		at, err := strconv.ParseInt(ms, 10, 64)
		if err != nil || now.Sub(time.UnixMilli(at)) > arenaPendingFor {
			out = append(out, e.Race)
		}
	}
	return out
}

// undoPending puts the entries of the pairings pending back in the pool.
func undoPending(a *Arena, pending []string, now time.Time) error {
	changed := false
	for i := range a.Entries {
		if e := &a.Entries[i]; e.State == EntryRacing && slices.Contains(pending, e.Race) {
			e.State, e.Race, e.Since = EntryWaiting, "", now
			changed = true
		}
	}
	if !changed {
		return errArenaSame
	}
	return nil
}

// arenaAwayPause is how long a player waiting in an arena's pool may be
// away (no session on any instance) before they are paused: a page
// reloaded, or the way from a race's result back to the arena, is
// seconds; a closed browser is not back.
const arenaAwayPause = 30 * time.Second

// awayFor is how long this instance has seen player away while waiting
// in arena id's pool, as of now (0 when present, and forgotten then).
func (l *Lobby) awayFor(id, player string, away bool, now time.Time) time.Duration {
	key := id + " " + player
	l.mu.Lock()
	defer l.mu.Unlock()
	if !away {
		delete(l.arenaAway, key)
		return 0
	}
	since, ok := l.arenaAway[key]
	if !ok {
		l.arenaAway[key] = now
		return 0
	}
	return now.Sub(since)
}

// pauseGone pauses the players of gone still waiting in a's pool: they
// left. Their points stay; arena-join puts them back.
func pauseGone(a *Arena, gone []string) error {
	changed := false
	for _, p := range gone {
		if i := a.entry(p); i >= 0 && a.Entries[i].State == EntryWaiting {
			a.Entries[i].State = EntryPaused
			changed = true
		}
	}
	if !changed {
		return errArenaSame
	}
	return nil
}

// pairArenaPool pairs a's pool: the players waiting who can race now
// (they have a session, here or elsewhere, and are not racing
// elsewhere) are paired by pairArena in one change of the store, and
// their races made. It returns the arena as changed.
func (l *Lobby) pairArenaPool(a *Arena, now time.Time) (Arena, bool) {
	ready := map[string]bool{}
	var gone []string
	ctx, cancel := opCtx()
	for _, e := range a.Entries {
		if e.State != EntryWaiting {
			continue
		}
		away, err := l.away(ctx, e.Player)
		if err != nil {
			continue
		}
		if l.awayFor(a.ID, e.Player, away, now) >= arenaAwayPause {
			gone = append(gone, e.Player)
		}
		if away || l.checkRacing(ctx, e.Player) != nil {
			continue
		}
		ready[e.Player] = true
	}
	cancel()
	changed := false
	if len(gone) > 0 {
		if b, err := l.changeArena(a.ID, func(a *Arena) error { return pauseGone(a, gone) }); err == nil && b.ID != "" {
			*a, changed = b, true
			l.log.Info().Str("arena", a.ID).Strs("players", gone).Msg("arena players gone: paused")
			for _, p := range gone {
				l.awayFor(a.ID, p, false, now) // forgotten: paused now
			}
		}
	}
	if len(ready) < 2 {
		return *a, changed
	}
	pairing := pendingRace + strconv.FormatInt(now.UnixMilli(), 10) + ":" + newCode() + ":"
	var pairs []arenaPair
	b, err := l.changeArena(a.ID, func(a *Arena) error {
		pairs = pairs[:0]
		if a.status(now) != ArenaRunning {
			return errArenaSame
		}
		for k, p := range pairArena(a, func(player string) bool { return ready[player] }) {
			token := pairing + strconv.Itoa(k)
			for _, i := range p {
				a.Entries[i].State, a.Entries[i].Race = EntryRacing, token
			}
			pairs = append(pairs, arenaPair{entries: [2]ArenaEntry{a.Entries[p[0]], a.Entries[p[1]]}, token: token})
		}
		if len(pairs) == 0 {
			return errArenaSame
		}
		return nil
	})
	if err != nil {
		l.log.Warn().Err(err).Str("arena", a.ID).Msg("arena not paired")
		return Arena{}, false
	}
	made := make([]arenaMade, len(pairs))
	for k, p := range pairs {
		made[k] = l.makeArenaRace(&b, p)
	}
	c, err := l.changeArena(a.ID, func(a *Arena) error { return recordArenaRaces(a, made, now) })
	if err != nil {
		l.log.Warn().Err(err).Str("arena", a.ID).Int("races", len(made)).Msg("arena races not recorded in their arena; their pairings are undone after a minute")
		return b, true
	}
	return c, true
}

// arenaPair is two entries of an arena's pool paired, and their
// pending token (pendingRace) until their race is recorded.
type arenaPair struct {
	entries [2]ArenaEntry
	token   string
}

// arenaMade is a pair's race as makeArenaRace made it, or why not.
type arenaMade struct {
	players [2]PlayerRef
	token   string // the pair's pending token
	race    string // its id; "" when it was not made
	err     error
}

// makeArenaRace makes the race of a pair of arena a's pool.
func (l *Lobby) makeArenaRace(a *Arena, p arenaPair) arenaMade {
	pair := p.entries
	m := arenaMade{players: [2]PlayerRef{{ID: pair[0].Player, Name: pair[0].Name}, {ID: pair[1].Player, Name: pair[1].Name}}, token: p.token}
	ratings := []float64{l.rating(a.Variant, pair[0].Player), l.rating(a.Variant, pair[1].Player)}
	opts := race.Options{Variant: a.Variant, Grade: a.Grade, TimeLimit: time.Duration(a.TimeLimitMs) * time.Millisecond,
		Public: true, Tag: arenaTag + a.ID, Berserk: true}
	m.err = l.start(pairing{opts: opts, via: ViaArena, code: a.ID, players: m.players[:], ratings: ratings,
		dests: []dest{{to: ToAll}, {to: ToAll}}, made: func(id string) { m.race = id }})
	if m.err != nil {
		l.log.Warn().Err(m.err).Str("arena", a.ID).Msg("arena race not made")
	}
	return m
}

// recordArenaRaces records in a the races of one pairing: each
// made race's players race it, and a pair whose race was not made goes
// back to the pool (a player found racing elsewhere is paused). One
// change for the whole pairing, however many races it made: the arena
// is read and written whole. A race that ended before it was recorded
// (countArenaRace counted it from the pending token) is not listed as
// under way.
func recordArenaRaces(a *Arena, made []arenaMade, now time.Time) error {
	for _, m := range made {
		var busy *busyError
		errors.As(m.err, &busy)
		pending := false
		for _, p := range m.players {
			i := a.entry(p.ID)
			if i < 0 || a.Entries[i].Race != m.token {
				continue
			}
			e := &a.Entries[i]
			switch {
			case m.err == nil:
				e.Race, pending = m.race, true
			case busy != nil && busy.player == p.ID:
				e.State, e.Race = EntryPaused, ""
			default:
				e.State, e.Race, e.Since = EntryWaiting, "", now
			}
		}
		if m.err == nil {
			a.Played++
			if pending {
				a.Races = append(a.Races, ArenaRace{Race: m.race, Players: [2]string{m.players[0].ID, m.players[1].ID}, At: now})
			}
		}
	}
	return nil
}

// arenaEnded counts the end of an arena's race (e.Tag names the arena):
// each player's score on their sheet, their last opponent, and back to
// the pool (or paused, if they paused meanwhile). Counted once: a race
// the arena no longer has under way was counted already.
func (l *Lobby) arenaEnded(ctx context.Context, e race.Ended, at time.Time) error {
	id := strings.TrimPrefix(e.Tag, arenaTag)
	_, ok, err := l.deps.Stores.Arenas.Change(ctx, id, func(a *Arena) error { return countArenaRace(a, e, at) })
	switch {
	case errors.Is(err, errArenaSame), err == nil && !ok:
		return nil // counted already, or no such arena
	case err != nil:
		return err
	}
	l.log.Info().Str("arena", id).Str("race", e.Race).Msg("arena race counted")
	return nil
}

// countArenaRace counts race e's end in a at at: each player's score on
// their sheet, their last opponent, and back to the pool (or paused).
// A race a does not have under way is counted already (errArenaSame),
// unless it ended before its pairing recorded it: its two players then
// still race on their pairing's pending token.
func countArenaRace(a *Arena, e race.Ended, at time.Time) error {
	k := slices.IndexFunc(a.Races, func(r ArenaRace) bool { return r.Race == e.Race })
	pending := ""
	switch {
	case k >= 0:
		a.Races = slices.Delete(a.Races, k, k+1)
	default:
		if pending = pendingOf(a, e); pending == "" {
			return errArenaSame
		}
	}
	outs := arenaOutcomes(e.Result)
	res := ArenaResult{Race: e.Race, At: at}
	for s := range min(len(e.Players), 2) {
		res.Players[s], res.Names[s] = e.Players[s].Player, e.Players[s].Name
		i := a.entry(e.Players[s].Player)
		if i < 0 {
			continue
		}
		en := &a.Entries[i]
		if outs != nil {
			res.Scores[s] = scoreRace(en, outs[s], e.Players[s].Berserk)
			en.count(res.Scores[s])
		}
		en.Last = e.Players[1-s].Player
		if en.State == EntryRacing && (en.Race == e.Race || (pending != "" && en.Race == pending)) {
			en.Race, en.Since = "", at
			en.State = EntryWaiting
			if en.PauseAfter {
				en.State, en.PauseAfter = EntryPaused, false
			}
		}
	}
	if outs != nil {
		a.Counted = append(a.Counted, res)
	}
	return nil
}

// pendingOf is the pending token race e's two players race on, when
// e ended before its pairing recorded it in a; "" otherwise. Each pair
// of a pairing has its own token, so that two players on one token are
// that pair: they are out of the pool until e is counted, and never
// paired again at once after.
func pendingOf(a *Arena, e race.Ended) string {
	if len(e.Players) != 2 {
		return ""
	}
	token := ""
	for _, p := range e.Players {
		i := a.entry(p.Player)
		if i < 0 || a.Entries[i].State != EntryRacing || !strings.HasPrefix(a.Entries[i].Race, pendingRace) {
			return ""
		}
		if token != "" && a.Entries[i].Race != token {
			return ""
		}
		token = a.Entries[i].Race
	}
	return token
}

// arenaOutcomes are a race of two's outcomes by seat; nil for an aborted
// race, which counts for nobody.
func arenaOutcomes(res race.Result) []ArenaOutcome {
	switch {
	case res.Outcome == race.OutcomeAborted:
		return nil
	case res.Winner == nil:
		return []ArenaOutcome{ArenaDraw, ArenaDraw}
	case *res.Winner == 0:
		return []ArenaOutcome{ArenaWin, ArenaLoss}
	}
	return []ArenaOutcome{ArenaLoss, ArenaWin}
}

// ParseArenaSchedules reads the server's arena schedules: entries split
// by ";", each "NAME,VARIANT,RACE LIMIT,DURATION,EVERY" with Go durations
// ("Hourly classic,classic,5m,55m,1h"), optionally a sixth field, the
// deals' grade. An entry out of range is refused as the lobby refuses it
// (bad-options naming the range).
func ParseArenaSchedules(s string) ([]ArenaSchedule, error) {
	var out []ArenaSchedule
	for _, entry := range strings.Split(s, ";") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		f := strings.Split(entry, ",")
		if len(f) != 5 && len(f) != 6 {
			return nil, fmt.Errorf("arena %q: want NAME,VARIANT,RACE LIMIT,DURATION,EVERY[,GRADE]", entry)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		var d [3]time.Duration
		for i, text := range f[2:5] {
			v, err := time.ParseDuration(text)
			if err != nil {
				return nil, fmt.Errorf("arena %q: %w", entry, err)
			}
			d[i] = v
		}
		spec := ArenaSpec{Name: f[0], Variant: f[1], TimeLimit: d[0], Duration: d[1]}
		if len(f) == 6 {
			spec.Grade = f[5]
		}
		spec, err := spec.check()
		if err != nil {
			return nil, fmt.Errorf("arena %q: %w", entry, err)
		}
		if d[2] < spec.Duration {
			return nil, fmt.Errorf("arena %q: every %v is shorter than its %v: arenas of one schedule would overlap", entry, d[2], spec.Duration)
		}
		out = append(out, ArenaSchedule{Spec: spec, Every: d[2]})
	}
	return out, nil
}
