//go:build race

package engine

// raceEnabled tells the slow tests (bots, SAT) to play fewer deals under the
// race detector, which makes them about sixteen times slower; the engine
// starts no goroutines, so more deals would find no more races.
const raceEnabled = true
