package web_test

import (
	"testing"

	"sirtommy/lobby"
	"sirtommy/race"
)

// helloAs says hello on c as the player of a welcome (their token).
func (c *client) helloAs(w welcome) {
	c.t.Helper()
	c.send(map[string]any{"type": "hello", "token": w.Token, "id": "h"})
	if got := decode[welcome](c.t, c.untilType("welcome")); got.Player != w.Player {
		c.t.Fatalf("hello as %s: welcome %+v", w.Player, got)
	}
}

// noReplaced checks that c still holds its seat: it answers a ping, and
// was sent no "replaced" meanwhile.
func (c *client) noReplaced() {
	c.t.Helper()
	c.send(map[string]any{"type": "ping", "id": "still-here"})
	c.until(func(m msg) bool { return m.Type == "pong" && m.ID == "still-here" })
	for _, m := range c.all {
		if m.Type == "replaced" {
			c.t.Fatalf("the seat was taken: %s", m.raw)
		}
	}
}

// TestLobbySeatIsBoundToItsPlayer: a seat the lobby reserved resumes only
// for its player. Another player holding its token is refused with
// not-your-seat and its player keeps it; an anonymous connection can
// neither join nor resume it; a resume gives a fresh token in "joined" and
// the one it was given stops working.
func TestLobbySeatIsBoundToItsPlayer(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a, b, wa, wb, mt := e.startQuick()
	a.untilState(race.Running)

	// bob, logged in, tries ann's seat with ann's token.
	b2 := e.dial()
	b2.helloAs(wb)
	b2.expectError(map[string]any{"type": "resume", "race": mt.Race, "token": a.tok, "id": "steal"}, lobby.CodeNotYourSeat)
	a.noReplaced()
	b.noReplaced()

	// Nobody anonymous joins or resumes it.
	anon := e.dial()
	anon.expectError(map[string]any{"type": "join", "race": mt.Race, "name": "eve", "id": "j"}, lobby.CodeNotYourSeat)
	anon.expectError(map[string]any{"type": "resume", "race": mt.Race, "token": a.tok, "id": "r"}, lobby.CodeNotYourSeat)
	a.noReplaced()

	// ann herself resumes on a new connection: a fresh token, and the one
	// she sent is spent.
	a2 := e.dial()
	a2.helloAs(wa)
	a2.send(map[string]any{"type": "resume", "race": mt.Race, "token": a.tok, "id": "back"})
	j := a2.untilType("joined")
	if j.Token == "" || j.Token == a.tok || *j.Seat != a.seat {
		t.Fatalf("resume answered %s; want seat %d with a new token", j.raw, a.seat)
	}
	a.untilType("replaced")
	a3 := e.dial()
	a3.helloAs(wa)
	a3.expectError(map[string]any{"type": "resume", "race": mt.Race, "token": a.tok, "id": "old"}, race.CodeBadToken)
	a2.noReplaced()
	a3.send(map[string]any{"type": "resume", "race": mt.Race, "token": j.Token, "id": "new"})
	if j3 := a3.untilType("joined"); j3.Token == j.Token {
		t.Errorf("the second resume kept the token %s", j.Token)
	}
	a2.untilType("replaced")
}

// TestAPISeatResumesWithItsTokenAlone: a race made over the API reserves
// no player: its seat token alone resumes it, from any connection, and
// each resume spends the token it was given.
func TestAPISeatResumesWithItsTokenAlone(t *testing.T) {
	e := newEnv(t, nil)
	id := e.create(`{}`)
	a, b := e.dial(), e.dial()
	a.join(id, "ann")
	b.join(id, "bob")
	a2 := e.dial()
	a2.send(map[string]any{"type": "resume", "race": id, "token": a.tok, "id": "r"})
	j := a2.untilType("joined")
	if j.Token == a.tok || *j.Seat != a.seat {
		t.Fatalf("resume answered %s", j.raw)
	}
	a.untilType("replaced")
	e.dial().expectError(map[string]any{"type": "resume", "race": id, "token": a.tok}, race.CodeBadToken)
	a3 := e.dial()
	a3.send(map[string]any{"type": "resume", "race": id, "token": j.Token, "id": "r"})
	a3.untilType("joined")
}
