//go:build race

package engine

// raceEnabled tells the slow tests (bots, SAT) to play as few deals under
// the race detector as under -short: it makes them about sixteen times
// slower, and the engine starts no goroutines, so more deals would find no
// more races. Without -race (go test ./engine) they play them all.
const raceEnabled = true
