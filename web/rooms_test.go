package web_test

import (
	"strconv"
	"strings"
	"testing"

	"sirtommy/lobby"
	"sirtommy/race"
)

type roomReply struct {
	ID   string
	Room lobby.Room
	Link string
	Left bool
}

// TestRoomRaceOfFourAndAgain: ann makes a room, three friends join it by
// its code (every member hears each arrival), bob may not start it, ann
// starts a race of the four: every seat kept for its member, unrated,
// ranked at the end. A latecomer joins during the race and waits; ann
// starts the next race, of five, once this one is over. An eleventh is
// refused (race-full), as are a start with one member (too-few) and an
// unknown code.
func TestRoomRaceOfFourAndAgain(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	names := []string{"ann", "bob", "cy", "dee"}
	cs := make([]*client, len(names))
	for i, n := range names {
		cs[i] = e.dial()
		cs[i].hello(n)
	}
	ann := cs[0]
	ann.send(map[string]any{"type": "room", "id": "r", "variant": "classic", "timeLimitSeconds": 300})
	made := decode[roomReply](t, ann.until(func(m msg) bool { return m.Type == "room" && m.ID == "r" }))
	if len(made.Room.Code) < 8 || !strings.HasSuffix(made.Link, "/?room="+made.Room.Code) || made.Room.Host == "" || len(made.Room.Members) != 1 {
		t.Fatalf("room %+v", made)
	}
	code := made.Room.Code
	ann.expectError(map[string]any{"type": "start-room", "code": code}, lobby.CodeTooFew)
	for i, c := range cs[1:] {
		c.send(map[string]any{"type": "join-room", "code": strings.ToLower(code), "id": "j"})
		got := decode[roomReply](t, c.until(func(m msg) bool { return m.Type == "room" && m.ID == "j" }))
		if len(got.Room.Members) != i+2 {
			t.Fatalf("%s joined: %d members", names[i+1], len(got.Room.Members))
		}
	}
	// ann heard every arrival.
	heard := decode[roomReply](t, ann.until(func(m msg) bool {
		return m.Type == "room" && strings.Contains(string(m.raw), `"name":"dee"`)
	}))
	if len(heard.Room.Members) != 4 {
		t.Fatalf("ann's room: %+v", heard.Room)
	}
	cs[1].expectError(map[string]any{"type": "start-room", "code": code}, lobby.CodeNotHost)
	cs[1].expectError(map[string]any{"type": "join-room", "code": "NOSUCHROOM"}, lobby.CodeNoSuchRoom)

	ann.send(map[string]any{"type": "start-room", "code": code, "id": "s"})
	seats := map[int]bool{}
	var raceID string
	for i, c := range cs {
		mt := decode[struct {
			matched
			Room    string
			Players []lobby.PlayerRef
		}](t, c.untilType("matched"))
		if mt.Via != "room" || mt.Room != code || mt.Rated || len(mt.Players) != 4 || mt.Players[mt.Seat].Name != names[i] {
			t.Fatalf("%s matched %+v", names[i], mt)
		}
		raceID = mt.Race
		c.send(map[string]any{"type": "join", "race": mt.Race, "id": "jr"})
		j := c.untilType("joined")
		c.seat, c.tok = *j.Seat, j.Token
		seats[c.seat] = true
	}
	if len(seats) != 4 {
		t.Fatalf("seats %v", seats)
	}
	// A stranger may not take a seat of the room's race.
	stranger := e.dial()
	stranger.hello("eve")
	stranger.expectError(map[string]any{"type": "join", "race": raceID}, lobby.CodeNotYourSeat)
	for _, c := range cs {
		c.untilState(race.Countdown)
	}
	e.clock.Advance(race.DefaultCountdown)
	for _, c := range cs {
		c.untilState(race.Running)
	}
	// eve joins the room during the race: she races from the next start.
	stranger.send(map[string]any{"type": "join-room", "code": code, "id": "late"})
	stranger.until(func(m msg) bool { return m.Type == "room" && m.ID == "late" })
	// Everyone resigns: the race ends, ranked.
	for i, c := range cs {
		c.send(map[string]any{"type": "resign", "id": "x" + strconv.Itoa(i)})
		c.until(func(m msg) bool {
			return m.Type == "moved" && m.ID == "x"+strconv.Itoa(i) || m.Type == "state" && m.Result != nil
		})
	}
	res := cs[0].result()
	if res.Rated || len(res.Ranking) != 4 {
		t.Fatalf("result %+v: want unrated, four ranked", res)
	}
	// Each racer's history keeps the race with their place in the field
	// of four, and no rating moved.
	for i, c := range cs {
		var prof lobby.Profile
		if st := e.get("/api/players/"+playerOf(t, c), &prof); st != 200 || len(prof.History) != 1 {
			t.Fatalf("%s's profile: %d, %d races", names[i], st, len(prof.History))
		}
		g := prof.History[0]
		if g.Race != raceID || len(g.Players) != 4 || len(g.Ranking) != 4 || g.Rated || len(prof.Standings) != 0 {
			t.Fatalf("%s's history %+v, standings %+v", names[i], g, prof.Standings)
		}
	}
	_, _, txt := e.getRaw("/api/players/" + playerOf(t, ann) + "/games.txt")
	if !strings.Contains(txt, `[Place "`) || !strings.Contains(txt, ` of 4`) || strings.Contains(txt, "[Opponent") {
		t.Errorf("ann's games.txt does not give her place among four:\n%s", txt)
	}
	// The players are free again: the host starts the next race, of five.
	ann.send(map[string]any{"type": "start-room", "code": code, "id": "s2"})
	var next string
	for _, c := range append(cs, stranger) {
		mt := decode[struct {
			matched
			Players []lobby.PlayerRef
		}](t, c.until(func(m msg) bool { return m.Type == "matched" && !strings.Contains(string(m.raw), raceID) }))
		if len(mt.Players) != 5 {
			t.Fatalf("the next race: %+v", mt)
		}
		next = mt.Race
	}
	if next == raceID {
		t.Fatal("the next race is the same race")
	}
	// A full room refuses an eleventh.
	for i := range 5 {
		c := e.dial()
		c.hello("x" + strconv.Itoa(i))
		c.send(map[string]any{"type": "join-room", "code": code, "id": "f"})
		c.until(func(m msg) bool { return m.Type == "room" && m.ID == "f" })
	}
	eleventh := e.dial()
	eleventh.hello("eleven")
	eleventh.expectError(map[string]any{"type": "join-room", "code": code}, race.CodeRaceFull)
	// Leaving hands the host's part on.
	ann.send(map[string]any{"type": "leave-room", "code": code, "id": "l"})
	left := decode[roomReply](t, ann.until(func(m msg) bool { return m.Type == "room" && m.ID == "l" }))
	if !left.Left || left.Room.Host != left.Room.Members[0].ID || left.Room.Members[0].Name != "bob" || len(left.Room.Members) != 9 {
		t.Fatalf("after ann left: %+v", left)
	}
	ann.expectError(map[string]any{"type": "start-room", "code": code}, lobby.CodeNotInRoom)
}

// playerOf is the player id a client said hello as.
func playerOf(t *testing.T, c *client) string {
	t.Helper()
	for _, m := range c.all {
		if m.Type == "welcome" {
			return decode[welcome](t, m).Player
		}
	}
	t.Fatal("no welcome")
	return ""
}
