package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race"
)

// TestServeRefusedAtStart runs the binary where it must not start: each
// case exits non-zero with the sentence that says why, before listening,
// and changes nothing.
func TestServeRefusedAtStart(t *testing.T) {
	bin := buildBinary(t)

	held := t.TempDir() // a running server's folder
	heldBase, _, _, _ := startServe(t, "--data", held)

	newer := t.TempDir() // a folder of a newer sirtommy's
	db, err := sqlstore.OpenSQLite(context.Background(), newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)", sqlstore.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	db.Close()

	notAFolder := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notAFolder, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int // 1: could not start; 2: a bad command line
		want string
		kept string // a data folder whose database must be left as it was
	}{
		{"second server on one data folder", []string{"--data", held}, 1, "is in use by another sirtommy server", held},
		{"newer schema", []string{"--data", newer}, 1, "newer than this binary's", newer},
		{"data folder not a folder", []string{"--data", notAFolder}, 1, "cannot be made", ""},
		{"redis without database", []string{"--data", t.TempDir(), "--redis", "redis://127.0.0.1:1/0"}, 2, "--redis needs --database postgres://", ""},
		{"database not PostgreSQL", []string{"--database", "mysql://user@host/db"}, 2, "--database takes a PostgreSQL URL", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before [sha256.Size]byte
			if tc.kept != "" {
				before = fileSum(t, filepath.Join(tc.kept, sqlstore.DatabaseFile))
			}
			code, stdout, stderr := runBinary(t, bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d saying %q", code, stderr, tc.code, tc.want)
			}
			if strings.Contains(stdout, "listening on") {
				t.Fatalf("it listened: %q", stdout)
			}
			if tc.kept != "" && fileSum(t, filepath.Join(tc.kept, sqlstore.DatabaseFile)) != before {
				t.Fatal("the data folder's database was changed")
			}
		})
	}
	if code := readyz(t, heldBase); code != http.StatusOK {
		t.Fatalf("the server holding its folder answers /readyz %d after the refused start", code)
	}
}

// runBinary runs bin to its end and returns its exit code and output.
func runBinary(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), safetyTimeout) // a server that started would never end
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir() // a default --data would land there, not in the source tree
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &exit) && ctx.Err() == nil:
		return exit.ExitCode(), out.String(), errOut.String()
	default:
		t.Fatalf("%v: %v (stderr %q)", args, err, errOut.String())
		return 0, "", ""
	}
}

// fileSum is the SHA-256 of a file's bytes.
func fileSum(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestSecretSurvivesRestart: without --secret, a token the first server
// issued is accepted by the next one on the same data folder (the same
// player), and both deal the same day's deal; a --secret given is used and
// not stored.
func TestSecretSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	base, _, stop, done := startServe(t, "--data", dir)
	first := dial(t, base)
	first.send(map[string]any{"type": "hello", "id": "h", "name": "ann"})
	w := first.next("welcome", ofType("welcome"))
	daily := dailyOf(t, base, "")
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	base, _, stop, done = startServe(t, "--data", dir)
	again := dial(t, base)
	again.send(map[string]any{"type": "hello", "id": "h", "token": w.str("token")})
	r := again.next("an answer to hello", func(m msg) bool { return m.str("id") == "h" })
	if r.str("type") != "welcome" || r.str("player") != w.str("player") {
		t.Fatalf("after a restart the token got %v, want a welcome as %s", r, w.str("player"))
	}
	if d := dailyOf(t, base, ""); d.Commitment != daily.Commitment || d.Day != daily.Day {
		t.Fatalf("after a restart the day's deal is %s %s, was %s %s", d.Day, d.Commitment, daily.Day, daily.Commitment)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	given := t.TempDir()
	_, _, stop, done = startServe(t, "--data", given, "--secret", testSecret)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.OpenSQLite(context.Background(), given)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.SQL().QueryRow("SELECT COUNT(*) FROM settings").Scan(&n); err != nil || n != 0 {
		t.Fatalf("with --secret, %d settings stored (%v); want none", n, err)
	}
}

// TestBackupWhileServing backs up a server process's data folder while it
// serves, checks that it serves on, and opens the copy as a data folder of
// its own: it holds the secret that signed the server's tokens.
func TestBackupWhileServing(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	base, _ := startProcess(t, bin, "--data", dir)
	c := dial(t, base)
	c.send(map[string]any{"type": "hello", "id": "h", "name": "ann"})
	w := c.next("welcome", ofType("welcome"))

	to := filepath.Join(t.TempDir(), "backup.db")
	out, err := runCLI(t, "backup", "--data", dir, "--to", to)
	if err != nil || !strings.Contains(out, "backed up") {
		t.Fatalf("backup: %q, %v", out, err)
	}
	if _, err := runCLI(t, "backup", "--data", dir, "--to", to); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Fatalf("a second backup to the same file: %v, want a refusal", err)
	}
	if code := readyz(t, base); code != http.StatusOK {
		t.Fatalf("/readyz %d after the backup", code)
	}
	c.send(map[string]any{"type": "hello", "id": "h2", "token": w.str("token")})
	if r := c.next("welcome again", func(m msg) bool { return m.str("id") == "h2" }); r.str("type") != "welcome" {
		t.Fatalf("the server after the backup: %v", r)
	}

	restored := t.TempDir()
	if err := os.Rename(to, filepath.Join(restored, sqlstore.DatabaseFile)); err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.OpenSQLite(context.Background(), restored)
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer db.Close()
	secret, err := db.Secret(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := lobby.NewTokens(secret, race.SystemClock{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if who, err := tokens.Verify(w.str("token")); err != nil || who.ID != w.str("player") {
		t.Fatalf("the server's token against the backup's secret: %+v, %v", who, err)
	}
}

// TestBackupOfPostgresSaysPgDump: the backup command copies SQLite only.
func TestBackupOfPostgresSaysPgDump(t *testing.T) {
	_, err := runCLI(t, "backup", "--to", filepath.Join(t.TempDir(), "x"), "--database", "postgres://db.example/sirtommy")
	var u usageError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "pg_dump") {
		t.Fatalf("backup of PostgreSQL: %v, want a usage error naming pg_dump", err)
	}
}

// TestReadyzDatabaseAway: /readyz answers 503 while the PostgreSQL
// database refuses connections, and 200 again once it is back; the
// failed pings are counted on /metrics.
func TestReadyzDatabaseAway(t *testing.T) {
	pg := sqltest.PostgresURL(t)
	base, _, _, _ := startServe(t, "--database", pg)
	if code := readyz(t, base); code != http.StatusOK {
		t.Fatalf("/readyz %d with the database up", code)
	}
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	// name is sqltest's generated identifier ([a-z0-9_]), not input.
	if _, err := admin.Exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "/readyz 503 with the database away", func() bool { return readyz(t, base) == http.StatusServiceUnavailable })
	if _, err := admin.Exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS true"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "/readyz 200 with the database back", func() bool { return readyz(t, base) == http.StatusOK })
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if strings.Contains(string(b), "sirtommy_database_ping_failures_total 0\n") || !strings.Contains(string(b), "sirtommy_database_ping_failures_total ") {
		t.Fatalf("/metrics counts no failed ping:\n%s", b)
	}
}
