package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"sirtommy/lobby"
)

// Mistakes is the players' "My mistakes" (lobby.Mistakes) in the durable
// store: one row per player, race and seat (migration 00005).
type Mistakes struct {
	db *DB
}

var _ lobby.Mistakes = (*Mistakes)(nil)

// NewMistakes is the players' mistakes kept in db.
func NewMistakes(db *DB) *Mistakes { return &Mistakes{db: db} }

// Queries of the mistakes.
const (
	insertMistake = "INSERT INTO mistakes (player, race, seat, position, variant, move, raced_ms, added_ms, solved_ms)" +
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL) ON CONFLICT (player, race, seat) DO NOTHING"
	// solveMistake marks a mistake solved once: the first time stays.
	solveMistake   = "UPDATE mistakes SET solved_ms = $5 WHERE player = $1 AND race = $2 AND seat = $3 AND position = $4 AND solved_ms IS NULL"
	selectMistakes = "SELECT race, seat, position, variant, move, raced_ms, added_ms, solved_ms FROM mistakes WHERE player = $1" +
		" ORDER BY added_ms DESC, race, seat LIMIT $2"
)

// Add keeps m once per race and seat.
func (s *Mistakes) Add(ctx context.Context, m lobby.Mistake) (bool, error) {
	if err := checkFields([][2]string{{"player id", m.Player}, {"race id", m.Race}, {"variant", m.Variant}, {"move", m.Move}}); err != nil {
		return false, err
	}
	res, err := s.db.sql.ExecContext(ctx, insertMistake, m.Player, m.Race, m.Seat, m.Position, m.Variant, m.Move,
		m.RacedAt.UnixMilli(), m.AddedAt.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("sqlstore: %s's mistake in race %s: %w", m.Player, m.Race, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlstore: %s's mistake in race %s: %w", m.Player, m.Race, err)
	}
	return n == 1, nil
}

// Solve marks the mistake solved, once.
func (s *Mistakes) Solve(ctx context.Context, player, race string, seat, position int, t time.Time) (bool, error) {
	if !storable(player, race) {
		return false, nil
	}
	res, err := s.db.sql.ExecContext(ctx, solveMistake, player, race, seat, position, t.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("sqlstore: %s solves their mistake in race %s: %w", player, race, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlstore: %s solves their mistake in race %s: %w", player, race, err)
	}
	return n == 1, nil
}

// List is the player's mistakes, the latest added first.
func (s *Mistakes) List(ctx context.Context, player string, n int) ([]lobby.Mistake, error) {
	out := []lobby.Mistake{}
	if !storable(player) || n == 0 {
		return out, nil
	}
	limit := int64(n)
	if n < 0 {
		limit = math.MaxInt64 // every one, on SQLite and PostgreSQL alike
	}
	rows, err := s.db.sql.QueryContext(ctx, selectMistakes, player, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %s's mistakes: %w", player, err)
	}
	defer rows.Close()
	for rows.Next() {
		m := lobby.Mistake{Player: player}
		var raced, added int64
		var solved sql.NullInt64
		if err := rows.Scan(&m.Race, &m.Seat, &m.Position, &m.Variant, &m.Move, &raced, &added, &solved); err != nil {
			return nil, fmt.Errorf("sqlstore: %s's mistakes: %w", player, err)
		}
		m.RacedAt, m.AddedAt = time.UnixMilli(raced).UTC(), time.UnixMilli(added).UTC()
		if solved.Valid {
			t := time.UnixMilli(solved.Int64).UTC()
			m.SolvedAt = &t
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: %s's mistakes: %w", player, err)
	}
	return out, nil
}
