package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"sirtommy/lobby"
	"sirtommy/race"
)

// Dailies is the days' boards (lobby.Dailies) in the durable store: one
// row per player's attempt at a day's deal, holding their game once it
// is over. A board is ranked by lobby.DailyEntry.RankKey (lower first),
// ties by player id, as the memory store ranks it.
type Dailies struct {
	db *DB
}

var _ lobby.Dailies = (*Dailies)(nil)

// NewDailies is the days' boards kept in db.
func NewDailies(db *DB) *Dailies { return &Dailies{db: db} }

// Queries of the days' boards.
const (
	insertAttempt = "INSERT INTO daily_entries (day, variant, player, finished, rank_key, entry) VALUES ($1, $2, $3, FALSE, 0, NULL)" +
		" ON CONFLICT (day, variant, player) DO NOTHING"
	// deleteAttempt forgets an attempt, never a finished game.
	deleteAttempt = "DELETE FROM daily_entries WHERE day = $1 AND variant = $2 AND player = $3 AND finished = FALSE"
	selectAttempt = "SELECT COUNT(*) FROM daily_entries WHERE day = $1 AND variant = $2 AND player = $3"
	// finishEntry records a game once: a finished entry stays as it is.
	finishEntry = "INSERT INTO daily_entries (day, variant, player, finished, rank_key, entry) VALUES ($1, $2, $3, TRUE, $4, $5)" +
		" ON CONFLICT (day, variant, player) DO UPDATE SET finished = TRUE, rank_key = excluded.rank_key, entry = excluded.entry" +
		" WHERE daily_entries.finished = FALSE"
	selectBoard = "SELECT entry FROM daily_entries WHERE day = $1 AND variant = $2 AND finished = TRUE" +
		" ORDER BY rank_key, player LIMIT $3"
	countBoard = "SELECT COUNT(*) FROM daily_entries WHERE day = $1 AND variant = $2 AND finished = TRUE"
	selectDay  = "SELECT entry, rank_key FROM daily_entries WHERE day = $1 AND variant = $2 AND player = $3 AND finished = TRUE"
	// countAhead is how many finished entries rank before one with rank
	// key $3 of player $4.
	countAhead = "SELECT COUNT(*) FROM daily_entries WHERE day = $1 AND variant = $2 AND finished = TRUE" +
		" AND (rank_key < $3 OR (rank_key = $3 AND player < $4))"
	selectDays = "SELECT entry FROM daily_entries WHERE player = $1 AND finished = TRUE ORDER BY day DESC, variant LIMIT $2"
)

// Begin records player's one attempt at day's deal in variant; false
// when they made it already (of two callers at once, one only gets true).
func (d *Dailies) Begin(ctx context.Context, day, variant, player string) (bool, error) {
	if err := checkFields([][2]string{{"day", day}, {"variant", variant}, {"player id", player}}); err != nil {
		return false, err
	}
	res, err := d.db.sql.ExecContext(ctx, insertAttempt, day, variant, player)
	if err != nil {
		return false, fmt.Errorf("sqlstore: %s begins %s's %s deal: %w", player, day, variant, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlstore: %s begins %s's %s deal: %w", player, day, variant, err)
	}
	return n == 1, nil
}

// Undo forgets an attempt whose race could not be made. A finished game
// stays: its attempt was made.
func (d *Dailies) Undo(ctx context.Context, day, variant, player string) error {
	if !storable(day, variant, player) {
		return nil
	}
	if _, err := d.db.sql.ExecContext(ctx, deleteAttempt, day, variant, player); err != nil {
		return fmt.Errorf("sqlstore: undo %s's attempt at %s's %s deal: %w", player, day, variant, err)
	}
	return nil
}

// Begun reports whether player has made the day's attempt.
func (d *Dailies) Begun(ctx context.Context, day, variant, player string) (bool, error) {
	if !storable(day, variant, player) {
		return false, nil
	}
	var n int
	if err := d.db.sql.QueryRowContext(ctx, selectAttempt, day, variant, player).Scan(&n); err != nil {
		return false, fmt.Errorf("sqlstore: has %s begun %s's %s deal: %w", player, day, variant, err)
	}
	return n > 0, nil
}

// Finish records a game, once per player and day: the first one stays.
func (d *Dailies) Finish(ctx context.Context, e lobby.DailyEntry) error {
	if err := checkFields([][2]string{{"day", e.Day}, {"variant", e.Variant}, {"player id", e.Player}}); err != nil {
		return err
	}
	e.Rank = 0 // a place on the board, worked out when read
	entry, err := json.Marshal(e)
	if err != nil {
		return race.Errorf(race.CodeInternal, "sqlstore: %s's game of %s cannot be encoded: %v", e.Player, e.Day, err)
	}
	if _, err := d.db.sql.ExecContext(ctx, finishEntry, e.Day, e.Variant, e.Player, e.RankKey(), string(entry)); err != nil {
		return fmt.Errorf("sqlstore: %s's game of %s's %s deal: %w", e.Player, e.Day, e.Variant, err)
	}
	return nil
}

// Board is the day's n best entries, ranked from 1, and how many games
// the day has (finished ones: an attempt still being played is not on
// the board).
func (d *Dailies) Board(ctx context.Context, day, variant string, n int) ([]lobby.DailyEntry, int, error) {
	if !storable(day, variant) {
		return []lobby.DailyEntry{}, 0, nil
	}
	var total int
	if err := d.db.sql.QueryRowContext(ctx, countBoard, day, variant).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("sqlstore: %s's %s board: %w", day, variant, err)
	}
	rows, err := d.db.sql.QueryContext(ctx, selectBoard, day, variant, max(n, 0))
	if err != nil {
		return nil, 0, fmt.Errorf("sqlstore: %s's %s board: %w", day, variant, err)
	}
	board, err := scanEntries(rows)
	if err != nil {
		return nil, 0, fmt.Errorf("sqlstore: %s's %s board: %w", day, variant, err)
	}
	for i := range board {
		board[i].Rank = i + 1
	}
	return board, total, nil
}

// Entry is player's game of the day with its rank: one more than the
// entries that rank before it.
func (d *Dailies) Entry(ctx context.Context, day, variant, player string) (lobby.DailyEntry, bool, error) {
	if !storable(day, variant, player) {
		return lobby.DailyEntry{}, false, nil
	}
	var text string
	var key float64
	err := d.db.sql.QueryRowContext(ctx, selectDay, day, variant, player).Scan(&text, &key)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return lobby.DailyEntry{}, false, nil
	case err != nil:
		return lobby.DailyEntry{}, false, fmt.Errorf("sqlstore: %s's game of %s's %s deal: %w", player, day, variant, err)
	}
	var e lobby.DailyEntry
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		return lobby.DailyEntry{}, false, fmt.Errorf("sqlstore: %s's game of %s's %s deal: %w", player, day, variant, err)
	}
	var ahead int
	if err := d.db.sql.QueryRowContext(ctx, countAhead, day, variant, key, player).Scan(&ahead); err != nil {
		return lobby.DailyEntry{}, false, fmt.Errorf("sqlstore: rank of %s on %s's %s board: %w", player, day, variant, err)
	}
	e.Rank = ahead + 1
	return e, true, nil
}

// History is player's last n games of days' deals, newest day first.
func (d *Dailies) History(ctx context.Context, player string, n int) ([]lobby.DailyEntry, error) {
	if !storable(player) {
		return []lobby.DailyEntry{}, nil
	}
	rows, err := d.db.sql.QueryContext(ctx, selectDays, player, max(n, 0))
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %s's days: %w", player, err)
	}
	h, err := scanEntries(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %s's days: %w", player, err)
	}
	return h, nil
}

func scanEntries(rows *sql.Rows) ([]lobby.DailyEntry, error) {
	defer rows.Close()
	out := []lobby.DailyEntry{}
	for rows.Next() {
		var e lobby.DailyEntry
		if err := scanJSON(rows, &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
