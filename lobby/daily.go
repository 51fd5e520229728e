package lobby

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sort"
	"strings"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
)

// The day's deal (docs/daily.md): one deal per variant per UTC day, the
// same for everyone and on every instance, its number and salt derived
// from the server's secret and the date. Its commitment is public from
// 00:00 UTC; the deal, the salt and every game played on it are revealed
// when the day ends.

// Error codes of the day's deal (PROTOCOL.md, section 5).
const (
	CodeNoDaily        race.Code = "no-daily"         // this server has no day's deal (no secret to derive it from)
	CodeDailyPlayed    race.Code = "daily-played"     // a second attempt at the day's deal: the message names when the next opens
	CodeNotRevealed    race.Code = "not-revealed"     // the deal of a day not over yet (or to come)
	CodeDailyNotPlayed race.Code = "daily-not-played" // racing the day's leader's ghost before playing the day's deal
	CodeNoLeader       race.Code = "no-leader"        // nobody has finished the day's deal yet
)

// dailyTag starts the Options.Tag of a day's race: "daily:DAY:VARIANT".
const dailyTag = "daily:"

// DayFormat is how a day is named: its UTC date.
const DayFormat = "2006-01-02"

// DailyEntry is one player's game of a day's deal, as its board ranks it.
type DailyEntry struct {
	Day     string        `json:"day"`
	Variant string        `json:"variant"`
	Player  string        `json:"player"`
	Name    string        `json:"name"`
	Race    string        `json:"race"`
	Status  engine.Status `json:"status"`
	Won     bool          `json:"won"`
	Score   int           `json:"score"` // cards on the foundations
	// TimeMs is from the start to the end of the player's game (to the
	// winning move for a win).
	TimeMs int64 `json:"timeMs"`
	// Rank is the entry's place on the day's board, from 1.
	Rank int `json:"rank,omitempty"`
	// Game is the game in notation: shown once the day is revealed.
	Game string `json:"game,omitempty"`
	// Recording is the game with its times, for the leader's ghost; never
	// sent.
	Recording *race.Ghost `json:"recording,omitempty"`
}

// rankKey orders a board: wins by time, then the others by cards on the
// foundations (more first), then time.
func (e DailyEntry) rankKey() float64 {
	if e.Won {
		return float64(e.TimeMs)
	}
	return 1e13 + float64(200-e.Score)*1e10 + float64(e.TimeMs)
}

// RankKey is the entry's score in a sorted board (lower is better).
func (e DailyEntry) RankKey() float64 { return e.rankKey() }

// Dailies keeps the day's boards: who started each day's deal (once), the
// games, and each player's history of days.
type Dailies interface {
	// Begin records player's one attempt at day's deal in variant; false
	// when they have made it already.
	Begin(ctx context.Context, day, variant, player string) (ok bool, err error)
	// Undo forgets an attempt whose race could not be made.
	Undo(ctx context.Context, day, variant, player string) error
	// Begun reports whether player has made the day's attempt.
	Begun(ctx context.Context, day, variant, player string) (bool, error)
	// Finish records a game, once per player and day.
	Finish(ctx context.Context, e DailyEntry) error
	// Board is the day's n best entries, ranked, and how many there are.
	Board(ctx context.Context, day, variant string, n int) ([]DailyEntry, int, error)
	// Entry is player's entry with its rank.
	Entry(ctx context.Context, day, variant, player string) (DailyEntry, bool, error)
	// History is player's last n entries, newest first.
	History(ctx context.Context, player string, n int) ([]DailyEntry, error)
}

// DailyInfo is a day's deal as GET /api/daily shows it.
type DailyInfo struct {
	Variant    string    `json:"variant"`
	Day        string    `json:"day"`
	Commitment string    `json:"commitment"`
	OpensAt    time.Time `json:"opensAt"`
	ClosesAt   time.Time `json:"closesAt"`
	Revealed   bool      `json:"revealed"`
	// Deal and Salt open the commitment once the day is over.
	Deal    string       `json:"deal,omitempty"`
	Salt    string       `json:"salt,omitempty"`
	Players int          `json:"players"`
	Board   []DailyEntry `json:"board"`
	// You is the asking player's entry; Played whether they have made the
	// day's attempt (they may be playing it now).
	You    *DailyEntry `json:"you,omitempty"`
	Played bool        `json:"played"`
}

// DailyBrief is the day's deal on the lobby's front page.
type DailyBrief struct {
	Variant    string    `json:"variant"`
	Day        string    `json:"day"`
	Commitment string    `json:"commitment"`
	ClosesAt   time.Time `json:"closesAt"`
}

// DailyStats are a player's days: how many played and won, the current
// runs of days played and days won in a row (ending today or
// yesterday), and the longest.
type DailyStats struct {
	Played        int          `json:"played"`
	Won           int          `json:"won"`
	Streak        int          `json:"streak"`
	WinStreak     int          `json:"winStreak"`
	BestStreak    int          `json:"bestStreak"`
	BestWinStreak int          `json:"bestWinStreak"`
	History       []DailyEntry `json:"history"`
}

// DayOf is the UTC day of t.
func DayOf(t time.Time) string { return t.UTC().Format(DayFormat) }

// dayStart is the day's 00:00 UTC.
func dayStart(day string) (time.Time, error) {
	t, err := time.Parse(DayFormat, day)
	if err != nil {
		return time.Time{}, race.Errorf(race.CodeBadOptions, "day must be a date like 2026-01-01, not %q", day)
	}
	return t, nil
}

// DailyDeal is day's deal in variant under key: the first 8 bytes of
// HMAC-SHA256(key, "VARIANT/DAY") as the number, the next 16 as the salt,
// so that every instance with the same secret deals the same.
func DailyDeal(key []byte, variant, day string) (deal uint64, salt string) {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(variant + "/" + day))
	sum := m.Sum(nil)
	return binary.LittleEndian.Uint64(sum[:8]), hex.EncodeToString(sum[8:24])
}

// dailyKeyOf derives the day's deals' key from the server's secret, apart
// from the tokens' key.
func dailyKeyOf(secret []byte) []byte {
	if len(secret) == 0 {
		return nil
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("sirtommy daily deal v1"))
	return m.Sum(nil)
}

// today is the UTC day now and when it closes, which is when the next
// day's deal opens and this one's is revealed.
func (l *Lobby) today() (day string, closes time.Time) {
	day = DayOf(l.deps.Clock.Now())
	start, _ := dayStart(day)
	return day, start.Add(24 * time.Hour)
}

func (l *Lobby) dailyCheck(variant string) (string, error) {
	if l.dailyKey == nil {
		return "", race.Errorf(CodeNoDaily, "this server has no day's deal")
	}
	rules, err := engine.Variant(variant)
	if err != nil {
		return "", &race.Error{Code: race.CodeBadOptions, Message: err.Error(), Err: err}
	}
	return rules.Name, nil
}

// Daily is day's deal in variant (day "": today), with its board (n
// best) and player's entry ("": none). A day to come is CodeNotRevealed;
// a day over is revealed: deal, salt and every game.
func (l *Lobby) Daily(ctx context.Context, variant, day, player string, n int) (DailyInfo, error) {
	variant, err := l.dailyCheck(variant)
	if err != nil {
		return DailyInfo{}, err
	}
	now := l.deps.Clock.Now()
	if day == "" {
		day = DayOf(now)
	}
	start, err := dayStart(day)
	if err != nil {
		return DailyInfo{}, err
	}
	if now.Before(start) {
		return DailyInfo{}, race.Errorf(CodeNotRevealed, "the deal of %s is not out yet: it opens at %s", day, start.Format(time.RFC3339))
	}
	if player != "" {
		l.settleRead(ctx, player)
	}
	deal, salt := DailyDeal(l.dailyKey, variant, day)
	in := DailyInfo{Variant: variant, Day: day, Commitment: race.Commitment(deal, salt), OpensAt: start, ClosesAt: start.Add(24 * time.Hour)}
	in.Revealed = !now.Before(in.ClosesAt)
	if in.Revealed {
		in.Deal, in.Salt = formatDeal(deal), salt
	}
	board, total, err := l.deps.Stores.Dailies.Board(ctx, day, variant, n)
	if err != nil {
		return DailyInfo{}, storeFailed("the day's board", err)
	}
	in.Players, in.Board = total, make([]DailyEntry, 0, len(board))
	for _, e := range board {
		in.Board = append(in.Board, e.public(in.Revealed))
	}
	if player != "" {
		if e, ok, err := l.deps.Stores.Dailies.Entry(ctx, day, variant, player); err != nil {
			return DailyInfo{}, storeFailed("your day's game", err)
		} else if ok {
			pe := e.public(in.Revealed)
			in.You = &pe
		}
		if in.Played, err = l.deps.Stores.Dailies.Begun(ctx, day, variant, player); err != nil {
			return DailyInfo{}, storeFailed("your day's game", err)
		}
	}
	return in, nil
}

// public is the entry as it may be shown: its game once revealed, its
// recording never.
func (e DailyEntry) public(revealed bool) DailyEntry {
	e.Recording = nil
	if !revealed {
		e.Game = ""
	}
	return e
}

// DailyReveal is a day's deal opened: CodeNotRevealed until the day ends.
func (l *Lobby) DailyReveal(ctx context.Context, variant, day string) (DailyInfo, error) {
	in, err := l.Daily(ctx, variant, day, "", maxDailyBoard)
	if err != nil {
		return DailyInfo{}, err
	}
	if !in.Revealed {
		return DailyInfo{}, race.Errorf(CodeNotRevealed, "the deal of %s is revealed when the day ends, at %s", in.Day, in.ClosesAt.Format(time.RFC3339))
	}
	return in, nil
}

// maxDailyBoard bounds a board as read at once.
const maxDailyBoard = 1000

// dailyBriefs are today's deals for the lobby's front page.
func (l *Lobby) dailyBriefs() []DailyBrief {
	if l.dailyKey == nil {
		return nil
	}
	day, closes := l.today()
	var out []DailyBrief
	for _, v := range engine.VariantNames() {
		deal, salt := DailyDeal(l.dailyKey, v, day)
		out = append(out, DailyBrief{Variant: v, Day: day, Commitment: race.Commitment(deal, salt), ClosesAt: closes})
	}
	return out
}

// PlayDaily starts this session's player's one attempt at today's deal in
// variant: a solo race on the server's engine with the normal time limit,
// unrated, on the board. A second attempt is CodeDailyPlayed, naming when
// the next day's opens.
func (s *Session) PlayDaily(variant string) error {
	l := s.l
	variant, err := l.dailyCheck(variant)
	if err != nil {
		return err
	}
	who := s.Player()
	day, next := l.today()
	ctx, cancel := opCtx()
	defer cancel()
	if err := l.checkRacing(ctx, who.ID); err != nil {
		return err
	}
	ok, err := l.deps.Stores.Dailies.Begin(ctx, day, variant, who.ID)
	if err != nil {
		return unavailable(err)
	}
	if !ok {
		return race.Errorf(CodeDailyPlayed, "you have played the %s deal of %s; the next opens at %s", variant, day, next.Format(time.RFC3339))
	}
	if l.dropWaiting(s) {
		l.challengesChanged()
	}
	deal, salt := DailyDeal(l.dailyKey, variant, day)
	err = l.start(pairing{
		opts: race.Options{Variant: variant, Deal: deal, DealFixed: true, Salt: salt, Solo: true, Unrated: true,
			SealedUntil: next, Tag: dailyTag + day + ":" + variant},
		via:     ViaDaily,
		players: []PlayerRef{{Name: "", Solo: true}, {ID: who.ID, Name: who.Name}},
		dests:   []dest{{}, {s: s}},
	})
	if err != nil && !race.IsRefusal(err) {
		if uerr := l.deps.Stores.Dailies.Undo(ctx, day, variant, who.ID); uerr != nil {
			l.log.Warn().Err(uerr).Msg("day's attempt not undone")
		}
	}
	return err
}

// RaceDailyLeader races this session's player, who has played today's
// deal in variant, against the day's leader's ghost: unrated and off the
// board (they know the cards already).
func (s *Session) RaceDailyLeader(variant string) error {
	l := s.l
	variant, err := l.dailyCheck(variant)
	if err != nil {
		return err
	}
	who := s.Player()
	day, closes := l.today()
	ctx, cancel := opCtx()
	defer cancel()
	// First, so that the day's game they have just finished is on the
	// board (settle).
	if err := l.checkRacing(ctx, who.ID); err != nil {
		return err
	}
	if _, ok, err := l.deps.Stores.Dailies.Entry(ctx, day, variant, who.ID); err != nil {
		return unavailable(err)
	} else if !ok {
		return race.Errorf(CodeDailyNotPlayed, "play the day's deal first: its leader's ghost is for those who have")
	}
	board, _, err := l.deps.Stores.Dailies.Board(ctx, day, variant, 1)
	if err != nil {
		return unavailable(err)
	}
	if len(board) == 0 || board[0].Recording == nil {
		return race.Errorf(CodeNoLeader, "nobody has finished the day's deal yet")
	}
	lead := board[0]
	if lead.Player == who.ID {
		return race.Errorf(CodeOwnChallenge, "you lead the day: your ghost is for the others")
	}
	deal, _ := DailyDeal(l.dailyKey, variant, day)
	rec := *lead.Recording
	return l.start(pairing{
		opts: race.Options{Variant: variant, Deal: deal, DealFixed: true, Unrated: true,
			SealedUntil: closes, Tag: "daily-ghost:" + day + ":" + variant},
		via:     ViaDailyGhost,
		players: []PlayerRef{{Name: lead.Name, Ghost: true}, {ID: who.ID, Name: who.Name}},
		dests:   []dest{{}, {s: s}},
		ghost:   &rec,
	})
}

// dailyEnded records a finished day's race on the board.
func (l *Lobby) dailyEnded(ctx context.Context, e race.Ended, at time.Time) error {
	parts := strings.SplitN(strings.TrimPrefix(e.Tag, dailyTag), ":", 2)
	if len(parts) != 2 || e.Players[1].Player == "" {
		return nil
	}
	// The race's whole record, moves included although the day's deal is
	// sealed: from the race here, or from the archive when the end is
	// done again by a sweep.
	final, err := l.deps.Races.Final(ctx, e.Race)
	if err != nil {
		return err
	}
	res := e.Result
	ent := DailyEntry{Day: parts[0], Variant: parts[1], Player: e.Players[1].Player, Name: e.Players[1].Name, Race: e.Race,
		Status: res.Statuses[1], Won: res.Statuses[1] == engine.Won, Score: res.Scores[1], Game: res.Games[1]}
	rec := &race.Ghost{}
	for _, m := range final.Moves {
		if m.Seat == 1 {
			rec.Moves = append(rec.Moves, race.GhostMove{Move: m.Move, AtMs: m.AtMs})
			ent.TimeMs = max(ent.TimeMs, m.AtMs)
		}
	}
	if res.Reason == race.ReasonTime {
		ent.TimeMs = max(ent.TimeMs, final.TimeLimit)
	}
	rec.EndMs = ent.TimeMs
	ent.Recording = rec
	return l.deps.Stores.Dailies.Finish(ctx, ent)
}

// dailyStats are player's days from their history.
func (l *Lobby) dailyStats(ctx context.Context, player string, n int) (*DailyStats, error) {
	h, err := l.deps.Stores.Dailies.History(ctx, player, MaxDailyHistory)
	if err != nil || len(h) == 0 {
		return nil, err
	}
	today := DayOf(l.deps.Clock.Now())
	st := &DailyStats{}
	days := map[string]bool{}
	won := map[string]bool{}
	for _, e := range h {
		if !days[e.Day] {
			days[e.Day] = true
			st.Played++
		}
		if e.Won && !won[e.Day] {
			won[e.Day] = true
			st.Won++
		}
	}
	sorted := make([]string, 0, len(days))
	for d := range days {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	run, wrun := 0, 0
	var prev time.Time
	for _, d := range sorted {
		t, _ := dayStart(d)
		if !prev.IsZero() && t.Sub(prev) == 24*time.Hour {
			run++
		} else {
			run = 1
		}
		if won[d] {
			if !prev.IsZero() && t.Sub(prev) == 24*time.Hour && wrun > 0 {
				wrun++
			} else {
				wrun = 1
			}
		} else {
			wrun = 0
		}
		st.BestStreak, st.BestWinStreak = max(st.BestStreak, run), max(st.BestWinStreak, wrun)
		prev = t
	}
	// The current runs end today or yesterday.
	if last := sorted[len(sorted)-1]; last == today || last == prevDay(today) {
		st.Streak, st.WinStreak = run, wrun
	}
	revealedBefore := today
	for i, e := range h {
		if i >= n {
			break
		}
		st.History = append(st.History, e.public(e.Day < revealedBefore))
	}
	return st, nil
}

// MaxDailyHistory bounds the days a player's streaks are counted over: a
// Dailies store keeps at least this many of a player's days.
const MaxDailyHistory = 400

func prevDay(day string) string {
	t, _ := dayStart(day)
	return DayOf(t.Add(-24 * time.Hour))
}
