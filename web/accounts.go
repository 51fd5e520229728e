package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/lobby/account"
	"sirtommy/race"
)

// Accounts over HTTP (PROTOCOL.md, section 8): keeping a guest's player
// with a passkey, signing in, passkeys, recovery, signing out and API
// tokens. The browser's session is the sirtommy_session cookie; every
// state-changing route is refused to cross-site requests.

// SessionCookie names the session cookie: HttpOnly, SameSite=Lax, Secure
// over TLS, rotated at every sign-in.
const SessionCookie = "sirtommy_session"

// Error codes of the account routes the web layer adds to package
// account's.
const (
	CodeCrossOrigin race.Code = "cross-origin" // a state-changing request from another site
	CodeNoAccounts  race.Code = "no-accounts"  // this server keeps no accounts
	CodeBadBody     race.Code = "bad-body"     // the request's body is not the JSON the route takes
)

// maxAccountBody bounds an account request's body: a passkey's answer is
// a few kilobytes.
const maxAccountBody = 64 << 10

// accountRoutes serves the account routes.
type accountRoutes struct {
	log   zerolog.Logger
	svc   *account.Service
	lobby *lobby.Lobby
}

// addAccountRoutes lists the account routes on mux: state-changing ones
// behind cross-origin protection, ceremonies' beginnings also behind a
// limit per client address.
func addAccountRoutes(mux *http.ServeMux, s *Server) {
	a := &accountRoutes{log: s.log.With().Str("component", "accounts").Logger(), svc: s.deps.Accounts, lobby: s.deps.Lobby}
	cop := http.NewCrossOriginProtection()
	for _, o := range s.deps.AllowedOrigins {
		_ = cop.AddTrustedOrigin(o) // a malformed one trusts nothing more
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusForbidden, CodeCrossOrigin, "this request came from another site; account changes are made from this site's own pages")
	}))
	limit := everyRequestLimiter(s.deps.Limits.CeremoniesPerMinute, "too many passkey ceremonies from your address; try again in a minute")
	change := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, cop.Handler(a.ready(h))) }
	ceremony := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, cop.Handler(limit(a.ready(h))))
	}
	ceremony("POST /api/account/keep/begin", a.keepBegin)
	change("POST /api/account/keep/finish", a.keepFinish)
	ceremony("POST /api/account/sign-in/begin", a.signInBegin)
	change("POST /api/account/sign-in/finish", a.signInFinish)
	ceremony("POST /api/account/recover/begin", a.recoverBegin)
	change("POST /api/account/recover/finish", a.recoverFinish)
	ceremony("POST /api/account/passkeys/begin", a.addBegin)
	change("POST /api/account/passkeys/finish", a.addFinish)
	change("DELETE /api/account/passkeys/{id}", a.removePasskey)
	change("POST /api/account/sign-out", a.signOut)
	change("POST /api/account/sign-out-everywhere", a.signOutEverywhere)
	change("POST /api/account/tokens", a.mintToken)
	change("DELETE /api/account/tokens/{id}", a.revokeToken)
	mux.HandleFunc("GET /api/account/me", a.me)
	mux.Handle("GET /api/account/passkeys", a.ready(a.passkeys))
	mux.Handle("GET /api/account/tokens", a.ready(a.tokens))
}

// ready refuses every account route on a server without accounts.
func (a *accountRoutes) ready(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.svc == nil || a.lobby == nil {
			writeError(w, http.StatusNotFound, CodeNoAccounts, "this server keeps no accounts")
			return
		}
		h(w, r)
	}
}

// accountStatus is the HTTP status of an account refusal.
func accountStatus(code race.Code) int {
	switch code {
	case account.CodeBadUsername, account.CodeReservedUsername, account.CodeBadTokenLabel, CodeBadBody,
		account.CodeBadChallenge, account.CodePasskeyRefused, account.CodeUnknownCredential,
		account.CodeSignCounter, account.CodeRecoveryRefused, lobby.CodeInvalidToken, lobby.CodeExpiredToken:
		return http.StatusBadRequest
	case account.CodeSignInRequired, account.CodeInvalidAPIToken:
		return http.StatusUnauthorized
	case account.CodeUsernameTaken, account.CodeAlreadyKept, account.CodeLastPasskey, account.CodeTooManyTokens:
		return http.StatusConflict
	case account.CodeNoSuchPasskey, account.CodeNoSuchToken, account.CodeNoSuchAccount:
		return http.StatusNotFound
	case race.CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// fail answers a refusal with its code and sentence, and logs a failure.
func (a *accountRoutes) fail(w http.ResponseWriter, err error, what string) {
	code := race.ErrorCode(err)
	var re *race.Error
	if code == race.CodeInternal || !errors.As(err, &re) {
		a.log.Error().Err(err).Msg(what)
		writeError(w, http.StatusInternalServerError, race.CodeInternal, "the server failed: try again")
		return
	}
	writeError(w, accountStatus(code), code, "%s", re.Message)
}

// readBody reads a request's body whole (bounded).
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxAccountBody))
	if err != nil {
		return nil, race.Errorf(CodeBadBody, "the request's body cannot be read (at most %d bytes): %v", maxAccountBody, err)
	}
	return b, nil
}

// readJSON decodes a request's JSON body into v.
func readJSON(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return race.Errorf(CodeBadBody, "the request's body is not the JSON this route takes: %v", err)
	}
	return nil
}

// setSession gives the browser session token tok, replacing (and ending)
// the one it had: the session is rotated at every sign-in.
func (a *accountRoutes) setSession(w http.ResponseWriter, r *http.Request, tok string) {
	if old, err := r.Cookie(SessionCookie); err == nil && old.Value != "" && old.Value != tok {
		if err := a.svc.SignOut(r.Context(), old.Value); err != nil {
			a.log.Warn().Err(err).Msg("old session not ended")
		}
	}
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: a.secure(r), MaxAge: int(a.svc.SessionTTL() / time.Second),
	})
}

// secure says whether the session cookie is Secure: over TLS, here or at
// a proxy in front (the site's origin is https).
func (a *accountRoutes) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(a.svc.Origin(), "https://")
}

// clearSession deletes the browser's session cookie.
func (a *accountRoutes) clearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: a.secure(r), MaxAge: -1})
}

// sessionToken is the request's session cookie ("" without one).
func sessionToken(r *http.Request) string {
	if c, err := r.Cookie(SessionCookie); err == nil {
		return c.Value
	}
	return ""
}

// signedIn is the account of the request's session cookie
// (CodeSignInRequired).
func (a *accountRoutes) signedIn(r *http.Request) (account.Account, error) {
	return a.svc.SignedIn(r.Context(), sessionToken(r))
}

// keptReply answers keeping, recovering and signing in: the account, the
// player token the browser plays with from now on, and, once, the
// recovery code.
type keptReply struct {
	Account      account.Account `json:"account"`
	Welcome      lobby.Welcome   `json:"welcome"`
	RecoveryCode string          `json:"recoveryCode,omitempty"`
}

func (a *accountRoutes) welcome(acc account.Account) lobby.Welcome {
	return a.lobby.IssueToken(acc.Player, acc.Username)
}

// keepBegin is POST /api/account/keep/begin {"token", "username"}: the
// guest holding the player token keeps their player under username.
func (a *accountRoutes) keepBegin(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Token    string `json:"token"`
		Username string `json:"username"`
	}
	if err := readJSON(r, &req); err != nil {
		a.fail(w, err, "keep begin")
		return
	}
	who, err := a.lobby.VerifyToken(req.Token)
	if err != nil {
		a.fail(w, err, "keep begin")
		return
	}
	opts, err := a.svc.BeginKeep(r.Context(), who.ID, req.Username)
	if err != nil {
		a.fail(w, err, "keep begin")
		return
	}
	writeJSON(w, http.StatusOK, opts)
}

// keepFinish is POST /api/account/keep/finish with the answer of
// navigator.credentials.create.
func (a *accountRoutes) keepFinish(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err == nil {
		var k account.Kept
		if k, err = a.svc.FinishKeep(r.Context(), body); err == nil {
			a.setSession(w, r, k.Session)
			writeJSON(w, http.StatusCreated, keptReply{Account: k.Account, Welcome: a.welcome(k.Account), RecoveryCode: k.Recovery})
			return
		}
	}
	a.fail(w, err, "keep finish")
}

// signInBegin is POST /api/account/sign-in/begin: request options for any
// passkey of this site.
func (a *accountRoutes) signInBegin(w http.ResponseWriter, r *http.Request) {
	opts, err := a.svc.BeginSignIn(r.Context())
	if err != nil {
		a.fail(w, err, "sign-in begin")
		return
	}
	writeJSON(w, http.StatusOK, opts)
}

// signInFinish is POST /api/account/sign-in/finish with the answer of
// navigator.credentials.get.
func (a *accountRoutes) signInFinish(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err == nil {
		var acc account.Account
		var tok string
		if acc, tok, err = a.svc.FinishSignIn(r.Context(), body); err == nil {
			a.setSession(w, r, tok)
			writeJSON(w, http.StatusOK, keptReply{Account: acc, Welcome: a.welcome(acc)})
			return
		}
	}
	a.fail(w, err, "sign-in finish")
}

// recoverBegin is POST /api/account/recover/begin {"username", "code"}.
func (a *accountRoutes) recoverBegin(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Username string `json:"username"`
		Code     string `json:"code"`
	}
	if err := readJSON(r, &req); err != nil {
		a.fail(w, err, "recover begin")
		return
	}
	opts, err := a.svc.BeginRecover(r.Context(), req.Username, req.Code)
	if err != nil {
		a.fail(w, err, "recover begin")
		return
	}
	writeJSON(w, http.StatusOK, opts)
}

// recoverFinish is POST /api/account/recover/finish with the new
// passkey's answer: the code is spent and a new one given.
func (a *accountRoutes) recoverFinish(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err == nil {
		var k account.Kept
		if k, err = a.svc.FinishRecover(r.Context(), body); err == nil {
			a.setSession(w, r, k.Session)
			writeJSON(w, http.StatusOK, keptReply{Account: k.Account, Welcome: a.welcome(k.Account), RecoveryCode: k.Recovery})
			return
		}
	}
	a.fail(w, err, "recover finish")
}

// withAccount runs h for the signed-in account, or refuses.
func (a *accountRoutes) withAccount(w http.ResponseWriter, r *http.Request, what string, h func(acc account.Account) error) {
	acc, err := a.signedIn(r)
	if err == nil {
		err = h(acc)
	}
	if err != nil {
		a.fail(w, err, what)
	}
}

// meReply is GET /api/account/me.
type meReply struct {
	// Enabled says whether the server keeps accounts at all.
	Enabled bool `json:"enabled"`
	// Account is nil for a request with neither cookie nor token: a guest.
	Account  *account.Account      `json:"account"`
	Passkeys []account.PasskeyInfo `json:"passkeys"`
	// Via is how the request proved it: "session" or "api-token".
	Via string `json:"via"`
}

// me is GET /api/account/me: the account of the session cookie, or of an
// API token sent as "Authorization: Bearer sta_…". A request with
// neither is a guest's, answered 200 without an account (the page asks
// at every load, and a guest is no error); a cookie or token that is no
// longer valid is refused.
func (a *accountRoutes) me(w http.ResponseWriter, r *http.Request) {
	if a.svc == nil || a.lobby == nil {
		writeJSON(w, http.StatusOK, meReply{})
		return
	}
	if r.Header.Get("Authorization") == "" && sessionToken(r) == "" {
		writeJSON(w, http.StatusOK, meReply{Enabled: true})
		return
	}
	via := "session"
	var acc account.Account
	var err error
	if auth := r.Header.Get("Authorization"); auth != "" {
		via = "api-token"
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok {
			tok = ""
		}
		acc, err = a.svc.ByAPIToken(r.Context(), strings.TrimSpace(tok))
	} else {
		acc, err = a.signedIn(r)
	}
	var ps []account.PasskeyInfo
	if err == nil {
		ps, err = a.svc.Passkeys(r.Context(), acc.Player)
	}
	if err != nil {
		a.fail(w, err, "me")
		return
	}
	writeJSON(w, http.StatusOK, meReply{Enabled: true, Account: &acc, Passkeys: ps, Via: via})
}

// passkeys is GET /api/account/passkeys.
func (a *accountRoutes) passkeys(w http.ResponseWriter, r *http.Request) {
	a.withAccount(w, r, "passkeys", func(acc account.Account) error {
		ps, err := a.svc.Passkeys(r.Context(), acc.Player)
		if err == nil {
			writeJSON(w, http.StatusOK, map[string]any{"passkeys": ps})
		}
		return err
	})
}

// addBegin is POST /api/account/passkeys/begin: creation options for
// another passkey of the signed-in account.
func (a *accountRoutes) addBegin(w http.ResponseWriter, r *http.Request) {
	a.withAccount(w, r, "add passkey begin", func(acc account.Account) error {
		opts, err := a.svc.BeginAddPasskey(r.Context(), acc)
		if err == nil {
			writeJSON(w, http.StatusOK, opts)
		}
		return err
	})
}

// addFinish is POST /api/account/passkeys/finish with its answer.
func (a *accountRoutes) addFinish(w http.ResponseWriter, r *http.Request) {
	a.withAccount(w, r, "add passkey finish", func(acc account.Account) error {
		body, err := readBody(r)
		if err != nil {
			return err
		}
		p, err := a.svc.FinishAddPasskey(r.Context(), acc, body)
		if err == nil {
			writeJSON(w, http.StatusCreated, map[string]any{"passkey": p})
		}
		return err
	})
}

// removePasskey is DELETE /api/account/passkeys/{id}.
func (a *accountRoutes) removePasskey(w http.ResponseWriter, r *http.Request) {
	a.withAccount(w, r, "remove passkey", func(acc account.Account) error {
		err := a.svc.RemovePasskey(r.Context(), acc.Player, r.PathValue("id"))
		if err == nil {
			w.WriteHeader(http.StatusNoContent)
		}
		return err
	})
}

// signOut is POST /api/account/sign-out: this browser's session ends.
func (a *accountRoutes) signOut(w http.ResponseWriter, r *http.Request) {
	if tok := sessionToken(r); tok != "" {
		if err := a.svc.SignOut(r.Context(), tok); err != nil {
			a.fail(w, err, "sign out")
			return
		}
	}
	a.clearSession(w, r)
	w.WriteHeader(http.StatusNoContent)
}

// signOutEverywhere is POST /api/account/sign-out-everywhere: every
// session of the account ends.
func (a *accountRoutes) signOutEverywhere(w http.ResponseWriter, r *http.Request) {
	a.withAccount(w, r, "sign out everywhere", func(acc account.Account) error {
		err := a.svc.SignOutEverywhere(r.Context(), acc.Player)
		if err == nil {
			a.clearSession(w, r)
			w.WriteHeader(http.StatusNoContent)
		}
		return err
	})
}

// mintedReply is a new API token: its secret, shown once.
type mintedReply struct {
	Token string `json:"token"`
	account.APIToken
}

// mintToken is POST /api/account/tokens {"label"}.
func (a *accountRoutes) mintToken(w http.ResponseWriter, r *http.Request) {
	a.withAccount(w, r, "mint token", func(acc account.Account) error {
		var req struct {
			Label string `json:"label"`
		}
		if err := readJSON(r, &req); err != nil {
			return err
		}
		secret, t, err := a.svc.MintToken(r.Context(), acc.Player, req.Label)
		if err == nil {
			writeJSON(w, http.StatusCreated, mintedReply{Token: secret, APIToken: t})
		}
		return err
	})
}

// tokens is GET /api/account/tokens.
func (a *accountRoutes) tokens(w http.ResponseWriter, r *http.Request) {
	a.withAccount(w, r, "tokens", func(acc account.Account) error {
		ts, err := a.svc.Tokens(r.Context(), acc.Player)
		if err == nil {
			writeJSON(w, http.StatusOK, map[string]any{"tokens": ts})
		}
		return err
	})
}

// revokeToken is DELETE /api/account/tokens/{id}.
func (a *accountRoutes) revokeToken(w http.ResponseWriter, r *http.Request) {
	a.withAccount(w, r, "revoke token", func(acc account.Account) error {
		err := a.svc.RevokeToken(r.Context(), acc.Player, r.PathValue("id"))
		if err == nil {
			w.WriteHeader(http.StatusNoContent)
		}
		return err
	})
}

// admit decides whom a hello may enter the lobby as, on a server with
// accounts. A player token of an account is admitted only on a
// connection whose session cookie is that account's (CodeSignInRequired
// otherwise: a copied token does not take an account). An API token
// ("sta_…") and a signed-in browser without a token enter as their
// account. A guest may not take an account's username or a reserved word
// as display name. It may rewrite the hello's token and name.
func (c *conn) admit(ctx context.Context, l *lobby.Lobby, m *clientMsg) error {
	svc := c.srv.deps.Accounts
	if svc == nil {
		return nil
	}
	switch {
	case strings.HasPrefix(m.Token, account.APITokenPrefix):
		acc, err := svc.ByAPIToken(ctx, m.Token)
		if err != nil {
			return err
		}
		return asAccount(l, acc, m)
	case m.Token == "":
		if c.sessionCookie != "" {
			if acc, err := svc.SignedIn(ctx, c.sessionCookie); err == nil {
				return asAccount(l, acc, m)
			}
		}
		return c.guestName(ctx, m.Name)
	}
	who, err := l.VerifyToken(m.Token)
	if err != nil {
		return nil // Enter refuses it with its own code
	}
	acc, kept, err := svc.Of(ctx, who.ID)
	switch {
	case err != nil:
		return err
	case !kept:
		return c.guestName(ctx, m.Name)
	}
	s, err := svc.SignedIn(ctx, c.sessionCookie)
	if err != nil || s.Player != acc.Player {
		return race.Errorf(account.CodeSignInRequired, "player %s is the account %q: sign in with its passkey in this browser to play as them", acc.Player, acc.Username)
	}
	return asAccount(l, acc, m)
}

// asAccount makes a hello enter as account acc, under its username.
func asAccount(l *lobby.Lobby, acc account.Account, m *clientMsg) error {
	if m.Name != "" && m.Name != acc.Username {
		return race.Errorf(lobby.CodeBadName, "an account plays under its username, %q", acc.Username)
	}
	m.Token, m.Name = l.IssueToken(acc.Player, acc.Username).Token, ""
	return nil
}

// guestName refuses a guest's display name that is a reserved word or
// an account's username (in any case).
func (c *conn) guestName(ctx context.Context, name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil
	}
	if account.Reserved(name) {
		return race.Errorf(account.CodeReservedUsername, "the name %q is reserved; choose another", name)
	}
	_, err := c.srv.deps.Accounts.ByUsername(ctx, name)
	switch race.ErrorCode(err) {
	case "":
		return race.Errorf(account.CodeUsernameTaken, "the name %q is an account's username; choose another", name)
	case account.CodeNoSuchAccount:
		return nil
	}
	return err
}

// checkRename refuses a rename by an account (its name is its username)
// and a guest's rename to a reserved word or an account's username.
func (c *conn) checkRename(ctx context.Context, name string) error {
	svc := c.srv.deps.Accounts
	if svc == nil || c.session == nil {
		return nil
	}
	acc, kept, err := svc.Of(ctx, c.session.Player().ID)
	switch {
	case err != nil:
		return err
	case kept:
		return race.Errorf(lobby.CodeBadName, "an account plays under its username, %q", acc.Username)
	}
	return c.guestName(ctx, name)
}
