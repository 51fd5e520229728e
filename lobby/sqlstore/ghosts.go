package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
)

// Ghosts is the ghost challenges, the deals each player has seen, the
// runs against ghosts and each player's best game on a deal
// (lobby.Ghosts) in the durable store.
//
// A challenge is kept forever, but it is found (Get, Mine) only until the
// keep it was put with has passed, as in the memory store: the lobby
// refuses to race one past its Expires, and forgets it after its keep.
type Ghosts struct {
	db    *DB
	clock race.Clock
}

var _ lobby.Ghosts = (*Ghosts)(nil)

// NewGhosts is the ghosts kept in db; clock tells when a challenge's keep
// has passed.
func NewGhosts(db *DB, clock race.Clock) *Ghosts { return &Ghosts{db: db, clock: clock} }

// Queries of the ghosts.
const (
	upsertGhost = "INSERT INTO ghosts (id, author, made_ms, keep_ms, record) VALUES ($1, $2, $3, $4, $5)" +
		" ON CONFLICT (id) DO UPDATE SET author = excluded.author, made_ms = excluded.made_ms, keep_ms = excluded.keep_ms, record = excluded.record"
	// A challenge is found while now <= its keep, as the memory store
	// drops one only once a time past its keep has come.
	selectGhost = "SELECT record FROM ghosts WHERE id = $1 AND keep_ms >= $2"
	selectMine  = "SELECT record FROM ghosts WHERE author = $1 AND keep_ms >= $2 ORDER BY made_ms DESC, id"

	insertSeen = "INSERT INTO seen_deals (player, variant, deal) VALUES ($1, $2, $3) ON CONFLICT (player, variant, deal) DO NOTHING"
	selectSeen = "SELECT COUNT(*) FROM seen_deals WHERE player = $1 AND variant = $2 AND deal = $3"

	insertRun = "INSERT INTO ghost_runs (race, ghost, author, player, at_ms, outcome, run) VALUES ($1, $2, $3, $4, $5, $6, $7)" +
		" ON CONFLICT (race) DO NOTHING"
	selectAgainst = "SELECT run FROM ghost_runs WHERE author = $1 ORDER BY at_ms DESC, race DESC LIMIT $2"
	selectRaced   = "SELECT run FROM ghost_runs WHERE player = $1 ORDER BY at_ms DESC, race DESC LIMIT $2"
	selectTally   = "SELECT outcome, COUNT(*) FROM ghost_runs WHERE player = $1 GROUP BY outcome"

	// upsertBest replaces the best game only by one with more cards: the
	// first of equal ones stays.
	upsertBest = "INSERT INTO best_games (player, variant, deal, score, best) VALUES ($1, $2, $3, $4, $5)" +
		" ON CONFLICT (player, variant, deal) DO UPDATE SET score = excluded.score, best = excluded.best WHERE best_games.score < excluded.score"
	selectBest = "SELECT best FROM best_games WHERE player = $1 AND variant = $2 AND deal = $3"
)

// Outcomes of a run, for its challenger (lobby.GhostRun.Outcome).
const (
	runWon  = "won"
	runLost = "lost"
)

// Put stores challenge g, found until keep has passed after g.Made.
func (s *Ghosts) Put(ctx context.Context, g lobby.GhostRecord, keep time.Duration) error {
	if err := checkFields([][2]string{{"ghost id", g.ID}, {"player id", g.Author}}); err != nil {
		return err
	}
	record, err := json.Marshal(g)
	if err != nil {
		return race.Errorf(race.CodeInternal, "sqlstore: ghost %s cannot be encoded: %v", g.ID, err)
	}
	if _, err := s.db.sql.ExecContext(ctx, upsertGhost, g.ID, g.Author, g.Made.UnixMilli(), g.Made.Add(keep).UnixMilli(), string(record)); err != nil {
		return fmt.Errorf("sqlstore: put ghost %s: %w", g.ID, err)
	}
	return nil
}

// Get finds challenge id while it is kept (expired or not).
func (s *Ghosts) Get(ctx context.Context, id string) (lobby.GhostRecord, bool, error) {
	if !storable(id) {
		return lobby.GhostRecord{}, false, nil
	}
	var record string
	err := s.db.sql.QueryRowContext(ctx, selectGhost, id, s.clock.Now().UnixMilli()).Scan(&record)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return lobby.GhostRecord{}, false, nil
	case err != nil:
		return lobby.GhostRecord{}, false, fmt.Errorf("sqlstore: ghost %s: %w", id, err)
	}
	var g lobby.GhostRecord
	if err := json.Unmarshal([]byte(record), &g); err != nil {
		return lobby.GhostRecord{}, false, fmt.Errorf("sqlstore: ghost %s's record: %w", id, err)
	}
	return g, true, nil
}

// Mine lists the challenges player made, newest first, expired ones
// included while they are kept.
func (s *Ghosts) Mine(ctx context.Context, player string) ([]lobby.GhostInfo, error) {
	if !storable(player) {
		return []lobby.GhostInfo{}, nil
	}
	rows, err := s.db.sql.QueryContext(ctx, selectMine, player, s.clock.Now().UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("sqlstore: ghosts of %s: %w", player, err)
	}
	defer rows.Close()
	out := []lobby.GhostInfo{}
	for rows.Next() {
		var g lobby.GhostRecord
		if err := scanJSON(rows, &g); err != nil {
			return nil, fmt.Errorf("sqlstore: ghosts of %s: %w", player, err)
		}
		out = append(out, g.GhostInfo)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: ghosts of %s: %w", player, err)
	}
	return out, nil
}

// See marks that player has seen deal in variant and reports whether they
// had already: of two callers at once, one only gets false (the row's
// primary key decides).
func (s *Ghosts) See(ctx context.Context, variant string, deal uint64, player string) (bool, error) {
	if err := checkFields([][2]string{{"variant", variant}, {"player id", player}}); err != nil {
		return false, err
	}
	res, err := s.db.exec(ctx, insertSeen, player, variant, formatDeal(deal))
	if err != nil {
		return false, fmt.Errorf("sqlstore: %s sees deal %d: %w", player, deal, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlstore: %s sees deal %d: %w", player, deal, err)
	}
	return n == 0, nil
}

// Seen reports whether player has seen deal in variant.
func (s *Ghosts) Seen(ctx context.Context, variant string, deal uint64, player string) (bool, error) {
	if !storable(variant, player) {
		return false, nil
	}
	var n int
	if err := s.db.sql.QueryRowContext(ctx, selectSeen, player, variant, formatDeal(deal)).Scan(&n); err != nil {
		return false, fmt.Errorf("sqlstore: has %s seen deal %d: %w", player, deal, err)
	}
	return n > 0, nil
}

// AddRun records a run once per race: a race ended again after a
// takeover adds nothing.
func (s *Ghosts) AddRun(ctx context.Context, r lobby.GhostRun) error {
	if err := checkFields([][2]string{{"race id", r.Race}, {"ghost id", r.Ghost}, {"player id", r.Author},
		{"player id", r.Player}, {"outcome", r.Outcome}}); err != nil {
		return err
	}
	run, err := json.Marshal(r)
	if err != nil {
		return race.Errorf(race.CodeInternal, "sqlstore: ghost run %s cannot be encoded: %v", r.Race, err)
	}
	if _, err := s.db.sql.ExecContext(ctx, insertRun, r.Race, r.Ghost, r.Author, r.Player, r.At.UnixMilli(), r.Outcome, string(run)); err != nil {
		return fmt.Errorf("sqlstore: ghost run %s: %w", r.Race, err)
	}
	return nil
}

// Runs are the last n runs against player's ghosts and player's own last
// n runs, newest first, and player's record over all their runs.
func (s *Ghosts) Runs(ctx context.Context, player string, n int) (against, raced []lobby.GhostRun, tally lobby.GhostTally, err error) {
	if !storable(player) {
		return []lobby.GhostRun{}, []lobby.GhostRun{}, lobby.GhostTally{}, nil
	}
	n = max(n, 0)
	if against, err = s.runs(ctx, selectAgainst, player, n); err != nil {
		return nil, nil, lobby.GhostTally{}, fmt.Errorf("sqlstore: runs against %s's ghosts: %w", player, err)
	}
	if raced, err = s.runs(ctx, selectRaced, player, n); err != nil {
		return nil, nil, lobby.GhostTally{}, fmt.Errorf("sqlstore: %s's ghost runs: %w", player, err)
	}
	if tally, err = s.tally(ctx, player); err != nil {
		return nil, nil, lobby.GhostTally{}, fmt.Errorf("sqlstore: %s's ghost record: %w", player, err)
	}
	return against, raced, tally, nil
}

func (s *Ghosts) runs(ctx context.Context, query, player string, n int) ([]lobby.GhostRun, error) {
	rows, err := s.db.sql.QueryContext(ctx, query, player, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []lobby.GhostRun{}
	for rows.Next() {
		var r lobby.GhostRun
		if err := scanJSON(rows, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// tally counts player's runs by outcome, as the memory store does: what
// is neither won nor lost is a draw.
func (s *Ghosts) tally(ctx context.Context, player string) (lobby.GhostTally, error) {
	rows, err := s.db.sql.QueryContext(ctx, selectTally, player)
	if err != nil {
		return lobby.GhostTally{}, err
	}
	defer rows.Close()
	var t lobby.GhostTally
	for rows.Next() {
		var outcome string
		var n int
		if err := rows.Scan(&outcome, &n); err != nil {
			return lobby.GhostTally{}, err
		}
		t.Races += n
		switch outcome {
		case runWon:
			t.Wins += n
		case runLost:
			t.Losses += n
		default:
			t.Draws += n
		}
	}
	return t, rows.Err()
}

// KeepBest records b as player's best game on the deal if it has more
// cards than the best so far.
func (s *Ghosts) KeepBest(ctx context.Context, variant string, deal uint64, player string, b lobby.BestGame) error {
	if err := checkFields([][2]string{{"variant", variant}, {"player id", player}}); err != nil {
		return err
	}
	best, err := json.Marshal(b)
	if err != nil {
		return race.Errorf(race.CodeInternal, "sqlstore: best game cannot be encoded: %v", err)
	}
	if _, err := s.db.exec(ctx, upsertBest, player, variant, formatDeal(deal), b.Score, string(best)); err != nil {
		return fmt.Errorf("sqlstore: %s's best game on deal %d: %w", player, deal, err)
	}
	return nil
}

// SeeDeal does See and KeepBest for each of games in one transaction: a
// race's end writes its deal once, not a commit a statement.
func (s *Ghosts) SeeDeal(ctx context.Context, variant string, deal uint64, games []lobby.SeenGame) error {
	bests := make([]string, len(games))
	for i, g := range games {
		if err := checkFields([][2]string{{"variant", variant}, {"player id", g.Player}}); err != nil {
			return err
		}
		b, err := json.Marshal(g.Best)
		if err != nil {
			return race.Errorf(race.CodeInternal, "sqlstore: best game cannot be encoded: %v", err)
		}
		bests[i] = string(b)
	}
	d := formatDeal(deal)
	return s.db.inTx(ctx, "see deal "+d, func(tx *sql.Tx) error {
		for i, g := range games {
			if _, err := s.db.txExec(ctx, tx, insertSeen, g.Player, variant, d); err != nil {
				return fmt.Errorf("%s sees deal %d: %w", g.Player, deal, err)
			}
			if _, err := s.db.txExec(ctx, tx, upsertBest, g.Player, variant, d, g.Best.Score, bests[i]); err != nil {
				return fmt.Errorf("%s's best game on deal %d: %w", g.Player, deal, err)
			}
		}
		return nil
	})
}

var _ lobby.DealSeer = (*Ghosts)(nil)

// Best is player's best game on the deal.
func (s *Ghosts) Best(ctx context.Context, variant string, deal uint64, player string) (lobby.BestGame, bool, error) {
	if !storable(variant, player) {
		return lobby.BestGame{}, false, nil
	}
	var b lobby.BestGame
	err := scanJSON(s.db.sql.QueryRowContext(ctx, selectBest, player, variant, formatDeal(deal)), &b)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return lobby.BestGame{}, false, nil
	case err != nil:
		return lobby.BestGame{}, false, fmt.Errorf("sqlstore: %s's best game on deal %d: %w", player, deal, err)
	}
	return b, true, nil
}

// formatDeal is a deal number as its column holds it: decimal text, as a
// deal may not fit a signed BIGINT.
func formatDeal(d uint64) string { return strconv.FormatUint(d, 10) }

// scanJSON reads a row of one JSON text column into v.
func scanJSON(row rowScanner, v any) error {
	var text string
	if err := row.Scan(&text); err != nil {
		return err
	}
	return json.Unmarshal([]byte(text), v)
}
