package fleet

import "sirtommy/race"

// CloseGate closes the feed gate of h, a connection's proxy, as
// reattachRace does before it attaches the connection again.
func CloseGate(h race.Handle) {
	p := h.(*proxy)
	p.gate.seat.Store(-1)
	p.gate.watch.Store(false)
}
