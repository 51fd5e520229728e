package memrace

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"sirtommy/race"
)

// Archive is an in-memory race.Archive, the twin of sqlstore.Archive for
// tests: it keeps each race as the JSON the database would, so that what
// comes back is what a database gives back, and its times are kept to the
// millisecond, as the database's are. It is not for a server: it keeps
// nothing across a restart, and grows with every race.
type Archive struct {
	mu    sync.Mutex
	races map[string]*archived
}

// archived is one stored race.
type archived struct {
	id       string
	endedMs  int64
	followed bool
	record   []byte // race.Archived as JSON
}

var _ race.Archive = (*Archive)(nil)

// NewArchive makes an empty Archive.
func NewArchive() *Archive { return &Archive{races: make(map[string]*archived)} }

// Put stores a once.
func (m *Archive) Put(_ context.Context, a race.Archived) error {
	if err := a.Check(); err != nil {
		return err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("archive race %s: encode: %w", a.Info.Race, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.races[a.Info.Race]; ok {
		return nil
	}
	m.races[a.Info.Race] = &archived{id: a.Info.Race, endedMs: a.EndedAt.UnixMilli(), followed: a.Followed, record: b}
	return nil
}

// Get finds an archived race.
func (m *Archive) Get(_ context.Context, id string) (race.Archived, bool, error) {
	m.mu.Lock()
	r, ok := m.races[id]
	var c archived
	if ok {
		c = *r // followed changes under the lock
	}
	m.mu.Unlock()
	if !ok {
		return race.Archived{}, false, nil
	}
	a, err := c.decode()
	return a, err == nil, err
}

func (r *archived) decode() (race.Archived, error) {
	var a race.Archived
	if err := json.Unmarshal(r.record, &a); err != nil {
		return race.Archived{}, fmt.Errorf("archived race %s: decode: %w", r.id, err)
	}
	a.Followed = r.followed
	return a, nil
}

// Unfollowed lists at most n races not followed that ended before
// before, oldest first.
func (m *Archive) Unfollowed(_ context.Context, before time.Time, n int) ([]race.Archived, error) {
	if err := race.CheckBatch(n); err != nil {
		return nil, err
	}
	m.mu.Lock()
	var list []archived
	for _, r := range m.races {
		if !r.followed && r.endedMs < before.UnixMilli() {
			list = append(list, *r)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(list, func(x, y archived) int {
		return cmp.Or(cmp.Compare(x.endedMs, y.endedMs), cmp.Compare(x.id, y.id))
	})
	out := make([]race.Archived, 0, min(n, len(list)))
	for _, r := range list[:min(n, len(list))] {
		a, err := r.decode()
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// Followed marks race id followed; a race not stored is not marked.
func (m *Archive) Followed(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.races[id]; ok {
		r.followed = true
	}
	return nil
}
