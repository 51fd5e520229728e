//go:build !race

package engine

// botRaceEnabled tells the bot's slow tests to play fewer deals under the
// race detector.
const botRaceEnabled = false
