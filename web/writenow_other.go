//go:build !unix

package web

import "syscall"

// canWriteNow: on this system every flush waits in a writer goroutine.
const canWriteNow = false

// nowWriter is never used here (canWriteNow is false).
type nowWriter struct{}

func (*nowWriter) write(syscall.RawConn, []byte) (int, error) { return 0, nil }
