//go:build unix

package web

import (
	"errors"
	"syscall"
)

// canWriteNow: this system's sockets take writes that do not wait.
const canWriteNow = true

// nowWriter writes to a socket without waiting. The state of its one
// write lives in it, and the function handed to the socket is made once,
// so that a write allocates nothing (a closure over the call's variables
// cost three allocations a write). Not for concurrent use: its corkConn
// writes under its lock.
type nowWriter struct {
	b   []byte
	n   int
	err error
	fn  func(fd uintptr) bool // w.try, made once
}

// try is the write system call, retried only when interrupted.
func (w *nowWriter) try(fd uintptr) bool {
	for {
		w.n, w.err = syscall.Write(int(fd), w.b)
		if !errors.Is(w.err, syscall.EINTR) {
			return true // done, whatever it took: never wait here
		}
	}
}

// write writes as much of b to the socket as its buffer takes, in one
// system call that does not wait (the socket is non-blocking, as Go keeps
// every socket); n is 0 when it takes nothing now.
func (w *nowWriter) write(raw syscall.RawConn, b []byte) (n int, err error) {
	if w.fn == nil {
		w.fn = w.try
	}
	w.b = b
	cerr := raw.Write(w.fn)
	n, err = max(w.n, 0), w.err
	w.b, w.n, w.err = nil, 0, nil
	if errors.Is(err, syscall.EAGAIN) {
		err = nil
	}
	if cerr != nil {
		return n, cerr
	}
	return n, err
}
