//go:build race

package engine

// botRaceEnabled tells the bot's slow tests to play fewer deals under the
// race detector, which makes them about sixteen times slower; the engine
// starts no goroutines, so more deals would find no more races.
const botRaceEnabled = true
