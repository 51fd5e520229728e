package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"sirtommy/lobby"
	"sirtommy/race"
)

// Ratings is the lobby's standings, finished races and rating changes
// (lobby.Ratings) in the durable store. Instances sharing one database
// share them: Save refuses a stale standing with lobby.ErrStale and
// records a race once.
type Ratings struct {
	db *DB
}

var _ lobby.Ratings = (*Ratings)(nil)

// NewRatings is the ratings kept in db.
func NewRatings(db *DB) *Ratings { return &Ratings{db: db} }

// Bounds of what one call reads.
const (
	// maxHistory bounds History, a profile's latest races, as the memory
	// store's does; Games pages through all of them.
	maxHistory = 200
	// maxGamesPage bounds a page of Games: a larger n gets a page this
	// long and a Next.
	maxGamesPage = 200
)

// standingColumns are the columns a Standing is read from, in
// scanStanding's order.
const standingColumns = "player, variant, name, rating, deviation, volatility, games, wins, losses, draws, streak, best_streak"

// Queries of the ratings. Each is one constant text run as written on
// both databases.
const (
	selectStanding    = "SELECT " + standingColumns + " FROM standings WHERE variant = $1 AND player = $2"
	selectStandings   = "SELECT " + standingColumns + " FROM standings WHERE player = $1 ORDER BY variant"
	selectLeaderboard = "SELECT " + standingColumns + " FROM standings WHERE variant = $1 AND games > 0 ORDER BY rating DESC, player LIMIT $2"

	insertGame = "INSERT INTO games (race, variant, at_ms, rated, record) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (race) DO NOTHING"
	// upsertStanding writes a standing unless the stored one has as many
	// games or more (stale: no row is changed then).
	upsertStanding = "INSERT INTO standings (" + standingColumns + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)" +
		" ON CONFLICT (player, variant) DO UPDATE SET name = excluded.name, rating = excluded.rating," +
		" deviation = excluded.deviation, volatility = excluded.volatility, games = excluded.games, wins = excluded.wins," +
		" losses = excluded.losses, draws = excluded.draws, streak = excluded.streak, best_streak = excluded.best_streak" +
		" WHERE standings.games < excluded.games"
	insertGamePlayer   = "INSERT INTO game_players (player, race, seat, at_ms) VALUES ($1, $2, $3, $4) ON CONFLICT (player, race) DO NOTHING"
	insertRatingChange = "INSERT INTO rating_changes (player, race, variant, at_ms, before_rating, before_deviation, before_volatility," +
		" after_rating, after_deviation, after_volatility) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (player, race) DO NOTHING"
	// upsertPlayer keeps when a player was first seen, and takes the name
	// of their latest race (an older race saved late leaves both alone).
	upsertPlayer = "INSERT INTO players (id, name, created_ms, seen_ms) VALUES ($1, $2, $3, $3)" +
		" ON CONFLICT (id) DO UPDATE SET name = excluded.name, seen_ms = excluded.seen_ms WHERE players.seen_ms <= excluded.seen_ms"

	// The history queries walk game_players_history: a player's races
	// newest first, ties by race id.
	selectHistory = "SELECT g.record, p.at_ms, p.race FROM game_players p JOIN games g ON g.race = p.race" +
		" WHERE p.player = $1 ORDER BY p.at_ms DESC, p.race DESC LIMIT $2"
	selectGamesAfter = "SELECT g.record, p.at_ms, p.race FROM game_players p JOIN games g ON g.race = p.race" +
		" WHERE p.player = $1 AND (p.at_ms < $2 OR (p.at_ms = $2 AND p.race < $3)) ORDER BY p.at_ms DESC, p.race DESC LIMIT $4"

	// selectChanges reads no column it was given: a profile's chart reads
	// thousands of rows, and each column costs on each.
	selectChanges = "SELECT race, at_ms, before_rating, before_deviation, before_volatility, after_rating, after_deviation, after_volatility" +
		" FROM rating_changes WHERE player = $1 AND variant = $2 ORDER BY at_ms, race"
)

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

func scanStanding(row rowScanner) (lobby.Standing, error) {
	var s lobby.Standing
	err := row.Scan(&s.Player, &s.Variant, &s.Name, &s.Rating.Rating, &s.Rating.Deviation, &s.Rating.Volatility,
		&s.Games, &s.Wins, &s.Losses, &s.Draws, &s.Streak, &s.BestStreak)
	// Derived, so not stored: it cannot disagree with the counts.
	s.WinPercent = lobby.WinPercent(s.Wins, s.Draws, s.Games)
	return s, err
}

// Standing is a player's standing in a variant; one never rated there
// gets lobby.NewStanding.
func (r *Ratings) Standing(ctx context.Context, variant, player string) (lobby.Standing, error) {
	if !storable(variant, player) {
		return lobby.NewStanding(player, "", variant), nil
	}
	if s, ok := r.db.standings.get(variant, player); ok {
		return s, nil
	}
	s, err := scanStanding(r.db.queryRow(ctx, selectStanding, variant, player))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		s = lobby.NewStanding(player, "", variant)
	case err != nil:
		return lobby.Standing{}, fmt.Errorf("sqlstore: standing of %s in %s: %w", player, variant, err)
	}
	r.db.standings.read(s)
	return s, nil
}

// Save stores a finished race and the standings after it in one
// transaction: all of it, or nothing when the race was recorded already
// (nil) or a standing is stale (wrapping lobby.ErrStale).
func (r *Ratings) Save(ctx context.Context, g lobby.GameRecord, after []lobby.Standing) error {
	if err := checkRecord(g, after); err != nil {
		return err
	}
	record, err := json.Marshal(g)
	if err != nil {
		return race.Errorf(race.CodeInternal, "sqlstore: race %s cannot be encoded: %v", g.Race, err)
	}
	at := g.At.UnixMilli()
	// Standings, then players, each in order of their key, so that two
	// saves touching the same players lock their rows in the same order
	// (PostgreSQL) and never wait for each other in a circle.
	after = slices.Clone(after)
	slices.SortFunc(after, func(a, b lobby.Standing) int {
		return cmp.Or(strings.Compare(a.Player, b.Player), strings.Compare(a.Variant, b.Variant))
	})
	humans := make([]lobby.PlayerRef, 0, 2)
	for _, p := range g.Players {
		if p.ID != "" { // the computer, a ghost and a solo race's empty seat have none
			humans = append(humans, p)
		}
	}
	slices.SortFunc(humans, func(a, b lobby.PlayerRef) int { return strings.Compare(a.ID, b.ID) })

	recorded := false
	err = r.db.inTx(ctx, "save race "+g.Race, func(tx *sql.Tx) error {
		res, err := r.db.txExec(ctx, tx, insertGame, g.Race, g.Variant, at, g.Rated, string(record))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			recorded = true
			return errRecorded // the race was recorded already: nothing to do
		}
		for _, s := range after {
			res, err := r.db.txExec(ctx, tx, upsertStanding, s.Player, s.Variant, s.Name, s.Rating.Rating, s.Rating.Deviation, s.Rating.Volatility,
				s.Games, s.Wins, s.Losses, s.Draws, s.Streak, s.BestStreak)
			if err != nil {
				return fmt.Errorf("standing of %s in %s: %w", s.Player, s.Variant, err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				return fmt.Errorf("standing of %s in %s with %d games: the stored one has as many or more: %w", s.Player, s.Variant, s.Games, lobby.ErrStale)
			}
		}
		for seat, p := range g.Players {
			if p.ID == "" {
				continue
			}
			if _, err := r.db.txExec(ctx, tx, insertGamePlayer, p.ID, g.Race, seat, at); err != nil {
				return fmt.Errorf("history of %s: %w", p.ID, err)
			}
			if !g.Rated {
				continue
			}
			b, a := lobby.RatingAt(g.Before, seat), lobby.RatingAt(g.After, seat)
			if _, err := r.db.txExec(ctx, tx, insertRatingChange, p.ID, g.Race, g.Variant, at,
				b.Rating, b.Deviation, b.Volatility, a.Rating, a.Deviation, a.Volatility); err != nil {
				return fmt.Errorf("rating change of %s: %w", p.ID, err)
			}
		}
		for _, p := range humans {
			if _, err := r.db.txExec(ctx, tx, upsertPlayer, p.ID, p.Name, at); err != nil {
				return fmt.Errorf("player %s: %w", p.ID, err)
			}
		}
		return nil
	})
	if err != nil || recorded {
		// Not committed by this Save (a commit that failed may still have
		// reached the file): read again next time.
		r.db.standings.forget(after)
		return err
	}
	r.db.standings.saved(after)
	return nil
}

// errRecorded ends Save's transaction when the race is in the store
// already: rolled back, and no error for the caller.
var errRecorded = errors.New("sqlstore: race recorded already")

// inTx runs f in a transaction and commits it; an error from f rolls it
// back. errRecorded rolls back and returns nil; other errors are wrapped
// with what (errors.Is still finds lobby.ErrStale).
func (db *DB) inTx(ctx context.Context, what string, f func(tx *sql.Tx) error) error {
	tx, release, err := db.begin(ctx)
	if err != nil {
		return fmt.Errorf("sqlstore: %s: begin: %w", what, err)
	}
	defer release()
	if err := f(tx); err != nil {
		rerr := tx.Rollback()
		switch {
		case errors.Is(err, errRecorded) && rerr == nil:
			return nil
		case errors.Is(err, errRecorded):
			return fmt.Errorf("sqlstore: %s: roll back: %w", what, rerr)
		}
		return fmt.Errorf("sqlstore: %s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: %s: commit: %w", what, err)
	}
	return nil
}

// checkRecord refuses a race whose ids, variant or names cannot be
// stored in plain text columns (checkText): the lobby checks names and
// makes ids, so one such is a bug upstream, refused whole with a race
// code, as retrying would not help.
func checkRecord(g lobby.GameRecord, after []lobby.Standing) error {
	fields := [][2]string{{"race id", g.Race}, {"variant", g.Variant}}
	for _, p := range g.Players {
		if p.ID != "" {
			fields = append(fields, [2]string{"player id", p.ID}, [2]string{"player name", p.Name})
		}
	}
	for _, s := range after {
		fields = append(fields, [2]string{"player id", s.Player}, [2]string{"variant", s.Variant}, [2]string{"player name", s.Name})
	}
	return checkFields(fields)
}

// checkText refuses a value for a plain text column that it cannot hold
// on both databases (PostgreSQL's TEXT holds no NUL byte, and only
// UTF-8): it refuses it on SQLite too, so that both behave alike.
func checkText(what, s string) error {
	if !storable(s) {
		return race.Errorf(race.CodeInternal, "sqlstore: a %s (%.40q) holds a NUL byte or is not UTF-8: it cannot be stored, nothing was", what, s)
	}
	return nil
}

// storable reports whether every value can be held by a plain text
// column. A lookup by a value that cannot finds nothing, without asking
// the database (which would fail on it): nothing was stored under it.
func storable(values ...string) bool {
	for _, s := range values {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return false
		}
	}
	return true
}

// checkFields checks values bound for plain text columns (checkText):
// each is a pair of what it is and the value.
func checkFields(fields [][2]string) error {
	for _, f := range fields {
		if err := checkText(f[0], f[1]); err != nil {
			return err
		}
	}
	return nil
}

// Leaderboard is the n best rated players of a variant (all of them when
// n < 0), best first, ties by player id.
func (r *Ratings) Leaderboard(ctx context.Context, variant string, n int) ([]lobby.Standing, error) {
	if !storable(variant) {
		return []lobby.Standing{}, nil
	}
	limit := int64(n)
	if n < 0 {
		// LIMIT -1 is "all" on SQLite but an error on PostgreSQL; this is
		// all on both.
		limit = math.MaxInt64
	}
	rows, err := r.db.sql.QueryContext(ctx, selectLeaderboard, variant, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: leaderboard of %s: %w", variant, err)
	}
	out, err := scanStandings(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: leaderboard of %s: %w", variant, err)
	}
	return out, nil
}

// Standings are a player's standings in every variant they played, by
// variant.
func (r *Ratings) Standings(ctx context.Context, player string) ([]lobby.Standing, error) {
	if !storable(player) {
		return []lobby.Standing{}, nil
	}
	rows, err := r.db.sql.QueryContext(ctx, selectStandings, player)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: standings of %s: %w", player, err)
	}
	out, err := scanStandings(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: standings of %s: %w", player, err)
	}
	return out, nil
}

func scanStandings(rows *sql.Rows) ([]lobby.Standing, error) {
	defer rows.Close()
	out := []lobby.Standing{}
	for rows.Next() {
		s, err := scanStanding(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// History is a player's last n races (at most maxHistory), newest first.
func (r *Ratings) History(ctx context.Context, player string, n int) ([]lobby.GameRecord, error) {
	games, _, err := r.games(ctx, player, min(max(n, 0), maxHistory), nil)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: history of %s: %w", player, err)
	}
	return games, nil
}

// Games is a page of a player's races, newest first: at most n (and at
// most maxGamesPage) older than cursor. The cursor is the last race's
// time and id, so a page does not shift when newer races are saved.
func (r *Ratings) Games(ctx context.Context, player, cursor string, n int) (lobby.GamesPage, error) {
	var from *gamesCursor
	if cursor != "" {
		c, ok := parseGamesCursor(cursor)
		if !ok {
			return lobby.GamesPage{}, race.Errorf(lobby.CodeBadCursor, "%.40q is not a cursor of this server's", cursor)
		}
		from = &c
	}
	n = min(max(n, 0), maxGamesPage)
	if n == 0 {
		return lobby.GamesPage{Games: []lobby.GameRecord{}}, nil
	}
	// One more than the page tells whether there is a next one, so that
	// no Next leads to an empty page.
	games, last, err := r.games(ctx, player, n+1, from)
	if err != nil {
		return lobby.GamesPage{}, fmt.Errorf("sqlstore: games of %s: %w", player, err)
	}
	page := lobby.GamesPage{Games: games}
	if len(games) > n {
		page.Games = games[:n]
		page.Next = last[n-1].String()
	}
	return page, nil
}

// games reads up to n of player's races older than from (from the
// newest when from is nil), newest first, with each one's cursor.
func (r *Ratings) games(ctx context.Context, player string, n int, from *gamesCursor) ([]lobby.GameRecord, []gamesCursor, error) {
	out, at := []lobby.GameRecord{}, []gamesCursor{}
	if n == 0 || !storable(player) {
		return out, at, nil
	}
	var rows *sql.Rows
	var err error
	if from == nil {
		rows, err = r.db.sql.QueryContext(ctx, selectHistory, player, n)
	} else {
		rows, err = r.db.sql.QueryContext(ctx, selectGamesAfter, player, from.atMs, from.race, n)
	}
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var record string
		var c gamesCursor
		if err := rows.Scan(&record, &c.atMs, &c.race); err != nil {
			return nil, nil, err
		}
		var g lobby.GameRecord
		if err := json.Unmarshal([]byte(record), &g); err != nil {
			return nil, nil, fmt.Errorf("race %s's record: %w", c.race, err)
		}
		out, at = append(out, g), append(at, c)
	}
	return out, at, rows.Err()
}

// gamesCursor is a position in a player's races: the last one a page
// showed.
type gamesCursor struct {
	atMs int64
	race string
}

// String is the cursor as GamesPage.Next: "AT_MS:RACE", base64url so that
// it is opaque and fits in a URL.
func (c gamesCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.atMs, 10) + ":" + c.race))
}

// parseGamesCursor reads a cursor that String made.
func parseGamesCursor(s string) (gamesCursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return gamesCursor{}, false
	}
	at, id, ok := strings.Cut(string(b), ":")
	if !ok || checkText("race id", id) != nil {
		return gamesCursor{}, false
	}
	ms, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return gamesCursor{}, false
	}
	return gamesCursor{atMs: ms, race: id}, true
}

// Changes is every change of a player's rating in a variant, oldest
// first: one per rated race.
func (r *Ratings) Changes(ctx context.Context, player, variant string) ([]lobby.RatingChange, error) {
	if !storable(player, variant) {
		return []lobby.RatingChange{}, nil
	}
	rows, err := r.db.sql.QueryContext(ctx, selectChanges, player, variant)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: rating changes of %s in %s: %w", player, variant, err)
	}
	defer rows.Close()
	out := []lobby.RatingChange{}
	for rows.Next() {
		c := lobby.RatingChange{Variant: variant}
		var at int64
		if err := rows.Scan(&c.Race, &at, &c.Before.Rating, &c.Before.Deviation, &c.Before.Volatility,
			&c.After.Rating, &c.After.Deviation, &c.After.Volatility); err != nil {
			return nil, fmt.Errorf("sqlstore: rating changes of %s in %s: %w", player, variant, err)
		}
		c.At = time.UnixMilli(at).UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: rating changes of %s in %s: %w", player, variant, err)
	}
	return out, nil
}
