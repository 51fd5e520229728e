// Package accounttest is the conformance suite of account.Store: every
// implementation (memory, SQL on SQLite and PostgreSQL) runs it, so that
// they refuse and race alike.
package accounttest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby/account"
	"sirtommy/race"
)

// t0 is the suite's time: stores keep milliseconds, so no finer.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Run runs the suite; fresh makes an empty store for each test.
func Run(t *testing.T, fresh func(t *testing.T) account.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s account.Store)
	}{
		{"create-and-find", createAndFind},
		{"username-taken-in-another-case", takenOtherCase},
		{"player-kept-once", keptOnce},
		{"registrations-race-for-one-name", racingNames},
		{"passkeys", passkeys},
		{"counter-compare-and-set", counterCAS},
		{"recovery-spent-once", recovery},
		{"challenge-taken-once", challenges},
		{"sessions", sessions},
		{"api-tokens", tokens},
		{"sweep", sweep},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, fresh(t)) })
	}
}

// wantCode fails unless err is a refusal with code.
func wantCode(t *testing.T, what string, err error, code race.Code) {
	t.Helper()
	if got := race.ErrorCode(err); got != code {
		t.Fatalf("%s: %v (code %q), want code %q", what, err, got, code)
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// key is a passkey of player made at the suite's time plus d.
func key(player string, id byte, d time.Duration) account.Passkey {
	return account.Passkey{ID: []byte{id, 0xfe, id}, Player: player, Data: []byte(`{"k":1}`), SignCount: 1, Added: t0.Add(d)}
}

func create(t *testing.T, s account.Store, player, name string, id byte) account.Account {
	t.Helper()
	a := account.Account{Player: player, Username: name, Created: t0}
	must(t, "create "+name, s.Create(context.Background(), a, key(player, id, 0), "recovery-"+player))
	return a
}

func createAndFind(t *testing.T, s account.Store) {
	ctx := t.Context()
	_, err := s.ByPlayer(ctx, "p1")
	wantCode(t, "by player before", err, account.CodeNoSuchAccount)
	a := create(t, s, "p1", "Ann_1", 1)
	got, err := s.ByPlayer(ctx, "p1")
	if err != nil || got != a {
		t.Fatalf("by player: %+v (%v), want %+v", got, err, a)
	}
	got, err = s.ByUsername(ctx, "aNN_1")
	if err != nil || got != a {
		t.Fatalf("by username in another case: %+v (%v), want %+v", got, err, a)
	}
	p, err := s.Passkey(ctx, []byte{1, 0xfe, 1})
	if err != nil || p.Player != "p1" || p.SignCount != 1 || !p.Added.Equal(t0) || !bytes.Equal(p.Data, []byte(`{"k":1}`)) {
		t.Fatalf("passkey: %+v (%v)", p, err)
	}
	_, err = s.Passkey(ctx, []byte{9})
	wantCode(t, "unknown passkey", err, account.CodeUnknownCredential)
	kept, err := s.KeptAmong(ctx, []string{"p0", "p1", "p2"})
	if err != nil || len(kept) != 1 || !kept["p1"] {
		t.Fatalf("kept among p0, p1, p2: %v (%v), want p1 alone", kept, err)
	}
}

func takenOtherCase(t *testing.T, s account.Store) {
	create(t, s, "p1", "ann", 1)
	err := s.Create(t.Context(), account.Account{Player: "p2", Username: "ANN", Created: t0}, key("p2", 2, 0), "h")
	wantCode(t, "ANN after ann", err, account.CodeUsernameTaken)
	_, err = s.ByPlayer(t.Context(), "p2")
	wantCode(t, "the refused account", err, account.CodeNoSuchAccount)
	_, err = s.Passkey(t.Context(), []byte{2, 0xfe, 2})
	wantCode(t, "the refused account's passkey", err, account.CodeUnknownCredential)
}

func keptOnce(t *testing.T, s account.Store) {
	create(t, s, "p1", "ann", 1)
	err := s.Create(t.Context(), account.Account{Player: "p1", Username: "bob", Created: t0}, key("p1", 2, 0), "h")
	wantCode(t, "a second account for p1", err, account.CodeAlreadyKept)
	_, err = s.ByUsername(t.Context(), "bob")
	wantCode(t, "the refused username", err, account.CodeNoSuchAccount)
}

func racingNames(t *testing.T, s account.Store) {
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			p := fmt.Sprintf("p%d", i)
			errs[i] = s.Create(context.Background(), account.Account{Player: p, Username: fmt.Sprintf("Ann%c", "aA"[i%2]), Created: t0}, key(p, byte(i), 0), "h")
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch race.ErrorCode(err) {
		case "":
			won++
		case account.CodeUsernameTaken:
		default:
			t.Fatalf("registration %d: %v, want success or %s", i, err, account.CodeUsernameTaken)
		}
	}
	if won != 1 {
		t.Fatalf("%d registrations of one name won, want 1", won)
	}
}

func passkeys(t *testing.T, s account.Store) {
	ctx := t.Context()
	create(t, s, "p1", "ann", 1)
	create(t, s, "p2", "bob", 5)
	wantCode(t, "remove the only one", s.RemovePasskey(ctx, "p1", []byte{1, 0xfe, 1}), account.CodeLastPasskey)
	must(t, "add", s.AddPasskey(ctx, key("p1", 2, time.Minute)))
	wantCode(t, "add it again", s.AddPasskey(ctx, key("p1", 2, time.Minute)), account.CodePasskeyRefused)
	wantCode(t, "add to no account", s.AddPasskey(ctx, key("p9", 3, 0)), account.CodeNoSuchAccount)
	ps, err := s.Passkeys(ctx, "p1")
	if err != nil || len(ps) != 2 || ps[0].ID[0] != 1 || ps[1].ID[0] != 2 || !ps[1].Added.Equal(t0.Add(time.Minute)) {
		t.Fatalf("passkeys: %+v (%v), want 1 then 2", ps, err)
	}
	wantCode(t, "remove another's", s.RemovePasskey(ctx, "p1", []byte{5, 0xfe, 5}), account.CodeNoSuchPasskey)
	wantCode(t, "remove unknown", s.RemovePasskey(ctx, "p1", []byte{7}), account.CodeNoSuchPasskey)
	must(t, "remove", s.RemovePasskey(ctx, "p1", []byte{1, 0xfe, 1}))
	_, err = s.Passkey(ctx, []byte{1, 0xfe, 1})
	wantCode(t, "the removed passkey", err, account.CodeUnknownCredential)
	if ps, _ := s.Passkeys(ctx, "p2"); len(ps) != 1 {
		t.Fatalf("bob's passkeys: %+v, want 1", ps)
	}
}

func counterCAS(t *testing.T, s account.Store) {
	ctx := t.Context()
	create(t, s, "p1", "ann", 1)
	id := []byte{1, 0xfe, 1}
	wantCode(t, "stale old", s.UsePasskey(ctx, id, 0, 5, t0), account.CodeSignCounter)
	const n = 6
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = s.UsePasskey(context.Background(), id, 1, uint32(2+i), t0.Add(time.Hour)) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else {
			wantCode(t, "a losing use", err, account.CodeSignCounter)
		}
	}
	p, err := s.Passkey(ctx, id)
	if won != 1 || err != nil || p.SignCount < 2 || !p.LastUsed.Equal(t0.Add(time.Hour)) {
		t.Fatalf("%d uses won, passkey %+v (%v): want one, counter moved, last used set", won, p, err)
	}
	wantCode(t, "use removed", s.UsePasskey(ctx, []byte{9}, 0, 1, t0), account.CodeUnknownCredential)
}

func recovery(t *testing.T, s account.Store) {
	ctx := t.Context()
	create(t, s, "p1", "ann", 1)
	if ok, err := s.RecoveryMatches(ctx, "p1", "recovery-p1"); !ok || err != nil {
		t.Fatalf("matches: %v %v", ok, err)
	}
	if ok, _ := s.RecoveryMatches(ctx, "p1", "wrong"); ok {
		t.Fatal("a wrong hash matches")
	}
	wantCode(t, "spend wrong", s.SpendRecovery(ctx, "p1", "wrong", "fresh", key("p1", 2, 0)), account.CodeRecoveryRefused)
	must(t, "spend", s.SpendRecovery(ctx, "p1", "recovery-p1", "fresh", key("p1", 2, 0)))
	wantCode(t, "spend again", s.SpendRecovery(ctx, "p1", "recovery-p1", "other", key("p1", 3, 0)), account.CodeRecoveryRefused)
	if ps, _ := s.Passkeys(ctx, "p1"); len(ps) != 2 {
		t.Fatalf("passkeys after one recovery: %d, want 2", len(ps))
	}
	if ok, _ := s.RecoveryMatches(ctx, "p1", "fresh"); !ok {
		t.Fatal("the fresh code does not match")
	}
}

func challenges(t *testing.T, s account.Store) {
	ctx := t.Context()
	c := account.Challenge{Key: "abc", Kind: account.CeremonyRecover, Player: "p1", Username: "ann", Recovery: "h", Data: []byte(`{"x":1}`), Expires: t0.Add(time.Minute)}
	must(t, "put", s.PutChallenge(ctx, c))
	got, err := s.TakeChallenge(ctx, "abc", t0)
	if err != nil || got.Key != c.Key || got.Kind != c.Kind || got.Player != c.Player || got.Username != c.Username || got.Recovery != c.Recovery || !bytes.Equal(got.Data, c.Data) || !got.Expires.Equal(c.Expires) {
		t.Fatalf("take: %+v (%v), want %+v", got, err, c)
	}
	_, err = s.TakeChallenge(ctx, "abc", t0)
	wantCode(t, "take again", err, account.CodeBadChallenge)
	c.Key = "old"
	must(t, "put", s.PutChallenge(ctx, c))
	_, err = s.TakeChallenge(ctx, "old", t0.Add(time.Minute))
	wantCode(t, "take expired", err, account.CodeBadChallenge)
	const n = 6
	c.Key = "raced"
	must(t, "put", s.PutChallenge(ctx, c))
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = s.TakeChallenge(context.Background(), "raced", t0) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d takes of one challenge won, want 1", won)
	}
}

func sessions(t *testing.T, s account.Store) {
	ctx := t.Context()
	for i, p := range []string{"p1", "p1", "p2"} {
		must(t, "put", s.PutSession(ctx, account.Session{Hash: fmt.Sprint("h", i), Player: p, Created: t0, Expires: t0.Add(time.Hour)}))
	}
	got, err := s.Session(ctx, "h0", t0)
	if err != nil || got.Player != "p1" || !got.Expires.Equal(t0.Add(time.Hour)) {
		t.Fatalf("session: %+v (%v)", got, err)
	}
	_, err = s.Session(ctx, "h0", t0.Add(time.Hour))
	wantCode(t, "expired", err, account.CodeSignInRequired)
	_, err = s.Session(ctx, "nope", t0)
	wantCode(t, "unknown", err, account.CodeSignInRequired)
	must(t, "delete", s.DeleteSession(ctx, "h0"))
	_, err = s.Session(ctx, "h0", t0)
	wantCode(t, "deleted", err, account.CodeSignInRequired)
	if _, err := s.Session(ctx, "h1", t0); err != nil {
		t.Fatalf("the other session of p1 went: %v", err)
	}
	must(t, "delete all", s.DeleteSessions(ctx, "p1"))
	_, err = s.Session(ctx, "h1", t0)
	wantCode(t, "after sign out everywhere", err, account.CodeSignInRequired)
	if _, err := s.Session(ctx, "h2", t0); err != nil {
		t.Fatalf("p2's session went: %v", err)
	}
}

func tokens(t *testing.T, s account.Store) {
	ctx := t.Context()
	wantCode(t, "a token of no account", s.PutToken(ctx, account.APIToken{ID: "x", Player: "p1", Hash: "x", Label: "x", Created: t0}, 3), account.CodeNoSuchAccount)
	create(t, s, "p1", "ann", 1)
	for i := range 3 {
		must(t, "put", s.PutToken(ctx, account.APIToken{ID: fmt.Sprint("t", i), Player: "p1", Hash: fmt.Sprint("th", i), Label: "bot", Created: t0.Add(time.Duration(i) * time.Second)}, 3))
	}
	wantCode(t, "a fourth", s.PutToken(ctx, account.APIToken{ID: "t9", Player: "p1", Hash: "th9", Label: "x", Created: t0}, 3), account.CodeTooManyTokens)
	ts, err := s.Tokens(ctx, "p1")
	if err != nil || len(ts) != 3 || ts[0].ID != "t0" || ts[2].ID != "t2" || ts[1].Label != "bot" {
		t.Fatalf("tokens: %+v (%v)", ts, err)
	}
	if ts, _ := s.Tokens(ctx, "p2"); len(ts) != 0 {
		t.Fatalf("p2's tokens: %+v", ts)
	}
	got, err := s.TokenByHash(ctx, "th1")
	if err != nil || got.ID != "t1" || got.Player != "p1" {
		t.Fatalf("by hash: %+v (%v)", got, err)
	}
	wantCode(t, "revoke another's", s.RevokeToken(ctx, "p2", "t1"), account.CodeNoSuchToken)
	must(t, "revoke", s.RevokeToken(ctx, "p1", "t1"))
	_, err = s.TokenByHash(ctx, "th1")
	wantCode(t, "revoked", err, account.CodeInvalidAPIToken)
	wantCode(t, "revoke again", s.RevokeToken(ctx, "p1", "t1"), account.CodeNoSuchToken)
}

func sweep(t *testing.T, s account.Store) {
	ctx := t.Context()
	must(t, "put", s.PutChallenge(ctx, account.Challenge{Key: "old", Kind: account.CeremonySignIn, Data: []byte("{}"), Expires: t0}))
	must(t, "put", s.PutChallenge(ctx, account.Challenge{Key: "new", Kind: account.CeremonySignIn, Data: []byte("{}"), Expires: t0.Add(time.Minute)}))
	must(t, "put", s.PutSession(ctx, account.Session{Hash: "old", Player: "p1", Created: t0, Expires: t0}))
	must(t, "put", s.PutSession(ctx, account.Session{Hash: "new", Player: "p1", Created: t0, Expires: t0.Add(time.Minute)}))
	n, err := s.Sweep(ctx, t0)
	if err != nil || n != 2 {
		t.Fatalf("sweep: %d (%v), want 2", n, err)
	}
	if _, err := s.TakeChallenge(ctx, "new", t0); err != nil {
		t.Fatalf("the live challenge went: %v", err)
	}
	if _, err := s.Session(ctx, "new", t0); err != nil {
		t.Fatalf("the live session went: %v", err)
	}
}
