package sqlstore

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"sirtommy/lobby"
)

// settingSecret names the signing secret's row in settings.
const settingSecret = "secret"

// Secret returns the server's signing secret (player tokens, the day's
// deals), making and storing a random one (lobby.NewSecret) the first
// time: players keep their identity across restarts, and every instance
// of a fleet signs with the same one. The first writer wins: the secret is
// inserted unless one is there (ON CONFLICT DO NOTHING), then read back,
// so two instances starting at once agree on the one stored.
func (db *DB) Secret(ctx context.Context) ([]byte, error) {
	fresh := hex.EncodeToString(lobby.NewSecret())
	if _, err := db.sql.ExecContext(ctx,
		"INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
		settingSecret, fresh); err != nil {
		return nil, fmt.Errorf("store the token secret: %w", err)
	}
	var stored string
	err := db.sql.QueryRowContext(ctx, "SELECT value FROM settings WHERE name = $1", settingSecret).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errors.New("read the token secret: none stored after storing one")
	}
	if err != nil {
		return nil, fmt.Errorf("read the token secret: %w", err)
	}
	secret, err := hex.DecodeString(stored)
	if err != nil || len(secret) < lobby.MinSecretBytes {
		return nil, fmt.Errorf("the stored token secret is not %d or more bytes in hex (settings row %q): repair or delete it", lobby.MinSecretBytes, settingSecret)
	}
	return secret, nil
}
