package lobby_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
)

// TestInMassRefusesWaitingElsewhere: a player in an open mass race may
// not queue, open a challenge or accept one or an invite (in-mass),
// from the tab that joined or from another of theirs; the refusal leaves
// the mass race as it was, and once they leave it they may.
func TestInMassRefusesWaitingElsewhere(t *testing.T) {
	f := newFixture(t)
	ann, annW, _ := f.enter(t, "ann")
	bob, _, _ := f.enter(t, "bob")
	// A second tab of ann's: the same player, another session.
	tab, _, err := f.lobby.Enter(annW.Token, "", &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := bob.Challenge(lobby.RaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := bob.Invite(lobby.RaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ann.JoinMass("classic"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*lobby.Session{ann, tab} {
		for name, try := range map[string]func() error{
			"queue":            func() error { _, err := s.Queue("aces-out"); return err },
			"challenge":        func() error { _, err := s.Challenge(lobby.RaceOptions{}); return err },
			"accept-challenge": func() error { return s.AcceptChallenge(ch.ID) },
			"accept-invite":    func() error { return s.AcceptInvite(inv.Code) },
		} {
			err := try()
			if race.ErrorCode(err) != lobby.CodeInMass {
				t.Fatalf("%s while in the mass race: %v, want %s", name, err, lobby.CodeInMass)
			}
			var re *race.Error
			if want := "you are in the classic mass race; leave it first"; !errors.As(err, &re) || re.Message != want {
				t.Errorf("%s: %v, want the message %q", name, err, want)
			}
		}
	}
	// Nothing changed: ann is still in it alone, bob's challenge open.
	mass := ann.Snapshot().Mass
	if len(mass) != 1 || mass[0].Variant != "classic" || mass[0].Joined != 1 {
		t.Fatalf("the mass races after the refusals: %+v", mass)
	}
	if cs := ann.Snapshot().Challenges; len(cs) != 1 || cs[0].ID != ch.ID {
		t.Fatalf("the challenges after the refusals: %+v", cs)
	}
	if p := f.lobby.Presence(); p.Queued != 0 {
		t.Fatalf("%d queued after the refusals", p.Queued)
	}
	if err := ann.LeaveMass(); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Queue("aces-out"); err != nil {
		t.Fatalf("queue once out of the mass race: %v", err)
	}
}

// TestMassRaceIsThePlayers: the mass race is the player's, not the
// tab's: another tab sees them among its members and may leave it; a tab
// closed while another is open leaves them in; their last tab closed
// takes them out.
func TestMassRaceIsThePlayers(t *testing.T) {
	f := newFixture(t)
	ann, w, _ := f.enter(t, "ann")
	tab, _, err := f.lobby.Enter(w.Token, "", &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ann.JoinMass("classic"); err != nil {
		t.Fatal(err)
	}
	in := func() bool {
		ms := tab.Snapshot().Mass
		return len(ms) == 1 && len(ms[0].Members) == 1 && ms[0].Members[0] == lobby.PlayerRef{ID: w.ID, Name: "ann"}
	}
	if !in() {
		t.Fatalf("the other tab's lobby lists %+v, want ann in the classic mass race", tab.Snapshot().Mass)
	}
	if err := tab.LeaveMass(); err != nil {
		t.Fatalf("leave from the other tab: %v", err)
	}
	if err := ann.LeaveMass(); race.ErrorCode(err) != lobby.CodeNotInMass {
		t.Fatalf("leave again from the first: %v, want %s", err, lobby.CodeNotInMass)
	}
	// Joined from the other tab, the first closed: still in.
	if _, err := tab.JoinMass("classic"); err != nil {
		t.Fatal(err)
	}
	ann.Leave()
	if !in() {
		t.Fatalf("one of two tabs closed: the lobby lists %+v", tab.Snapshot().Mass)
	}
	tab.Leave()
	if ms := f.lobby.Snapshot().Mass; len(ms) != 0 {
		t.Fatalf("every tab closed: the lobby lists %+v", ms)
	}
}

// TestLobbyNowIsWhenWritten: the lobby message's now is the clock's time
// when it is encoded, not when the lobby was read: an update sent late
// (held while its connection raced) is not stale.
func TestLobbyNowIsWhenWritten(t *testing.T) {
	f := newFixture(t)
	ev := f.lobby.Snapshot()
	f.clock.Advance(2500 * time.Millisecond)
	b, err := ev.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got lobby.LobbyEvent
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !got.Now.Equal(f.clock.Now()) || !strings.HasPrefix(string(b), `{"now":"2026-01-01T00:00:02.500Z",`) {
		t.Fatalf("encoded at %v: %s", f.clock.Now(), b)
	}
	if m, err := json.Marshal(ev); err != nil || string(m) != string(b) {
		t.Fatalf("encoding/json: %s (%v), want %s", m, err, b)
	}
}
