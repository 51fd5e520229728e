package account

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"sirtommy/race"
)

// Defaults and bounds of the service.
const (
	// DefaultChallengeTTL is how long a ceremony may take: time to touch a
	// security key or unlock a phone, not to keep challenges around.
	DefaultChallengeTTL = 5 * time.Minute
	// DefaultSessionTTL is how long a browser stays signed in.
	DefaultSessionTTL = 30 * 24 * time.Hour
	// MaxTokens bounds an account's API tokens.
	MaxTokens = 20
	// MaxTokenLabel bounds an API token's label, in characters.
	MaxTokenLabel = 40
	// siteName is the relying party's name the authenticator shows.
	siteName = "Sir Tommy"
)

// Config sets up a Service.
type Config struct {
	// Origin is the site's address as browsers see it
	// ("https://sirtommy.example", "http://localhost:8080"): passkeys are
	// bound to its host (the RP ID) and answers from any other origin are
	// refused.
	Origin string
	Clock  race.Clock
	// ChallengeTTL and SessionTTL: zero means the defaults.
	ChallengeTTL time.Duration
	SessionTTL   time.Duration
}

// Service is accounts with passkeys: a guest keeps their player under a
// username with a passkey, signs in with it on any device, manages its
// passkeys, recovers with a recovery code, and mints API tokens. It
// checks the ceremonies with go-webauthn and keeps everything in a Store.
type Service struct {
	store Store
	wa    *webauthn.WebAuthn
	clock race.Clock
	cfg   Config
}

// New makes a service on store for cfg.Origin.
func New(store Store, cfg Config) (*Service, error) {
	u, err := url.Parse(cfg.Origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Path != "" && u.Path != "/" {
		return nil, fmt.Errorf("account: origin %q is not a site's address such as https://example.org", cfg.Origin)
	}
	origin := u.Scheme + "://" + u.Host
	wa, err := webauthn.New(&webauthn.Config{
		RPID:          u.Hostname(),
		RPDisplayName: siteName,
		RPOrigins:     []string{origin},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementRequired,
			UserVerification: protocol.VerificationPreferred,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("account: %w", err)
	}
	if cfg.Clock == nil {
		cfg.Clock = race.SystemClock{}
	}
	if cfg.ChallengeTTL <= 0 {
		cfg.ChallengeTTL = DefaultChallengeTTL
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	cfg.Origin = origin
	return &Service{store: store, wa: wa, clock: cfg.Clock, cfg: cfg}, nil
}

// Origin is the site's origin the service accepts answers from.
func (s *Service) Origin() string { return s.cfg.Origin }

// SessionTTL is how long a session lasts (the cookie's Max-Age).
func (s *Service) SessionTTL() time.Duration { return s.cfg.SessionTTL }

// user is an account as the library sees it.
type user struct {
	player, name string
	creds        []webauthn.Credential
}

func (u user) WebAuthnID() []byte                         { return []byte(u.player) }
func (u user) WebAuthnName() string                       { return u.name }
func (u user) WebAuthnDisplayName() string                { return u.name }
func (u user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// Kept is what registering or recovering gives: the account, a session
// token for the cookie, and a recovery code shown once.
type Kept struct {
	Account  Account
	Session  string
	Recovery string
}

// BeginKeep begins keeping guest player under username: the creation
// options for navigator.credentials.create. It refuses a bad, reserved or
// taken username, and a player that is an account already.
func (s *Service) BeginKeep(ctx context.Context, player, username string) (*protocol.CredentialCreation, error) {
	if err := CheckUsername(username); err != nil {
		return nil, err
	}
	if _, err := s.store.ByPlayer(ctx, player); err == nil {
		return nil, ErrAlreadyKept(player)
	} else if race.ErrorCode(err) != CodeNoSuchAccount {
		return nil, err
	}
	if _, err := s.store.ByUsername(ctx, username); err == nil {
		return nil, ErrTaken(username)
	} else if race.ErrorCode(err) != CodeNoSuchAccount {
		return nil, err
	}
	return s.beginCreate(ctx, Challenge{Kind: CeremonyRegister, Player: player, Username: username}, nil)
}

// beginCreate begins a registration ceremony for c's player, excluding
// the passkeys it has, and keeps its challenge.
func (s *Service) beginCreate(ctx context.Context, c Challenge, have []Passkey) (*protocol.CredentialCreation, error) {
	excl := make([]protocol.CredentialDescriptor, len(have))
	for i, p := range have {
		excl[i] = protocol.CredentialDescriptor{Type: protocol.PublicKeyCredentialType, CredentialID: p.ID}
	}
	opts, sd, err := s.wa.BeginRegistration(user{player: c.Player, name: c.Username}, webauthn.WithExclusions(excl))
	if err != nil {
		return nil, fmt.Errorf("account: begin registration: %w", err)
	}
	if err := s.keep(ctx, c, sd); err != nil {
		return nil, err
	}
	return opts, nil
}

// keep stores a ceremony's challenge with its session data.
func (s *Service) keep(ctx context.Context, c Challenge, sd *webauthn.SessionData) error {
	data, err := json.Marshal(sd)
	if err != nil {
		return fmt.Errorf("account: session data: %w", err)
	}
	c.Key, c.Data, c.Expires = sd.Challenge, data, s.clock.Now().Add(s.cfg.ChallengeTTL)
	return s.store.PutChallenge(ctx, c)
}

// take takes the challenge an answer carries, once, if it was begun for
// kind.
func (s *Service) take(ctx context.Context, key string, kind Ceremony) (Challenge, webauthn.SessionData, error) {
	var sd webauthn.SessionData
	c, err := s.store.TakeChallenge(ctx, key, s.clock.Now())
	if err != nil {
		return c, sd, err
	}
	if c.Kind != kind {
		return c, sd, race.Errorf(CodeBadChallenge, "that challenge was begun for %s, not %s; begin again", c.Kind, kind)
	}
	if err := json.Unmarshal(c.Data, &sd); err != nil {
		return c, sd, fmt.Errorf("account: stored session data: %w", err)
	}
	return c, sd, nil
}

// refused is a ceremony's answer the library did not verify.
func refused(err error) error {
	var pe *protocol.Error
	detail := err.Error()
	if errors.As(err, &pe) {
		detail = strings.TrimSpace(pe.Details + " " + pe.DevInfo)
	}
	return &race.Error{Code: CodePasskeyRefused, Message: "the passkey's answer does not verify: " + detail, Err: err}
}

// finishCreate checks a registration answer against its challenge.
func (s *Service) finishCreate(ctx context.Context, body []byte, kind Ceremony) (Challenge, Passkey, error) {
	parsed, err := protocol.ParseCredentialCreationResponseBytes(body)
	if err != nil {
		return Challenge{}, Passkey{}, refused(err)
	}
	c, sd, err := s.take(ctx, parsed.Response.CollectedClientData.Challenge, kind)
	if err != nil {
		return c, Passkey{}, err
	}
	cred, err := s.wa.CreateCredential(user{player: c.Player, name: c.Username}, sd, parsed)
	if err != nil {
		return c, Passkey{}, refused(err)
	}
	return c, s.passkey(c.Player, cred), nil
}

// passkey is a new credential as stored.
func (s *Service) passkey(player string, cred *webauthn.Credential) Passkey {
	data, _ := json.Marshal(cred) // plain data: cannot fail
	return Passkey{ID: cred.ID, Player: player, Data: data, SignCount: cred.Authenticator.SignCount, Added: s.clock.Now().UTC()}
}

// FinishKeep finishes keeping a player with the answer of
// navigator.credentials.create (JSON): the account is made with the
// passkey, signed in, and given its recovery code. A second registration
// racing for the same username loses with CodeUsernameTaken.
func (s *Service) FinishKeep(ctx context.Context, body []byte) (Kept, error) {
	c, p, err := s.finishCreate(ctx, body, CeremonyRegister)
	if err != nil {
		return Kept{}, err
	}
	a := Account{Player: c.Player, Username: c.Username, Created: s.clock.Now().UTC()}
	code := newRecoveryCode()
	if err := s.store.Create(ctx, a, p, recoveryHash(code)); err != nil {
		return Kept{}, err
	}
	tok, err := s.startSession(ctx, a.Player)
	if err != nil {
		return Kept{}, err
	}
	return Kept{Account: a, Session: tok, Recovery: code}, nil
}

// startSession stores a new session of player and returns its token.
func (s *Service) startSession(ctx context.Context, player string) (string, error) {
	tok := newSecret()
	now := s.clock.Now().UTC()
	if err := s.store.PutSession(ctx, Session{Hash: Hash(tok), Player: player, Created: now, Expires: now.Add(s.cfg.SessionTTL)}); err != nil {
		return "", err
	}
	return tok, nil
}

// BeginSignIn begins a sign-in with any passkey of any account (a
// discoverable credential): the request options for
// navigator.credentials.get.
func (s *Service) BeginSignIn(ctx context.Context) (*protocol.CredentialAssertion, error) {
	opts, sd, err := s.wa.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationPreferred))
	if err != nil {
		return nil, fmt.Errorf("account: begin sign-in: %w", err)
	}
	if err := s.keep(ctx, Challenge{Kind: CeremonySignIn}, sd); err != nil {
		return nil, err
	}
	return opts, nil
}

// FinishSignIn finishes a sign-in with the answer of
// navigator.credentials.get (JSON): it returns the account and a new
// session's token. It refuses an unknown or removed passkey, an answer
// that does not verify (another origin, a bad signature), and a sign
// counter that did not go forward.
func (s *Service) FinishSignIn(ctx context.Context, body []byte) (Account, string, error) {
	parsed, err := protocol.ParseCredentialRequestResponseBytes(body)
	if err != nil {
		return Account{}, "", refused(err)
	}
	_, sd, err := s.take(ctx, parsed.Response.CollectedClientData.Challenge, CeremonySignIn)
	if err != nil {
		return Account{}, "", err
	}
	pk, err := s.store.Passkey(ctx, parsed.RawID)
	if err != nil {
		return Account{}, "", err
	}
	a, err := s.store.ByPlayer(ctx, pk.Player)
	if err != nil {
		return Account{}, "", err
	}
	var cred webauthn.Credential
	if err := json.Unmarshal(pk.Data, &cred); err != nil {
		return Account{}, "", fmt.Errorf("account: stored passkey: %w", err)
	}
	cred.Authenticator.SignCount = pk.SignCount
	u := user{player: a.Player, name: a.Username, creds: []webauthn.Credential{cred}}
	_, used, err := s.wa.ValidatePasskeyLogin(func(rawID, handle []byte) (webauthn.User, error) {
		if !bytes.Equal(handle, u.WebAuthnID()) {
			return nil, errors.New("the passkey's user handle is not its account's")
		}
		return u, nil
	}, sd, parsed)
	if err != nil {
		return Account{}, "", refused(err)
	}
	if used.Authenticator.CloneWarning {
		return Account{}, "", race.Errorf(CodeSignCounter, "that passkey's sign counter went from %d to %d, not forward: it may be a copy; sign in with another passkey", pk.SignCount, parsed.Response.AuthenticatorData.Counter)
	}
	if err := s.store.UsePasskey(ctx, pk.ID, pk.SignCount, used.Authenticator.SignCount, s.clock.Now().UTC()); err != nil {
		return Account{}, "", err
	}
	tok, err := s.startSession(ctx, a.Player)
	if err != nil {
		return Account{}, "", err
	}
	return a, tok, nil
}

// SignedIn is the account of a session token (the cookie):
// CodeSignInRequired when the token is no live session's.
func (s *Service) SignedIn(ctx context.Context, token string) (Account, error) {
	if token == "" {
		return Account{}, ErrSignIn()
	}
	sess, err := s.store.Session(ctx, Hash(token), s.clock.Now())
	if err != nil {
		return Account{}, err
	}
	return s.store.ByPlayer(ctx, sess.Player)
}

// Of is the account keeping player, if any.
func (s *Service) Of(ctx context.Context, player string) (Account, bool, error) {
	a, err := s.store.ByPlayer(ctx, player)
	switch race.ErrorCode(err) {
	case "":
		return a, true, nil
	case CodeNoSuchAccount:
		return Account{}, false, nil
	}
	return Account{}, false, err
}

// KeptAmong says which of players are accounts (the leaderboard marks
// them).
func (s *Service) KeptAmong(ctx context.Context, players []string) (map[string]bool, error) {
	if len(players) == 0 {
		return map[string]bool{}, nil
	}
	return s.store.KeptAmong(ctx, players)
}

// ByUsername is the account of a username, in any case.
func (s *Service) ByUsername(ctx context.Context, username string) (Account, error) {
	return s.store.ByUsername(ctx, username)
}

// SignOut ends one session.
func (s *Service) SignOut(ctx context.Context, token string) error {
	return s.store.DeleteSession(ctx, Hash(token))
}

// SignOutEverywhere ends every session of player.
func (s *Service) SignOutEverywhere(ctx context.Context, player string) error {
	return s.store.DeleteSessions(ctx, player)
}

// PasskeyInfo is a passkey as its account lists it.
type PasskeyInfo struct {
	ID       string     `json:"id"` // base64url
	Added    time.Time  `json:"added"`
	LastUsed *time.Time `json:"lastUsed,omitempty"`
}

// Passkeys lists player's passkeys, oldest first.
func (s *Service) Passkeys(ctx context.Context, player string) ([]PasskeyInfo, error) {
	ps, err := s.store.Passkeys(ctx, player)
	if err != nil {
		return nil, err
	}
	out := make([]PasskeyInfo, len(ps))
	for i, p := range ps {
		out[i] = PasskeyInfo{ID: base64.RawURLEncoding.EncodeToString(p.ID), Added: p.Added}
		if !p.LastUsed.IsZero() {
			t := p.LastUsed
			out[i].LastUsed = &t
		}
	}
	return out, nil
}

// RemovePasskey removes one of player's passkeys, named by its base64url
// id; signing in with it is refused from then on.
func (s *Service) RemovePasskey(ctx context.Context, player, id string) error {
	raw, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(raw) == 0 {
		return ErrNoPasskey()
	}
	return s.store.RemovePasskey(ctx, player, raw)
}

// BeginAddPasskey begins adding a passkey to a signed-in account.
func (s *Service) BeginAddPasskey(ctx context.Context, a Account) (*protocol.CredentialCreation, error) {
	have, err := s.store.Passkeys(ctx, a.Player)
	if err != nil {
		return nil, err
	}
	return s.beginCreate(ctx, Challenge{Kind: CeremonyAdd, Player: a.Player, Username: a.Username}, have)
}

// FinishAddPasskey finishes adding a passkey to account a.
func (s *Service) FinishAddPasskey(ctx context.Context, a Account, body []byte) (PasskeyInfo, error) {
	c, p, err := s.finishCreate(ctx, body, CeremonyAdd)
	if err != nil {
		return PasskeyInfo{}, err
	}
	if c.Player != a.Player {
		return PasskeyInfo{}, race.Errorf(CodeBadChallenge, "that challenge was begun by another account; begin again")
	}
	if err := s.store.AddPasskey(ctx, p); err != nil {
		return PasskeyInfo{}, err
	}
	return PasskeyInfo{ID: base64.RawURLEncoding.EncodeToString(p.ID), Added: p.Added}, nil
}

// BeginRecover begins registering a new passkey for username's account
// with its recovery code; the code is spent at the finish.
func (s *Service) BeginRecover(ctx context.Context, username, code string) (*protocol.CredentialCreation, error) {
	a, err := s.store.ByUsername(ctx, username)
	if race.ErrorCode(err) == CodeNoSuchAccount {
		return nil, ErrRecovery() // the same refusal: nothing told about which usernames exist
	} else if err != nil {
		return nil, err
	}
	h := recoveryHash(code)
	ok, err := s.store.RecoveryMatches(ctx, a.Player, h)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrRecovery()
	}
	have, err := s.store.Passkeys(ctx, a.Player)
	if err != nil {
		return nil, err
	}
	return s.beginCreate(ctx, Challenge{Kind: CeremonyRecover, Player: a.Player, Username: a.Username, Recovery: h}, have)
}

// FinishRecover finishes a recovery: the new passkey is added, the code
// spent and a new one given (shown once), and the browser signed in.
func (s *Service) FinishRecover(ctx context.Context, body []byte) (Kept, error) {
	c, p, err := s.finishCreate(ctx, body, CeremonyRecover)
	if err != nil {
		return Kept{}, err
	}
	a, err := s.store.ByPlayer(ctx, c.Player)
	if err != nil {
		return Kept{}, err
	}
	code := newRecoveryCode()
	if err := s.store.SpendRecovery(ctx, a.Player, c.Recovery, recoveryHash(code), p); err != nil {
		return Kept{}, err
	}
	tok, err := s.startSession(ctx, a.Player)
	if err != nil {
		return Kept{}, err
	}
	return Kept{Account: a, Session: tok, Recovery: code}, nil
}

// MintToken makes an API token for player with a label: the token is
// returned once, and stored by its hash.
func (s *Service) MintToken(ctx context.Context, player, label string) (string, APIToken, error) {
	label = strings.TrimSpace(label)
	switch {
	case label == "":
		return "", APIToken{}, race.Errorf(CodeBadTokenLabel, "an API token needs a label saying what it is for")
	case !utf8.ValidString(label) || utf8.RuneCountInString(label) > MaxTokenLabel:
		return "", APIToken{}, race.Errorf(CodeBadTokenLabel, "an API token's label is valid UTF-8 of at most %d characters", MaxTokenLabel)
	case strings.IndexFunc(label, unicode.IsControl) >= 0:
		return "", APIToken{}, race.Errorf(CodeBadTokenLabel, "an API token's label cannot contain control characters")
	}
	secret := APITokenPrefix + newSecret()
	t := APIToken{ID: strings.ToLower(newSecret()[:10]), Player: player, Hash: Hash(secret), Label: label, Created: s.clock.Now().UTC()}
	if err := s.store.PutToken(ctx, t, MaxTokens); err != nil {
		return "", APIToken{}, err
	}
	return secret, t, nil
}

// Tokens lists player's API tokens (never their secrets).
func (s *Service) Tokens(ctx context.Context, player string) ([]APIToken, error) {
	return s.store.Tokens(ctx, player)
}

// RevokeToken revokes one of player's API tokens.
func (s *Service) RevokeToken(ctx context.Context, player, id string) error {
	return s.store.RevokeToken(ctx, player, id)
}

// ByAPIToken is the account of a bearer API token
// (CodeInvalidAPIToken).
func (s *Service) ByAPIToken(ctx context.Context, secret string) (Account, error) {
	if !strings.HasPrefix(secret, APITokenPrefix) {
		return Account{}, ErrAPIToken()
	}
	t, err := s.store.TokenByHash(ctx, Hash(secret))
	if err != nil {
		return Account{}, err
	}
	return s.store.ByPlayer(ctx, t.Player)
}

// Sweep deletes expired challenges and sessions.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	return s.store.Sweep(ctx, s.clock.Now())
}
