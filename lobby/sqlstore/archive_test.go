package sqlstore_test

import (
	"testing"

	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// TestArchive runs the archive's conformance suite on each database,
// each of its cases on an empty races table.
func TestArchive(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		racetest.ArchiveSuite(t, func(t *testing.T) race.Archive {
			t.Helper()
			if _, err := db.SQL().ExecContext(t.Context(), "DELETE FROM races"); err != nil {
				t.Fatal(err)
			}
			return sqlstore.NewArchive(db)
		})
	})
}
