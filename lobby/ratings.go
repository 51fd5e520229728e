package lobby

import (
	"context"
	"errors"
	"time"

	"sirtommy/lobby/glicko2"
	"sirtommy/race"
)

// PlayerRef names a player in a race record.
type PlayerRef struct {
	ID       string `json:"player,omitempty"` // empty for the computer
	Name     string `json:"name"`
	Computer bool   `json:"computer,omitempty"`
	// Ghost marks a recorded game raced again (a ghost race's other seat).
	Ghost bool `json:"ghost,omitempty"`
	// Solo marks the empty seat of a solo race (the day's deal).
	Solo bool `json:"solo,omitempty"`
}

// Standing is a player's rating and record in one variant; the counts are
// of rated races.
type Standing struct {
	Player  string         `json:"player"`
	Name    string         `json:"name"`
	Variant string         `json:"variant"`
	Rating  glicko2.Rating `json:"rating"`
	Games   int            `json:"games"`
	Wins    int            `json:"wins"`
	Losses  int            `json:"losses"`
	Draws   int            `json:"draws"`
	// Streak is the current run: wins in a row (positive) or losses in a
	// row (negative); a draw ends it. BestStreak is the longest run of wins.
	Streak     int `json:"streak"`
	BestStreak int `json:"bestStreak"`
	// WinPercent is wins per rated race, in percent (draws count half).
	WinPercent float64 `json:"winPercent"`
}

// NewStanding is a player's standing before their first rated race.
func NewStanding(player, name, variant string) Standing {
	return Standing{Player: player, Name: name, Variant: variant, Rating: glicko2.New()}
}

// GameRecord is one finished race made by the lobby, for a player's
// history: a race of two, or a room's race of more (unrated, with its
// ranking: each racer's place, and the field's size is len(Players)).
type GameRecord struct {
	Race    string       `json:"race"`
	Variant string       `json:"variant"`
	At      time.Time    `json:"at"`
	Players []PlayerRef  `json:"players"` // by seat
	Outcome race.Outcome `json:"outcome"` // "win" or "draw"
	Winner  *int         `json:"winner,omitempty"`
	Reason  race.Reason  `json:"reason"`
	Scores  []int        `json:"scores"` // by seat
	Rated   bool         `json:"rated"`
	// Before and After are every seat's rating around a race of two;
	// absent from a race of more (never rated).
	Before []glicko2.Rating `json:"before,omitempty"`
	After  []glicko2.Rating `json:"after,omitempty"`
	// Ranking is every racer's place in a race of more than two.
	Ranking []race.Place `json:"ranking,omitempty"`
}

// RatingAt is seat s's rating in one of a GameRecord's Before and After:
// the zero rating where it holds none (a race of more than two).
func RatingAt(ratings []glicko2.Rating, s int) glicko2.Rating {
	if s < len(ratings) {
		return ratings[s]
	}
	return glicko2.Rating{}
}

// ErrStale is what Save wraps when a standing it was given is no newer
// than the stored one (its Games not above the stored Games): someone else,
// such as another instance sharing the store, saved that player's standing
// since it was read. Nothing is saved then; the caller reads the standings
// again, recomputes and saves anew, so that no update is lost.
var ErrStale = errors.New("lobby: a standing changed since it was read")

// Ratings keeps standings and race histories. The in-memory one is
// memlobby.Ratings, the shared one redislobby.Ratings. One lobby
// serializes its updates, but several instances may share a store, so
// Save refuses stale standings with ErrStale and the lobby retries.
type Ratings interface {
	// Standing is a player's standing in a variant; a player never rated
	// there gets NewStanding.
	Standing(ctx context.Context, variant, player string) (Standing, error)
	// Save stores a finished race and, for its human players, their
	// standings after it, all at once; or nothing, wrapping ErrStale, when
	// a stored standing has as many games as the one given, or more. A race
	// is recorded once: saving one whose id (g.Race) was saved already does
	// nothing and returns nil (an instance that took a race over may end
	// it again after the one before had recorded it).
	Save(ctx context.Context, g GameRecord, after []Standing) error
	// Leaderboard is the n best rated players of a variant, best first.
	Leaderboard(ctx context.Context, variant string, n int) ([]Standing, error)
	// Standings are a player's standings in every variant they played.
	Standings(ctx context.Context, player string) ([]Standing, error)
	// History is a player's last n races, newest first.
	History(ctx context.Context, player string, n int) ([]GameRecord, error)
	// Games is a page of a player's races, newest first: at most n of
	// those older than cursor (from GamesPage.Next; "" for the newest). A
	// cursor this store did not make is refused with CodeBadCursor.
	Games(ctx context.Context, player, cursor string, n int) (GamesPage, error)
	// Changes is every change of a player's rating in a variant, oldest
	// first: one per rated race.
	Changes(ctx context.Context, player, variant string) ([]RatingChange, error)
}

// GamesPage is one page of a player's races.
type GamesPage struct {
	Games []GameRecord `json:"games"`
	// Next is the cursor of the next, older page; empty on the last one.
	Next string `json:"next,omitempty"`
}

// RatingChange is one rated race's change of a player's rating.
type RatingChange struct {
	Race    string         `json:"race"`
	Variant string         `json:"variant"`
	At      time.Time      `json:"at"`
	Before  glicko2.Rating `json:"before"`
	After   glicko2.Rating `json:"after"`
}

// CodeBadCursor refuses a page cursor that the store did not make.
const CodeBadCursor race.Code = "bad-cursor"

// WinPercent is the win percentage of a record, draws counting half.
func WinPercent(wins, draws, games int) float64 {
	if games == 0 {
		return 0
	}
	return 100 * (float64(wins) + float64(draws)/2) / float64(games)
}

// ApplyResult is a standing updated with one rated race's outcome for it:
// score 1 (won), 0.5 (draw) or 0 (lost), and its new rating.
func ApplyResult(s Standing, score float64, after glicko2.Rating) Standing {
	s.Rating = after
	s.Games++
	switch score {
	case glicko2.Win:
		s.Wins++
		s.Streak = max(s.Streak, 0) + 1
	case glicko2.Loss:
		s.Losses++
		s.Streak = min(s.Streak, 0) - 1
	default:
		s.Draws++
		s.Streak = 0
	}
	s.BestStreak = max(s.BestStreak, s.Streak)
	s.WinPercent = WinPercent(s.Wins, s.Draws, s.Games)
	return s
}
