package sqlrace_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race"
	"sirtommy/race/sqlrace"
)

// cpuTime is the CPU this process has used so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAppend is the cost of a move's append on SQLite (the single
// binary's database), reported as the process's CPU per move
// (cpu-µs/move: every goroutine's, the writer's and the driver's
// included) beside the wall time per move. sequential is one race
// appending alone: every move waits for a commit of its own. parallel is
// many races appending at once (races goroutines, as many connections
// moving), whose moves share commits, without and with a interval.
func BenchmarkAppend(b *testing.B) {
	b.Run("sequential", func(b *testing.B) {
		s := open(b, sqltest.SQLite(b))
		ctx := b.Context()
		b.ReportAllocs()
		cpu := cpuTime(b)
		b.ResetTimer()
		for i := range b.N {
			m := race.MoveRecord{Seat: i % 2, Seq: i/2 + 1, Move: "10H>W2", AtMs: int64(i), ID: "m12"}
			if err := s.Append(ctx, "seq", m); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/move")
	})
	for _, interval := range []time.Duration{0, 2 * time.Millisecond} {
		for _, races := range []int{64, 1000} {
			b.Run(fmt.Sprintf("parallel/interval=%s/races=%d", interval, races), func(b *testing.B) {
				s := openWith(b, sqltest.SQLite(b), sqlrace.Options{Interval: interval})
				ctx := b.Context()
				var next atomic.Int64
				b.ReportAllocs()
				b.SetParallelism(max(1, races/runtime.GOMAXPROCS(0)))
				cpu := cpuTime(b)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					id := fmt.Sprint("par", next.Add(1))
					for i := 0; pb.Next(); i++ {
						m := race.MoveRecord{Seat: i % 2, Seq: i/2 + 1, Move: "10H>W2", AtMs: int64(i), ID: "m12"}
						if err := s.Append(ctx, id, m); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.StopTimer()
				b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/move")
			})
		}
	}
}
