package sqlstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/sqlstore"
	"sirtommy/race"
)

// arenaKinds are the databases the arenas' tests run on.
var arenaKinds = []sqlstore.Kind{sqlstore.SQLite, sqlstore.Postgres}

// emptyArenas deletes every arena of db.
func emptyArenas(t *testing.T, db *sqlstore.DB) {
	t.Helper()
	if _, err := db.SQL().Exec("DELETE FROM arenas"); err != nil {
		t.Fatalf("empty the arenas: %v", err)
	}
}

// TestArenasConformance runs the arenas' suite with its two handles on
// two instances (twoInstances): on PostgreSQL two connection pools, as a
// fleet's, so that the concurrent changes race for real; on SQLite the
// one database a data folder is.
func TestArenasConformance(t *testing.T) {
	for _, kind := range arenaKinds {
		t.Run(string(kind), func(t *testing.T) {
			dbs := twoInstances(t, kind)
			lobbytest.ArenasSuite(t, func(t *testing.T) [2]lobby.Arenas {
				emptyArenas(t, dbs[0])
				return [2]lobby.Arenas{sqlstore.NewArenas(dbs[0]), sqlstore.NewArenas(dbs[1])}
			})
		})
	}
}

// bumpVersion is another writer's change of arena id, made straight in
// db while a Change is between its read and its write: it moves the
// version on and renames the arena in its body.
func bumpVersion(t *testing.T, db *sqlstore.DB, id, name string) {
	t.Helper()
	s := sqlstore.NewArenas(db)
	a, ok, err := s.Get(context.Background(), id)
	if err != nil || !ok {
		t.Errorf("get arena %s: found %v, %v", id, ok, err)
		return
	}
	a.Name = name
	body, err := json.Marshal(a)
	if err != nil {
		t.Error(err)
		return
	}
	if _, err := db.SQL().Exec("UPDATE arenas SET body = $1, version = version + 1 WHERE id = $2", string(body), id); err != nil {
		t.Errorf("another writer's change: %v", err)
	}
}

// TestArenaChangeRunsAgainOnTheNewerArena (PostgreSQL: on SQLite a
// change holds the write lock from its read on, so no other writer gets
// in between): a change whose arena another instance changed after it
// was read is not written over it; change runs again on the newer arena,
// and what is stored has both changes.
func TestArenaChangeRunsAgainOnTheNewerArena(t *testing.T) {
	dbs := twoInstances(t, sqlstore.Postgres)
	ctx := context.Background()
	s := sqlstore.NewArenas(dbs[0])
	a := lobby.Arena{ArenaInfo: lobby.ArenaInfo{ID: "a1", Name: "first", Variant: "classic", StartAt: time.Unix(1_000, 0).UTC(), EndAt: time.Unix(5_000, 0).UTC()}}
	if made, err := s.Make(ctx, a); err != nil || !made {
		t.Fatalf("make: %v %v", made, err)
	}
	var seen []string
	got, ok, err := s.Change(ctx, "a1", func(a *lobby.Arena) error {
		seen = append(seen, a.Name)
		if len(seen) == 1 {
			bumpVersion(t, dbs[1], "a1", "second")
		}
		a.Played++
		return nil
	})
	if err != nil || !ok {
		t.Fatalf("change: found %v, %v", ok, err)
	}
	if len(seen) != 2 || seen[0] != "first" || seen[1] != "second" {
		t.Fatalf("change saw %q, want the arena as read, then as the other writer left it", seen)
	}
	stored, _, _ := s.Get(ctx, "a1")
	if got.Name != "second" || got.Played != 1 || stored.Name != "second" || stored.Played != 1 {
		t.Fatalf("returned %q played %d, stored %q played %d; want both changes", got.Name, got.Played, stored.Name, stored.Played)
	}
}

// TestArenaChangeGivesUpUnavailable (PostgreSQL, as above): a change
// that loses every try to other writers gives up after a bounded number
// of tries with an error wrapping race.ErrUnavailable (the lobby's "try
// again shortly"), leaving the arena as the others wrote it.
func TestArenaChangeGivesUpUnavailable(t *testing.T) {
	dbs := twoInstances(t, sqlstore.Postgres)
	ctx := context.Background()
	s := sqlstore.NewArenas(dbs[0])
	a := lobby.Arena{ArenaInfo: lobby.ArenaInfo{ID: "a1", Name: "first", Variant: "classic", StartAt: time.Unix(1_000, 0).UTC(), EndAt: time.Unix(5_000, 0).UTC()}}
	if made, err := s.Make(ctx, a); err != nil || !made {
		t.Fatalf("make: %v %v", made, err)
	}
	tries := 0
	_, _, err := s.Change(ctx, "a1", func(a *lobby.Arena) error {
		tries++
		bumpVersion(t, dbs[1], "a1", "other")
		a.Played = 100
		return nil
	})
	if !errors.Is(err, race.ErrUnavailable) || tries < 2 || tries > 100 {
		t.Fatalf("a change that always loses: %d tries, %v; want a bounded number, then ErrUnavailable", tries, err)
	}
	if stored, _, _ := s.Get(ctx, "a1"); stored.Played != 0 || stored.Name != "other" {
		t.Fatalf("stored %+v, want the other writers' arena", stored)
	}
}

// TestArenaNotStorableID: an id no text column can hold is refused by
// Make, with a race code, and finds no arena.
func TestArenaNotStorableID(t *testing.T) {
	for _, kind := range arenaKinds {
		t.Run(string(kind), func(t *testing.T) {
			dbs := twoInstances(t, kind)
			s := sqlstore.NewArenas(dbs[0])
			ctx := context.Background()
			bad := "a\x00b"
			if _, err := s.Make(ctx, lobby.Arena{ArenaInfo: lobby.ArenaInfo{ID: bad}}); !race.IsRefusal(err) {
				t.Fatalf("make of id %q: %v, want a refusal", bad, err)
			}
			if _, ok, err := s.Get(ctx, bad); ok || err != nil {
				t.Fatalf("get of id %q: found %v, %v", bad, ok, err)
			}
			if _, ok, err := s.Change(ctx, bad, func(*lobby.Arena) error { return nil }); ok || err != nil {
				t.Fatalf("change of id %q: found %v, %v", bad, ok, err)
			}
		})
	}
}

// TestArenaStoredWithSheetsIsUpgraded: an arena stored before its
// results were kept apart (each entry's score sheet in its row) is read
// with its points as they were and its counts and marks from the sheet,
// and changed on from there.
func TestArenaStoredWithSheetsIsUpgraded(t *testing.T) {
	for _, kind := range arenaKinds {
		t.Run(string(kind), func(t *testing.T) {
			db := twoInstances(t, kind)[0]
			emptyArenas(t, db)
			start := time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC)
			body := `{"id":"old","name":"Old","variant":"classic","timeLimitMs":300000,"startAt":"2026-12-05T15:00:00Z","endAt":"2026-12-05T16:00:00Z",` +
				`"entries":[{"player":"p1","name":"Ann","points":7,"streak":2,"state":"waiting","since":"2026-12-05T15:10:00Z",` +
				`"sheet":[{"race":"r1","outcome":"win","points":2},{"race":"r2","outcome":"win","points":2,"berserk":true},{"race":"r3","outcome":"draw","points":2,"fire":true}]}],"played":3}`
			if _, err := db.SQL().Exec("INSERT INTO arenas (id, start_ms, end_ms, version, body) VALUES ($1, $2, $3, 1, $4)",
				"old", start.UnixMilli(), start.Add(time.Hour).UnixMilli(), body); err != nil {
				t.Fatal(err)
			}
			s := sqlstore.NewArenas(db)
			a, ok, err := s.Get(context.Background(), "old")
			if err != nil || !ok {
				t.Fatalf("get: %v, %v", ok, err)
			}
			e := a.Entries[0]
			if e.Points != 7 || e.Races != 3 || e.Wins != 2 || e.Berserks != 1 || e.Marks != "222!" || e.Sheet != nil {
				t.Errorf("read %+v", e)
			}
			a, _, err = s.Change(context.Background(), "old", func(a *lobby.Arena) error { a.Played++; return nil })
			if err != nil || a.Entries[0].Marks != "222!" {
				t.Fatalf("changed: %+v, %v", a.Entries, err)
			}
			var stored string
			if err := db.SQL().QueryRow("SELECT body FROM arenas WHERE id = $1", "old").Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(stored, `"sheet"`) || !strings.Contains(stored, `"marks":"222!"`) {
				t.Errorf("stored after a change: %s", stored)
			}
		})
	}
}
