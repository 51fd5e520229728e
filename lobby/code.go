package lobby

import (
	"crypto/rand"
	"encoding/base32"
)

// inviteCodeLen is an invite code's length: 10 letters of a 32-letter
// alphabet are 50 bits, far beyond guessing while it lives (30 minutes by
// default), and still short enough to read out to a friend.
const inviteCodeLen = 10

// codeAlphabet is Crockford's: no I, L, O or U, so that codes read out
// unambiguously.
const codeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// codes is the encoding of invite codes and player ids.
func codes() *base32.Encoding {
	return base32.NewEncoding(codeAlphabet).WithPadding(base32.NoPadding)
}

// newCode returns a random invite or challenge code of inviteCodeLen
// letters from crypto/rand.
func newCode() string {
	var b [inviteCodeLen * 5 / 8]byte
	_, _ = rand.Read(b[:])
	return codes().EncodeToString(b[:])
}
