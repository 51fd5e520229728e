package web

import (
	"context"
	"errors"
	"testing"

	"github.com/rs/zerolog"

	"sirtommy/race"
)

// TestSlowClientDropped fills a connection's send queue: the next event
// drops the client, once, and counts it.
func TestSlowClientDropped(t *testing.T) {
	s := NewServer(Deps{Log: zerolog.Nop(), Races: race.NewService(race.Deps{})})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	// writing: a writer holds the websocket (blocked on the slow client).
	c := &conn{srv: s, queueMax: 2, writing: true, ctx: ctx, cancel: cancel}
	for range 5 {
		c.Deliver(&race.ReplacedEvent{})
	}
	if got := s.Stats.SlowDropped.Load(); got != 1 {
		t.Errorf("slow drops counted %d, want 1", got)
	}
	if !errors.Is(context.Cause(ctx), errSlow) {
		t.Errorf("cause %v, want errSlow", context.Cause(ctx))
	}
	if code, _ := closeFor(context.Cause(ctx)); code != 1008 {
		t.Errorf("close code %d, want 1008", code)
	}
}
