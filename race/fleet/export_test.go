package fleet

import "sirtommy/race"

// CloseGate shuts the feed gate of h, a connection's proxy, as
// reattachRace does before it attaches the connection again.
func CloseGate(h race.Handle) { h.(*proxy).gate.shut() }
