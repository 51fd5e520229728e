package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"sirtommy/race"
)

// Archive is the race archive (race.Archive) in the durable store: every
// finished race, kept forever, one row of the races table each. The
// record (race.Archived) is JSON in finished; the columns beside it are
// what the archive is searched by: its variant, when it ended, and
// whether the lobby followed its end up. Instances sharing one database
// share it: a race is stored once, by whichever puts it first.
type Archive struct {
	db *DB
}

var _ race.Archive = (*Archive)(nil)

// NewArchive is the race archive kept in db.
func NewArchive(db *DB) *Archive { return &Archive{db: db} }

// Queries of the archive, each one text run as written on both databases.
const (
	insertArchived = "INSERT INTO races (id, variant, finished_ms, followed, finished) VALUES ($1, $2, $3, $4, $5)" +
		" ON CONFLICT (id) DO NOTHING"
	selectArchived   = "SELECT followed, finished FROM races WHERE id = $1"
	selectUnfollowed = "SELECT followed, finished FROM races WHERE followed = FALSE AND finished_ms < $1" +
		" ORDER BY finished_ms, id LIMIT $2"
	updateFollowed = "UPDATE races SET followed = TRUE WHERE id = $1 AND followed = FALSE"
)

// Put stores a once: a race stored already is left as it is.
func (s *Archive) Put(ctx context.Context, a race.Archived) error {
	// Check keeps NUL bytes out of the plain columns (id, variant), which
	// PostgreSQL's TEXT cannot hold; the JSON escapes them.
	if err := a.Check(); err != nil {
		return err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("archive race %s: encode: %w", a.Info.Race, err)
	}
	if _, err := s.db.exec(ctx, insertArchived, a.Info.Race, a.Info.Variant, a.EndedAt.UnixMilli(), a.Followed, string(b)); err != nil {
		return fmt.Errorf("archive race %s: %w", a.Info.Race, err)
	}
	return nil
}

// Get finds an archived race.
func (s *Archive) Get(ctx context.Context, id string) (race.Archived, bool, error) {
	a, err := scanArchived(s.db.sql.QueryRowContext(ctx, selectArchived, id))
	if errors.Is(err, sql.ErrNoRows) {
		return race.Archived{}, false, nil
	}
	if err != nil {
		return race.Archived{}, false, fmt.Errorf("archived race %s: %w", id, err)
	}
	return a, true, nil
}

// Unfollowed lists at most n races not followed that ended before
// before, oldest first.
func (s *Archive) Unfollowed(ctx context.Context, before time.Time, n int) ([]race.Archived, error) {
	if err := race.CheckBatch(n); err != nil {
		return nil, err
	}
	rows, err := s.db.sql.QueryContext(ctx, selectUnfollowed, before.UnixMilli(), n)
	if err != nil {
		return nil, fmt.Errorf("unfollowed races: %w", err)
	}
	defer rows.Close()
	var out []race.Archived
	for rows.Next() {
		a, err := scanArchived(rows)
		if err != nil {
			return nil, fmt.Errorf("unfollowed races: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("unfollowed races: %w", err)
	}
	return out, nil
}

// Followed marks race id followed; a race not stored is not marked.
func (s *Archive) Followed(ctx context.Context, id string) error {
	if _, err := s.db.exec(ctx, updateFollowed, id); err != nil {
		return fmt.Errorf("archived race %s: mark followed: %w", id, err)
	}
	return nil
}

// scanArchived reads a row of followed and finished.
func scanArchived(row interface{ Scan(...any) error }) (race.Archived, error) {
	var followed bool
	var finished string
	if err := row.Scan(&followed, &finished); err != nil {
		return race.Archived{}, err
	}
	var a race.Archived
	if err := json.Unmarshal([]byte(finished), &a); err != nil {
		return race.Archived{}, fmt.Errorf("decode: %w", err)
	}
	a.Followed = followed
	return a, nil
}
