package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/web"
)

// mistakesBody is the reply of GET /api/players/me/mistakes (or, with
// Mistake, of a POST).
type mistakesBody struct {
	Player   string          `json:"player"`
	Mistakes []lobby.Mistake `json:"mistakes"`
	lobby.Mistake
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// newMistakesEnv is a server with a lobby (player tokens) that keeps the
// players' mistakes in memory.
func newMistakesEnv(t *testing.T) *env {
	t.Helper()
	var l *lobby.Lobby
	e := newEnvWith(t, func(clock *racetest.Clock, d *web.Deps) {
		tokens, err := lobby.NewTokens([]byte(testSecret), clock, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		stores := memlobby.NewStores(lobby.MatchConfig{}, clock)
		l = lobby.New(lobby.Config{}, lobby.Deps{Clock: clock, Log: zerolog.Nop(), Races: d.Races, Tokens: tokens, Stores: stores})
		d.Lobby, d.Mistakes = l, stores.Mistakes
	})
	t.Cleanup(l.Close)
	return e
}

// request sends method to path with body and the headers, and decodes
// the reply.
func (e *env) request(method, path, body string, header ...string) (int, mistakesBody) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.ts.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var b mistakesBody
	if err := json.NewDecoder(res.Body).Decode(&b); err != nil {
		e.t.Fatal(err)
	}
	return res.StatusCode, b
}

// mistakesOf is the list of the player holding tok.
func (e *env) mistakesOf(tok string) []lobby.Mistake {
	e.t.Helper()
	st, b := e.request("GET", "/api/players/me/mistakes", "", "Authorization", "Bearer "+tok)
	if st != http.StatusOK || b.Mistakes == nil {
		e.t.Fatalf("the list: %d %+v", st, b.Error)
	}
	return b.Mistakes
}

// practiseAs is a try sent with a player token.
func (e *env) practiseAs(id, tok string, seat, position int, move string) (int, string) {
	e.t.Helper()
	res, err := http.Post(e.ts.URL+"/api/races/"+id+"/practice", "application/json",
		strings.NewReader(fmt.Sprintf(`{"seat":%d,"position":%d,"move":%q,"token":%q}`, seat, position, move, tok)))
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var got struct {
		Verdict web.PracticeVerdict `json:"verdict"`
		Solved  bool                `json:"solved"`
	}
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		e.t.Fatal(err)
	}
	return res.StatusCode, fmt.Sprintf("%s solved=%v", got.Verdict, got.Solved)
}

// TestMistakesOwnSeatOnly: ann's lost game goes to her list when she
// opens its practice, once, and not to bob's nor by bob; a winning try
// with her token marks it solved, a losing one, one without a token or
// with bob's does not; each bad request is refused and stores nothing.
func TestMistakesOwnSeatOnly(t *testing.T) {
	e := newMistakesEnv(t)
	const deal = 3
	// A lobby race (its seats reserved for ann and bob) on deal 3: an
	// invite that names the deal.
	a, b := e.dial(), e.dial()
	ann, bob := a.hello("ann"), b.hello("bob")
	a.send(map[string]any{"type": "invite", "deal": "3", "id": "i"})
	inv := decode[invited](t, a.untilType("invited"))
	b.send(map[string]any{"type": "accept-invite", "code": inv.Code, "id": "a"})
	id := a.takeSeat().Race
	b.takeSeat()
	a.untilState(race.Countdown)
	b.untilState(race.Countdown)
	e.clock.Advance(race.DefaultCountdown)
	a.untilState(race.Running)
	b.untilState(race.Running)
	as, bs := a.seat, b.seat
	botMoves(a, deal, 200)
	add := func(tok string, seat int) (int, mistakesBody) {
		t.Helper()
		return e.request("POST", "/api/players/me/mistakes", fmt.Sprintf(`{"token":%q,"race":%q,"seat":%d}`, tok, id, seat))
	}
	if st, got := add(ann.Token, as); st != http.StatusConflict || got.Error == nil || got.Error.Code != string(race.CodeNotOver) {
		t.Fatalf("before the end: %d %+v", st, got.Error)
	}
	b.send(map[string]any{"type": "resign"})
	if a.result() == nil {
		t.Fatal("no result")
	}
	if in := e.info(id); in.Players[as].Player != ann.Player || in.Players[bs].Player != bob.Player {
		t.Fatalf("seats' players %+v, want ann's and bob's", in.Players)
	}
	g := e.analysisDone(id).Games[as]
	if g.Verdict != "lost-at" {
		t.Fatalf("ann's game: %s", g.Verdict)
	}

	for _, c := range []struct {
		body   string
		status int
		code   race.Code
	}{
		{fmt.Sprintf(`{"token":%q,"race":%q,"seat":%d}`, bob.Token, id, as), http.StatusForbidden, race.CodeNotYourSeat},
		{fmt.Sprintf(`{"token":%q,"race":%q,"seat":%d}`, ann.Token, id, bs), http.StatusForbidden, race.CodeNotYourSeat},
		{fmt.Sprintf(`{"token":%q,"race":%q,"seat":%d}`, bob.Token, id, bs), http.StatusConflict, web.CodeNoMistake}, // resigned, winnable
		{fmt.Sprintf(`{"token":"forged","race":%q,"seat":%d}`, id, as), http.StatusBadRequest, lobby.CodeInvalidToken},
		{fmt.Sprintf(`{"token":%q,"race":"nosuchrace","seat":%d}`, ann.Token, as), http.StatusNotFound, race.CodeNoSuchRace},
		{fmt.Sprintf(`{"token":%q,"race":%q,"seat":2}`, ann.Token, id), http.StatusBadRequest, web.CodeBadPractice},
		{fmt.Sprintf(`{"token":%q,"race":%q}`, ann.Token, id), http.StatusBadRequest, web.CodeBadPractice},
		{fmt.Sprintf(`{"token":%q,"race":%q,"seat":%d,"more":1}`, ann.Token, id, as), http.StatusBadRequest, web.CodeBadJSON},
	} {
		st, got := e.request("POST", "/api/players/me/mistakes", c.body)
		if st != c.status || got.Error == nil || got.Error.Code != string(c.code) {
			t.Errorf("%s: %d %+v, want %d %s", c.body, st, got.Error, c.status, c.code)
		}
	}
	if l := e.mistakesOf(ann.Token); len(l) != 0 {
		t.Fatalf("ann's list after refusals: %+v", l)
	}
	if l := e.mistakesOf(bob.Token); len(l) != 0 {
		t.Fatalf("bob's list after refusals: %+v", l)
	}

	st, got := add(ann.Token, as)
	if st != http.StatusCreated || got.Race != id || got.Seat != as || got.Position != g.LastWinnable || got.Move != g.LosingMove || got.Variant != "classic" {
		t.Fatalf("ann adds her game: %d %+v", st, got)
	}
	if st, _ := add(ann.Token, as); st != http.StatusOK {
		t.Fatalf("again: %d, want 200", st)
	}
	list := e.mistakesOf(ann.Token)
	if len(list) != 1 || list[0].Position != g.LastWinnable || list[0].SolvedAt != nil || list[0].AddedAt.IsZero() || list[0].RacedAt.IsZero() {
		t.Fatalf("ann's list %+v", list)
	}
	if l := e.mistakesOf(bob.Token); len(l) != 0 {
		t.Fatalf("bob's list %+v", l)
	}

	n, right := g.LastWinnable, g.WinningMove
	for _, c := range []struct{ tok, move, want string }{
		{ann.Token, g.LosingMove, "lost solved=false"},
		{bob.Token, right, "winnable solved=false"},
		{"", right, "winnable solved=false"},
	} {
		if _, said := e.practiseAs(id, c.tok, as, n, c.move); said != c.want {
			t.Fatalf("%s with a token %.8q: %s, want %s", c.move, c.tok, said, c.want)
		}
	}
	if l := e.mistakesOf(ann.Token); l[0].SolvedAt != nil {
		t.Fatalf("solved by another: %+v", l[0])
	}
	if st, _ := e.practiseAs(id, "forged", as, n, right); st != http.StatusBadRequest {
		t.Fatalf("a forged token: %d", st)
	}
	if _, said := e.practiseAs(id, ann.Token, as, n, right); said != "winnable solved=true" {
		t.Fatalf("ann finds it: %s", said)
	}
	if _, said := e.practiseAs(id, ann.Token, as, n, right); said != "winnable solved=false" {
		t.Fatalf("ann finds it again: %s", said)
	}
	if l := e.mistakesOf(ann.Token); l[0].SolvedAt == nil {
		t.Fatalf("not solved: %+v", l[0])
	}
	if st, got := add(ann.Token, as); st != http.StatusOK || got.SolvedAt == nil {
		t.Fatalf("added again once solved: %d %+v, want 200 as kept, solved", st, got.Mistake)
	}

	for _, h := range [][]string{nil, {"Authorization", "Bearer forged"}, {"Authorization", "Basic x"}} {
		if st, got := e.request("GET", "/api/players/me/mistakes", "", h...); st != http.StatusBadRequest || got.Error == nil || got.Error.Code != string(lobby.CodeInvalidToken) {
			t.Errorf("the list with %v: %d %+v", h, st, got.Error)
		}
	}
	if st, got := e.request("GET", "/api/players/me/mistakes?n=0", "", "Authorization", "Bearer "+ann.Token); st != http.StatusBadRequest || got.Error == nil || got.Error.Code != string(web.CodeBadPractice) {
		t.Errorf("n=0: %d %+v", st, got.Error)
	}
}

// TestMistakesNotKept: a server without a lobby keeps no mistakes, and
// still judges tries.
func TestMistakesNotKept(t *testing.T) {
	e := newEnv(t, nil)
	st, got := e.request("GET", "/api/players/me/mistakes", "", "Authorization", "Bearer x")
	if st != http.StatusNotFound || got.Error == nil || got.Error.Code != string(web.CodeNoMistakes) {
		t.Fatalf("%d %+v", st, got.Error)
	}
}

// TestMistakesOfAnAccount: an account's player token lists its mistakes
// only with the account's session, as the websocket admits it; a copied
// token elsewhere is refused.
func TestMistakesOfAnAccount(t *testing.T) {
	e := newAccountEnv(t, func(d *web.Deps) { d.Mistakes = memlobby.NewMistakes() })
	laptop := e.device()
	k := laptop.keep(laptop.guest().Token, "ann")
	tok := k.Welcome.Token
	laptop.do("GET", "/api/players/me/mistakes", nil, "Authorization", "Bearer "+tok).want(t, "with the session", http.StatusOK, "")
	e.device().do("GET", "/api/players/me/mistakes", nil, "Authorization", "Bearer "+tok).want(t, "a copied token", http.StatusUnauthorized, "sign-in-required")
	guest := e.device()
	guest.do("GET", "/api/players/me/mistakes", nil, "Authorization", "Bearer "+guest.guest().Token).want(t, "a guest", http.StatusOK, "")
}
