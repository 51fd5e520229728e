package coach

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Store keeps finished analyses, and the short claim an instance holds
// while it computes one, so that in a fleet each game is analysed once:
// the memory twin (MemoryStore) for one process, Redis (rediscoach) for a
// fleet, and the server's Split of the two kinds of data (finished
// analyses in the durable store, claims where live state is). Values are
// opaque bytes (the coach's JSON).
type Store interface {
	// Get returns the finished analysis stored under key, if there is one.
	Get(ctx context.Context, key string) (val []byte, ok bool, err error)
	// Claim takes key's claim for holder, for ttl, if nobody holds it and
	// the analysis is not there. When somebody else holds it, it reports
	// false with the percent of the work that holder last reported; when
	// the analysis is there (put since the caller's Get), false with 100.
	Claim(ctx context.Context, key, holder string, ttl time.Duration) (held bool, percent int, err error)
	// Refresh extends holder's claim by ttl and records its progress; it
	// reports false when the claim is no longer holder's (it expired).
	Refresh(ctx context.Context, key, holder string, percent int, ttl time.Duration) (bool, error)
	// Put stores the finished analysis under key for keep and drops
	// holder's claim.
	Put(ctx context.Context, key, holder string, val []byte, keep time.Duration) error
	// Release drops holder's claim without a result (the work failed).
	Release(ctx context.Context, key, holder string) error
}

// memoryStoreSize bounds the analyses MemoryStore keeps: one is a few
// kilobytes, so this is a few megabytes at most.
const memoryStoreSize = 1024

// MemoryStore is the Store of one process: a bounded map, oldest entries
// dropped first, with claims that expire on the given clock.
type MemoryStore struct {
	now func() time.Time

	mu     sync.Mutex
	vals   map[string]memVal
	order  []string // keys of vals, oldest first
	claims map[string]memClaim
}

type memVal struct {
	val     []byte
	expires time.Time
}

type memClaim struct {
	holder  string
	percent int
	expires time.Time
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore makes an empty store; now is its clock (nil: time.Now).
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{now: now, vals: make(map[string]memVal), claims: make(map[string]memClaim)}
}

// Get returns the analysis under key while it has not expired.
func (m *MemoryStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.vals[key]
	if !ok || !m.now().Before(v.expires) {
		return nil, false, nil
	}
	return v.val, true, nil
}

// Claim takes key's claim if it is free or expired.
func (m *MemoryStore) Claim(_ context.Context, key, holder string, ttl time.Duration) (bool, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if v, ok := m.vals[key]; ok && now.Before(v.expires) {
		return false, 100, nil
	}
	if c, ok := m.claims[key]; ok && now.Before(c.expires) && c.holder != holder {
		return false, c.percent, nil
	}
	m.claims[key] = memClaim{holder: holder, expires: now.Add(ttl)}
	return true, 0, nil
}

// Refresh extends holder's claim.
func (m *MemoryStore) Refresh(_ context.Context, key, holder string, percent int, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	c, ok := m.claims[key]
	if !ok || c.holder != holder || !now.Before(c.expires) {
		return false, nil
	}
	m.claims[key] = memClaim{holder: holder, percent: percent, expires: now.Add(ttl)}
	return true, nil
}

// Put stores val and drops holder's claim.
func (m *MemoryStore) Put(_ context.Context, key, holder string, val []byte, keep time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.vals[key]; !ok {
		m.order = append(m.order, key)
		if len(m.order) > memoryStoreSize {
			delete(m.vals, m.order[0])
			m.order = m.order[1:]
		}
	}
	m.vals[key] = memVal{val: val, expires: m.now().Add(keep)}
	if c, ok := m.claims[key]; ok && c.holder == holder {
		delete(m.claims, key)
	}
	return nil
}

// Release drops holder's claim.
func (m *MemoryStore) Release(_ context.Context, key, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.claims[key]; ok && c.holder == holder {
		delete(m.claims, key)
	}
	return nil
}

// Values keeps finished analyses for good: the durable store's
// (sqlstore.Analyses). A key names its analysis's version (Key), so a
// value is never read in a form it does not have.
type Values interface {
	// Get returns the analysis stored under key, if there is one.
	Get(ctx context.Context, key string) (val []byte, ok bool, err error)
	// Put stores the analysis under key, replacing any there.
	Put(ctx context.Context, key string, val []byte) error
}

// Claims holds the short claims of the analyses under way, live state
// that dies with its holder: MemoryStore in one process, rediscoach in a
// fleet (their own values are not used then).
type Claims interface {
	// Claim, Refresh and Release are Store's: Claim reports (false, 100)
	// only for an analysis of the claims' own values.
	Claim(ctx context.Context, key, holder string, ttl time.Duration) (held bool, percent int, err error)
	Refresh(ctx context.Context, key, holder string, percent int, ttl time.Duration) (bool, error)
	Release(ctx context.Context, key, holder string) error
}

// Split is the Store of a server: finished analyses in values (durable),
// claims in claims (live). Its one job is to route each call to its side
// and to keep Store's promise across the two: a claim is not taken on an
// analysis that is there.
type Split struct {
	values Values
	claims Claims
}

var _ Store = (*Split)(nil)

// NewSplit makes a Store of values and claims.
func NewSplit(values Values, claims Claims) *Split {
	return &Split{values: values, claims: claims}
}

// Get reads the analysis from the values.
func (s *Split) Get(ctx context.Context, key string) ([]byte, bool, error) {
	return s.values.Get(ctx, key)
}

// Claim takes key's claim, then looks for the analysis: a holder's Put
// stores the value before it drops its claim, so a claim taken after that
// drop finds the value, reports (false, 100) and lets the claim go.
func (s *Split) Claim(ctx context.Context, key, holder string, ttl time.Duration) (bool, int, error) {
	held, pct, err := s.claims.Claim(ctx, key, holder, ttl)
	if err != nil || !held {
		return held, pct, err
	}
	_, there, err := s.values.Get(ctx, key)
	if err != nil || there {
		err = errors.Join(err, s.claims.Release(ctx, key, holder))
		if err != nil {
			return false, 0, fmt.Errorf("coach: claim %s: %w", key, err)
		}
		return false, 100, nil
	}
	return true, 0, nil
}

// Refresh extends holder's claim.
func (s *Split) Refresh(ctx context.Context, key, holder string, percent int, ttl time.Duration) (bool, error) {
	return s.claims.Refresh(ctx, key, holder, percent, ttl)
}

// Put stores the analysis, then drops holder's claim (even when the store
// failed, so that another instance may try). keep is not used: the values
// are kept for good.
func (s *Split) Put(ctx context.Context, key, holder string, val []byte, _ time.Duration) error {
	return errors.Join(s.values.Put(ctx, key, val), s.claims.Release(ctx, key, holder))
}

// Release drops holder's claim.
func (s *Split) Release(ctx context.Context, key, holder string) error {
	return s.claims.Release(ctx, key, holder)
}
