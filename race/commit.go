package race

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
)

// saltBytes is the length of a commitment's salt: 128 bits, so that nobody
// can search the deal numbers against a published commitment.
const saltBytes = 16

// Commitment is the published pledge to a secret deal: the lower-case hex
// SHA-256 of the deal number in decimal, a colon and the salt in lower-case
// hex, e.g. sha256("123456789:00ff...") for deal 123456789. Anyone can check
// it once deal and salt are revealed at the end of the race.
func Commitment(deal uint64, salt string) string {
	sum := sha256.Sum256([]byte(strconv.FormatUint(deal, 10) + ":" + salt))
	return hex.EncodeToString(sum[:])
}

// randomDeal draws a deal number and a salt from crypto/rand.
func randomDeal() (deal uint64, salt string) {
	var b [8 + saltBytes]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return binary.LittleEndian.Uint64(b[:8]), hex.EncodeToString(b[8:])
}

// NewToken returns a random 128-bit token in hex: race ids and resume tokens.
func NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
