package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"sirtommy/engine"
	"sirtommy/race/racetest"
)

// TestRedisTenSeatsOfPeopleComputersAndGhosts: on two instances of one
// Redis, a race of ten made on b with two computer players and two
// ghosts (the games of a race of two run before), six people joined
// over websockets on a and b alternately and a spectator on a. One
// person makes a first move and waits while everyone else plays out:
// until their next move the spectator is shown no card beyond what they
// had turned. Every racer is sent no card of another's game while the
// race runs; every racer gets the same result, ranking all ten as the
// rules say.
func TestRedisTenSeatsOfPeopleComputersAndGhosts(t *testing.T) {
	a, b := twoInstances(t)
	src := playSourceRace(t, a, b)
	body := fmt.Sprintf(`{"seats":10,"computers":[{"level":"easy","paceMs":200},{"level":"easy","paceMs":200}],"ghosts":[{"race":%q,"seat":0},{"race":%q,"seat":1}]}`, src, src)
	res, err := http.Post(b+"/api/races", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var made struct{ Race, Deal string }
	if err := json.NewDecoder(res.Body).Decode(&made); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", res.StatusCode, err)
	}
	res.Body.Close()
	if made.Deal != fmt.Sprint(testDeal) {
		t.Fatalf("race of ten on deal %q, want the ghosts' %d", made.Deal, testDeal)
	}
	id := made.Race
	spectator := dial(t, a)
	spectator.send(map[string]any{"type": "watch", "id": "w", "race": id})
	spectator.next("watching", ofType("watching"))
	ps := make([]*player, 6)
	for i := range ps {
		ps[i] = join(t, []string{a, b}[i%2], id, fmt.Sprint("person", i))
		if ps[i].seat != 4+i {
			t.Fatalf("person %d got seat %d, want %d", i, ps[i].seat, 4+i)
		}
	}
	for _, p := range ps {
		p.c.next("running", func(m msg) bool { return m.str("type") == "state" && m.str("state") == "running" })
	}

	// The last person moves once, then waits; the others play out, one
	// of them resigning after five moves.
	idle := ps[5]
	idle.move()
	waiting := idle.game
	for range 5 {
		ps[4].move()
	}
	ps[4].c.send(map[string]any{"type": "resign", "id": "r"})
	ps[4].c.next("resigned", func(m msg) bool { return m.str("type") == "moved" && m.str("id") == "r" })
	ps[4].game.Resign()
	for moved := true; moved; {
		moved = false
		for _, p := range ps[:4] {
			if p.move() {
				moved = true
			}
		}
	}
	for idle.move() {
	}

	r, text := sameResult(t, ps)
	in := raceInfo(t, a, id)
	if len(r.Ranking) != 10 || len(in.Moves) == 0 {
		t.Fatalf("result %s: want ten ranked", text)
	}
	if want := racetest.Ranking(&r, in.Moves); !racetest.SamePlaces(r.Ranking, want) {
		t.Errorf("ranking %+v, want by the rules %+v", r.Ranking, want)
	}
	for s := range 4 {
		if !in.Players[s].Computer && !in.Players[s].Ghost {
			t.Errorf("seat %d: %+v, want a computer or a ghost", s, in.Players[s])
		}
	}

	// What each racer was sent while the race ran.
	for i, p := range ps {
		n := 0
		for _, m := range p.c.seen {
			if m.str("type") == "state" && m["result"] != nil {
				break
			}
			if err := racetest.CheckRacer(m, p.seat); err != nil {
				t.Fatalf("person %d: %v", i, err)
			}
			n++
		}
		if n < 100 {
			t.Errorf("person %d was sent %d messages: too few to tell", i, n)
		}
	}
	// What the spectator was sent until the waiting person's second move.
	sight, err := racetest.NewSight("classic", testDeal)
	if err != nil {
		t.Fatal(err)
	}
	spectator.result()
	checked, hidden := 0, 0
	for _, m := range spectator.seen {
		if seat, _ := m["seat"].(float64); m.str("type") == "board" && int(seat) == idle.seat {
			if seq, _ := m["seq"].(float64); seq >= 2 {
				break
			}
		}
		raw, _ := json.Marshal(m)
		if err := sight.Check(raw, []engine.Game{waiting}); err != nil {
			t.Fatalf("the spectator: %v", err)
		}
		checked++
		if strings.Contains(string(raw), `"??"`) {
			hidden++
		}
	}
	if checked < 100 || hidden < 10 {
		t.Errorf("checked %d spectator messages, %d with a card face down: too few to tell", checked, hidden)
	}
	t.Logf("%s by %s; %d spectator messages checked, %d with a card face down", r.Outcome, r.Reason, checked, hidden)
}

// playSourceRace plays a race of two on testDeal, made on a, its players
// on a and b: the first legal move in turn until both are out. Its
// games are ghosts to race again.
func playSourceRace(t *testing.T, a, b string) string {
	t.Helper()
	id := createRace(t, a)
	p0, p1 := join(t, a, id, "ann"), join(t, b, id, "bob")
	for _, p := range []*player{p0, p1} {
		p.c.next("running", func(m msg) bool { return m.str("type") == "state" && m.str("state") == "running" })
	}
	for moved := true; moved; {
		m0, m1 := p0.move(), p1.move()
		moved = m0 || m1
	}
	p0.c.result()
	return id
}
