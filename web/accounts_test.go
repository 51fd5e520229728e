package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/lobby/account"
	"sirtommy/lobby/account/passkeytest"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/web"
)

// siteOrigin is the accounts' origin in the HTTP tests: the software
// authenticator claims it, as a browser on the site's pages would; the
// requests themselves go to the test server, without an Origin header,
// as an API client's do.
const siteOrigin = "http://sirtommy.test"

type accountEnv struct {
	*lobbyEnv
	accounts *account.Service
	store    *account.Memory
}

// newAccountEnv is a lobby server with accounts in memory; mod, when
// given, changes the deps further.
func newAccountEnv(t *testing.T, mod func(*web.Deps)) *accountEnv {
	t.Helper()
	var l *lobby.Lobby
	var svc *account.Service
	store := account.NewMemory()
	ratings := memlobby.NewRatings()
	e := newEnvWith(t, func(clock *racetest.Clock, d *web.Deps) {
		tokens, err := lobby.NewTokens([]byte(testSecret), clock, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		stores := memlobby.NewStores(lobby.MatchConfig{}, clock)
		stores.Ratings = ratings
		l = lobby.New(lobby.Config{}, lobby.Deps{
			Clock: clock, Log: zerolog.Nop(), Races: d.Races, Tokens: tokens,
			Stores: stores, Computer: lobby.ComputerFactory(d.Computer), DailySecret: []byte(testSecret),
		})
		svc, err = account.New(store, account.Config{Origin: siteOrigin, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		d.Lobby, d.Accounts = l, svc
		if mod != nil {
			mod(d)
		}
	})
	t.Cleanup(l.Close)
	return &accountEnv{lobbyEnv: &lobbyEnv{env: e, lobby: l, ratings: ratings}, accounts: svc, store: store}
}

// device is one browser: its cookies and its passkeys.
type device struct {
	e    *accountEnv
	http *http.Client
	auth *passkeytest.Authenticator
}

func (e *accountEnv) device() *device {
	jar, _ := cookiejar.New(nil)
	return &device{e: e, http: &http.Client{Jar: jar}, auth: passkeytest.New(siteOrigin)}
}

// reply is an answer: its status, body, and error code if any.
type reply struct {
	status int
	body   []byte
	code   race.Code
	header http.Header
}

// do sends a request with optional JSON body (a []byte is sent as is)
// and extra headers.
func (b *device) do(method, path string, body any, headers ...string) reply {
	b.e.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(v)
	default:
		j, _ := json.Marshal(v)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.e.ts.URL+path, rd)
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := b.http.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var e struct {
		Error struct {
			Code race.Code `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return reply{status: res.StatusCode, body: raw, code: e.Error.Code, header: res.Header}
}

// want fails unless r has status and code ("" for a success).
func (r reply) want(t testing.TB, what string, status int, code race.Code) reply {
	t.Helper()
	if r.status != status || r.code != code {
		t.Fatalf("%s: %d %s, want %d %q", what, r.status, r.body, status, code)
	}
	return r
}

type keptReply struct {
	Account      account.Account
	Welcome      welcome
	RecoveryCode string
}

// guest says hello as a new guest over a websocket and returns its welcome.
func (b *device) guest() welcome {
	b.e.t.Helper()
	return b.dial().hello("")
}

// dial opens a websocket with the browser's cookies.
func (b *device) dial() *client {
	b.e.t.Helper()
	u, _ := url.Parse(b.e.ts.URL)
	h := http.Header{}
	for _, c := range b.http.Jar.Cookies(u) {
		h.Add("Cookie", c.Name+"="+c.Value)
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(b.e.ts.URL, "http")+"/ws", h)
	if err != nil {
		b.e.t.Fatal(err)
	}
	b.e.t.Cleanup(func() { ws.Close() })
	return &client{t: b.e.t, ws: ws}
}

// keepBody begins keeping the player of token as username and answers
// with a new passkey: the finish's body.
func (b *device) keepBody(token, username string) []byte {
	b.e.t.Helper()
	r := b.do("POST", "/api/account/keep/begin", map[string]string{"token": token, "username": username}).want(b.e.t, "keep begin", 200, "")
	body, err := b.auth.Create(r.body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return body
}

// keep keeps the browser's guest as username.
func (b *device) keep(token, username string) keptReply {
	b.e.t.Helper()
	r := b.do("POST", "/api/account/keep/finish", b.keepBody(token, username)).want(b.e.t, "keep finish", 201, "")
	var k keptReply
	if err := json.Unmarshal(r.body, &k); err != nil {
		b.e.t.Fatal(err)
	}
	return k
}

// signInBody begins a sign-in and answers it with c (nil: the newest).
func (b *device) signInBody(auth *passkeytest.Authenticator, c *passkeytest.Credential) []byte {
	b.e.t.Helper()
	r := b.do("POST", "/api/account/sign-in/begin", nil).want(b.e.t, "sign-in begin", 200, "")
	body, err := auth.Get(r.body, c)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return body
}

// signIn signs in with auth's newest passkey.
func (b *device) signIn(auth *passkeytest.Authenticator) keptReply {
	b.e.t.Helper()
	r := b.do("POST", "/api/account/sign-in/finish", b.signInBody(auth, nil)).want(b.e.t, "sign-in finish", 200, "")
	var k keptReply
	_ = json.Unmarshal(r.body, &k)
	return k
}

func (b *device) cookie() *http.Cookie {
	u, _ := url.Parse(b.e.ts.URL)
	for _, c := range b.http.Jar.Cookies(u) {
		if c.Name == web.SessionCookie {
			return c
		}
	}
	return nil
}

func TestAccountKeepThenSignInElsewhere(t *testing.T) {
	e := newAccountEnv(t, nil)
	laptop, phone := e.device(), e.device()
	g := laptop.guest()
	r := laptop.do("POST", "/api/account/keep/finish", laptop.keepBody(g.Token, "Ann"))
	r.want(t, "keep", 201, "")
	set := r.header.Get("Set-Cookie")
	for _, want := range []string{web.SessionCookie + "=", "HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(set, want) {
			t.Errorf("session cookie %q lacks %q", set, want)
		}
	}
	var k keptReply
	_ = json.Unmarshal(r.body, &k)
	if k.Account.Player != g.Player || k.Account.Username != "Ann" || k.RecoveryCode == "" || k.Welcome.Player != g.Player || k.Welcome.Name != "Ann" {
		t.Fatalf("kept: %+v, want guest %s as Ann with a recovery code", k, g.Player)
	}
	// The laptop plays on as the account, under its username.
	if w := laptop.dial().hello(""); w.Player != g.Player || w.Name != "Ann" {
		t.Fatalf("laptop hello without a token: %+v", w)
	}
	// The phone signs in with the same passkey (synced) and is the same player.
	s := phone.signIn(laptop.auth)
	if s.Account.Player != g.Player || s.Welcome.Player != g.Player || s.RecoveryCode != "" {
		t.Fatalf("sign in on the phone: %+v", s)
	}
	pc := phone.dial()
	pc.send(map[string]any{"type": "hello", "token": s.Welcome.Token, "id": "h"})
	if w := decode[welcome](t, pc.untilType("welcome")); w.Player != g.Player || w.Name != "Ann" {
		t.Fatalf("phone hello: %+v", w)
	}
	var me struct {
		Account  account.Account
		Passkeys []account.PasskeyInfo
		Via      string
	}
	_ = json.Unmarshal(phone.do("GET", "/api/account/me", nil).want(t, "me", 200, "").body, &me)
	if me.Account.Username != "Ann" || len(me.Passkeys) != 1 || me.Passkeys[0].LastUsed == nil || me.Via != "session" {
		t.Fatalf("me: %+v", me)
	}
	// Signing in again rotates the cookie; the old one is ended.
	old := phone.cookie().Value
	phone.signIn(laptop.auth)
	if phone.cookie().Value == old {
		t.Fatal("the session cookie was not rotated at sign-in")
	}
	if _, err := e.accounts.SignedIn(t.Context(), old); race.ErrorCode(err) != account.CodeSignInRequired {
		t.Fatalf("the rotated-out session: %v, want it ended", err)
	}
	// Sign out everywhere ends the laptop's session too.
	phone.do("POST", "/api/account/sign-out-everywhere", nil).want(t, "sign out everywhere", 204, "")
	laptop.do("GET", "/api/account/me", nil).want(t, "laptop after sign out everywhere", 401, account.CodeSignInRequired)
}

func TestAccountTokenAdmittedOnlyWithItsSession(t *testing.T) {
	e := newAccountEnv(t, nil)
	laptop := e.device()
	g := laptop.guest()
	k := laptop.keep(g.Token, "ann")
	// A copied token (localStorage) in a browser without the session.
	thief := e.device()
	c := thief.dial()
	c.expectError(map[string]any{"type": "hello", "token": k.Welcome.Token, "id": "h"}, account.CodeSignInRequired)
	// The guest token of before keeping, too.
	c.expectError(map[string]any{"type": "hello", "token": g.Token, "id": "h2"}, account.CodeSignInRequired)
	// A tampered cookie.
	u, _ := url.Parse(e.ts.URL)
	thief.http.Jar.SetCookies(u, []*http.Cookie{{Name: web.SessionCookie, Value: laptop.cookie().Value + "x"}})
	thief.dial().expectError(map[string]any{"type": "hello", "token": k.Welcome.Token, "id": "h"}, account.CodeSignInRequired)
	thief.do("GET", "/api/account/me", nil).want(t, "me with a tampered cookie", 401, account.CodeSignInRequired)
	// With the session, admitted.
	lc := laptop.dial()
	lc.send(map[string]any{"type": "hello", "token": k.Welcome.Token, "id": "h"})
	if w := decode[welcome](t, lc.untilType("welcome")); w.Player != g.Player {
		t.Fatalf("hello with the session: %+v", w)
	}
	// An account's name is its username.
	lc.expectError(map[string]any{"type": "rename", "name": "bob", "id": "r"}, lobby.CodeBadName)
	// Guests cannot take an account's username (any case) or a reserved word.
	other := e.device().dial()
	other.expectError(map[string]any{"type": "hello", "name": "ANN", "id": "h"}, account.CodeUsernameTaken)
	other.hello("")
	other.expectError(map[string]any{"type": "rename", "name": "Computer", "id": "r"}, account.CodeReservedUsername)
	other.expectError(map[string]any{"type": "rename", "name": "Ann", "id": "r2"}, account.CodeUsernameTaken)
}

func TestAccountUsernameRefusals(t *testing.T) {
	e := newAccountEnv(t, nil)
	b := e.device()
	b.keep(b.guest().Token, "ann")
	other := e.device()
	tok := other.guest().Token
	for _, tc := range []struct {
		name string
		code race.Code
	}{
		{"ANN", account.CodeUsernameTaken},
		{"admin", account.CodeReservedUsername},
		{"Expert", account.CodeReservedUsername},
		{"a", account.CodeBadUsername},
		{"<script>", account.CodeBadUsername},
	} {
		status := 400
		if tc.code == account.CodeUsernameTaken {
			status = 409
		}
		other.do("POST", "/api/account/keep/begin", map[string]string{"token": tok, "username": tc.name}).want(t, tc.name, status, tc.code)
	}
	other.do("POST", "/api/account/keep/begin", map[string]string{"token": "v1.forged.mac", "username": "bob"}).want(t, "forged token", 400, lobby.CodeInvalidToken)
	other.do("POST", "/api/account/keep/begin", []byte("{")).want(t, "bad json", 400, web.CodeBadBody)
	b.do("POST", "/api/account/keep/begin", map[string]string{"token": tok, "username": "bob"}).want(t, "begin is fine", 200, "")
}

func TestAccountRegistrationsRaceForOneName(t *testing.T) {
	e := newAccountEnv(t, nil)
	const n = 4
	bodies := make([][]byte, n)
	bs := make([]*device, n)
	for i := range n {
		bs[i] = e.device()
		bodies[i] = bs[i].keepBody(bs[i].guest().Token, []string{"ann", "ANN", "Ann", "aNN"}[i])
	}
	replies := make([]reply, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { replies[i] = bs[i].do("POST", "/api/account/keep/finish", bodies[i]) })
	}
	wg.Wait()
	won := 0
	for i, r := range replies {
		switch {
		case r.status == 201:
			won++
		case r.status == 409 && r.code == account.CodeUsernameTaken:
			if bs[i].cookie() != nil {
				t.Errorf("a losing registration got a session cookie")
			}
		default:
			t.Fatalf("registration %d: %d %s", i, r.status, r.body)
		}
	}
	if won != 1 {
		t.Fatalf("%d registrations of one name won, want 1", won)
	}
}

func TestAccountCeremonyRefusals(t *testing.T) {
	e := newAccountEnv(t, nil)
	laptop := e.device()
	laptop.keep(laptop.guest().Token, "ann")
	first := laptop.auth.Credentials()[0]
	b := e.device()

	// A replayed answer: its challenge was taken by the first finish.
	body := b.signInBody(laptop.auth, nil)
	b.do("POST", "/api/account/sign-in/finish", body).want(t, "sign in", 200, "")
	b.do("POST", "/api/account/sign-in/finish", body).want(t, "replayed", 400, account.CodeBadChallenge)

	// An expired challenge.
	late := b.signInBody(laptop.auth, nil)
	e.clock.Advance(account.DefaultChallengeTTL)
	b.do("POST", "/api/account/sign-in/finish", late).want(t, "expired", 400, account.CodeBadChallenge)

	// An assertion made on another site's page.
	evil := e.device()
	laptop.auth.Origin = "https://evil.example"
	evil.do("POST", "/api/account/sign-in/finish", evil.signInBody(laptop.auth, nil)).want(t, "foreign origin", 400, account.CodePasskeyRefused)
	laptop.auth.Origin = siteOrigin
	if evil.cookie() != nil {
		t.Fatal("a refused sign-in set a session cookie")
	}

	// A passkey never registered here.
	stranger := passkeytest.New(siteOrigin)
	if _, err := stranger.Create(mustOptions(t, e)); err != nil {
		t.Fatal(err)
	}
	evil.do("POST", "/api/account/sign-in/finish", evil.signInBody(stranger, nil)).want(t, "unknown credential", 400, account.CodeUnknownCredential)

	// A sign counter going backwards (a cloned authenticator).
	before, _ := e.store.Passkey(t.Context(), first.ID)
	laptop.auth.SetCount(first, 0)
	evil.do("POST", "/api/account/sign-in/finish", evil.signInBody(laptop.auth, first)).want(t, "counter backwards", 400, account.CodeSignCounter)
	after, _ := e.store.Passkey(t.Context(), first.ID)
	if after.SignCount != before.SignCount || !after.LastUsed.Equal(before.LastUsed) {
		t.Fatalf("a refused sign-in changed the passkey: %+v -> %+v", before, after)
	}
	laptop.auth.SetCount(first, before.SignCount)

	// A removed passkey: add a second, remove the first.
	add := laptop.do("POST", "/api/account/passkeys/begin", nil).want(t, "add begin", 200, "")
	ab, _ := laptop.auth.Create(add.body)
	laptop.do("POST", "/api/account/passkeys/finish", ab).want(t, "add finish", 201, "")
	var list struct{ Passkeys []account.PasskeyInfo }
	_ = json.Unmarshal(laptop.do("GET", "/api/account/passkeys", nil).want(t, "list", 200, "").body, &list)
	if len(list.Passkeys) != 2 {
		t.Fatalf("passkeys: %+v", list)
	}
	// Both were added at the fake clock's one time: find the first by id.
	firstID, otherID := list.Passkeys[0].ID, list.Passkeys[1].ID
	if firstID != base64.RawURLEncoding.EncodeToString(first.ID) {
		firstID, otherID = otherID, firstID
	}
	laptop.do("DELETE", "/api/account/passkeys/"+firstID, nil).want(t, "remove", 204, "")
	laptop.do("DELETE", "/api/account/passkeys/"+firstID, nil).want(t, "remove again", 404, account.CodeNoSuchPasskey)
	laptop.do("DELETE", "/api/account/passkeys/"+otherID, nil).want(t, "remove the last", 409, account.CodeLastPasskey)
	evil.do("POST", "/api/account/sign-in/finish", evil.signInBody(laptop.auth, first)).want(t, "removed credential", 400, account.CodeUnknownCredential)

	// Not JSON at all.
	evil.do("POST", "/api/account/sign-in/finish", []byte("nope")).want(t, "garbage", 400, account.CodePasskeyRefused)
	// Account routes need a session.
	evil.do("POST", "/api/account/passkeys/begin", nil).want(t, "add without session", 401, account.CodeSignInRequired)
}

// mustOptions are creation options for a throwaway guest, never finished.
func mustOptions(t *testing.T, e *accountEnv) []byte {
	t.Helper()
	b := e.device()
	return b.do("POST", "/api/account/keep/begin", map[string]string{"token": b.guest().Token, "username": "stranger"}).want(t, "begin", 200, "").body
}

func TestAccountCrossSiteRequestsRefused(t *testing.T) {
	e := newAccountEnv(t, nil)
	b := e.device()
	b.keep(b.guest().Token, "ann")
	for _, path := range []string{"/api/account/sign-out-everywhere", "/api/account/sign-out", "/api/account/tokens", "/api/account/sign-in/begin"} {
		b.do("POST", path, map[string]string{"label": "x"}, "Origin", "https://evil.example").want(t, path+" from another site", 403, web.CodeCrossOrigin)
		b.do("POST", path, map[string]string{"label": "x"}, "Sec-Fetch-Site", "cross-site").want(t, path+" cross-site", 403, web.CodeCrossOrigin)
	}
	// Nothing changed: still signed in, no token minted.
	var ts struct{ Tokens []account.APIToken }
	_ = json.Unmarshal(b.do("GET", "/api/account/tokens", nil).want(t, "tokens", 200, "").body, &ts)
	if len(ts.Tokens) != 0 {
		t.Fatalf("a cross-site request minted %+v", ts.Tokens)
	}
	// The site's own origin passes.
	b.do("POST", "/api/account/tokens", map[string]string{"label": "bot"}, "Origin", e.ts.URL).want(t, "same origin", 201, "")
}

func TestAccountRecoveryOnce(t *testing.T) {
	e := newAccountEnv(t, nil)
	laptop := e.device()
	g := laptop.guest()
	k := laptop.keep(g.Token, "ann")
	phone := e.device()
	phone.do("POST", "/api/account/recover/begin", map[string]string{"username": "ann", "code": "AAAAA-BBBBB"}).want(t, "wrong code", 400, account.CodeRecoveryRefused)
	r := phone.do("POST", "/api/account/recover/begin", map[string]string{"username": "ANN", "code": k.RecoveryCode}).want(t, "recover begin", 200, "")
	body, _ := phone.auth.Create(r.body)
	var rec keptReply
	_ = json.Unmarshal(phone.do("POST", "/api/account/recover/finish", body).want(t, "recover finish", 200, "").body, &rec)
	if rec.Account.Player != g.Player || rec.RecoveryCode == "" || rec.RecoveryCode == k.RecoveryCode {
		t.Fatalf("recovered: %+v", rec)
	}
	phone.do("POST", "/api/account/recover/begin", map[string]string{"username": "ann", "code": k.RecoveryCode}).want(t, "the spent code", 400, account.CodeRecoveryRefused)
	if s := e.device().signIn(phone.auth); s.Account.Player != g.Player {
		t.Fatalf("sign in with the recovered passkey: %+v", s)
	}
}

func TestAccountAPITokens(t *testing.T) {
	e := newAccountEnv(t, nil)
	b := e.device()
	g := b.guest()
	b.keep(g.Token, "ann")
	var minted struct {
		Token, ID, Label string
	}
	_ = json.Unmarshal(b.do("POST", "/api/account/tokens", map[string]string{"label": "my bot"}).want(t, "mint", 201, "").body, &minted)
	if !strings.HasPrefix(minted.Token, account.APITokenPrefix) || minted.Label != "my bot" {
		t.Fatalf("minted %+v", minted)
	}
	b.do("POST", "/api/account/tokens", map[string]string{"label": ""}).want(t, "no label", 400, account.CodeBadTokenLabel)
	bot := e.device() // no cookies: a script
	var me struct{ Via string }
	_ = json.Unmarshal(bot.do("GET", "/api/account/me", nil, "Authorization", "Bearer "+minted.Token).want(t, "me by token", 200, "").body, &me)
	if me.Via != "api-token" {
		t.Fatalf("me via %q", me.Via)
	}
	bot.do("POST", "/api/account/tokens", map[string]string{"label": "x"}, "Authorization", "Bearer "+minted.Token).want(t, "a token cannot mint", 401, account.CodeSignInRequired)
	c := bot.dial()
	c.send(map[string]any{"type": "hello", "token": minted.Token, "id": "h"})
	if w := decode[welcome](t, c.untilType("welcome")); w.Player != g.Player || w.Name != "ann" {
		t.Fatalf("hello with the API token: %+v", w)
	}
	b.do("DELETE", "/api/account/tokens/"+minted.ID, nil).want(t, "revoke", 204, "")
	b.do("DELETE", "/api/account/tokens/"+minted.ID, nil).want(t, "revoke again", 404, account.CodeNoSuchToken)
	bot.dial().expectError(map[string]any{"type": "hello", "token": minted.Token, "id": "h"}, account.CodeInvalidAPIToken)
	bot.do("GET", "/api/account/me", nil, "Authorization", "Bearer "+minted.Token).want(t, "me by a revoked token", 401, account.CodeInvalidAPIToken)
}

func TestAccountCeremoniesRateLimited(t *testing.T) {
	e := newAccountEnv(t, func(d *web.Deps) { d.Limits.CeremoniesPerMinute = 2 })
	b := e.device()
	b.do("POST", "/api/account/sign-in/begin", nil).want(t, "first", 200, "")
	b.do("POST", "/api/account/recover/begin", map[string]string{"username": "x", "code": "y"}).want(t, "second, refused but counted", 400, account.CodeRecoveryRefused)
	b.do("POST", "/api/account/sign-in/begin", nil).want(t, "third", 429, web.CodeRateLimited)
	var me struct {
		Enabled bool
		Account *account.Account
	}
	_ = json.Unmarshal(b.do("GET", "/api/account/me", nil).want(t, "not a ceremony: a guest", 200, "").body, &me)
	if !me.Enabled || me.Account != nil {
		t.Fatalf("me of a guest: %+v", me)
	}
}

func TestLeaderboardMarksAccounts(t *testing.T) {
	e := newAccountEnv(t, nil)
	b := e.device()
	kept := b.guest()
	b.keep(kept.Token, "ann")
	guest := e.device().guest()
	for i, p := range []string{kept.Player, guest.Player} {
		g := lobby.GameRecord{Race: "r" + p, Variant: "classic", At: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC), Rated: true, Outcome: race.OutcomeDraw,
			Players: make([]lobby.PlayerRef, 2)}
		g.Players[0] = lobby.PlayerRef{ID: p, Name: "x"}
		g.Players[1] = lobby.PlayerRef{ID: "pother" + p, Name: "y"}
		s := lobby.NewStanding(p, "x", "classic")
		s.Games = 1
		if err := e.ratings.Save(context.Background(), g, []lobby.Standing{s}); err != nil {
			t.Fatal(err)
		}
	}
	var board struct {
		Standings []struct {
			Player  string
			Account bool
		}
	}
	if st := e.get("/api/leaderboard/classic", &board); st != 200 || len(board.Standings) != 2 {
		t.Fatalf("leaderboard: %d %+v", st, board)
	}
	for _, s := range board.Standings {
		if s.Account != (s.Player == kept.Player) {
			t.Errorf("%s marked account=%v", s.Player, s.Account)
		}
	}
}
