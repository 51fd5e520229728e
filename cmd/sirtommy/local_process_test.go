package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
)

// TestLocalKilledMidRaceResumes: the single binary with durable races is
// killed (SIGKILL) mid-race, with one move sent and not yet answered;
// started again on the same folder and secret, it has the race back. Both
// players resume with their seat tokens and see every move they were
// acknowledged, the move in flight sent again with its id is answered
// (stored before the kill, or stored now), and the race goes on to one
// result.
func TestLocalKilledMidRaceResumes(t *testing.T) {
	bin := buildBinary(t)
	args := []string{"--data", t.TempDir(), "--durable-races", "--secret", testSecret}
	a, proc := startProcess(t, bin, args...)
	id := createRace(t, a)
	p0, p1 := join(t, a, id, "ann"), join(t, a, id, "bob")
	for _, p := range []*player{p0, p1} {
		p.c.next("running", func(m msg) bool { return m.str("type") == "state" && m.str("state") == "running" })
	}
	for range 8 {
		p0.move()
		p1.move()
	}
	inflight := p0.game.AppendMoves(nil)[0]
	p0.c.send(map[string]any{"type": "move", "id": "inflight", "move": inflight.String()})
	if err := proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := proc.Wait(); err != nil { // the folder's lock goes with it
		t.Fatal(err)
	}

	b, _ := startProcess(t, bin, args...)
	for _, p := range []*player{p0, p1} {
		p.reconnect(t, b)
		p.resume(t)
		st := p.c.next("state", ofType("state"))
		you, _ := st["you"].(map[string]any)
		opp, _ := st["opponent"].(map[string]any)
		other := p1
		if p == p1 {
			other = p0
		}
		if st.str("state") != "running" || fmt.Sprint(you["moves"]) != fmt.Sprint(p.game.Plies()) {
			t.Fatalf("seat %d after the restart: %s with %v moves, want running with the %d acknowledged", p.seat, st.str("state"), you["moves"], p.game.Plies())
		}
		// The opponent may have the move in flight too.
		if n := fmt.Sprint(opp["moves"]); n != fmt.Sprint(other.game.Plies()) && (other != p0 || n != fmt.Sprint(p0.game.Plies()+1)) {
			t.Fatalf("seat %d after the restart sees the opponent at %s moves, want %d", p.seat, n, other.game.Plies())
		}
	}
	p0.c.send(map[string]any{"type": "move", "id": "inflight", "move": inflight.String()})
	if r := p0.c.next("the move in flight's answer", func(m msg) bool { return m.str("id") == "inflight" }); r.str("type") != "moved" {
		t.Fatalf("the move in flight sent again: %v", r)
	}
	if err := p0.game.Apply(inflight); err != nil {
		t.Fatal(err)
	}
	// Every move from here is legal only if the server's games are the
	// players' own.
	for p0.move() || p1.move() {
	}
	r0, r1 := p0.c.result(), p1.c.result()
	if r0 != r1 || strings.Contains(r0, "forfeit") || strings.Contains(r0, "aborted") {
		t.Errorf("results:\n%s\n%s", r0, r1)
	}
}
