package race

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
