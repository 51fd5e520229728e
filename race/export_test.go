package race

import "sirtommy/engine"

// RecordForTest is r's record now.
func RecordForTest(r *Race) *Record {
	r.mu.Lock()
	defer r.unlock()
	return r.recordLocked()
}

// RearmForTest starts a restored race's timers, as the Service that adopts
// it does.
func RearmForTest(r *Race, rec *Record) {
	r.mu.Lock()
	defer r.unlock()
	r.rearmLocked(rec)
}

// LockFreeForTest reports whether r's lock is free now.
func LockFreeForTest(r *Race) bool {
	if !r.mu.TryLock() {
		return false
	}
	r.mu.Unlock()
	return true
}

// DecideForTest is the referee of games (decide), finished[s] being when
// seat s's game ended.
func DecideForTest(games []*engine.Game, finished []int64) (winner int, reason Reason, done bool) {
	return decide(games, finished)
}

// DecideOnTimeForTest is the referee at the time limit (decideOnTime).
func DecideOnTimeForTest(games []*engine.Game, finished []int64) (winner int, reason Reason) {
	return decideOnTime(games, finished)
}

// RankForTest is the ranking of games (rank).
func RankForTest(games []*engine.Game, finished []int64, first int) []Place {
	return rank(games, finished, first)
}
