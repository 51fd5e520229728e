package web

import (
	"sync/atomic"

	"sirtommy/race"
)

// encoded is a message encoded once for all the connections it goes to:
// its bytes are never changed once made.
type encoded struct {
	ev race.Event // what b encodes
	b  []byte
}

// lastShared is the event encodeShared encoded last. A bus publishes an
// event to each subscriber of its topic in turn, so the spectators of a
// race ask for the same event one after the other: one slot is enough to
// encode it once for them all. Races publishing at the same time may take
// the slot from each other; each then encodes its own again, which costs
// time, never a wrong message (the slot is compared by event identity).
var lastShared atomic.Pointer[encoded]

// encodeShared is ev encoded, shared with the other connections it is
// published to; nil if it cannot be encoded (the generic path then
// reports why, on the connection).
func encodeShared(ev race.Event) *encoded {
	if m := lastShared.Load(); m != nil && m.ev == ev {
		return m
	}
	bp := writeBufs.Get().(*[]byte)
	b, err := appendMessage((*bp)[:0], ev)
	var m *encoded
	if err == nil {
		m = &encoded{ev: ev, b: append([]byte(nil), b...)}
		lastShared.Store(m)
	}
	if cap(b) <= maxPooledBuf {
		*bp = b[:0]
		writeBufs.Put(bp)
	}
	return m
}
