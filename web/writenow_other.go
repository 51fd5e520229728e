//go:build !unix

package web

import "syscall"

// canWriteNow: on this system every flush waits in a writer goroutine.
const canWriteNow = false

// writeNow is never called here (canWriteNow is false).
func writeNow(syscall.RawConn, []byte) (int, error) { return 0, nil }
