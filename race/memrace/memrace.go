// Package memrace holds the in-memory implementations of the race package's
// Store and Bus: the default for one server on its own.
package memrace

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"sirtommy/race"
)

// Store is an in-memory race.Store. Each race's log has a lock of its
// own, and the logs are found without a lock (sync.Map, written once per
// race), so that races on different cores do not wait for each other's
// appends. A race opens its log once (OpenLog) and appends to it
// directly, without a lookup per move.
type Store struct {
	logs sync.Map // race id -> *raceLog
}

// raceLog is one race's moves and each seat's last seq (0: none yet).
type raceLog struct {
	id    string
	mu    sync.Mutex
	moves []race.MoveRecord
	last  [race.MaxSeats]int
}

var _ race.Store = (*Store)(nil)

// NewStore makes an empty Store.
func NewStore() *Store { return &Store{} }

// Append adds a move to a race's log; a record already there (same seat,
// seq and move) is not added twice, and one that contradicts the log is
// refused with race.ErrConflict.
func (s *Store) Append(ctx context.Context, raceID string, m race.MoveRecord) error {
	return s.log(raceID).Append(ctx, m)
}

var _ race.LogOpener = (*Store)(nil)

// OpenLog returns race raceID's log, for the race to append to directly.
func (s *Store) OpenLog(raceID string) race.MoveLog { return s.log(raceID) }

// log is race raceID's log, made if it has none yet.
func (s *Store) log(raceID string) *raceLog {
	v, ok := s.logs.Load(raceID)
	if !ok {
		v, _ = s.logs.LoadOrStore(raceID, &raceLog{id: raceID})
	}
	return v.(*raceLog)
}

// Append adds a move to the log, as Store.Append does.
func (l *raceLog) Append(_ context.Context, m race.MoveRecord) error {
	if m.Seat < 0 || m.Seat >= len(l.last) {
		return fmt.Errorf("race %s: no seat %d", l.id, m.Seat)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if last := l.last[m.Seat]; last > 0 && m.Seq <= last {
		for i := len(l.moves) - 1; i >= 0; i-- {
			if old := l.moves[i]; old.Seat == m.Seat && old.Seq == m.Seq && old.Move == m.Move {
				return nil // already stored
			}
		}
		return fmt.Errorf("race %s seat %d seq %d: %w", l.id, m.Seat, m.Seq, race.ErrConflict)
	}
	l.moves = append(l.moves, m)
	l.last[m.Seat] = m.Seq
	return nil
}

var _ race.Forgetter = (*Store)(nil)

// Forget drops a race's log.
func (s *Store) Forget(_ context.Context, raceID string) error {
	s.logs.Delete(raceID)
	return nil
}

// Moves returns a copy of a race's log.
func (s *Store) Moves(_ context.Context, raceID string) ([]race.MoveRecord, error) {
	v, ok := s.logs.Load(raceID)
	if !ok {
		return nil, nil
	}
	l := v.(*raceLog)
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]race.MoveRecord(nil), l.moves...), nil
}

// Bus is an in-memory race.Bus: Publish calls each subscriber's Deliver in
// the publisher's goroutine. A topic's subscribers are a slice, which
// Publish (on every move) walks under the read lock, and which Subscribe
// and cancel change under the write lock.
type Bus struct {
	mu   sync.RWMutex
	subs map[string][]*entry
}

type entry struct{ s race.Subscriber }

var _ race.Bus = (*Bus)(nil)

// NewBus makes a Bus with no subscribers.
func NewBus() *Bus { return &Bus{subs: make(map[string][]*entry)} }

// Publish delivers ev to the topic's subscribers.
func (b *Bus) Publish(topic string, ev race.Event) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, e := range b.subs[topic] {
		e.s.Deliver(ev)
	}
}

// PublishLocal is Publish: every subscriber is on this instance.
func (b *Bus) PublishLocal(topic string, ev race.Event) { b.Publish(topic, ev) }

// Relays is false: the bus carries nothing to other instances.
func (b *Bus) Relays() bool { return false }

// Subscribe adds s to topic; cancel removes it and may be called more than
// once.
func (b *Bus) Subscribe(topic string, s race.Subscriber) (cancel func()) {
	e := &entry{s}
	b.mu.Lock()
	old := b.subs[topic]
	b.subs[topic] = append(old, e)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		old := b.subs[topic]
		i := slices.Index(old, e)
		if i < 0 {
			return
		}
		if len(old) == 1 {
			delete(b.subs, topic)
			return
		}
		b.subs[topic] = slices.Delete(old, i, i+1)
	}
}
