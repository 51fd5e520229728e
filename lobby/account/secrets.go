package account

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// APITokenPrefix begins every API token, so that a leaked one is
// recognised (secret scanners) and told apart from a player token.
const APITokenPrefix = "sta_"

// Hash is how secrets are stored: SHA-256 in hex. The secrets are 128
// random bits, so a fast hash is enough: nothing to guess from it.
func Hash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// newSecret is 128 random bits as 26 base32 letters and digits.
func newSecret() string { return rand.Text() }

// newRecoveryCode is a recovery code as shown: the secret in groups of
// five, easier to copy out by hand.
func newRecoveryCode() string {
	s := newSecret()
	var b strings.Builder
	for i := 0; i < len(s); i += 5 {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(s[i:min(i+5, len(s))])
	}
	return b.String()
}

// recoveryHash is the stored hash of a recovery code as typed: groups,
// spaces and case do not matter.
func recoveryHash(code string) string {
	code = strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return -1
		}
		return r
	}, strings.ToUpper(strings.TrimSpace(code)))
	return Hash("recovery:" + code)
}
