package redislobby_test

import (
	"testing"

	"sirtommy/lobby"
	"sirtommy/lobby/lobbytest"
	"sirtommy/lobby/redislobby"
	"sirtommy/race/redisrace/redistest"
)

func TestRatingsConformance(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	n := 0
	lobbytest.RatingsSuite(t, func(*testing.T) lobby.Ratings {
		// A prefix per subtest keeps each store empty on one server.
		n++
		return redislobby.NewRatings(rdb, redislobby.Keys{Prefix: "t" + string(rune('a'+n)) + ":"})
	})
}

// TestKeysCarryPrefixAndHashTag checks every key the store writes starts
// with the prefix and has the {ratings} hash tag.
func TestKeysCarryPrefixAndHashTag(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	ctx := t.Context()
	r := redislobby.NewRatings(rdb, redislobby.Keys{Prefix: "pre:"})
	s := lobby.NewStanding("p", "P", "classic")
	s.Games = 1
	g := lobby.GameRecord{Race: "r", Variant: "classic", Players: [2]lobby.PlayerRef{{ID: "p"}, {ID: "q"}}}
	if err := r.Save(ctx, g, []lobby.Standing{s}); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 6 {
		t.Fatalf("keys %q: want a standing, a board, a variant set, two histories and the race's mark", keys)
	}
	if ttl, _ := rdb.TTL(ctx, "pre:{ratings}:recorded:r").Result(); ttl <= 0 || ttl > redislobby.RecordedTTL {
		t.Errorf("the race's mark expires in %s, want within %s", ttl, redislobby.RecordedTTL)
	}
	for _, k := range keys {
		if len(k) < len("pre:{ratings}:") || k[:len("pre:{ratings}:")] != "pre:{ratings}:" {
			t.Fatalf("key %q lacks the prefix and hash tag", k)
		}
	}
	if typ, _ := rdb.Type(ctx, "pre:{ratings}:standing:classic:p").Result(); typ != "hash" {
		t.Fatalf("standing is a %s", typ)
	}
	if typ, _ := rdb.Type(ctx, "pre:{ratings}:board:classic").Result(); typ != "zset" {
		t.Fatalf("board is a %s", typ)
	}
}
