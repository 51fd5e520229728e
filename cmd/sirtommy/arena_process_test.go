package main

import (
	"encoding/json"
	"reflect"
	"syscall"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
)

// TestArenaKeptAcrossRestarts: the README's server (SQLite in --data)
// with an arena on its schedule (--arenas): two players join it, are
// paired within seconds of its start, race to the end, and the race is
// counted (2 points a win, 1 a draw each); the server is killed
// (SIGKILL) and started again on the same data: the arena is there, with
// the same standings, sheets and races played, and the players' points
// kept.
func TestArenaKeptAcrossRestarts(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	// An arena of three hours every three hours: one is always running
	// (runningArena waits out the last minutes of one for the next).
	args := []string{"--data", data, "--spectator-delay", "0s", "--drain-timeout", "5s", "--arenas", "Test arena,classic,2m,180m,3h"}
	base, proc := startProcess(t, bin, args...)
	id := runningArena(t, base)

	ann, _ := welcomed(t, base, "ann")
	bob, _ := welcomed(t, base, "bob")
	for _, p := range []*lobbyClient{ann, bob} {
		if v := p.request(map[string]any{"type": "arena-join", "arena": id}, "arena"); v["arena"] == nil {
			t.Fatalf("join: %v", v)
		}
	}
	ann.takeSeat("arena")
	bob.takeSeat("arena")
	ann.playBlind()
	bob.playBlind()
	var res race.Result
	if err := json.Unmarshal([]byte(ann.result()), &res); err != nil {
		t.Fatal(err)
	}
	points := map[string]int{ann.id: 1, bob.id: 1}
	if res.Winner != nil {
		winner, loser := ann, bob
		if *res.Winner != ann.seat {
			winner, loser = bob, ann
		}
		points[winner.id], points[loser.id] = 2, 0
	}

	// The end is counted off the race's path: wait for it.
	var before lobby.ArenaView
	deadline := time.Now().Add(safetyTimeout)
	for {
		before = watchArena(t, ann, id)
		if before.Played == 1 && before.Racing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the race was not counted: %+v", before)
		}
		time.Sleep(50 * time.Millisecond) // a poll: the lobby's end worker counts it
	}
	for _, st := range before.Standings {
		if st.Points != points[st.Player] || st.Races != 1 {
			t.Errorf("%s: %d points in %d races, want %d in 1 (%s by %s)", st.Name, st.Points, st.Races, points[st.Player], res.Outcome, res.Reason)
		}
	}

	if err := proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = proc.Wait()
	base, _ = startProcess(t, bin, args...)
	cat, _ := welcomed(t, base, "cat")
	after := watchArena(t, cat, id)
	if !reflect.DeepEqual(after.Standings, before.Standings) || after.Played != before.Played || after.Players != 2 {
		a, _ := json.Marshal(before)
		b, _ := json.Marshal(after)
		t.Errorf("after SIGKILL the arena is\n%s\nwhere it was\n%s", b, a)
	}
}

// runningArena is the id of the arena running on base's schedule with at
// least two minutes left, from the lobby's list (GET /api/lobby).
func runningArena(t *testing.T, base string) string {
	t.Helper()
	deadline := time.Now().Add(safetyTimeout + 3*time.Minute)
	for time.Now().Before(deadline) {
		var l struct{ Arenas []lobby.ArenaBrief }
		getJSON(t, base+"/api/lobby", &l)
		for _, a := range l.Arenas {
			if a.Status == lobby.ArenaRunning && time.Until(a.EndAt) > 2*time.Minute {
				return a.ID
			}
		}
		time.Sleep(500 * time.Millisecond) // a poll: the heartbeat makes and lists it
	}
	t.Fatal("no arena running on the schedule")
	return ""
}

// watchArena is arena id as c sees it now.
func watchArena(t *testing.T, c *lobbyClient, id string) lobby.ArenaView {
	t.Helper()
	m := c.request(map[string]any{"type": "arena-watch", "arena": id}, "arena")
	b, _ := json.Marshal(m["arena"])
	var v lobby.ArenaView
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	v.Now, v.Status = time.Time{}, "" // as of the request
	return v
}
