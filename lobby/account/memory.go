package account

import (
	"bytes"
	"context"
	"encoding/base64"
	"sort"
	"sync"
	"time"
)

// Memory is a Store in memory: for tests, and for a server without a
// durable store (its accounts go with the process).
type Memory struct {
	mu         sync.Mutex
	accounts   map[string]Account // by player
	byKey      map[string]string  // username key → player
	passkeys   map[string]Passkey // by base64url id
	recovery   map[string]string  // player → hash
	challenges map[string]Challenge
	sessions   map[string]Session
	tokens     map[string]APIToken // by hash
}

// NewMemory makes an empty memory store.
func NewMemory() *Memory {
	return &Memory{
		accounts: map[string]Account{}, byKey: map[string]string{}, passkeys: map[string]Passkey{},
		recovery: map[string]string{}, challenges: map[string]Challenge{}, sessions: map[string]Session{},
		tokens: map[string]APIToken{},
	}
}

var _ Store = (*Memory)(nil)

func idKey(id []byte) string { return base64.RawURLEncoding.EncodeToString(id) }

// Create implements Store.
func (m *Memory) Create(_ context.Context, a Account, p Passkey, recoveryHash string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.accounts[a.Player]; ok {
		return ErrAlreadyKept(a.Player)
	}
	if _, ok := m.byKey[Key(a.Username)]; ok {
		return ErrTaken(a.Username)
	}
	m.accounts[a.Player] = a
	m.byKey[Key(a.Username)] = a.Player
	m.passkeys[idKey(p.ID)] = p
	m.recovery[a.Player] = recoveryHash
	return nil
}

// ByPlayer implements Store.
func (m *Memory) ByPlayer(_ context.Context, player string) (Account, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.accounts[player]
	if !ok {
		return Account{}, ErrNoAccount(player)
	}
	return a, nil
}

// KeptAmong implements Store.
func (m *Memory) KeptAmong(_ context.Context, players []string) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]bool, len(players))
	for _, p := range players {
		if _, ok := m.accounts[p]; ok {
			out[p] = true
		}
	}
	return out, nil
}

// ByUsername implements Store.
func (m *Memory) ByUsername(ctx context.Context, username string) (Account, error) {
	m.mu.Lock()
	p, ok := m.byKey[Key(username)]
	m.mu.Unlock()
	if !ok {
		return Account{}, ErrNoAccount(username)
	}
	return m.ByPlayer(ctx, p)
}

// Passkey implements Store.
func (m *Memory) Passkey(_ context.Context, id []byte) (Passkey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.passkeys[idKey(id)]
	if !ok {
		return Passkey{}, ErrUnknownCredential()
	}
	return p, nil
}

// Passkeys implements Store.
func (m *Memory) Passkeys(_ context.Context, player string) ([]Passkey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.passkeysOf(player), nil
}

func (m *Memory) passkeysOf(player string) []Passkey {
	var out []Passkey
	for _, p := range m.passkeys {
		if p.Player == player {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Added.Equal(out[j].Added) {
			return out[i].Added.Before(out[j].Added)
		}
		return bytes.Compare(out[i].ID, out[j].ID) < 0
	})
	return out
}

// AddPasskey implements Store.
func (m *Memory) AddPasskey(_ context.Context, p Passkey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.accounts[p.Player]; !ok {
		return ErrNoAccount(p.Player)
	}
	if _, ok := m.passkeys[idKey(p.ID)]; ok {
		return ErrPasskeyExists()
	}
	m.passkeys[idKey(p.ID)] = p
	return nil
}

// RemovePasskey implements Store.
func (m *Memory) RemovePasskey(_ context.Context, player string, id []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.passkeys[idKey(id)]
	if !ok || p.Player != player {
		return ErrNoPasskey()
	}
	if len(m.passkeysOf(player)) == 1 {
		return ErrLastPasskey()
	}
	delete(m.passkeys, idKey(id))
	return nil
}

// UsePasskey implements Store.
func (m *Memory) UsePasskey(_ context.Context, id []byte, old, count uint32, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.passkeys[idKey(id)]
	if !ok {
		return ErrUnknownCredential()
	}
	if p.SignCount != old {
		return ErrCounterRace()
	}
	p.SignCount, p.LastUsed = count, at
	m.passkeys[idKey(id)] = p
	return nil
}

// SpendRecovery implements Store.
func (m *Memory) SpendRecovery(_ context.Context, player, old, fresh string, p Passkey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.recovery[player]; !ok || h != old {
		return ErrRecovery()
	}
	if _, ok := m.passkeys[idKey(p.ID)]; ok {
		return ErrPasskeyExists()
	}
	m.recovery[player] = fresh
	m.passkeys[idKey(p.ID)] = p
	return nil
}

// RecoveryMatches implements Store.
func (m *Memory) RecoveryMatches(_ context.Context, player, hash string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.recovery[player]
	return ok && h == hash, nil
}

// PutChallenge implements Store.
func (m *Memory) PutChallenge(_ context.Context, c Challenge) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.challenges[c.Key] = c
	return nil
}

// TakeChallenge implements Store.
func (m *Memory) TakeChallenge(_ context.Context, key string, now time.Time) (Challenge, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.challenges[key]
	delete(m.challenges, key)
	if !ok || !now.Before(c.Expires) {
		return Challenge{}, ErrChallenge()
	}
	return c, nil
}

// PutSession implements Store.
func (m *Memory) PutSession(_ context.Context, s Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions[s.Hash] = s
	return nil
}

// Session implements Store.
func (m *Memory) Session(_ context.Context, hash string, now time.Time) (Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[hash]
	if !ok || !now.Before(s.Expires) {
		return Session{}, ErrSignIn()
	}
	return s, nil
}

// DeleteSession implements Store.
func (m *Memory) DeleteSession(_ context.Context, hash string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, hash)
	return nil
}

// DeleteSessions implements Store.
func (m *Memory) DeleteSessions(_ context.Context, player string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, s := range m.sessions {
		if s.Player == player {
			delete(m.sessions, h)
		}
	}
	return nil
}

// PutToken implements Store.
func (m *Memory) PutToken(_ context.Context, t APIToken, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.accounts[t.Player]; !ok {
		return ErrNoAccount(t.Player)
	}
	n := 0
	for _, o := range m.tokens {
		if o.Player == t.Player {
			n++
		}
	}
	if n >= max {
		return ErrTooManyTokens(max)
	}
	m.tokens[t.Hash] = t
	return nil
}

// Tokens implements Store.
func (m *Memory) Tokens(_ context.Context, player string) ([]APIToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []APIToken{}
	for _, t := range m.tokens {
		if t.Player == player {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// TokenByHash implements Store.
func (m *Memory) TokenByHash(_ context.Context, hash string) (APIToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[hash]
	if !ok {
		return APIToken{}, ErrAPIToken()
	}
	return t, nil
}

// RevokeToken implements Store.
func (m *Memory) RevokeToken(_ context.Context, player, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, t := range m.tokens {
		if t.Player == player && t.ID == id {
			delete(m.tokens, h)
			return nil
		}
	}
	return ErrNoToken(id)
}

// Sweep implements Store.
func (m *Memory) Sweep(_ context.Context, now time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k, c := range m.challenges {
		if !now.Before(c.Expires) {
			delete(m.challenges, k)
			n++
		}
	}
	for k, s := range m.sessions {
		if !now.Before(s.Expires) {
			delete(m.sessions, k)
			n++
		}
	}
	return n, nil
}
