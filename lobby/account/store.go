package account

import (
	"context"
	"time"
)

// Account is a kept player: a guest's player id with a username and
// passkeys. The player id is the account's for good, so that the player's
// rating, history, ghosts and streaks stay theirs.
type Account struct {
	Player   string    `json:"player"`
	Username string    `json:"username"`
	Created  time.Time `json:"created"`
}

// Passkey is one credential of an account.
type Passkey struct {
	// ID is the credential's id, as the authenticator made it.
	ID     []byte
	Player string
	// Data is the library's credential record (JSON): public key, flags,
	// attestation; the sign counter is kept apart, in SignCount.
	Data      []byte
	SignCount uint32
	Added     time.Time
	// LastUsed is the last sign-in with it (zero: never since added).
	LastUsed time.Time
}

// Challenge is a ceremony begun and not finished: the library's session
// data, kept server-side until its finish takes it (once) or it expires.
type Challenge struct {
	// Key is the ceremony's challenge (base64url), which the browser's
	// answer carries back in its client data.
	Key  string
	Kind Ceremony
	// Player is the guest keeping their player (registration) or the
	// account adding a passkey or recovering.
	Player   string
	Username string
	// Recovery is the hash of the recovery code a recover ceremony spends
	// at its finish.
	Recovery string
	// Data is the library's session data (JSON).
	Data    []byte
	Expires time.Time
}

// Ceremony is what a challenge was begun for.
type Ceremony string

// The ceremonies.
const (
	CeremonyRegister Ceremony = "register" // a guest keeps their player
	CeremonySignIn   Ceremony = "sign-in"  // any passkey of any account
	CeremonyAdd      Ceremony = "add"      // a signed-in account adds a passkey
	CeremonyRecover  Ceremony = "recover"  // a recovery code registers a passkey
)

// Session is a signed-in browser, stored by the hash of its cookie.
type Session struct {
	Hash    string
	Player  string
	Created time.Time
	Expires time.Time
}

// APIToken is a bearer token of an account for bots and scripts, stored
// by its hash; ID names it in lists and revocation.
type APIToken struct {
	ID      string    `json:"id"`
	Player  string    `json:"-"`
	Hash    string    `json:"-"`
	Label   string    `json:"label"`
	Created time.Time `json:"created"`
}

// Store keeps accounts durably: memory for tests and one process
// (NewMemory), SQL for the single binary and the fleet (sqlstore). Every
// method is safe for concurrent use; the conformance suite
// (accounttest) checks each implementation alike. Refusals are
// *race.Error with this package's codes; any other error is the store's
// failure.
type Store interface {
	// Create makes account a with its first passkey and the hash of its
	// recovery code, all or nothing: CodeUsernameTaken when another
	// account has its username in any case, CodeAlreadyKept when its
	// player is an account already.
	Create(ctx context.Context, a Account, p Passkey, recoveryHash string) error
	// ByPlayer is the account of a player (CodeNoSuchAccount).
	ByPlayer(ctx context.Context, player string) (Account, error)
	// KeptAmong says which of players are accounts.
	KeptAmong(ctx context.Context, players []string) (map[string]bool, error)
	// ByUsername is the account of a username in any case (CodeNoSuchAccount).
	ByUsername(ctx context.Context, username string) (Account, error)
	// Passkey is the passkey of a credential id (CodeUnknownCredential).
	Passkey(ctx context.Context, id []byte) (Passkey, error)
	// Passkeys lists an account's passkeys, oldest first.
	Passkeys(ctx context.Context, player string) ([]Passkey, error)
	// AddPasskey adds a passkey to an existing account.
	AddPasskey(ctx context.Context, p Passkey) error
	// RemovePasskey removes one of player's passkeys: CodeNoSuchPasskey
	// when it has none with that id, CodeLastPasskey when it is the only
	// one.
	RemovePasskey(ctx context.Context, player string, id []byte) error
	// UsePasskey records a sign-in: the counter goes from old to count and
	// last used becomes at, only if the stored counter is still old
	// (compare-and-set); CodeSignCounter when it is not (another sign-in
	// won), CodeUnknownCredential when the passkey is gone.
	UsePasskey(ctx context.Context, id []byte, old, count uint32, at time.Time) error
	// SpendRecovery replaces player's recovery code hash old by fresh and
	// adds passkey p, all or nothing: CodeRecoveryRefused when the stored
	// hash is not old (wrong, or spent by another use).
	SpendRecovery(ctx context.Context, player, old, fresh string, p Passkey) error
	// RecoveryMatches reports whether hash is player's recovery code hash.
	RecoveryMatches(ctx context.Context, player, hash string) (bool, error)

	// PutChallenge keeps a ceremony's challenge until it is taken or expires.
	PutChallenge(ctx context.Context, c Challenge) error
	// TakeChallenge removes and returns the challenge of key, once:
	// CodeBadChallenge when there is none, or it expired by now.
	TakeChallenge(ctx context.Context, key string, now time.Time) (Challenge, error)

	// PutSession stores a signed-in session.
	PutSession(ctx context.Context, s Session) error
	// Session is the live session of a hash (CodeSignInRequired when none
	// or expired by now).
	Session(ctx context.Context, hash string, now time.Time) (Session, error)
	// DeleteSession signs one session out (none is no error).
	DeleteSession(ctx context.Context, hash string) error
	// DeleteSessions signs every session of player out.
	DeleteSessions(ctx context.Context, player string) error

	// PutToken stores an API token of an account (CodeNoSuchAccount);
	// CodeTooManyTokens when it has max already.
	PutToken(ctx context.Context, t APIToken, max int) error
	// Tokens lists player's API tokens, oldest first.
	Tokens(ctx context.Context, player string) ([]APIToken, error)
	// TokenByHash is the API token of a hash (CodeInvalidAPIToken).
	TokenByHash(ctx context.Context, hash string) (APIToken, error)
	// RevokeToken deletes one of player's tokens (CodeNoSuchToken).
	RevokeToken(ctx context.Context, player, id string) error

	// Sweep deletes the challenges and sessions expired by now and says
	// how many.
	Sweep(ctx context.Context, now time.Time) (int, error)
}
