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
}

func newLobbyEnv(t *testing.T, cfg lobby.Config) *lobbyEnv {
	t.Helper()
	var l *lobby.Lobby
	e := newEnvWith(t, func(clock *racetest.Clock, d *web.Deps) {
		tokens, err := lobby.NewTokens([]byte(testSecret), clock, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		l = lobby.New(cfg, lobby.Deps{
			Clock: clock, Log: zerolog.Nop(), Races: d.Races, Tokens: tokens,
			Ratings: memlobby.NewRatings(), Computer: lobby.ComputerFactory(d.Computer),
		})
		d.Lobby = l
	})
	t.Cleanup(l.Close) // after the connections close (cleanups run last first)
	return &lobbyEnv{env: e, lobby: l}
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

// fromView picks a move from what the player sees (the deal is secret):
// a card that fits a foundation, else the turned card on W1.
func fromView(v *engine.View) (engine.Move, bool) {
	fits := func(c engine.Card) (int, bool) {
		for i, f := range v.Foundations {
			if f.Wants != 0 && c.Rank() == f.Wants {
				return i, true
			}
		}
		return 0, false
	}
	if len(v.Turned) > 0 {
		c := v.Turned[0]
		if i, ok := fits(c); ok {
			return engine.PlaceMove(c, engine.F(i)), true
		}
		return engine.PlaceMove(c, engine.W(0)), true
	}
	for _, w := range v.Waste {
		if n := len(w.Cards); n > 0 {
			if i, ok := fits(w.Cards[n-1]); ok {
				return engine.PlaceMove(w.Cards[n-1], engine.F(i)), true
			}
		}
	}
	return engine.Move{}, false
}

// playBlind plays from the views the server sends until the player's game
// or the race is over.
func (c *client) playBlind(v engine.View, moves int) {
	c.t.Helper()
	for i := 0; i < moves && v.Status == engine.Playing && !c.finished(); i++ {
		mv, ok := fromView(&v)
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
	va := a.untilState(race.Running).You
	vb := b.untilState(race.Running).You
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
