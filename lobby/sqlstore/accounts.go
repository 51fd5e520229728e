package sqlstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"sirtommy/lobby/account"
	"sirtommy/race"
)

// Accounts is account.Store in the durable store (migration 00003):
// every instance of a fleet sees the same accounts, passkeys and sessions.
// Uniqueness (usernames in any case, one account a player, a passkey
// once) is the database's, so that racing instances cannot both win;
// counters and recovery codes move by compare-and-set.
type Accounts struct{ db *DB }

var _ account.Store = (*Accounts)(nil)

// NewAccounts is the accounts kept in db.
func NewAccounts(db *DB) *Accounts { return &Accounts{db: db} }

// Queries of the accounts.
const (
	insertAccount = "INSERT INTO accounts (player, username, username_key, recovery_hash, created_ms) VALUES ($1, $2, $3, $4, $5)" +
		" ON CONFLICT DO NOTHING"
	selectAccountByPlayer = "SELECT player, username, created_ms FROM accounts WHERE player = $1"
	selectAccountByKey    = "SELECT player, username, created_ms FROM accounts WHERE username_key = $1"
	// lockAccount takes the account's row lock for the transaction (a
	// no-op write: PostgreSQL locks the row; SQLite's transactions take
	// the whole database anyway), so that checks of its passkeys and
	// tokens stay true until the commit.
	lockAccount = "UPDATE accounts SET player = player WHERE player = $1"

	insertPasskey = "INSERT INTO passkeys (id, player, data, sign_count, added_ms, used_ms) VALUES ($1, $2, $3, $4, $5, 0)" +
		" ON CONFLICT (id) DO NOTHING"
	selectPasskey      = "SELECT id, player, data, sign_count, added_ms, used_ms FROM passkeys WHERE id = $1"
	selectPasskeys     = "SELECT id, player, data, sign_count, added_ms, used_ms FROM passkeys WHERE player = $1 ORDER BY added_ms, id"
	countPasskeys      = "SELECT COUNT(*) FROM passkeys WHERE player = $1"
	deletePasskey      = "DELETE FROM passkeys WHERE id = $1 AND player = $2"
	usePasskey         = "UPDATE passkeys SET sign_count = $1, used_ms = $2 WHERE id = $3 AND sign_count = $4"
	spendRecovery      = "UPDATE accounts SET recovery_hash = $1 WHERE player = $2 AND recovery_hash = $3"
	selectRecoveryHash = "SELECT recovery_hash FROM accounts WHERE player = $1"

	insertChallenge = "INSERT INTO passkey_challenges (challenge, kind, player, username, recovery, data, expires_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)"
	takeChallenge   = "DELETE FROM passkey_challenges WHERE challenge = $1 RETURNING kind, player, username, recovery, data, expires_ms"

	insertSession  = "INSERT INTO sessions (hash, player, created_ms, expires_ms) VALUES ($1, $2, $3, $4)"
	selectSession  = "SELECT player, created_ms, expires_ms FROM sessions WHERE hash = $1"
	deleteSession  = "DELETE FROM sessions WHERE hash = $1"
	deleteSessions = "DELETE FROM sessions WHERE player = $1"

	insertToken  = "INSERT INTO api_tokens (hash, id, player, label, created_ms) VALUES ($1, $2, $3, $4, $5)"
	countTokens  = "SELECT COUNT(*) FROM api_tokens WHERE player = $1"
	selectTokens = "SELECT hash, id, player, label, created_ms FROM api_tokens WHERE player = $1 ORDER BY created_ms, id"
	selectToken  = "SELECT hash, id, player, label, created_ms FROM api_tokens WHERE hash = $1"
	deleteToken  = "DELETE FROM api_tokens WHERE player = $1 AND id = $2"

	sweepChallenges = "DELETE FROM passkey_challenges WHERE expires_ms <= $1"
	sweepSessions   = "DELETE FROM sessions WHERE expires_ms <= $1"
)

func ms(t time.Time) int64        { return t.UnixMilli() }
func fromMS(v int64) time.Time    { return time.UnixMilli(v).UTC() }
func credID(id []byte) string     { return base64.RawURLEncoding.EncodeToString(id) }
func affected(r sql.Result) int64 { n, _ := r.RowsAffected(); return n }

// Create implements account.Store.
func (s *Accounts) Create(ctx context.Context, a account.Account, p account.Passkey, recoveryHash string) error {
	return s.db.inTx(ctx, "create account "+a.Player, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, insertAccount, a.Player, a.Username, account.Key(a.Username), recoveryHash, ms(a.Created))
		if err != nil {
			return err
		}
		if affected(r) == 0 {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM accounts WHERE player = $1", a.Player).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return account.ErrAlreadyKept(a.Player)
			}
			return account.ErrTaken(a.Username)
		}
		return addPasskey(ctx, tx, p)
	})
}

// addPasskey inserts p in tx, refusing one stored already.
func addPasskey(ctx context.Context, tx *sql.Tx, p account.Passkey) error {
	r, err := tx.ExecContext(ctx, insertPasskey, credID(p.ID), p.Player, string(p.Data), int64(p.SignCount), ms(p.Added))
	if err != nil {
		return err
	}
	if affected(r) == 0 {
		return account.ErrPasskeyExists()
	}
	return nil
}

func (s *Accounts) accountBy(ctx context.Context, q, arg, who string) (account.Account, error) {
	var a account.Account
	var created int64
	err := s.db.sql.QueryRowContext(ctx, q, arg).Scan(&a.Player, &a.Username, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return account.Account{}, account.ErrNoAccount(who)
	}
	if err != nil {
		return account.Account{}, fmt.Errorf("sqlstore: account %s: %w", who, err)
	}
	a.Created = fromMS(created)
	return a, nil
}

// ByPlayer implements account.Store.
func (s *Accounts) ByPlayer(ctx context.Context, player string) (account.Account, error) {
	return s.accountBy(ctx, selectAccountByPlayer, player, player)
}

// ByUsername implements account.Store.
func (s *Accounts) ByUsername(ctx context.Context, username string) (account.Account, error) {
	return s.accountBy(ctx, selectAccountByKey, account.Key(username), username)
}

// KeptAmong implements account.Store: one query, the players as
// parameters.
func (s *Accounts) KeptAmong(ctx context.Context, players []string) (map[string]bool, error) {
	out := make(map[string]bool, len(players))
	if len(players) == 0 {
		return out, nil
	}
	q := make([]byte, 0, 64+4*len(players))
	q = append(q, "SELECT player FROM accounts WHERE player IN ("...)
	args := make([]any, len(players))
	for i, p := range players {
		if i > 0 {
			q = append(q, ", "...)
		}
		q = fmt.Appendf(q, "$%d", i+1)
		args[i] = p
	}
	q = append(q, ')')
	rows, err := s.db.sql.QueryContext(ctx, string(q), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: accounts among players: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("sqlstore: accounts among players: %w", err)
		}
		out[p] = true
	}
	return out, rows.Err()
}

// scanner is a row or rows.
type scanner interface{ Scan(dest ...any) error }

func scanPasskey(r scanner) (account.Passkey, error) {
	var p account.Passkey
	var id, data string
	var count, added, used int64
	if err := r.Scan(&id, &p.Player, &data, &count, &added, &used); err != nil {
		return p, err
	}
	raw, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil {
		return p, fmt.Errorf("passkey id %q: %w", id, err)
	}
	p.ID, p.Data, p.SignCount, p.Added = raw, []byte(data), uint32(count), fromMS(added)
	if used != 0 {
		p.LastUsed = fromMS(used)
	}
	return p, nil
}

// Passkey implements account.Store.
func (s *Accounts) Passkey(ctx context.Context, id []byte) (account.Passkey, error) {
	p, err := scanPasskey(s.db.sql.QueryRowContext(ctx, selectPasskey, credID(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return p, account.ErrUnknownCredential()
	}
	if err != nil {
		return p, fmt.Errorf("sqlstore: passkey: %w", err)
	}
	return p, nil
}

// Passkeys implements account.Store.
func (s *Accounts) Passkeys(ctx context.Context, player string) ([]account.Passkey, error) {
	rows, err := s.db.sql.QueryContext(ctx, selectPasskeys, player)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: passkeys of %s: %w", player, err)
	}
	defer rows.Close()
	var out []account.Passkey
	for rows.Next() {
		p, err := scanPasskey(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: passkeys of %s: %w", player, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: passkeys of %s: %w", player, err)
	}
	return out, nil
}

// lock takes player's account row in tx (account.ErrNoAccount if none).
func lock(ctx context.Context, tx *sql.Tx, player string) error {
	r, err := tx.ExecContext(ctx, lockAccount, player)
	if err != nil {
		return err
	}
	if affected(r) == 0 {
		return account.ErrNoAccount(player)
	}
	return nil
}

// AddPasskey implements account.Store.
func (s *Accounts) AddPasskey(ctx context.Context, p account.Passkey) error {
	return s.db.inTx(ctx, "add passkey of "+p.Player, func(tx *sql.Tx) error {
		if err := lock(ctx, tx, p.Player); err != nil {
			return err
		}
		return addPasskey(ctx, tx, p)
	})
}

// RemovePasskey implements account.Store.
func (s *Accounts) RemovePasskey(ctx context.Context, player string, id []byte) error {
	return s.db.inTx(ctx, "remove passkey of "+player, func(tx *sql.Tx) error {
		if err := lock(ctx, tx, player); err != nil {
			if race.ErrorCode(err) == account.CodeNoSuchAccount {
				return account.ErrNoPasskey()
			}
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, countPasskeys, player).Scan(&n); err != nil {
			return err
		}
		var owner string
		err := tx.QueryRowContext(ctx, "SELECT player FROM passkeys WHERE id = $1", credID(id)).Scan(&owner)
		switch {
		case errors.Is(err, sql.ErrNoRows) || err == nil && owner != player:
			return account.ErrNoPasskey()
		case err != nil:
			return err
		case n <= 1:
			return account.ErrLastPasskey()
		}
		_, err = tx.ExecContext(ctx, deletePasskey, credID(id), player)
		return err
	})
}

// UsePasskey implements account.Store.
func (s *Accounts) UsePasskey(ctx context.Context, id []byte, old, count uint32, at time.Time) error {
	r, err := s.db.sql.ExecContext(ctx, usePasskey, int64(count), ms(at), credID(id), int64(old))
	if err != nil {
		return fmt.Errorf("sqlstore: use passkey: %w", err)
	}
	if affected(r) == 1 {
		return nil
	}
	if _, err := s.Passkey(ctx, id); err != nil {
		return err
	}
	return account.ErrCounterRace()
}

// SpendRecovery implements account.Store.
func (s *Accounts) SpendRecovery(ctx context.Context, player, old, fresh string, p account.Passkey) error {
	return s.db.inTx(ctx, "spend recovery of "+player, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, spendRecovery, fresh, player, old)
		if err != nil {
			return err
		}
		if affected(r) == 0 {
			return account.ErrRecovery()
		}
		return addPasskey(ctx, tx, p)
	})
}

// RecoveryMatches implements account.Store.
func (s *Accounts) RecoveryMatches(ctx context.Context, player, hash string) (bool, error) {
	var h string
	err := s.db.sql.QueryRowContext(ctx, selectRecoveryHash, player).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlstore: recovery of %s: %w", player, err)
	}
	return h == hash, nil
}

// PutChallenge implements account.Store.
func (s *Accounts) PutChallenge(ctx context.Context, c account.Challenge) error {
	if _, err := s.db.sql.ExecContext(ctx, insertChallenge, c.Key, string(c.Kind), c.Player, c.Username, c.Recovery, string(c.Data), ms(c.Expires)); err != nil {
		return fmt.Errorf("sqlstore: put challenge: %w", err)
	}
	return nil
}

// TakeChallenge implements account.Store.
func (s *Accounts) TakeChallenge(ctx context.Context, key string, now time.Time) (account.Challenge, error) {
	c := account.Challenge{Key: key}
	var kind, data string
	var expires int64
	err := s.db.sql.QueryRowContext(ctx, takeChallenge, key).Scan(&kind, &c.Player, &c.Username, &c.Recovery, &data, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return account.Challenge{}, account.ErrChallenge()
	}
	if err != nil {
		return account.Challenge{}, fmt.Errorf("sqlstore: take challenge: %w", err)
	}
	c.Kind, c.Data, c.Expires = account.Ceremony(kind), []byte(data), fromMS(expires)
	if !now.Before(c.Expires) {
		return account.Challenge{}, account.ErrChallenge()
	}
	return c, nil
}

// PutSession implements account.Store.
func (s *Accounts) PutSession(ctx context.Context, ss account.Session) error {
	if _, err := s.db.sql.ExecContext(ctx, insertSession, ss.Hash, ss.Player, ms(ss.Created), ms(ss.Expires)); err != nil {
		return fmt.Errorf("sqlstore: put session: %w", err)
	}
	return nil
}

// Session implements account.Store.
func (s *Accounts) Session(ctx context.Context, hash string, now time.Time) (account.Session, error) {
	ss := account.Session{Hash: hash}
	var created, expires int64
	err := s.db.sql.QueryRowContext(ctx, selectSession, hash).Scan(&ss.Player, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return account.Session{}, account.ErrSignIn()
	}
	if err != nil {
		return account.Session{}, fmt.Errorf("sqlstore: session: %w", err)
	}
	ss.Created, ss.Expires = fromMS(created), fromMS(expires)
	if !now.Before(ss.Expires) {
		return account.Session{}, account.ErrSignIn()
	}
	return ss, nil
}

// DeleteSession implements account.Store.
func (s *Accounts) DeleteSession(ctx context.Context, hash string) error {
	if _, err := s.db.sql.ExecContext(ctx, deleteSession, hash); err != nil {
		return fmt.Errorf("sqlstore: delete session: %w", err)
	}
	return nil
}

// DeleteSessions implements account.Store.
func (s *Accounts) DeleteSessions(ctx context.Context, player string) error {
	if _, err := s.db.sql.ExecContext(ctx, deleteSessions, player); err != nil {
		return fmt.Errorf("sqlstore: delete sessions of %s: %w", player, err)
	}
	return nil
}

// PutToken implements account.Store.
func (s *Accounts) PutToken(ctx context.Context, t account.APIToken, max int) error {
	return s.db.inTx(ctx, "put token of "+t.Player, func(tx *sql.Tx) error {
		if err := lock(ctx, tx, t.Player); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, countTokens, t.Player).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return account.ErrTooManyTokens(max)
		}
		_, err := tx.ExecContext(ctx, insertToken, t.Hash, t.ID, t.Player, t.Label, ms(t.Created))
		return err
	})
}

func scanToken(r scanner) (account.APIToken, error) {
	var t account.APIToken
	var created int64
	err := r.Scan(&t.Hash, &t.ID, &t.Player, &t.Label, &created)
	t.Created = fromMS(created)
	return t, err
}

// Tokens implements account.Store.
func (s *Accounts) Tokens(ctx context.Context, player string) ([]account.APIToken, error) {
	rows, err := s.db.sql.QueryContext(ctx, selectTokens, player)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: tokens of %s: %w", player, err)
	}
	defer rows.Close()
	out := []account.APIToken{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: tokens of %s: %w", player, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: tokens of %s: %w", player, err)
	}
	return out, nil
}

// TokenByHash implements account.Store.
func (s *Accounts) TokenByHash(ctx context.Context, hash string) (account.APIToken, error) {
	t, err := scanToken(s.db.sql.QueryRowContext(ctx, selectToken, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return account.APIToken{}, account.ErrAPIToken()
	}
	if err != nil {
		return account.APIToken{}, fmt.Errorf("sqlstore: token: %w", err)
	}
	return t, nil
}

// RevokeToken implements account.Store.
func (s *Accounts) RevokeToken(ctx context.Context, player, id string) error {
	r, err := s.db.sql.ExecContext(ctx, deleteToken, player, id)
	if err != nil {
		return fmt.Errorf("sqlstore: revoke token: %w", err)
	}
	if affected(r) == 0 {
		return account.ErrNoToken(id)
	}
	return nil
}

// Sweep implements account.Store.
func (s *Accounts) Sweep(ctx context.Context, now time.Time) (int, error) {
	n := 0
	for _, q := range []string{sweepChallenges, sweepSessions} {
		r, err := s.db.sql.ExecContext(ctx, q, ms(now))
		if err != nil {
			return n, fmt.Errorf("sqlstore: sweep: %w", err)
		}
		n += int(affected(r))
	}
	return n, nil
}
