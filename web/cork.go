package web

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"
)

// corkConn is the websocket's network connection with a cork: while it is
// held, the frames gorilla writes are kept in a buffer, and flush sends
// them in one system call. A connection's writer holds it while it writes
// the messages it found queued, so that a burst to one client (a move's
// reply and the lobby's heartbeat, or a backlog) costs one write, not one
// each. Not held, writes go straight through (the handshake, the close
// frame, the pongs gorilla's reader answers pings with).
type corkConn struct {
	net.Conn

	mu       sync.Mutex
	corked   bool
	buf      *[]byte
	deadline time.Time // the write deadline gorilla set while corked
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

// flush uncorks the connection and writes what was kept, in one call,
// under the last deadline gorilla set.
func (c *corkConn) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	if c.buf == nil {
		return nil
	}
	bp := c.buf
	c.buf = nil
	var err error
	if err = c.Conn.SetWriteDeadline(c.deadline); err == nil {
		_, err = c.Conn.Write(*bp)
	}
	if cap(*bp) <= maxPooledBuf {
		*bp = (*bp)[:0]
		corkBufs.Put(bp)
	}
	return err
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
	w.conn = &corkConn{Conn: nc}
	return w.conn, brw, nil
}
