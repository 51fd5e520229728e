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

// GradedCommitment is the pledge to a secret deal drawn among the deals
// of a grade (engine.Grade: "easy", "medium", "hard"): the lower-case hex
// SHA-256 of the deal number in decimal, a colon, the grade's name, a
// colon and the salt in lower-case hex, e.g. sha256("1234:hard:00ff...").
// It covers the grade as well as the deal, so a server cannot draw a deal
// of another grade than it announced. Ungraded races keep Commitment.
func GradedCommitment(deal uint64, grade, salt string) string {
	sum := sha256.Sum256([]byte(strconv.FormatUint(deal, 10) + ":" + grade + ":" + salt))
	return hex.EncodeToString(sum[:])
}

// randomGradedDeal draws one of deals and a salt from crypto/rand.
func randomGradedDeal(deals []uint64) (deal uint64, salt string) {
	var b [8 + saltBytes]byte
	_, _ = rand.Read(b[:])
	// Uniform by rejection: x below the largest multiple of n under 2^64
	// (2^64 - rem, rem being 2^64 mod n).
	n := uint64(len(deals))
	rem := -n % n
	for {
		if x := binary.LittleEndian.Uint64(b[:8]); rem == 0 || x < -rem {
			return deals[x%n], hex.EncodeToString(b[8:])
		}
		_, _ = rand.Read(b[:8])
	}
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
