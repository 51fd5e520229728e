//go:build !linux

package engine

import "time"

// threadCPUTime and cpuTime are measured on Linux only; elsewhere the
// measure run reports zero CPU times and its wall times.
func threadCPUTime() time.Duration { return 0 }

func cpuTime() time.Duration { return 0 }
