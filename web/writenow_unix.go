//go:build unix

package web

import (
	"errors"
	"syscall"
)

// canWriteNow: this system's sockets take writes that do not wait.
const canWriteNow = true

// writeNow writes as much of b to the socket as its buffer takes, in one
// system call that does not wait (the socket is non-blocking, as Go keeps
// every socket); n is 0 when it takes nothing now.
func writeNow(raw syscall.RawConn, b []byte) (n int, err error) {
	cerr := raw.Write(func(fd uintptr) bool {
		for {
			n, err = syscall.Write(int(fd), b)
			if !errors.Is(err, syscall.EINTR) {
				return true // done, whatever it took: never wait here
			}
		}
	})
	if n < 0 {
		n = 0
	}
	if errors.Is(err, syscall.EAGAIN) {
		err = nil
	}
	if cerr != nil {
		return n, cerr
	}
	return n, err
}
