package main

import (
	"context"
	"fmt"
	"path/filepath"

	"sirtommy/lobby/sqlstore"
)

// backupCommand copies the SQLite data folder's database to a new file
// while the server runs on it (docs/storage.md). A PostgreSQL database is
// backed up with pg_dump instead.
func backupCommand(ctx context.Context, e env) error {
	fs := newFlagSet(e, "backup", "backup --to FILE [--data DIR]")
	to := fs.String("to", "", "the new file to write the copy to; an existing file is refused")
	data := fs.String("data", defaultData, "the data folder of the server (env "+envFlag("data")+")")
	database := fs.String("database", "", "a PostgreSQL server's data: back it up with pg_dump instead (env "+envFlag("database")+")")
	if v := e.getenv(envFlag("data")); v != "" {
		*data = v
	}
	if v := e.getenv(envFlag("database")); v != "" {
		*database = v
	}
	args, err := parseInterspersed(fs, e.args)
	if err != nil {
		return err
	}
	switch {
	case len(args) > 0:
		return usagef("backup takes no arguments, got %q", args)
	case *database != "":
		return usagef("the data is in PostgreSQL (--database): back it up with pg_dump (pg_dump --format=custom --file=sirtommy.dump URL) and restore it with pg_restore; backup copies a SQLite data folder")
	case *to == "":
		return usagef("backup needs --to FILE, the new file to write the copy to")
	}
	if err := sqlstore.BackupSQLite(ctx, *data, *to); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "backed up %s to %s\n", filepath.Join(*data, sqlstore.DatabaseFile), *to)
	return nil
}
