//go:build !race

package engine

// raceEnabled tells the slow tests (bots, SAT) to play fewer deals under the
// race detector.
const raceEnabled = false
