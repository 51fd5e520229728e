package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"sirtommy/lobby/account"
	"sirtommy/lobby/account/passkeytest"
	"sirtommy/race"
	"sirtommy/race/redisrace/redistest"
	"sirtommy/web"
)

// fleetOrigin is the fleet's public address: one site in front of both
// instances, as a load balancer would be.
const fleetOrigin = "https://sirtommy.test"

// accountPost posts body (JSON, or raw bytes) to base+path and decodes
// the answer into out; it returns the status and the error code, if any,
// and the cookies set.
func accountPost(t *testing.T, base, path string, body any, out any) (int, race.Code, []*http.Cookie) {
	t.Helper()
	b, ok := body.([]byte)
	if !ok && body != nil {
		b, _ = json.Marshal(body)
	}
	res, err := http.Post(base+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var e struct{ Error struct{ Code race.Code } }
	_ = json.Unmarshal(raw, &e)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %s: %v", path, raw, err)
		}
	}
	return res.StatusCode, e.Error.Code, res.Cookies()
}

// TestFleetAccountSignInOnAPlayOnB: two instances on one Redis and one
// PostgreSQL. A guest on instance a keeps her player with a passkey; a
// sign-in begun on a is finished on b; with that session she plays a
// rated race on b as the same player, and the race is hers. A copy of her
// player token without the session is refused on both.
func TestFleetAccountSignInOnAPlayOnB(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	args := []string{"--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms", "--origin", fleetOrigin}
	a, logA, _, _ := startServe(t, args...)
	b, logB, _, _ := startServe(t, args...)
	defer func() {
		if t.Failed() {
			t.Logf("a %s:\n%s\nb %s:\n%s", a, logA, b, logB)
		}
	}()
	auth := passkeytest.New(fleetOrigin)

	// Keep the guest on a.
	guest, token := helloWithToken(t, a, "ann-guest")
	opts := json.RawMessage{}
	if st, code, _ := accountPost(t, a, "/api/account/keep/begin", map[string]string{"token": token, "username": "ann"}, &opts); st != 200 {
		t.Fatalf("keep begin: %d %s", st, code)
	}
	body, err := auth.Create(opts)
	if err != nil {
		t.Fatal(err)
	}
	var kept struct{ Account account.Account }
	if st, code, _ := accountPost(t, a, "/api/account/keep/finish", body, &kept); st != 201 || kept.Account.Player != guest.id {
		t.Fatalf("keep finish: %d %s %+v", st, code, kept)
	}

	// Another device: begun on a, finished on b.
	if st, code, _ := accountPost(t, a, "/api/account/sign-in/begin", nil, &opts); st != 200 {
		t.Fatalf("sign-in begin: %d %s", st, code)
	}
	if body, err = auth.Get(opts, nil); err != nil {
		t.Fatal(err)
	}
	var signed struct {
		Account account.Account
		Welcome struct{ Player, Token string }
	}
	st, code, cookies := accountPost(t, b, "/api/account/sign-in/finish", body, &signed)
	if st != 200 || signed.Account.Player != guest.id {
		t.Fatalf("sign-in finish on b: %d %s %+v", st, code, signed)
	}
	var cookie string
	for _, c := range cookies {
		// The fleet's site is https (a proxy in front): the cookie is Secure.
		if c.Name == web.SessionCookie && c.Secure && c.HttpOnly {
			cookie = c.Name + "=" + c.Value
		}
	}
	if cookie == "" {
		t.Fatalf("no Secure, HttpOnly session cookie from b: %v", cookies)
	}

	// A copied token without the session is refused, on either instance.
	for _, base := range []string{a, b} {
		c := dial(t, base)
		c.send(map[string]any{"type": "hello", "id": "h", "token": signed.Welcome.Token})
		if m := c.next("refusal", ofType("error")); m.str("code") != string(account.CodeSignInRequired) {
			t.Fatalf("a copied token on %s: %v", base, m)
		}
	}

	// On b, with the session, she is the same player and races, rated.
	c := dialWith(t, b, http.Header{"Cookie": {cookie}})
	c.send(map[string]any{"type": "hello", "id": "h", "token": signed.Welcome.Token})
	w := c.next("welcome", ofType("welcome"))
	if w.str("player") != guest.id || w.str("name") != "ann" {
		t.Fatalf("welcome on b: %v", w)
	}
	ann := &lobbyClient{client: c, id: guest.id}
	bob := hello(t, a, "bob")
	quickRace(t, bob, ann)
	for _, base := range []string{a, b} {
		archived(t, base)
	}
	waitStandings(t, a, map[string]int{ann.id: 1, bob.id: 1})
	var board struct {
		Standings []struct {
			Player  string
			Account bool
		}
	}
	res, err := http.Get(b + "/api/leaderboard/classic")
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(res.Body).Decode(&board)
	res.Body.Close()
	if len(board.Standings) != 2 {
		t.Fatalf("leaderboard on b: %+v", board)
	}
	for _, s := range board.Standings {
		if s.Account != (s.Player == ann.id) {
			t.Errorf("leaderboard on b marks %s account=%v", s.Player, s.Account)
		}
	}
}
