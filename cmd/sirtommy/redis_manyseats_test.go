package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"sirtommy/engine"
	"sirtommy/race"
)

// TestRedisRaceOfFourAcrossInstances is a race of four in Redis mode
// with its racers split over two instances (seats 0 and 2 on b, the race
// made on a) and a spectator on b: every racer's moves are answered
// wherever they are, the spectator gets every seat's board, a racer who
// resigns keeps their place, and every racer gets the same ranked result.
func TestRedisRaceOfFourAcrossInstances(t *testing.T) {
	const seats = 4
	a, b := twoInstances(t)
	res, err := http.Post(a+"/api/races", "application/json", strings.NewReader(fmt.Sprintf(`{"deal":%d,"seats":%d}`, testDeal, seats)))
	if err != nil {
		t.Fatal(err)
	}
	var made struct{ Race string }
	if err := json.NewDecoder(res.Body).Decode(&made); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", res.StatusCode, err)
	}
	res.Body.Close()
	id := made.Race
	spectator := dial(t, b)
	spectator.send(map[string]any{"type": "watch", "id": "w", "race": id})
	spectator.next("watching", ofType("watching"))
	ps := make([]*player, seats)
	for i := range ps {
		ps[i] = join(t, []string{b, a}[i%2], id, fmt.Sprint("racer", i))
		if ps[i].seat != i {
			t.Fatalf("racer %d got seat %d", i, ps[i].seat)
		}
	}
	for _, p := range ps {
		p.c.next("running", func(m msg) bool { return m.str("type") == "state" && m.str("state") == "running" })
	}
	// Seat 3 resigns after a few moves; the others play the same first
	// legal moves in turn until each is out.
	for range 5 {
		ps[3].move()
	}
	ps[3].c.send(map[string]any{"type": "resign", "id": "r"})
	ps[3].c.next("resigned", func(m msg) bool { return m.str("type") == "moved" && m.str("id") == "r" })
	for moved := true; moved; {
		moved = false
		for _, p := range ps[:3] {
			if p.move() {
				moved = true
			}
		}
	}
	r, text := sameResult(t, ps)
	score := ps[0].game.Score()
	if r.Outcome != race.OutcomeDraw || r.Reason != race.ReasonEqualCards || len(r.Ranking) != seats {
		t.Fatalf("result %s: want a draw of the three level racers, ranked", text)
	}
	for i, p := range r.Ranking {
		wantPlace, wantCards := 1, score
		if i == 3 {
			wantPlace, wantCards = 4, ps[3].game.Score()
		}
		if p.Place != wantPlace || p.Cards != wantCards || (i == 3) != (p.Seat == 3) {
			t.Errorf("place %d: %+v; want seat 3 last with its %d cards, the others first with %d", i, p, ps[3].game.Score(), score)
		}
	}
	if r.Statuses[3] != engine.Resigned {
		t.Errorf("seat 3 %s, want resigned", r.Statuses[3])
	}
	boards := map[int]bool{}
	for {
		m := spectator.next("the spectator's boards and final state", func(msg) bool { return true })
		if m.str("type") == "board" {
			seat, _ := m["seat"].(float64)
			boards[int(seat)] = true
		}
		if m.str("type") == "state" && m["result"] != nil {
			break
		}
	}
	if len(boards) != seats {
		t.Errorf("the spectator on b got the boards of seats %v, want all %d", boards, seats)
	}
}

// sameResult waits for every player's result and checks they all got the
// same one; it returns it, decoded and as text.
func sameResult(t *testing.T, ps []*player) (race.Result, string) {
	t.Helper()
	results := make([]string, len(ps))
	for i, p := range ps {
		results[i] = p.c.result()
		if results[i] != results[0] {
			t.Errorf("racer %d's result %s, racer 0's %s", i, results[i], results[0])
		}
	}
	var r race.Result
	if err := json.Unmarshal([]byte(results[0]), &r); err != nil {
		t.Fatal(err)
	}
	return r, results[0]
}
