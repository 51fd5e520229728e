package sqlstore_test

import (
	"testing"

	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/web/coach"
	"sirtommy/web/coach/coachtest"
)

// TestAnalysesSplitStore runs the coach's store suites on the server's
// store: finished analyses in SQL, claims in memory.
func TestAnalysesSplitStore(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		split := func() *coach.Split { return coach.NewSplit(sqlstore.NewAnalyses(db), coach.NewMemoryStore(nil)) }
		t.Run("store", func(t *testing.T) { coachtest.TestStore(t, split()) })
		t.Run("fleet", func(t *testing.T) {
			if _, err := db.SQL().Exec("DELETE FROM analyses"); err != nil {
				t.Fatal(err)
			}
			coachtest.TestFleet(t, split())
			var n int
			if err := db.SQL().QueryRow("SELECT COUNT(*) FROM analyses").Scan(&n); err != nil || n != 1 {
				t.Fatalf("analyses stored: %d (%v), want the one game's", n, err)
			}
		})
	})
}

// TestAnalysesKeptAndReplaced: an analysis outlives the store that put it
// (a restart), and a second put replaces it.
func TestAnalysesKeptAndReplaced(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		if err := sqlstore.NewAnalyses(db).Put(ctx, "v2/classic/1/ab", []byte(`{"a":1}`)); err != nil {
			t.Fatal(err)
		}
		again := sqlstore.NewAnalyses(db)
		if v, ok, err := again.Get(ctx, "v2/classic/1/ab"); err != nil || !ok || string(v) != `{"a":1}` {
			t.Fatalf("get: %q %v %v", v, ok, err)
		}
		if err := again.Put(ctx, "v2/classic/1/ab", []byte(`{"a":2}`)); err != nil {
			t.Fatal(err)
		}
		if v, _, err := again.Get(ctx, "v2/classic/1/ab"); err != nil || string(v) != `{"a":2}` {
			t.Fatalf("get after a second put: %q %v", v, err)
		}
	})
}

// TestAnalysesRefuseWhatTextCannotHold: a NUL byte or invalid UTF-8 (which
// PostgreSQL's TEXT refuses) is an error on both databases, storing
// nothing.
func TestAnalysesRefuseWhatTextCannotHold(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		a := sqlstore.NewAnalyses(db)
		for _, tc := range []struct {
			name, key string
			val       []byte
		}{
			{"NUL in the value", "k", []byte("{\"a\":\x00}")},
			{"invalid UTF-8", "k", []byte{'"', 0xff, '"'}},
			{"NUL in the key", "k\x00", []byte(`{}`)},
			{"empty key", "", []byte(`{}`)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := a.Put(t.Context(), tc.key, tc.val); err == nil {
					t.Fatal("stored")
				}
			})
		}
		var n int
		if err := db.SQL().QueryRow("SELECT COUNT(*) FROM analyses").Scan(&n); err != nil || n != 0 {
			t.Fatalf("rows after refused puts: %d (%v), want 0", n, err)
		}
	})
}
