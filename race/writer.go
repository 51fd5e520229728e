package race

import (
	"context"
	"sync"

	"github.com/rs/zerolog"
)

// recordWriter saves one race's records (Records.Save) outside the race's
// lock, in order: a record is the whole race as it stood, so the writer
// keeps only the latest one queued, and one goroutine at a time writes,
// so a later record is never overtaken by an earlier one. The request or
// timer that queued a record waits, once it has released the race's lock,
// until that record is written (Race.unlock runs the wait): what a caller
// was told is in the record as before, but the race's other requests no
// longer wait behind a Redis round trip.
//
// Its lock is a leaf: put is called under the race's lock.
type recordWriter struct {
	records Records
	log     zerolog.Logger

	mu      sync.Mutex
	cond    sync.Cond
	pending *Record
	queued  uint64 // the number of records queued so far
	written uint64 // the number of the last record written (or given up)
	busy    bool   // a goroutine is writing
}

func newRecordWriter(records Records, log zerolog.Logger) *recordWriter {
	w := &recordWriter{records: records, log: log}
	w.cond.L = &w.mu
	return w
}

// put queues rec, replacing a record queued and not yet being written, and
// returns its number for wait.
func (w *recordWriter) put(rec *Record) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queued++
	w.pending = rec
	if !w.busy {
		w.busy = true
		go w.run()
	}
	return w.queued
}

// run writes the latest record queued until none is left. A failure is
// logged: the race goes on, and the next save catches up.
func (w *recordWriter) run() {
	w.mu.Lock()
	for w.pending != nil {
		rec, n := w.pending, w.queued
		w.pending = nil
		w.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), recordsTimeout)
		if err := w.records.Save(ctx, rec); err != nil {
			w.log.Warn().Err(err).Msg("race record not saved")
		}
		cancel()
		w.mu.Lock()
		w.written = n
		w.cond.Broadcast()
	}
	w.busy = false
	w.mu.Unlock()
}

// wait returns once record n and every one before it are written (or
// given up): each write is bounded by recordsTimeout.
func (w *recordWriter) wait(n uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.written < n {
		w.cond.Wait()
	}
}

// flush waits until every record queued so far is written.
func (w *recordWriter) flush() {
	w.mu.Lock()
	n := w.queued
	w.mu.Unlock()
	w.wait(n)
}
