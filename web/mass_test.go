package web_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
)

type massReply struct {
	ID   string
	Mass *lobby.MassRace
}

// untilMass asks c's lobby and reads its lobby messages (the answer, or
// an update before it) until one lists mass races that ok accepts.
func untilMass(t *testing.T, c *client, ok func([]lobby.MassRace) bool) []lobby.MassRace {
	t.Helper()
	c.send(map[string]any{"type": "lobby", "id": "l"})
	var ms []lobby.MassRace
	c.until(func(m msg) bool {
		if m.Type != "lobby" {
			return false
		}
		ms = decode[lobby.LobbyEvent](t, m).Mass
		return ok(ms)
	})
	return ms
}

// TestMassRaceStartsAtThreeAndWhenFull: players join the classic mass race
// from the lobby; its countdown starts at the third (and stops when one
// leaves), it starts when the countdown ends with everyone in it, public
// and unrated, and the next one opens; ten joined start it at once, and
// an eleventh is refused.
func TestMassRaceStartsAtThreeAndWhenFull(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	cs := make([]*client, 3)
	for i := range cs {
		cs[i] = e.dial()
		cs[i].hello("m" + strconv.Itoa(i))
	}
	join := func(c *client) massReply {
		t.Helper()
		c.send(map[string]any{"type": "join-mass", "variant": "classic", "id": "jm"})
		return decode[massReply](t, c.until(func(m msg) bool { return m.ID == "jm" && (m.Type == "mass-joined" || m.Type == "error") }))
	}
	for i, c := range cs[:2] {
		if r := join(c); r.Mass == nil || r.Mass.Joined != i+1 || r.Mass.StartAt != nil {
			t.Fatalf("join %d: %+v", i, r.Mass)
		}
	}
	third := join(cs[2])
	if third.Mass == nil || third.Mass.Joined != 3 || third.Mass.StartAt == nil || !third.Mass.StartAt.Equal(e.clock.Now().Add(lobby.MassWait)) {
		t.Fatalf("the third: %+v, want the countdown started", third.Mass)
	}
	untilMass(t, cs[0], func(ms []lobby.MassRace) bool {
		return len(ms) == 1 && ms[0].Joined == 3 && ms[0].Seats == 10 && ms[0].StartAt != nil
	})
	// One leaves: the countdown stops; back, it starts again.
	cs[2].send(map[string]any{"type": "leave-mass", "id": "lm"})
	cs[2].until(func(m msg) bool { return m.Type == "mass-left" && m.ID == "lm" })
	untilMass(t, cs[0], func(ms []lobby.MassRace) bool { return len(ms) == 1 && ms[0].Joined == 2 && ms[0].StartAt == nil })
	cs[2].expectError(map[string]any{"type": "leave-mass"}, lobby.CodeNotInMass)
	join(cs[2])
	e.clock.Advance(lobby.MassWait + time.Second) // the countdown, then a heartbeat
	var raceID string
	for _, c := range cs {
		mt := decode[struct {
			matched
			Players []lobby.PlayerRef
		}](t, c.untilType("matched"))
		if mt.Via != "mass" || mt.Rated || len(mt.Players) != 3 {
			t.Fatalf("matched %+v", mt)
		}
		raceID = mt.Race
		c.send(map[string]any{"type": "join", "race": mt.Race, "id": "j"})
		c.untilType("joined")
	}
	for _, c := range cs {
		c.untilState(race.Countdown)
	}
	if in := e.info(raceID); !in.Public || len(in.Players) != 3 {
		t.Fatalf("the mass race: public %v, %d players", in.Public, len(in.Players))
	}
	// The next one is open; ten joined start it at the next heartbeat.
	ten := make([]*client, 10)
	for i := range ten {
		ten[i] = e.dial()
		ten[i].hello("t" + strconv.Itoa(i))
		if r := join(ten[i]); r.Mass == nil || r.Mass.Joined != i+1 {
			t.Fatalf("joiner %d of the next: %+v", i, r.Mass)
		}
	}
	eleventh := e.dial()
	eleventh.hello("eleven")
	eleventh.expectError(map[string]any{"type": "join-mass", "variant": "classic"}, race.CodeRaceFull)
	// A racer may not join while their race runs.
	cs[0].expectError(map[string]any{"type": "join-mass", "variant": "classic"}, lobby.CodeInRace)
	e.clock.Advance(time.Second)
	for _, c := range ten {
		mt := decode[struct {
			matched
			Players []lobby.PlayerRef
		}](t, c.untilType("matched"))
		if mt.Via != "mass" || len(mt.Players) != 10 {
			t.Fatalf("matched %+v", mt)
		}
	}
}

// TestMassRaceOneAtATime: joining another variant's mass race leaves the
// one joined before.
func TestMassRaceOneAtATime(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a, b := e.dial(), e.dial()
	a.hello("ann")
	b.hello("bob")
	for _, c := range []*client{a, b} {
		c.send(map[string]any{"type": "join-mass", "variant": "classic", "id": "j1"})
		c.until(func(m msg) bool { return m.Type == "mass-joined" && m.ID == "j1" })
	}
	a.send(map[string]any{"type": "join-mass", "variant": "aces-out", "id": "j2"})
	a.until(func(m msg) bool { return m.Type == "mass-joined" && m.ID == "j2" })
	untilMass(t, b, func(ms []lobby.MassRace) bool {
		joined := map[string]int{}
		for _, m := range ms {
			joined[m.Variant] = m.Joined
		}
		return len(ms) == 2 && joined["classic"] == 1 && joined["aces-out"] == 1
	})
}

// TestInMassRefusedOverWebsockets: a player in the classic mass race is
// refused queue, challenge, accept-challenge and accept-invite with
// in-mass, on the tab that joined and on another of theirs, and the mass
// race still lists them.
func TestInMassRefusedOverWebsockets(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a, bob := e.dial(), e.dial()
	w := a.hello("ann")
	bob.hello("bob")
	bob.send(map[string]any{"type": "challenge", "id": "c"})
	ch := decode[struct{ Challenge lobby.ChallengeInfo }](t, bob.untilType("challenged")).Challenge
	bob.send(map[string]any{"type": "invite", "id": "i"})
	inv := decode[struct{ Code string }](t, bob.untilType("invited"))
	a.send(map[string]any{"type": "join-mass", "variant": "classic", "id": "jm"})
	a.until(func(m msg) bool { return m.Type == "mass-joined" && m.ID == "jm" })
	a2 := e.dial()
	a2.helloAs(w)
	for _, c := range []*client{a, a2} {
		for _, m := range []map[string]any{
			{"type": "queue", "variant": "aces-out"},
			{"type": "challenge"},
			{"type": "accept-challenge", "challenge": ch.ID},
			{"type": "accept-invite", "code": inv.Code},
		} {
			if got := c.expectError(m, lobby.CodeInMass); !strings.Contains(string(got.raw), "you are in the classic mass race; leave it first") {
				t.Errorf("%v: %s", m, got.raw)
			}
		}
	}
	untilMass(t, bob, func(ms []lobby.MassRace) bool { return len(ms) == 1 && ms[0].Joined == 1 })
	if p := e.lobby.Snapshot().Presence; p.Queued != 0 {
		t.Fatalf("presence %+v after the refusals", p)
	}
}

// TestMassRaceSeenFromAnotherTab: the lobby lists who is in a mass race,
// so a second tab of a player who joined from the first sees them in it;
// leave-mass from that tab leaves, and the first tab sees them out.
func TestMassRaceSeenFromAnotherTab(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a := e.dial()
	w := a.hello("ann")
	a2 := e.dial()
	a2.helloAs(w)
	a.send(map[string]any{"type": "join-mass", "variant": "classic", "id": "jm"})
	joined := decode[massReply](t, a.until(func(m msg) bool { return m.Type == "mass-joined" && m.ID == "jm" }))
	if joined.Mass == nil || len(joined.Mass.Members) != 1 || joined.Mass.Members[0] != (lobby.PlayerRef{ID: w.Player, Name: "ann"}) {
		t.Fatalf("mass-joined %+v: want ann as its member", joined.Mass)
	}
	untilMass(t, a2, func(ms []lobby.MassRace) bool {
		return len(ms) == 1 && len(ms[0].Members) == 1 && ms[0].Members[0].ID == w.Player && ms[0].Members[0].Name == "ann"
	})
	a2.send(map[string]any{"type": "leave-mass", "id": "lm"})
	if left := a2.until(func(m msg) bool { return m.ID == "lm" }); left.Type != "mass-left" {
		t.Fatalf("leave-mass from the other tab: %s", left.raw)
	}
	untilMass(t, a, func(ms []lobby.MassRace) bool { return len(ms) == 0 })
	// Out from either tab: neither may leave again.
	a.expectError(map[string]any{"type": "leave-mass"}, lobby.CodeNotInMass)
	a2.expectError(map[string]any{"type": "leave-mass"}, lobby.CodeNotInMass)
}

// TestLobbyCarriesServerTime: the lobby message carries the server's time
// as it is sent (RFC 3339 with milliseconds), so that a browser whose
// clock is off still counts a mass race down right.
func TestLobbyCarriesServerTime(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a, b := e.dial(), e.dial()
	a.hello("ann")
	b.hello("bob")
	e.clock.Advance(1500 * time.Millisecond)
	want := e.clock.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")
	// What was sent before the clock moved is read first.
	a.send(map[string]any{"type": "ping", "id": "p"})
	a.until(func(m msg) bool { return m.Type == "pong" && m.ID == "p" })
	// The reply to lobby, and an update (bob joined).
	a.send(map[string]any{"type": "lobby"})
	reply := a.untilType("lobby")
	b.send(map[string]any{"type": "join-mass", "variant": "classic", "id": "jm"})
	update := a.until(func(m msg) bool { return m.Type == "lobby" && len(decode[lobby.LobbyEvent](t, m).Mass) == 1 })
	for what, m := range map[string]msg{"reply": reply, "update": update} {
		if !strings.Contains(string(m.raw), `"now":"`+want+`"`) {
			t.Errorf("the lobby %s has no now %s: %s", what, want, m.raw)
		}
		if ev := decode[lobby.LobbyEvent](t, m); !ev.Now.Equal(e.clock.Now()) {
			t.Errorf("the lobby %s: now %v, want the server's %v", what, ev.Now, e.clock.Now())
		}
	}
}
