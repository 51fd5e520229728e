package sqlrace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"sirtommy/race"
)

// Records is a race.Records on the live_races and live_results tables,
// written through its Store's writer: a record saved or a result decided
// is committed when the call returns.
type Records struct {
	s     *Store
	clock race.Clock
}

var _ race.Records = (*Records)(nil)

// Records is the records kept beside the store's moves; clock stamps
// them (race.SystemClock{} in a server).
func (s *Store) Records(clock race.Clock) *Records { return &Records{s: s, clock: clock} }

// Save writes the race's record, replacing the one before.
func (r *Records) Save(ctx context.Context, rec *race.Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("race %s: encode record: %w", rec.ID, err)
	}
	o := newOp(opSave, rec.ID)
	o.data, o.state, o.atMs = b, rec.State, r.clock.Now().UnixMilli()
	if err := r.s.w.do(ctx, o); err != nil {
		return fmt.Errorf("race %s: save record: %w", rec.ID, err)
	}
	err = o.err
	release(o)
	if err != nil {
		return fmt.Errorf("race %s: save record: %w", rec.ID, err)
	}
	return nil
}

// Load reads a race's record as last saved.
func (r *Records) Load(ctx context.Context, id string) (*race.Record, bool, error) {
	var b string
	err := r.s.db.QueryRowContext(ctx, `SELECT record FROM live_races WHERE id = $1`, id).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("race %s: load record: %w: %w", id, race.ErrUnavailable, err)
	}
	var rec race.Record
	if err := json.Unmarshal([]byte(b), &rec); err != nil {
		return nil, false, fmt.Errorf("race %s: decode record: %w", id, err)
	}
	return &rec, true, nil
}

// decided is a result as live_results holds it.
type decided struct {
	Result *race.Result `json:"result"`
	State  race.State   `json:"state"`
}

// Decide stores the race's result unless one is stored already, and
// returns the stored one: the writer runs one decision at a time, and the
// table's key keeps the first.
func (r *Records) Decide(ctx context.Context, id string, res *race.Result, state race.State) (*race.Result, race.State, error) {
	b, err := json.Marshal(decided{res, state})
	if err != nil {
		return nil, "", fmt.Errorf("race %s: encode result: %w", id, err)
	}
	o := newOp(opDecide, id)
	o.data, o.atMs = b, r.clock.Now().UnixMilli()
	if err := r.s.w.do(ctx, o); err != nil {
		return nil, "", fmt.Errorf("race %s: decide: %w", id, err)
	}
	err, got := o.err, o.decided
	release(o)
	if err != nil {
		return nil, "", fmt.Errorf("race %s: decide: %w", id, err)
	}
	var d decided
	if err := json.Unmarshal(got, &d); err != nil || d.Result == nil {
		return nil, "", fmt.Errorf("race %s: the stored result is unreadable (%v): %s", id, err, got)
	}
	return d.Result, d.State, nil
}

// Stored is a race as the live tables hold it, for a server starting
// again: its record, with the result decided for it if one was (the
// server may have stopped between the decision and the record's save),
// and when the record was last saved.
type Stored struct {
	Record *race.Record
	Saved  time.Time
}

// List returns every race the live tables hold.
func (r *Records) List(ctx context.Context) ([]Stored, error) {
	rows, err := r.s.db.QueryContext(ctx, `SELECT r.id, r.record, r.updated_ms, d.decided
FROM live_races r LEFT JOIN live_results d ON d.race = r.id ORDER BY r.id`)
	if err != nil {
		return nil, fmt.Errorf("live races: list: %w", err)
	}
	defer rows.Close()
	var out []Stored
	for rows.Next() {
		var id, b string
		var ms int64
		var dec sql.NullString
		if err := rows.Scan(&id, &b, &ms, &dec); err != nil {
			return nil, fmt.Errorf("live races: list: %w", err)
		}
		var rec race.Record
		if err := json.Unmarshal([]byte(b), &rec); err != nil {
			return nil, fmt.Errorf("race %s: decode record: %w", id, err)
		}
		if dec.Valid && !rec.State.Over() {
			var d decided
			if err := json.Unmarshal([]byte(dec.String), &d); err != nil || d.Result == nil {
				return nil, fmt.Errorf("race %s: the stored result is unreadable (%v)", id, err)
			}
			rec.Result, rec.State = d.Result, d.State
		}
		out = append(out, Stored{Record: &rec, Saved: time.UnixMilli(ms)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("live races: list: %w", err)
	}
	return out, nil
}
