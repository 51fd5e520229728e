package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sirtommy/lobby/sqlstore"
)

// TestBackupWhileOpen copies a data folder's database while its server
// holds it and writes on, then opens the copy as a data folder of its own:
// what was committed before the backup is there, the folder's server goes
// on writing.
func TestBackupWhileOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlstore.OpenSQLite(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	secret, err := db.Secret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(t.TempDir(), "backup.db")
	if err := sqlstore.BackupSQLite(ctx, dir, to); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec("INSERT INTO settings (name, value) VALUES ('after', 'x')"); err != nil {
		t.Fatalf("the server's write after the backup: %v", err)
	}

	restored := t.TempDir()
	if err := os.Rename(to, filepath.Join(restored, sqlstore.DatabaseFile)); err != nil {
		t.Fatal(err)
	}
	copyDB, err := sqlstore.OpenSQLite(ctx, restored)
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer copyDB.Close()
	got, err := copyDB.Secret(ctx)
	if err != nil || string(got) != string(secret) {
		t.Fatalf("the backup's secret %x (%v), want the server's %x", got, err, secret)
	}
	var n int
	if err := copyDB.SQL().QueryRow("SELECT COUNT(*) FROM settings WHERE name = 'after'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the backup has %d rows written after it (%v), want 0", n, err)
	}
}

// TestBackupRefuses: an existing file is not overwritten, and a folder
// without a database is not backed up (nor made one).
func TestBackupRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlstore.OpenSQLite(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	existing := filepath.Join(t.TempDir(), "kept.db")
	if err := os.WriteFile(existing, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, to, want string
	}{
		{"existing file", dir, existing, "exists already"},
		{"no database", t.TempDir(), filepath.Join(t.TempDir(), "new.db"), "no database to back up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := sqlstore.BackupSQLite(ctx, tc.dir, tc.to)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("backup: %v, want an error saying %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(tc.dir, sqlstore.DatabaseFile)); tc.dir != dir && !os.IsNotExist(err) {
				t.Fatalf("a database was made in the folder backed up: %v", err)
			}
		})
	}
	if b, err := os.ReadFile(existing); err != nil || string(b) != "precious" {
		t.Fatalf("the existing file now holds %q (%v)", b, err)
	}
}
