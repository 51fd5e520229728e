// Package passkeytest is a software authenticator for tests: it answers
// a server's WebAuthn creation and request options as a browser with a
// passkey would (ES256 keys, "none" attestation, resident credentials),
// so that ceremonies are driven end to end over HTTP without a browser.
// Its knobs make the bad answers the server must refuse: another origin,
// a counter that goes backwards, a replayed answer.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/fxamacker/cbor/v2"
)

// Authenticator flags (WebAuthn §6.1).
const (
	flagUP = 0x01 // user present
	flagUV = 0x04 // user verified
	flagAT = 0x40 // attested credential data follows
)

// Authenticator holds passkeys and answers ceremonies for Origin.
type Authenticator struct {
	mu sync.Mutex
	// Origin is the origin the answers claim (the page's, in a browser):
	// set it to another site's to forge a cross-site answer.
	Origin string
	creds  []*Credential
}

// Credential is one passkey of the authenticator.
type Credential struct {
	ID     []byte
	RPID   string
	User   []byte // the user handle the server gave
	Key    *ecdsa.PrivateKey
	Count  uint32 // the sign counter, incremented before each assertion
	Handle string // the user's name, as the options gave it
}

// New makes an authenticator with no passkeys answering as origin.
func New(origin string) *Authenticator { return &Authenticator{Origin: origin} }

// Credentials are the authenticator's passkeys, oldest first.
func (a *Authenticator) Credentials() []*Credential {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*Credential(nil), a.creds...)
}

// creation is the part of the server's creation options the
// authenticator reads (PublicKeyCredentialCreationOptionsJSON).
type creation struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		User struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"user"`
	} `json:"publicKey"`
}

// request is the part of the server's request options it reads.
type request struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RPID      string `json:"rpId"`
	} `json:"publicKey"`
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// clientData is the clientDataJSON a browser makes.
func (a *Authenticator) clientData(typ, challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.Origin, "crossOrigin": false})
	return b
}

// Create answers creation options (the server's JSON) with a new passkey:
// the JSON body of the registration's finish.
func (a *Authenticator) Create(options []byte) ([]byte, error) {
	var o creation
	if err := json.Unmarshal(options, &o); err != nil {
		return nil, fmt.Errorf("passkeytest: creation options: %w", err)
	}
	uid, err := base64.RawURLEncoding.DecodeString(o.PublicKey.User.ID)
	if err != nil {
		return nil, fmt.Errorf("passkeytest: user id: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	c := &Credential{ID: id, RPID: o.PublicKey.RP.ID, User: uid, Key: key, Handle: o.PublicKey.User.Name}
	cose, err := cbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: pad32(key.X.Bytes()), -3: pad32(key.Y.Bytes())})
	if err != nil {
		return nil, err
	}
	auth := authData(c.RPID, flagUP|flagUV|flagAT, 0)
	auth = append(auth, make([]byte, 16)...) // AAGUID: none
	auth = binary.BigEndian.AppendUint16(auth, uint16(len(id)))
	auth = append(auth, id...)
	auth = append(auth, cose...)
	att, err := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": auth})
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.creds = append(a.creds, c)
	a.mu.Unlock()
	return json.Marshal(map[string]any{
		"id": b64(id), "rawId": b64(id), "type": "public-key",
		"response": map[string]any{
			"clientDataJSON":    b64(a.clientData("webauthn.create", o.PublicKey.Challenge)),
			"attestationObject": b64(att),
			"transports":        []string{"internal"},
		},
		"clientExtensionResults": map[string]any{},
	})
}

// Get answers request options with passkey c (the newest of the options'
// RP when c is nil), counting up its sign counter: the JSON body of the
// sign-in's finish.
func (a *Authenticator) Get(options []byte, c *Credential) ([]byte, error) {
	var o request
	if err := json.Unmarshal(options, &o); err != nil {
		return nil, fmt.Errorf("passkeytest: request options: %w", err)
	}
	a.mu.Lock()
	if c == nil {
		for i := len(a.creds) - 1; i >= 0; i-- {
			if a.creds[i].RPID == o.PublicKey.RPID {
				c = a.creds[i]
				break
			}
		}
	}
	if c == nil {
		a.mu.Unlock()
		return nil, errors.New("passkeytest: no passkey for " + o.PublicKey.RPID)
	}
	c.Count++
	count := c.Count
	a.mu.Unlock()
	auth := authData(c.RPID, flagUP|flagUV, count)
	cd := a.clientData("webauthn.get", o.PublicKey.Challenge)
	cdh := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte(nil), auth...), cdh[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, c.Key, digest[:])
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"id": b64(c.ID), "rawId": b64(c.ID), "type": "public-key",
		"response": map[string]any{
			"clientDataJSON":    b64(cd),
			"authenticatorData": b64(auth),
			"signature":         b64(sig),
			"userHandle":        b64(c.User),
		},
		"clientExtensionResults": map[string]any{},
	})
}

// SetCount sets c's sign counter (to make it go backwards).
func (a *Authenticator) SetCount(c *Credential, n uint32) {
	a.mu.Lock()
	c.Count = n
	a.mu.Unlock()
}

// authData is the authenticator data's head: RP ID hash, flags, counter.
func authData(rpID string, flags byte, count uint32) []byte {
	h := sha256.Sum256([]byte(rpID))
	b := append(h[:], flags)
	return binary.BigEndian.AppendUint32(b, count)
}

// pad32 left-pads a P-256 coordinate to 32 bytes.
func pad32(b []byte) []byte {
	out := make([]byte, 32)
	copy(out[32-len(b):], b)
	return out
}
