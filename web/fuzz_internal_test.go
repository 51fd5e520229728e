package web

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

// FuzzHandle feeds arbitrary client messages to a connection's decoder and
// dispatcher: it never panics, and every reply it queues is one JSON
// object of the protocol ("v":1 and a "type"). A garbled message gets
// bad-json. The seed corpus is in testdata/fuzz/FuzzHandle.
func FuzzHandle(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"ping","id":"p"}`))
	f.Add([]byte(`{"v":1,"type":"move","move":"3H>F2","id":"1"}`))
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	races := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	open, err := races.Create(race.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"v":1,"type":"watch","id":"w","race":"` + open.ID() + `"}`))
	s := NewServer(Deps{Log: zerolog.Nop(), Races: races})
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		// reading: the replies stay queued, as they do while the reader
		// handles a message.
		c := &conn{srv: s, log: zerolog.Nop(), queueMax: 64, reading: true, ctx: ctx, cancel: cancel}
		defer c.leave()
		c.handle(data)
		c.mu.Lock()
		queued := c.queue
		c.mu.Unlock()
		for _, m := range queued {
			if e, ok := m.(*encoded); ok {
				m = e.ev
			}
			b, err := encode(m)
			if err != nil {
				t.Fatalf("reply to %q does not encode: %v", data, err)
			}
			var head struct {
				V    int    `json:"v"`
				Type string `json:"type"`
				Code string `json:"code"`
			}
			if err := json.Unmarshal(b, &head); err != nil {
				t.Fatalf("reply %s to %q is not JSON: %v", b, data, err)
			}
			if head.V != ProtocolVersion || head.Type == "" {
				t.Fatalf("reply %s to %q lacks v or type", b, data)
			}
			if !json.Valid(data) && (head.Type != "error" || head.Code != string(CodeBadJSON)) {
				t.Fatalf("invalid JSON %q got %s, want a bad-json error", data, b)
			}
		}
	})
}
