package web_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/web"
)

// testSecret signs the test server's player tokens.
const testSecret = "0123456789abcdef0123456789abcdef"

type lobbyEnv struct {
	*env
	lobby *lobby.Lobby
	// ratings is the lobby's store, for tests that save races into it.
	ratings *memlobby.Ratings
}

func newLobbyEnv(t *testing.T, cfg lobby.Config) *lobbyEnv {
	t.Helper()
	return newLobbyEnvOver(t, cfg, nil)
}

// newLobbyEnvOver is newLobbyEnv whose lobby reads and writes its ratings
// through over(the store), when over is not nil: a store that fails, or
// counts what it is asked.
func newLobbyEnvOver(t *testing.T, cfg lobby.Config, over func(*memlobby.Ratings) lobby.Ratings) *lobbyEnv {
	t.Helper()
	var l *lobby.Lobby
	ratings := memlobby.NewRatings()
	var store lobby.Ratings = ratings
	if over != nil {
		store = over(ratings)
	}
	e := newEnvWith(t, func(clock *racetest.Clock, d *web.Deps) {
		tokens, err := lobby.NewTokens([]byte(testSecret), clock, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		stores := memlobby.NewStores(lobby.MatchConfig{}, clock)
		stores.Ratings = store
		l = lobby.New(cfg, lobby.Deps{
			Clock: clock, Log: zerolog.Nop(), Races: d.Races, Tokens: tokens,
			Stores: stores, Computer: lobby.ComputerFactory(d.Computer),
			DailySecret: []byte(testSecret),
		})
		d.Lobby = l
	})
	t.Cleanup(l.Close) // after the connections close (cleanups run last first)
	return &lobbyEnv{env: e, lobby: l, ratings: ratings}
}

// decode reads a message's raw JSON into v.
func decode[T any](t testing.TB, m msg) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(m.raw, &v); err != nil {
		t.Fatalf("decode %s: %v", m.raw, err)
	}
	return v
}

type welcome struct {
	Player, Name, Token string
}

func (c *client) hello(name string) welcome {
	c.t.Helper()
	c.send(map[string]any{"type": "hello", "name": name, "id": "h"})
	return decode[welcome](c.t, c.untilType("welcome"))
}

type matched struct {
	Race, Variant, Via string
	Seat               int
	Rated              bool
	Opponent           lobby.PlayerRef
}

// takeSeat joins the race a "matched" named and returns it.
func (c *client) takeSeat() matched {
	c.t.Helper()
	mt := decode[matched](c.t, c.untilType("matched"))
	c.send(map[string]any{"type": "join", "race": mt.Race, "id": "j"})
	j := c.untilType("joined")
	if *j.Seat != mt.Seat {
		c.t.Fatalf("joined seat %d, matched seat %d", *j.Seat, mt.Seat)
	}
	c.seat, c.tok = *j.Seat, j.Token
	return mt
}

// playBlind plays from the views the server sends until the player's game
// or the race is over.
func (c *client) playBlind(v engine.View, moves int) {
	c.t.Helper()
	for i := 0; i < moves && v.Status == engine.Playing && !c.finished(); i++ {
		mv, ok := racetest.FromView(&v)
		if !ok {
			c.t.Fatalf("no move from view %+v", v)
		}
		id := "m" + strconv.Itoa(i)
		c.send(map[string]any{"type": "move", "move": mv.String(), "id": id})
		m := c.until(func(m msg) bool { return m.Type == "error" || (m.Type == "moved" && m.ID == id) })
		if m.Type == "error" {
			if m.Code == race.CodeRaceOver {
				return
			}
			c.t.Fatalf("move %s refused: %s", mv, m.raw)
		}
		v = *m.View
	}
}

func (e *lobbyEnv) get(path string, v any) int {
	e.t.Helper()
	res, err := http.Get(e.ts.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	if v != nil {
		_ = json.NewDecoder(res.Body).Decode(v)
	}
	return res.StatusCode
}

// startQuick pairs two new players by quick play and runs the countdown.
func (e *lobbyEnv) startQuick() (a, b *client, wa, wb welcome, mt matched) {
	e.t.Helper()
	a, b = e.dial(), e.dial()
	wa, wb = a.hello("ann"), b.hello("bob")
	a.send(map[string]any{"type": "queue", "variant": "classic", "id": "q"})
	a.untilType("queued")
	b.send(map[string]any{"type": "queue", "variant": "classic", "id": "q"})
	mt = a.takeSeat()
	mb := b.takeSeat()
	if mt.Race != mb.Race || mt.Seat == mb.Seat || mt.Via != "quick" || !mt.Rated || mt.Opponent.Name != "bob" {
		e.t.Fatalf("matched %+v and %+v", mt, mb)
	}
	a.untilState(race.Countdown)
	b.untilState(race.Countdown)
	e.clock.Advance(race.DefaultCountdown)
	return a, b, wa, wb, mt
}

func TestQuickPlayRaceToTheEndAndRatings(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a, b, wa, wb, mt := e.startQuick()
	sa := a.untilState(race.Running)
	va, vb := sa.You, b.untilState(race.Running).You
	// Both seats name their lobby players, with their ratings as paired.
	seatIDs := map[int]string{mt.Seat: wa.Player, 1 - mt.Seat: wb.Player}
	for s, p := range sa.Players {
		if p.Player != seatIDs[s] || p.Rating != 1500 {
			t.Errorf("seat %d's player is %+v, want id %s rated 1500", s, p, seatIDs[s])
		}
	}
	for !a.finished() && !b.finished() {
		a.playBlind(*va, 5)
		if a.finished() {
			break
		}
		b.playBlind(*vb, 5)
		va, vb = lastView(a), lastView(b)
		if va.Status != engine.Playing && vb.Status != engine.Playing {
			break
		}
	}
	ra, rb := a.result(), b.result()
	if ra.Outcome == "aborted" || !ra.Rated || ra.Outcome != rb.Outcome {
		t.Fatalf("results %+v / %+v", ra, rb)
	}
	// The ratings are updated just after the race: poll the profiles.
	var pa lobby.Profile
	deadline := time.Now().Add(safetyTimeout)
	for e.get("/api/players/"+wa.Player, &pa) != http.StatusOK || len(pa.History) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no history for ann")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if h := pa.History[0]; h.Race != mt.Race || !h.Rated || len(pa.Standings) != 1 || pa.Standings[0].Games != 1 {
		t.Fatalf("profile %+v", pa)
	}
	st := pa.Standings[0]
	switch {
	case ra.Winner == nil:
		if st.Draws != 1 || st.Streak != 0 || st.WinPercent != 50 {
			t.Errorf("draw recorded as %+v", st)
		}
	case *ra.Winner == mt.Seat:
		if st.Wins != 1 || st.Rating.Rating <= 1500 || st.Streak != 1 || st.WinPercent != 100 {
			t.Errorf("win recorded as %+v", st)
		}
	default:
		if st.Losses != 1 || st.Rating.Rating >= 1500 || st.Streak != -1 {
			t.Errorf("loss recorded as %+v", st)
		}
	}
	var board struct{ Standings []lobby.Standing }
	deadline = time.Now().Add(safetyTimeout)
	for e.get("/api/leaderboard/classic", &board); len(board.Standings) < 2; e.get("/api/leaderboard/classic", &board) {
		if time.Now().After(deadline) {
			t.Fatalf("leaderboard %+v", board)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ids := board.Standings[0].Player + board.Standings[1].Player
	if !strings.Contains(ids, wa.Player) || !strings.Contains(ids, wb.Player) ||
		board.Standings[0].Rating.Rating < board.Standings[1].Rating.Rating {
		t.Errorf("leaderboard %+v", board.Standings)
	}
}

// lastView is the player's view after their last accepted move.
func lastView(c *client) *engine.View {
	for i := len(c.all) - 1; i >= 0; i-- {
		switch m := c.all[i]; {
		case m.Type == "moved":
			return m.View
		case m.Type == "state" && m.You != nil:
			return m.You
		}
	}
	return nil
}

type lobbyMsg struct {
	Presence   lobby.Presence
	Challenges []lobby.ChallengeInfo
	Races      []lobby.RaceSummary
}

func TestSpectatorJoinsAListedRace(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	w := e.dial()
	w.hello("wes")
	a, b, _, _, mt := e.startQuick()
	a.untilState(race.Running)
	b.untilState(race.Running)
	// The watcher's lobby lists the race (with the heartbeat's refresh).
	e.clock.Advance(e.lobby.Config().Tick)
	lm := decode[lobbyMsg](t, w.until(func(m msg) bool {
		return m.Type == "lobby" && strings.Contains(string(m.raw), `"state":"running"`)
	}))
	if lm.Presence.Online != 3 || lm.Presence.Racing != 2 || lm.Presence.Queued != 0 {
		t.Errorf("presence %+v", lm.Presence)
	}
	r := lm.Races[0]
	if r.Race != mt.Race || r.State != race.Running || r.Players[0].Name == "" || r.Players[1].Name == "" {
		t.Fatalf("listed %+v", r)
	}
	var api lobbyMsg
	if st := e.get("/api/lobby", &api); st != http.StatusOK || len(api.Races) != 1 || api.Races[0].Race != mt.Race || api.Presence.Online != 3 {
		t.Fatalf("GET /api/lobby: %d %+v", st, api)
	}
	w.send(map[string]any{"type": "watch", "race": r.Race, "id": "w"})
	w.untilType("watching")
	if st := w.untilType("state"); st.Boards == nil || st.State != race.Running {
		t.Fatalf("spectator state %s", st.raw)
	}
	a.playBlind(*lastView(a), 1)
	if bd := w.untilType("board"); *bd.Seat != a.seat {
		t.Fatalf("board %s", bd.raw)
	}
	e.clock.Advance(e.lobby.Config().Tick)
	w.until(func(m msg) bool {
		if m.Type != "lobby" {
			return false
		}
		lm := decode[lobbyMsg](t, m)
		return len(lm.Races) == 1 && lm.Races[0].Spectators == 1 && lm.Races[0].Scores[a.seat]+lm.Races[0].Scores[b.seat] >= 0
	})
	// A spectator cannot take a seat the lobby reserved for others.
	x := e.dial()
	x.hello("xena")
	x.expectError(map[string]any{"type": "join", "race": mt.Race}, lobby.CodeNotYourSeat)
}

type invited struct {
	Code, Link string
	ExpiresAt  time.Time
}

func TestInviteCodeFlow(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a, b, c := e.dial(), e.dial(), e.dial()
	a.hello("ann")
	b.hello("bob")
	c.hello("cy")
	a.send(map[string]any{"type": "invite", "variant": "strict", "deal": "42", "bestOf": 3, "timeLimitSeconds": 300, "id": "i"})
	inv := decode[invited](t, a.untilType("invited"))
	if len(inv.Code) < 8 || !strings.HasSuffix(inv.Link, "/?invite="+inv.Code) {
		t.Fatalf("invite %+v", inv)
	}
	a.expectError(map[string]any{"type": "accept-invite", "code": inv.Code}, lobby.CodeOwnInvite)
	b.expectError(map[string]any{"type": "accept-invite", "code": "ZZZZZZZZZZ"}, lobby.CodeNoSuchInvite)
	// Codes are read out: lower case and dashes are fine.
	b.send(map[string]any{"type": "accept-invite", "code": strings.ToLower(inv.Code[:5] + "-" + inv.Code[5:]), "id": "a"})
	ma, mb := a.takeSeat(), b.takeSeat()
	if ma.Race != mb.Race || ma.Via != "invite" || ma.Variant != "strict" || ma.Rated {
		t.Fatalf("matched %+v / %+v", ma, mb)
	}
	st := a.untilState(race.Countdown)
	if !strings.Contains(string(st.raw), `"deal":"42"`) || !strings.Contains(string(st.raw), `"bestOf":3`) {
		t.Errorf("race options not kept: %s", st.raw)
	}
	// Used: nobody else gets in with it.
	c.expectError(map[string]any{"type": "accept-invite", "code": inv.Code}, lobby.CodeNoSuchInvite)
	c.expectError(map[string]any{"type": "join", "race": ma.Race}, lobby.CodeNotYourSeat)
	// An unused invite expires.
	a2 := e.dial()
	a2.hello("dee")
	a2.send(map[string]any{"type": "invite", "id": "i2"})
	inv2 := decode[invited](t, a2.untilType("invited"))
	e.clock.Advance(e.lobby.Config().InviteTTL)
	c.expectError(map[string]any{"type": "accept-invite", "code": inv2.Code}, lobby.CodeInviteExpired)
	// An invite whose author has gone waits for them.
	d := e.dial()
	d.hello("dan")
	d.send(map[string]any{"type": "invite", "id": "i3"})
	inv3 := decode[invited](t, d.untilType("invited"))
	d.ws.Close()
	for deadline := time.Now().Add(safetyTimeout); e.lobby.Snapshot().Presence.Online > 4; {
		if time.Now().After(deadline) {
			t.Fatal("dan still online")
		}
		time.Sleep(time.Millisecond)
	}
	c.expectError(map[string]any{"type": "accept-invite", "code": inv3.Code}, lobby.CodeInviterAway)
	c.expectError(map[string]any{"type": "invite", "bestOf": 2}, race.CodeBadOptions)
}

func TestChallengesAreListedAndAccepted(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a, b := e.dial(), e.dial()
	wa := a.hello("ann")
	b.hello("bob")
	a.send(map[string]any{"type": "challenge", "variant": "aces-out", "rated": true, "id": "c"})
	ch := decode[struct{ Challenge lobby.ChallengeInfo }](t, a.untilType("challenged")).Challenge
	if ch.Player != wa.Player || ch.Variant != "aces-out" || !ch.Rated {
		t.Fatalf("challenge %+v", ch)
	}
	lm := decode[lobbyMsg](t, b.until(func(m msg) bool { return m.Type == "lobby" && strings.Contains(string(m.raw), ch.ID) }))
	if len(lm.Challenges) != 1 || lm.Challenges[0].Name != "ann" {
		t.Fatalf("listed %+v", lm.Challenges)
	}
	a.expectError(map[string]any{"type": "accept-challenge", "challenge": ch.ID}, lobby.CodeOwnChallenge)
	a.expectError(map[string]any{"type": "queue"}, lobby.CodeAlreadyQueued)
	a.expectError(map[string]any{"type": "challenge"}, lobby.CodeAlreadyQueued)
	b.expectError(map[string]any{"type": "accept-challenge", "challenge": "NOSUCHONE0"}, lobby.CodeNoSuchChallenge)
	b.send(map[string]any{"type": "accept-challenge", "challenge": ch.ID})
	ma, mb := a.takeSeat(), b.takeSeat()
	if ma.Race != mb.Race || ma.Via != "challenge" || !ma.Rated || ma.Variant != "aces-out" {
		t.Fatalf("matched %+v / %+v", ma, mb)
	}
	a.untilState(race.Countdown)
	// Taken: gone from the list, and nobody takes it twice.
	b.expectError(map[string]any{"type": "accept-challenge", "challenge": ch.ID}, lobby.CodeNoSuchChallenge)
	if snap := e.lobby.Snapshot(); len(snap.Challenges) != 0 {
		t.Fatalf("challenges left %+v", snap.Challenges)
	}
}

func TestLobbyRefusesBadInput(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a := e.dial()
	a.expectError(map[string]any{"type": "queue"}, lobby.CodeNotIdentified)
	id := e.create(`{}`)
	a.expectError(map[string]any{"type": "join", "race": id}, lobby.CodeNotIdentified)
	a.expectError(map[string]any{"type": "hello", "token": "v1.eyJwIjoieCJ9.AAAA"}, lobby.CodeInvalidToken)
	other, _ := lobby.NewTokens([]byte(strings.Repeat("s", 32)), e.clock, time.Hour)
	forged, _ := other.Issue("p1", "mallory")
	a.expectError(map[string]any{"type": "hello", "token": forged}, lobby.CodeInvalidToken)
	for _, name := range []string{"   ", strings.Repeat("x", lobby.MaxNameRunes+1), "a\x07b", "<script>"} {
		a.expectError(map[string]any{"type": "hello", "name": name}, lobby.CodeBadName)
	}
	w := a.hello("ann")
	for _, name := range []string{"", "<b>", "new\nline"} {
		a.expectError(map[string]any{"type": "rename", "name": name}, lobby.CodeBadName)
	}
	if got := e.lobby.Snapshot().Presence.Online; got != 1 {
		t.Fatalf("online %d after refused hellos", got)
	}
	a.expectError(map[string]any{"type": "queue", "variant": "nope"}, race.CodeBadOptions)
	a.send(map[string]any{"type": "queue", "id": "q"})
	a.untilType("queued")
	a.expectError(map[string]any{"type": "queue", "variant": "strict"}, lobby.CodeAlreadyQueued)
	// Another tab of the same player cannot queue either.
	a2 := e.dial()
	a2.send(map[string]any{"type": "hello", "token": w.Token})
	a2.untilType("welcome")
	a2.expectError(map[string]any{"type": "queue", "variant": "strict"}, lobby.CodeAlreadyQueued)
	if p := e.lobby.Snapshot().Presence; p.Queued != 1 || p.Online != 1 {
		t.Fatalf("presence %+v", p)
	}
	// Renaming gives a new token with the new name.
	a.send(map[string]any{"type": "rename", "name": "Ann B", "id": "r"})
	if w2 := decode[welcome](t, a.untilType("welcome")); w2.Name != "Ann B" || w2.Player != w.Player || w2.Token == w.Token {
		t.Fatalf("renamed %+v", w2)
	}
	var apiErr struct{ Error struct{ Code race.Code } }
	if st := e.get("/api/leaderboard/nope", &apiErr); st != http.StatusBadRequest || apiErr.Error.Code != race.CodeBadOptions {
		t.Errorf("leaderboard of no variant: %d %+v", st, apiErr)
	}
	if st := e.get("/api/players/"+w.Player, &apiErr); st != http.StatusNotFound || apiErr.Error.Code != lobby.CodeNoSuchPlayer {
		t.Errorf("profile before any race: %d %+v", st, apiErr)
	}
	// Tokens expire.
	e.clock.Advance(time.Hour)
	a2.expectError(map[string]any{"type": "hello", "token": w.Token}, lobby.CodeExpiredToken)
}

func TestDisconnectLeavesQueueAtOnceAndComputerOffer(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a, b := e.dial(), e.dial()
	a.hello("ann")
	a.send(map[string]any{"type": "queue", "id": "q"})
	a.untilType("queued")
	a.ws.Close()
	deadline := time.Now().Add(safetyTimeout)
	for e.lobby.Snapshot().Presence.Queued != 0 {
		if time.Now().After(deadline) {
			t.Fatal("a closed connection stayed queued")
		}
		time.Sleep(time.Millisecond)
	}
	b.hello("bob")
	b.send(map[string]any{"type": "queue", "id": "q"})
	b.untilType("queued")
	e.clock.Advance(e.lobby.Config().ComputerOfferAfter)
	if off := b.untilType("computer-offer"); !strings.Contains(string(off.raw), `"variant":"classic"`) {
		t.Fatalf("offer %s", off.raw)
	}
	b.send(map[string]any{"type": "play-computer", "id": "pc"})
	mt := b.takeSeat()
	if mt.Via != "computer" || !mt.Opponent.Computer || mt.Rated {
		t.Fatalf("matched %+v", mt)
	}
	b.untilState(race.Countdown)
	e.clock.Advance(race.DefaultCountdown)
	b.untilState(race.Running)
	e.clock.Advance(e.lobby.Config().ComputerPace)
	b.untilType("opponent") // the computer moved
	b.expectError(map[string]any{"type": "play-computer"}, lobby.CodeNotQueued)
	b.expectError(map[string]any{"type": "unqueue"}, lobby.CodeNotQueued)
	c := e.dial()
	c.hello("cy")
	c.send(map[string]any{"type": "queue", "id": "q"})
	c.untilType("queued")
	c.send(map[string]any{"type": "unqueue", "id": "u"})
	c.untilType("unqueued")
	if got := e.lobby.Snapshot().Presence.Queued; got != 0 {
		t.Fatalf("queued %d after unqueue", got)
	}
}

// Quick play with a grade pairs players who asked for the same grade, in
// a race whose secret deal is of that grade (its commitment covers it);
// a player asking for no grade waits in another queue.
func TestQuickPlayGraded(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a, b, c := e.dial(), e.dial(), e.dial()
	a.hello("ann")
	b.hello("bob")
	c.hello("cy")
	c.send(map[string]any{"type": "queue", "variant": "classic", "id": "q"})
	c.untilType("queued")
	a.send(map[string]any{"type": "queue", "variant": "classic", "grade": "hard", "id": "q"})
	a.untilType("queued")
	b.send(map[string]any{"type": "queue", "variant": "classic", "grade": "HARD", "id": "q"})
	ma, mb := a.takeSeat(), b.takeSeat()
	if ma.Race != mb.Race || ma.Opponent.Name != "bob" {
		t.Fatalf("matched %+v and %+v", ma, mb)
	}
	rc, err := e.races.Get(ma.Race)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Grade() != "hard" {
		t.Errorf("the paired race's grade is %q", rc.Grade())
	}
	if n := len(e.races.Races()); n != 1 {
		t.Errorf("%d races: the ungraded player was paired too", n)
	}
}

// TestRacingPlayerGetsTheLobbyWhenTheRaceEnds: while a player's seat is in
// a race that is not over, the lobby's updates are held back from that
// connection (a watcher in the lobby gets them at once), an explicit
// lobby request is still answered, and the latest update comes right
// after the race's final state.
func TestRacingPlayerGetsTheLobbyWhenTheRaceEnds(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a, b, _, _, _ := e.startQuick()
	a.untilState(race.Running)
	b.untilState(race.Running)
	w, c := e.dial(), e.dial()
	w.hello("wes")
	c.hello("cat")
	c.send(map[string]any{"type": "challenge", "variant": "classic", "id": "c"})
	ch := decode[struct{ Challenge lobby.ChallengeInfo }](t, c.untilType("challenged")).Challenge
	listed := func(m msg) bool { return m.Type == "lobby" && strings.Contains(string(m.raw), ch.ID) }
	w.until(listed) // the update went out (to every session, before the reply)

	// Asked, the lobby is answered even mid-race.
	a.send(map[string]any{"type": "lobby", "id": "l"})
	if m := a.until(func(m msg) bool { return m.Type == "lobby" }); !listed(m) {
		t.Fatalf("the lobby asked for mid-race: %s", m.raw)
	}
	// The update is held from b; the race's end (both resign) brings it,
	// after the state.
	b.send(map[string]any{"type": "resign", "id": "r"})
	a.send(map[string]any{"type": "resign", "id": "r"})
	for {
		m := b.read()
		if listed(m) {
			t.Fatalf("the racing player got the lobby's update before the race ended: %s", m.raw)
		}
		if m.Type == "state" && m.State.Over() {
			break
		}
	}
	if m := b.until(func(m msg) bool { return m.Type == "lobby" }); !listed(m) {
		t.Fatalf("after the race: %s", m.raw)
	}
}
