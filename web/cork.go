package web

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// corkConn is the websocket's network connection with a cork: while it is
// held, the frames gorilla writes are kept in a buffer, and flush sends
// them in one system call. A connection's writer holds it while it writes
// the messages it found queued, so that a burst to one client (a move's
// reply and the lobby's heartbeat, or a backlog) costs one write, not one
// each. Not held, writes go straight through (the handshake, the close
// frame, the pongs gorilla's reader answers pings with).
//
// What is kept is first written without waiting (tryFlush: one write
// system call that takes what the socket's buffer has room for, which on
// a client that reads is all of it), so that any goroutine may write a
// connection's queue on its way, without a writer goroutine of its own;
// only what the socket would not take waits for flush, under the
// deadline gorilla set.
type corkConn struct {
	net.Conn
	raw syscall.RawConn // the socket, for writes that do not wait; nil if none
	now nowWriter       // writes to raw, under mu

	mu       sync.Mutex
	corked   bool
	buf      *[]byte
	off      int       // how much of buf was written already
	deadline time.Time // the write deadline gorilla set while corked
	// sockDeadline is the write deadline set on the socket itself, which
	// a write that does not wait needs clear (an expired one refuses it).
	sockDeadline time.Time
}

// newCorkConn corks nc.
func newCorkConn(nc net.Conn) *corkConn {
	c := &corkConn{Conn: nc}
	if sc, ok := nc.(syscall.Conn); ok && canWriteNow {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw = raw
		}
	}
	return c
}

// corkBufs recycle the buffers of flushes, so that an idle connection holds
// none.
var corkBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// hold corks the connection.
func (c *corkConn) hold() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// tryFlush writes what was kept as far as the socket takes it without
// waiting. If all of it went, the connection is uncorked and done is
// true; otherwise the rest stays kept, the connection corked (so that a
// pong gorilla writes meanwhile goes after it), for flush.
func (c *corkConn) tryFlush() (done bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buf == nil {
		c.corked = false
		return true, nil
	}
	if c.raw == nil {
		return false, nil
	}
	if !c.sockDeadline.IsZero() {
		if err := c.Conn.SetWriteDeadline(time.Time{}); err != nil {
			return false, err
		}
		c.sockDeadline = time.Time{}
	}
	n, err := c.now.write(c.raw, (*c.buf)[c.off:])
	c.off += n
	if err != nil {
		c.releaseLocked() // the connection is broken: nothing kept goes out
		return false, err
	}
	if c.off < len(*c.buf) {
		return false, nil
	}
	c.releaseLocked()
	c.corked = false
	return true, nil
}

// flush uncorks the connection and writes what is kept, waiting as long
// as the last deadline gorilla set allows.
func (c *corkConn) flush() error {
	if done, err := c.tryFlush(); done || err != nil {
		c.uncork()
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	if c.buf == nil {
		return nil
	}
	var err error
	if err = c.Conn.SetWriteDeadline(c.deadline); err == nil {
		c.sockDeadline = c.deadline
		_, err = c.Conn.Write((*c.buf)[c.off:])
	}
	c.releaseLocked()
	return err
}

// uncork lets writes go straight through again.
func (c *corkConn) uncork() {
	c.mu.Lock()
	c.corked = false
	c.mu.Unlock()
}

// releaseLocked gives the kept buffer back to the pool.
func (c *corkConn) releaseLocked() {
	bp := c.buf
	c.buf, c.off = nil, 0
	if cap(*bp) <= maxPooledBuf {
		*bp = (*bp)[:0]
		corkBufs.Put(bp)
	}
}

// Write keeps b while corked and writes it otherwise.
func (c *corkConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.corked {
		return c.Conn.Write(b)
	}
	if c.buf == nil {
		c.buf = corkBufs.Get().(*[]byte)
	}
	*c.buf = append(*c.buf, b...)
	return len(b), nil
}

// SetWriteDeadline is kept for the flush while corked (gorilla sets one
// for every frame).
func (c *corkConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked {
		c.deadline = t
		return nil
	}
	c.sockDeadline = t
	return c.Conn.SetWriteDeadline(t)
}

// corkingWriter gives the websocket upgrader a corkConn in place of the
// hijacked connection.
type corkingWriter struct {
	http.ResponseWriter
	conn *corkConn
}

// Hijack takes the connection over, with the cork around it.
func (w *corkingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	nc, brw, err := h.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = newCorkConn(nc)
	return w.conn, brw, nil
}
