package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// BackupSQLite writes a consistent copy of data folder dir's database to
// the new file to, while a server may be running on the folder: it does
// not take the folder's lock (the server holds it), and VACUUM INTO copies
// one snapshot as of its start, the server writing on meanwhile (WAL). to
// must not exist: nothing is overwritten. The copy is restored by putting
// it in a data folder as DatabaseFile, with no -wal or -shm file beside it
// (docs/storage.md).
func BackupSQLite(ctx context.Context, dir, to string) error {
	file := filepath.Join(dir, DatabaseFile)
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("no database to back up in data folder %s: %w", dir, err)
	}
	// Made here, empty, so that an existing file is refused at once and the
	// copy, which holds the token secret, is private like the database.
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists already: back up to a new file", to)
	}
	if err != nil {
		return fmt.Errorf("backup file %s: %w", to, err)
	}
	_ = out.Close()
	done := false
	defer func() {
		if !done {
			_ = os.Remove(to) // no half copy left to be taken for a backup
		}
	}()
	// mode=rw: never create the database; no pragma that writes.
	src, err := sql.Open("sqlite", "file:"+file+"?mode=rw"+fmt.Sprintf("&_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()))
	if err != nil {
		return fmt.Errorf("database %s: %w", file, err)
	}
	defer src.Close()
	if _, err := src.ExecContext(ctx, "VACUUM INTO $1", to); err != nil {
		return fmt.Errorf("back up %s to %s: %w", file, to, err)
	}
	done = true
	return nil
}
