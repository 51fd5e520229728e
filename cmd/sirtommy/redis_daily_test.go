package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"sirtommy/lobby"
)

// dailyOf reads base's day's deal over the API.
func dailyOf(t *testing.T, base, query string) lobby.DailyInfo {
	t.Helper()
	res, err := http.Get(base + "/api/daily?variant=classic" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var in lobby.DailyInfo
	if err := json.NewDecoder(res.Body).Decode(&in); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/daily: %d %v", res.StatusCode, err)
	}
	return in
}

// TestRedisDailyAcrossInstances: two instances on one Redis, with the same
// secret, publish the same day's deal without a word to each other; ann
// plays it on A and bob on B, and both instances show the same board; ann
// cannot play it again through B.
func TestRedisDailyAcrossInstances(t *testing.T) {
	a, b := twoInstances(t)
	da, db := dailyOf(t, a, ""), dailyOf(t, b, "")
	if da.Commitment == "" || da.Commitment != db.Commitment || da.Day != db.Day {
		t.Fatalf("the instances publish different days' deals: %+v / %+v", da, db)
	}
	ann := dial(t, a)
	ann.send(map[string]any{"type": "hello", "id": "h", "name": "ann"})
	w := ann.next("welcome", ofType("welcome"))
	annC := &lobbyClient{client: ann, id: w.str("player")}
	bob := hello(t, b, "bob")
	for _, c := range []*lobbyClient{annC, bob} {
		c.accept(map[string]any{"type": "play-daily", "variant": "classic"})
		c.takeSeat("daily")
		c.playBlind()
		c.result()
	}
	// The boards are written as each race ends: wait for both on each.
	var ba, bb lobby.DailyInfo
	for range 100 {
		ba, bb = dailyOf(t, a, "&player="+annC.id), dailyOf(t, b, "&player="+annC.id)
		if ba.Players == 2 && bb.Players == 2 {
			break
		}
		time.Sleep(50 * time.Millisecond) // a poll: the race ends before its board entry is written
	}
	if ba.Players != 2 || len(ba.Board) != 2 || len(bb.Board) != 2 || ba.You == nil || !ba.Played {
		t.Fatalf("boards: A %+v, B %+v", ba, bb)
	}
	for i := range 2 {
		if ba.Board[i].Player != bb.Board[i].Player || ba.Board[i].Score != bb.Board[i].Score || ba.Board[i].Rank != i+1 {
			t.Fatalf("the boards differ at %d: %+v / %+v", i, ba.Board[i], bb.Board[i])
		}
	}
	again := dial(t, b)
	again.send(map[string]any{"type": "hello", "id": "h", "token": w.str("token")})
	again.next("welcome", ofType("welcome"))
	again.send(map[string]any{"type": "play-daily", "id": "d", "variant": "classic"})
	if r := again.next("refusal", func(m msg) bool { return m.str("id") == "d" }); r.str("code") != string(lobby.CodeDailyPlayed) {
		t.Fatalf("a second attempt through B: %v", r)
	}
}

// TestRedisGhostAcrossInstances: ann and bob race on A; ann's game becomes
// a ghost challenge there; cat, on B, races it (the race made on B from
// the challenge A stored) and cannot race it twice; ann, on A, hears how
// it went, and her profile on B lists the run.
func TestRedisGhostAcrossInstances(t *testing.T) {
	a, b := twoInstances(t)
	ann, bob, cat := hello(t, a, "ann"), hello(t, a, "bob"), hello(t, b, "cat")
	inv := ann.request(map[string]any{"type": "invite"}, "invited")
	bob.accept(map[string]any{"type": "accept-invite", "code": inv.str("code")})
	ann.takeSeat("invite")
	bob.takeSeat("invite")
	ann.playBlind()
	bob.playBlind()
	ann.result()
	g := ann.request(map[string]any{"type": "ghost", "race": ann.race, "seat": ann.seat}, "ghost-made")
	id, _ := g["ghost"].(map[string]any)["id"].(string)
	cat.accept(map[string]any{"type": "race-ghost", "ghost": id})
	m := cat.takeSeat("ghost")
	if op, _ := m["opponent"].(map[string]any); op["ghost"] != true || op["name"] != "ann" {
		t.Fatalf("cat's opponent %v", m["opponent"])
	}
	cat.playBlind()
	cat.result()
	run := ann.next("ghost-raced", ofType("ghost-raced"))
	if r, _ := run["run"].(map[string]any); r["player"] != cat.id || r["race"] != cat.race {
		t.Fatalf("ghost-raced %v", run)
	}
	if r := cat.request(map[string]any{"type": "race-ghost", "ghost": id}, "error"); r.str("code") != string(lobby.CodeDealSeen) {
		t.Fatalf("the same ghost twice: %v", r)
	}
	res, err := http.Get(b + "/api/players/" + ann.id)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var p lobby.Profile
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil || p.Ghosts == nil || len(p.Ghosts.Against) != 1 {
		t.Fatalf("ann's profile on B: %+v %v", p.Ghosts, err)
	}
}
