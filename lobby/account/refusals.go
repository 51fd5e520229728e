package account

import "sirtommy/race"

// The refusals that stores and the service share, each with its sentence.

// ErrAlreadyKept refuses keeping a player that is an account already.
func ErrAlreadyKept(player string) error {
	return race.Errorf(CodeAlreadyKept, "player %s is kept by an account already; sign in with its passkey", player)
}

// ErrTaken refuses a username another account has.
func ErrTaken(username string) error {
	return race.Errorf(CodeUsernameTaken, "the username %q is taken (usernames are the same in any case); choose another", username)
}

// ErrNoAccount says no account is who.
func ErrNoAccount(who string) error {
	return race.Errorf(CodeNoSuchAccount, "no account is %q", who)
}

// ErrUnknownCredential refuses a passkey no account has.
func ErrUnknownCredential() error {
	return race.Errorf(CodeUnknownCredential, "no account has that passkey: it was never registered here, or it was removed")
}

// ErrNoPasskey refuses removing a passkey the account lacks.
func ErrNoPasskey() error {
	return race.Errorf(CodeNoSuchPasskey, "your account has no passkey with that id")
}

// ErrLastPasskey refuses removing an account's only passkey.
func ErrLastPasskey() error {
	return race.Errorf(CodeLastPasskey, "that is your account's only passkey: add another before removing it")
}

// ErrCounterRace refuses a sign-in whose counter another sign-in moved.
func ErrCounterRace() error {
	return race.Errorf(CodeSignCounter, "that passkey was used by another sign-in at the same moment; sign in again")
}

// ErrRecovery refuses a wrong or spent recovery code.
func ErrRecovery() error {
	return race.Errorf(CodeRecoveryRefused, "that recovery code is wrong, or it was used already")
}

// ErrChallenge refuses an unknown, spent or expired challenge.
func ErrChallenge() error {
	return race.Errorf(CodeBadChallenge, "that ceremony's challenge is unknown, used already or expired; begin again")
}

// ErrSignIn refuses a request without a live session.
func ErrSignIn() error {
	return race.Errorf(CodeSignInRequired, "you are not signed in (no session, or it ended): sign in with your passkey")
}

// ErrAPIToken refuses a bearer token that is not a live API token.
func ErrAPIToken() error {
	return race.Errorf(CodeInvalidAPIToken, "that API token is not valid: it was revoked, or never minted here")
}

// ErrNoToken refuses revoking a token the account lacks.
func ErrNoToken(id string) error {
	return race.Errorf(CodeNoSuchToken, "your account has no API token %q", id)
}

// ErrTooManyTokens refuses minting past the limit.
func ErrTooManyTokens(max int) error {
	return race.Errorf(CodeTooManyTokens, "an account holds at most %d API tokens: revoke one first", max)
}

// ErrPasskeyExists refuses registering a passkey twice.
func ErrPasskeyExists() error {
	return race.Errorf(CodePasskeyRefused, "that passkey is registered already")
}
