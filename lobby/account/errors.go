package account

import "sirtommy/race"

// Error codes of accounts (web/PROTOCOL.md, accounts): every refusal is a
// *race.Error with one of these and a sentence, and changes nothing.
const (
	CodeBadUsername       race.Code = "bad-username"       // not 3 to 20 letters, digits, - and _
	CodeReservedUsername  race.Code = "reserved-username"  // a word kept for the site (admin, computer, the bots' names…)
	CodeUsernameTaken     race.Code = "username-taken"     // another account has it, in any case
	CodeAlreadyKept       race.Code = "already-kept"       // the player is an account already
	CodeBadChallenge      race.Code = "bad-challenge"      // a ceremony's challenge unknown, used already or expired
	CodePasskeyRefused    race.Code = "passkey-refused"    // the passkey's answer does not verify (origin, signature, RP ID…)
	CodeUnknownCredential race.Code = "unknown-credential" // no account has that passkey (never registered, or removed)
	CodeSignCounter       race.Code = "sign-counter"       // the passkey's counter did not go forward: a cloned authenticator, or a replay
	CodeSignInRequired    race.Code = "sign-in-required"   // no valid session: sign in with a passkey
	CodeNoSuchAccount     race.Code = "no-such-account"    // no account has that username or player
	CodeRecoveryRefused   race.Code = "recovery-refused"   // the recovery code is wrong or spent
	CodeNoSuchPasskey     race.Code = "no-such-passkey"    // the account has no passkey with that id
	CodeLastPasskey       race.Code = "last-passkey"       // removing the account's only passkey
	CodeBadTokenLabel     race.Code = "bad-token-label"    // an API token's label empty, too long or with control characters
	CodeNoSuchToken       race.Code = "no-such-token"      // the account has no API token with that id
	CodeInvalidAPIToken   race.Code = "invalid-api-token"  // a bearer token that is not a live API token
	CodeTooManyTokens     race.Code = "too-many-tokens"    // the account holds MaxTokens already
)
