package sqlstore_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
)

// TestSecretFirstCallsAgree starts instances at once on an empty
// database: all must sign with the one secret stored, and later calls
// return it again.
func TestSecretFirstCallsAgree(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		const callers = 8 // more than two, for more interleavings
		var wg sync.WaitGroup
		secrets := make([][]byte, callers)
		errs := make([]error, callers)
		start := make(chan struct{})
		for i := range callers {
			wg.Go(func() {
				<-start
				secrets[i], errs[i] = db.Secret(t.Context())
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("caller %d: %v", i, err)
			}
		}
		if len(secrets[0]) < lobby.MinSecretBytes {
			t.Fatalf("secret %x, want %d+ bytes", secrets[0], lobby.MinSecretBytes)
		}
		for i, s := range secrets {
			if !bytes.Equal(s, secrets[0]) {
				t.Fatalf("first calls disagree: caller %d got %x, caller 0 %x", i, s, secrets[0])
			}
		}
		again, err := db.Secret(t.Context())
		if err != nil || !bytes.Equal(again, secrets[0]) {
			t.Fatalf("a later call got %x (%v), want the stored %x", again, err, secrets[0])
		}
		var rows int
		if err := db.SQL().QueryRow("SELECT COUNT(*) FROM settings").Scan(&rows); err != nil || rows != 1 {
			t.Fatalf("settings rows: %d (%v), want 1", rows, err)
		}
	})
}

// TestSecretSurvivesReopen: a restarted server signs with the secret its
// data folder keeps.
func TestSecretSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	secretOf := func() []byte {
		t.Helper()
		db, err := sqlstore.OpenSQLite(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		s, err := db.Secret(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if first, second := secretOf(), secretOf(); !bytes.Equal(first, second) {
		t.Fatalf("after a restart the secret is %x, was %x", second, first)
	}
}

// TestSecretDamagedIsRefused: a stored secret that is not hex, or too
// short, is an error naming the row, not a weaker key.
func TestSecretDamagedIsRefused(t *testing.T) {
	for _, tc := range []struct{ name, value string }{
		{"not hex", "not a hex secret at all, but long enough to pass"},
		{"short", "00112233"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := sqltest.SQLite(t)
			if _, err := db.SQL().Exec("INSERT INTO settings (name, value) VALUES ('secret', $1)", tc.value); err != nil {
				t.Fatal(err)
			}
			if s, err := db.Secret(t.Context()); err == nil || !strings.Contains(err.Error(), `settings row "secret"`) {
				t.Fatalf("Secret() = %x, %v; want an error naming the row", s, err)
			}
		})
	}
}
