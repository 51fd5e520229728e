package account_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"sirtommy/lobby/account"
	"sirtommy/lobby/account/passkeytest"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

const origin = "http://localhost:8080"

type fixture struct {
	svc   *account.Service
	clock *racetest.Clock
	auth  *passkeytest.Authenticator
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clock := racetest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	svc, err := account.New(account.NewMemory(), account.Config{Origin: origin, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{svc: svc, clock: clock, auth: passkeytest.New(origin)}
}

func asJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantCode(t *testing.T, what string, err error, code race.Code) {
	t.Helper()
	if got := race.ErrorCode(err); got != code {
		t.Fatalf("%s: %v (code %q), want %q", what, err, got, code)
	}
}

// keep keeps player under name with a new passkey of f.auth.
func (f *fixture) keep(t *testing.T, player, name string) account.Kept {
	t.Helper()
	opts, err := f.svc.BeginKeep(t.Context(), player, name)
	if err != nil {
		t.Fatalf("begin keep: %v", err)
	}
	body, err := f.auth.Create(asJSON(t, opts))
	if err != nil {
		t.Fatal(err)
	}
	k, err := f.svc.FinishKeep(t.Context(), body)
	if err != nil {
		t.Fatalf("finish keep: %v", err)
	}
	return k
}

// signInBody begins a sign-in and answers it with c (nil: the newest).
func (f *fixture) signInBody(t *testing.T, c *passkeytest.Credential) []byte {
	t.Helper()
	opts, err := f.svc.BeginSignIn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	body, err := f.auth.Get(asJSON(t, opts), c)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func TestKeepThenSignInElsewhere(t *testing.T) {
	f := newFixture(t)
	k := f.keep(t, "pguest1", "Ann")
	if k.Account.Player != "pguest1" || k.Account.Username != "Ann" || k.Session == "" || k.Recovery == "" {
		t.Fatalf("kept: %+v", k)
	}
	if a, err := f.svc.SignedIn(t.Context(), k.Session); err != nil || a.Player != "pguest1" {
		t.Fatalf("signed in after keep: %+v (%v)", a, err)
	}
	a, tok, err := f.svc.FinishSignIn(t.Context(), f.signInBody(t, nil))
	if err != nil || a.Player != "pguest1" || tok == "" || tok == k.Session {
		t.Fatalf("sign in: %+v %q (%v)", a, tok, err)
	}
	ps, _ := f.svc.Passkeys(t.Context(), "pguest1")
	if len(ps) != 1 || ps[0].LastUsed == nil {
		t.Fatalf("passkeys after a sign-in: %+v, want one used", ps)
	}
	if err := f.svc.SignOutEverywhere(t.Context(), "pguest1"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{k.Session, tok} {
		_, err := f.svc.SignedIn(t.Context(), s)
		wantCode(t, "after sign out everywhere", err, account.CodeSignInRequired)
	}
}

func TestKeepRefusals(t *testing.T) {
	f := newFixture(t)
	f.keep(t, "p1", "ann")
	for _, tc := range []struct {
		player, name string
		code         race.Code
	}{
		{"p2", "ANN", account.CodeUsernameTaken},
		{"p1", "bob", account.CodeAlreadyKept},
		{"p2", "Admin", account.CodeReservedUsername},
		{"p2", "computer", account.CodeReservedUsername},
		{"p2", "Expert", account.CodeReservedUsername},
		{"p2", "guest-ab12", account.CodeReservedUsername},
		{"p2", "ab", account.CodeBadUsername},
		{"p2", strings.Repeat("a", 21), account.CodeBadUsername},
		{"p2", "ann bob", account.CodeBadUsername},
		{"p2", "anné", account.CodeBadUsername},
	} {
		_, err := f.svc.BeginKeep(t.Context(), tc.player, tc.name)
		wantCode(t, tc.player+" as "+tc.name, err, tc.code)
	}
}

func TestRacingKeepsForOneName(t *testing.T) {
	f := newFixture(t)
	other := passkeytest.New(origin)
	o1, err := f.svc.BeginKeep(t.Context(), "p1", "ann")
	if err != nil {
		t.Fatal(err)
	}
	o2, err := f.svc.BeginKeep(t.Context(), "p2", "Ann")
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := f.auth.Create(asJSON(t, o1))
	b2, _ := other.Create(asJSON(t, o2))
	if _, err := f.svc.FinishKeep(t.Context(), b1); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.FinishKeep(t.Context(), b2)
	wantCode(t, "the second registration", err, account.CodeUsernameTaken)
	if _, ok, _ := f.svc.Of(t.Context(), "p2"); ok {
		t.Fatal("the losing player is an account")
	}
}

func TestChallengeReplayedOrExpired(t *testing.T) {
	f := newFixture(t)
	f.keep(t, "p1", "ann")
	body := f.signInBody(t, nil)
	if _, _, err := f.svc.FinishSignIn(t.Context(), body); err != nil {
		t.Fatal(err)
	}
	_, _, err := f.svc.FinishSignIn(t.Context(), body)
	wantCode(t, "replayed", err, account.CodeBadChallenge)
	late := f.signInBody(t, nil)
	f.clock.Advance(account.DefaultChallengeTTL)
	_, _, err = f.svc.FinishSignIn(t.Context(), late)
	wantCode(t, "expired", err, account.CodeBadChallenge)
}

func TestForeignOrigin(t *testing.T) {
	f := newFixture(t)
	f.keep(t, "p1", "ann")
	f.auth.Origin = "https://evil.example"
	_, _, err := f.svc.FinishSignIn(t.Context(), f.signInBody(t, nil))
	wantCode(t, "sign-in from another origin", err, account.CodePasskeyRefused)
	opts, _ := f.svc.BeginKeep(t.Context(), "p2", "bob")
	body, _ := f.auth.Create(asJSON(t, opts))
	_, err = f.svc.FinishKeep(t.Context(), body)
	wantCode(t, "registration from another origin", err, account.CodePasskeyRefused)
	if _, ok, _ := f.svc.Of(t.Context(), "p2"); ok {
		t.Fatal("a foreign registration made an account")
	}
}

func TestUnknownAndRemovedCredential(t *testing.T) {
	f := newFixture(t)
	f.keep(t, "p1", "ann")
	first := f.auth.Credentials()[0]
	stranger := passkeytest.New(origin)
	if _, err := stranger.Create(asJSON(t, mustBegin(t, f))); err != nil {
		t.Fatal(err)
	}
	opts, _ := f.svc.BeginSignIn(t.Context())
	body, _ := stranger.Get(asJSON(t, opts), nil)
	_, _, err := f.svc.FinishSignIn(t.Context(), body)
	wantCode(t, "never registered", err, account.CodeUnknownCredential)

	// A second passkey, then the first removed.
	a, _, _ := f.svc.Of(t.Context(), "p1")
	add, err := f.svc.BeginAddPasskey(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	addBody, _ := f.auth.Create(asJSON(t, add))
	if _, err := f.svc.FinishAddPasskey(t.Context(), a, addBody); err != nil {
		t.Fatal(err)
	}
	ps, _ := f.svc.Passkeys(t.Context(), "p1")
	if len(ps) != 2 {
		t.Fatalf("passkeys: %+v", ps)
	}
	// Both were added at the fake clock's one time: find the first by id.
	firstID, otherID := ps[0].ID, ps[1].ID
	if firstID != base64.RawURLEncoding.EncodeToString(first.ID) {
		firstID, otherID = otherID, firstID
	}
	if err := f.svc.RemovePasskey(t.Context(), "p1", firstID); err != nil {
		t.Fatal(err)
	}
	_, _, err = f.svc.FinishSignIn(t.Context(), f.signInBody(t, first))
	wantCode(t, "removed", err, account.CodeUnknownCredential)
	if _, _, err := f.svc.FinishSignIn(t.Context(), f.signInBody(t, nil)); err != nil {
		t.Fatalf("the other passkey: %v", err)
	}
	wantCode(t, "remove the last", f.svc.RemovePasskey(t.Context(), "p1", otherID), account.CodeLastPasskey)
}

// mustBegin begins a registration for a throwaway player (its answer is
// never finished: a credential no account has).
func mustBegin(t *testing.T, f *fixture) any {
	t.Helper()
	opts, err := f.svc.BeginKeep(t.Context(), "pstranger", "stranger")
	if err != nil {
		t.Fatal(err)
	}
	return opts
}

func TestCounterBackwards(t *testing.T) {
	f := newFixture(t)
	f.keep(t, "p1", "ann")
	c := f.auth.Credentials()[0]
	for range 3 {
		if _, _, err := f.svc.FinishSignIn(t.Context(), f.signInBody(t, c)); err != nil {
			t.Fatal(err)
		}
	}
	f.auth.SetCount(c, 1)
	_, _, err := f.svc.FinishSignIn(t.Context(), f.signInBody(t, c))
	wantCode(t, "counter back to 2 after 3", err, account.CodeSignCounter)
}

func TestRecoveryOnce(t *testing.T) {
	f := newFixture(t)
	k := f.keep(t, "p1", "ann")
	_, err := f.svc.BeginRecover(t.Context(), "ann", "WRONG-CODE")
	wantCode(t, "wrong code", err, account.CodeRecoveryRefused)
	_, err = f.svc.BeginRecover(t.Context(), "nobody1", k.Recovery)
	wantCode(t, "unknown username", err, account.CodeRecoveryRefused)
	phone := passkeytest.New(origin)
	opts, err := f.svc.BeginRecover(t.Context(), "ANN", strings.ToLower(k.Recovery))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := phone.Create(asJSON(t, opts))
	r, err := f.svc.FinishRecover(t.Context(), body)
	if err != nil || r.Account.Player != "p1" || r.Recovery == "" || r.Recovery == k.Recovery {
		t.Fatalf("recover: %+v (%v)", r, err)
	}
	_, err = f.svc.BeginRecover(t.Context(), "ann", k.Recovery)
	wantCode(t, "the spent code", err, account.CodeRecoveryRefused)
	sopts, _ := f.svc.BeginSignIn(t.Context())
	sb, _ := phone.Get(asJSON(t, sopts), nil)
	if a, _, err := f.svc.FinishSignIn(t.Context(), sb); err != nil || a.Player != "p1" {
		t.Fatalf("sign in with the recovered passkey: %+v (%v)", a, err)
	}
}

func TestRecoveryRacedSpendsOnce(t *testing.T) {
	f := newFixture(t)
	k := f.keep(t, "p1", "ann")
	o1, _ := f.svc.BeginRecover(t.Context(), "ann", k.Recovery)
	o2, _ := f.svc.BeginRecover(t.Context(), "ann", k.Recovery)
	b1, _ := passkeytest.New(origin).Create(asJSON(t, o1))
	b2, _ := passkeytest.New(origin).Create(asJSON(t, o2))
	if _, err := f.svc.FinishRecover(t.Context(), b1); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.FinishRecover(t.Context(), b2)
	wantCode(t, "the second use of one code", err, account.CodeRecoveryRefused)
	if ps, _ := f.svc.Passkeys(t.Context(), "p1"); len(ps) != 2 {
		t.Fatalf("passkeys: %d, want 2", len(ps))
	}
}

func TestAPITokens(t *testing.T) {
	f := newFixture(t)
	f.keep(t, "p1", "ann")
	secret, tok, err := f.svc.MintToken(t.Context(), "p1", "my bot")
	if err != nil || !strings.HasPrefix(secret, account.APITokenPrefix) || tok.ID == "" {
		t.Fatalf("mint: %q %+v (%v)", secret, tok, err)
	}
	if a, err := f.svc.ByAPIToken(t.Context(), secret); err != nil || a.Player != "p1" {
		t.Fatalf("by token: %+v (%v)", a, err)
	}
	_, _, err = f.svc.MintToken(t.Context(), "p1", " ")
	wantCode(t, "empty label", err, account.CodeBadTokenLabel)
	_, _, err = f.svc.MintToken(t.Context(), "p1", "a\nb")
	wantCode(t, "control", err, account.CodeBadTokenLabel)
	if err := f.svc.RevokeToken(t.Context(), "p1", tok.ID); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.ByAPIToken(t.Context(), secret)
	wantCode(t, "revoked", err, account.CodeInvalidAPIToken)
	_, err = f.svc.ByAPIToken(t.Context(), "v1.something")
	wantCode(t, "not an API token", err, account.CodeInvalidAPIToken)
}

func TestSweep(t *testing.T) {
	f := newFixture(t)
	k := f.keep(t, "p1", "ann")
	if _, err := f.svc.BeginSignIn(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(account.DefaultSessionTTL)
	n, err := f.svc.Sweep(t.Context())
	if err != nil || n != 2 {
		t.Fatalf("sweep: %d (%v), want the challenge and the session", n, err)
	}
	_, err = f.svc.SignedIn(t.Context(), k.Session)
	wantCode(t, "expired session", err, account.CodeSignInRequired)
}

func TestNewRefusesBadOrigin(t *testing.T) {
	for _, o := range []string{"", "localhost:8080", "ftp://x", "https://x.org/path"} {
		if _, err := account.New(account.NewMemory(), account.Config{Origin: o}); err == nil {
			t.Errorf("origin %q accepted", o)
		}
	}
}
