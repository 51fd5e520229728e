package sqlstore_test

import (
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
)

// TestMistakesConformance runs the shared suite on SQLite and PostgreSQL
// (SIRTOMMY_TEST_POSTGRES), two handles on one database each.
func TestMistakesConformance(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		lobbytest.MistakesSuite(t, func(t *testing.T) [2]lobby.Mistakes {
			if _, err := db.SQL().Exec("DELETE FROM mistakes"); err != nil {
				t.Fatal(err)
			}
			return [2]lobby.Mistakes{sqlstore.NewMistakes(db), sqlstore.NewMistakes(db)}
		})
	})
}
