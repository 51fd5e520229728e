package race_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

// carrierBus is a splitBus that can carry events on a store's append
// (race.Carrier), unless refuse is set (an earlier event still on its
// way).
type carrierBus struct {
	splitBus
	refuse bool
}

func (b *carrierBus) Carry(topic string, ev race.Event) (race.Carried, bool) {
	if b.refuse {
		return race.Carried{}, false
	}
	return race.Carried{Channel: topic, Payload: []byte(ev.EventType())}, true
}

// carryingStore is a memrace.Store whose appends note the events they
// carry (race.CarryingStore); with out set, an append reports the move's
// events out although it carries none (the move was appended, and
// published, by an earlier request whose answer was lost).
type carryingStore struct {
	*memrace.Store
	mu      sync.Mutex
	carried []string
	out     bool
}

func (s *carryingStore) AppendCarrying(ctx context.Context, raceID string, m race.MoveRecord, events []race.Carried) (bool, error) {
	if err := s.Append(ctx, raceID, m); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range events {
		s.carried = append(s.carried, e.Channel+" "+string(e.Payload))
	}
	return len(events) > 0 || s.out, nil
}

func (s *carryingStore) took() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.carried
	s.carried = nil
	return out
}

// TestMoveEventsRideOnTheAppend: where the bus and the store can, a move's
// events for other instances go out with its append and not again by the
// bus; where the bus cannot carry them they go by the bus; and a move
// whose events an earlier append published sends them nowhere again.
// This instance's own subscribers get every event once either way.
func TestMoveEventsRideOnTheAppend(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	bus := &carrierBus{splitBus: splitBus{Bus: memrace.NewBus()}}
	store := &carryingStore{Store: memrace.NewStore()}
	r, err := race.New("r1", named(5), race.Deps{Clock: clock, Log: zerolog.Nop(), Store: store, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	var local racetest.Recorder
	remote := &remoteRecorder{} // seat 1's player, on another instance
	if _, err := r.Join("p", "", &local); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Join("q", "", remote); err != nil {
		t.Fatal(err)
	}
	clock.Advance(race.DefaultCountdown)
	rules, _ := engine.Variant("classic")
	games := [2]engine.Game{engine.New(rules, 5), engine.New(rules, 5)}
	move := func(s int) {
		t.Helper()
		m := games[s].AppendMoves(nil)[0]
		if err := r.Move(s, m.String(), ""); err != nil {
			t.Fatal(err)
		}
		if err := games[s].Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, carried, sent []string) {
		t.Helper()
		if got := store.took(); !slices.Equal(got, carried) {
			t.Errorf("%s: the append carried %v, want %v", what, got, carried)
		}
		if got := bus.sent(); !slices.Equal(got, sent) {
			t.Errorf("%s: the bus sent out %v, want %v", what, got, sent)
		}
	}
	store.took()
	bus.sent()

	seen := len(local.Events())
	move(0)
	check("a move on this instance", []string{"r1/seat/1 opponent"}, nil)
	move(1)
	check("the remote seat's move", []string{"r1/seat/1 moved"}, nil)
	if got := len(local.Events()) - seen; got != 2 {
		t.Errorf("the local seat got %d events for two moves, want its moved and the opponent's update", got)
	}

	bus.refuse = true
	move(0)
	check("the bus holding an earlier event", nil, []string{"r1/seat/1 opponent"})

	store.out = true
	move(0)
	check("a move whose events an earlier append published", nil, nil)
	if last, ok := local.Last().(*race.MovedEvent); !ok || last.Seq != 3 {
		t.Errorf("the local seat's last event %#v, want its own moved of its third move", local.Last())
	}
}

// sealedStore refuses every append once sealed, as Redis mode's log does
// after a race's end decided elsewhere (redisrace.Store.Seal).
type sealedStore struct {
	race.Store
	sealed bool
}

func (s *sealedStore) Append(ctx context.Context, id string, m race.MoveRecord) error {
	if s.sealed {
		return fmt.Errorf("race %s: %w", id, race.ErrRaceEnded)
	}
	return s.Store.Append(ctx, id, m)
}

// TestMoveAfterTheSealIsRaceOver: a move the log refuses because the
// race's end sealed it is answered "race over", not "unavailable" (sending
// it again would not help), and the seat's game is left as it was.
func TestMoveAfterTheSealIsRaceOver(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	store := &sealedStore{Store: memrace.NewStore()}
	r, err := race.New("r1", named(5), race.Deps{Clock: clock, Log: zerolog.Nop(), Store: store, Bus: memrace.NewBus()})
	if err != nil {
		t.Fatal(err)
	}
	var p, q racetest.Recorder
	if _, err := r.Join("p", "", &p); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Join("q", "", &q); err != nil {
		t.Fatal(err)
	}
	clock.Advance(race.DefaultCountdown)
	rules, _ := engine.Variant("classic")
	g := engine.New(rules, 5)
	m := g.AppendMoves(nil)[0]
	store.sealed = true
	err = r.Move(0, m.String(), "m1")
	var re *race.Error
	if !errors.As(err, &re) || re.Code != race.CodeRaceOver || !errors.Is(err, race.ErrRaceEnded) {
		t.Fatalf("a move after the seal: %v; want race over", err)
	}
	info, err := r.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if moves := info.Counts[0].Moves; moves != 0 {
		t.Fatalf("the seat has %d moves after a refused one, want 0", moves)
	}
}
