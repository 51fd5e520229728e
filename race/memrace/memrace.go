// Package memrace holds the in-memory implementations of the race package's
// Store and Bus: the default for one server on its own.
package memrace

import (
	"context"
	"fmt"
	"sync"

	"sirtommy/race"
)

// Store is an in-memory race.Store.
type Store struct {
	mu    sync.Mutex
	moves map[string][]race.MoveRecord
}

var _ race.Store = (*Store)(nil)

// NewStore makes an empty Store.
func NewStore() *Store { return &Store{moves: make(map[string][]race.MoveRecord)} }

// Append adds a move to a race's log; a record already there (same seat,
// seq and move) is not added twice, and one that contradicts the log is
// refused with race.ErrConflict.
func (s *Store) Append(_ context.Context, raceID string, m race.MoveRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	log := s.moves[raceID]
	behind := false // the seat has a seq at or above m's
	for _, old := range log {
		if old.Seat != m.Seat || old.Seq < m.Seq {
			continue
		}
		if old.Seq == m.Seq && old.Move == m.Move {
			return nil // already stored
		}
		behind = true
	}
	if behind {
		return fmt.Errorf("race %s seat %d seq %d: %w", raceID, m.Seat, m.Seq, race.ErrConflict)
	}
	s.moves[raceID] = append(log, m)
	return nil
}

// Moves returns a copy of a race's log.
func (s *Store) Moves(_ context.Context, raceID string) ([]race.MoveRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]race.MoveRecord(nil), s.moves[raceID]...), nil
}

// Bus is an in-memory race.Bus: Publish calls each subscriber's Deliver in
// the publisher's goroutine.
type Bus struct {
	mu   sync.RWMutex
	subs map[string]map[*entry]struct{}
}

type entry struct{ s race.Subscriber }

var _ race.Bus = (*Bus)(nil)

// NewBus makes a Bus with no subscribers.
func NewBus() *Bus { return &Bus{subs: make(map[string]map[*entry]struct{})} }

// Publish delivers ev to the topic's subscribers.
func (b *Bus) Publish(topic string, ev race.Event) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for e := range b.subs[topic] {
		e.s.Deliver(ev)
	}
}

// Subscribe adds s to topic; cancel removes it and may be called more than
// once.
func (b *Bus) Subscribe(topic string, s race.Subscriber) (cancel func()) {
	e := &entry{s}
	b.mu.Lock()
	m := b.subs[topic]
	if m == nil {
		m = make(map[*entry]struct{})
		b.subs[topic] = m
	}
	m[e] = struct{}{}
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if m := b.subs[topic]; m != nil {
			delete(m, e)
			if len(m) == 0 {
				delete(b.subs, topic)
			}
		}
	}
}
