package lobby

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"sirtommy/race"
)

// Identity bounds.
const (
	// MinSecretBytes is the shortest signing secret accepted: HMAC-SHA256
	// wants at least its output size in key.
	MinSecretBytes = 32
	// DefaultTokenTTL is how long a player token is valid: a month of
	// visits without signing up; every hello renews it.
	DefaultTokenTTL = 30 * 24 * time.Hour
	// MaxNameRunes bounds a display name, in characters: it fits the race
	// list and leaderboard columns.
	MaxNameRunes = 24
	// tokenVersion prefixes every token, so that the format can change.
	tokenVersion = "v1"
	// playerIDBytes is the randomness of a player id: 80 bits, enough that
	// nobody guesses or collides with another player's.
	playerIDBytes = 10
)

// Identity is a player without sign-up: a random id that never changes and
// a display name they may change.
type Identity struct {
	ID      string    `json:"player"`
	Name    string    `json:"name"`
	Expires time.Time `json:"expiresAt"`
}

// tokenBody is what a token signs (short keys: it travels in every hello).
type tokenBody struct {
	P string `json:"p"` // player id
	N string `json:"n"` // display name
	E int64  `json:"e"` // expiry, Unix seconds
}

// Tokens issues and checks player tokens: "v1.PAYLOAD.MAC", the payload
// base64url JSON of the identity and the MAC its HMAC-SHA256 under the
// server's secret. A token is the player's proof of identity: whoever holds
// it plays as them.
type Tokens struct {
	secret []byte
	clock  race.Clock
	ttl    time.Duration
}

// NewTokens makes a token issuer with a secret of at least MinSecretBytes;
// ttl zero means DefaultTokenTTL.
func NewTokens(secret []byte, clock race.Clock, ttl time.Duration) (*Tokens, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("lobby: the token secret is %d bytes, want at least %d", len(secret), MinSecretBytes)
	}
	if ttl <= 0 {
		ttl = DefaultTokenTTL
	}
	return &Tokens{secret: append([]byte(nil), secret...), clock: clock, ttl: ttl}, nil
}

// NewSecret returns a random secret: the one a server started without
// --secret makes at its first start and keeps in its database
// (sqlstore's DB.Secret).
func NewSecret() []byte {
	b := make([]byte, MinSecretBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return b
}

// NewPlayerID returns a random player id.
func NewPlayerID() string {
	var b [playerIDBytes]byte
	_, _ = rand.Read(b[:])
	return "p" + strings.ToLower(codes().EncodeToString(b[:]))
}

// Issue signs a token for player id with a display name, valid for the
// issuer's ttl from now.
func (t *Tokens) Issue(id, name string) (string, Identity) {
	who := Identity{ID: id, Name: name, Expires: t.clock.Now().Add(t.ttl).Truncate(time.Second)}
	body, _ := json.Marshal(tokenBody{P: id, N: name, E: who.Expires.Unix()})
	payload := tokenVersion + "." + base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + base64.RawURLEncoding.EncodeToString(t.mac(payload)), who
}

func (t *Tokens) mac(payload string) []byte {
	h := hmac.New(sha256.New, t.secret)
	h.Write([]byte(payload))
	return h.Sum(nil)
}

// Verify checks a token's signature and expiry and returns its identity;
// it refuses with CodeInvalidToken or CodeExpiredToken.
func (t *Tokens) Verify(token string) (Identity, error) {
	bad := race.Errorf(CodeInvalidToken, "that player token was not issued by this server; send hello without one for a new identity")
	i := strings.LastIndexByte(token, '.')
	if i < 0 || !strings.HasPrefix(token, tokenVersion+".") {
		return Identity{}, bad
	}
	payload := token[:i]
	mac, err := base64.RawURLEncoding.DecodeString(token[i+1:])
	if err != nil || !hmac.Equal(mac, t.mac(payload)) {
		return Identity{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload[len(tokenVersion)+1:])
	if err != nil {
		return Identity{}, bad
	}
	var b tokenBody
	if err := json.Unmarshal(raw, &b); err != nil || b.P == "" {
		return Identity{}, bad
	}
	who := Identity{ID: b.P, Name: b.N, Expires: time.Unix(b.E, 0).UTC()}
	if !t.clock.Now().Before(who.Expires) {
		return Identity{}, race.Errorf(CodeExpiredToken, "that player token expired at %s; send hello without one for a new identity", who.Expires.Format(time.RFC3339))
	}
	return who, nil
}

// CheckName validates a display name: surrounding spaces are trimmed; it
// must then be 1 to MaxNameRunes characters of valid UTF-8 with no control
// or format characters and none of the markup characters < > & " ' ` .
func CheckName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", race.Errorf(CodeBadName, "a display name cannot be empty")
	case !utf8.ValidString(name):
		return "", race.Errorf(CodeBadName, "a display name must be valid UTF-8")
	case utf8.RuneCountInString(name) > MaxNameRunes:
		return "", race.Errorf(CodeBadName, "a display name has at most %d characters", MaxNameRunes)
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || (unicode.IsSpace(r) && r != ' ') {
			return "", race.Errorf(CodeBadName, "a display name cannot contain control characters (%U)", r)
		}
		if strings.ContainsRune("<>&\"'`", r) {
			return "", race.Errorf(CodeBadName, "a display name cannot contain markup characters (%q)", r)
		}
	}
	return name, nil
}
