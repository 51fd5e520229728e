package web

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// tcpPair is a connected pair of real loopback sockets.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// TestCorkWriteOnTheWayNeverWaits: to a client that does not read, a
// corked burst far larger than the socket's buffers is written as far as
// they take it and the call returns (a goroutine delivering an event
// never waits on a client); the rest is kept, a frame written meanwhile
// (a pong) goes after it, and flush, once the client reads, sends every
// byte in order. (Where the system has no writes that do not wait,
// tryFlush writes nothing and flush all of it.)
func TestCorkWriteOnTheWayNeverWaits(t *testing.T) {
	server, client := tcpPair(t)
	c := newCorkConn(server)
	if canWriteNow && c.raw == nil {
		t.Fatal("a TCP connection gave no raw socket")
	}
	burst := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MB
	c.hold()
	if _, err := c.Write(burst); err != nil {
		t.Fatal(err)
	}
	result := make(chan bool, 1)
	go func() {
		done, err := c.tryFlush()
		if err != nil {
			t.Error(err)
		}
		result <- done
	}()
	select {
	case done := <-result:
		if done {
			t.Fatal("4 MB went to a client that reads nothing: the socket's buffers cannot hold that; the test proves nothing")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tryFlush waited for a client that does not read")
	}
	pong := []byte("PONG")
	if _, err := c.Write(pong); err != nil { // still corked: kept after the rest
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(client, int64(len(burst)+len(pong))))
		got <- b
	}()
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, append(burst, pong...)) {
		t.Fatalf("the client read %d bytes, not the burst then the pong (%d)", len(b), len(burst)+len(pong))
	}
	if !canWriteNow {
		return // here every flush waits, in a writer goroutine
	}
	// Uncorked, and a later burst that fits goes at once, without waiting,
	// although the deadline flush set has passed.
	_ = c.SetWriteDeadline(time.Now().Add(-time.Second))
	c.hold()
	if _, err := c.Write([]byte("next")); err != nil {
		t.Fatal(err)
	}
	if done, err := c.tryFlush(); !done || err != nil {
		t.Fatalf("a small write to a reading client: done %v, %v", done, err)
	}
	b := make([]byte, 4)
	if _, err := io.ReadFull(client, b); err != nil || string(b) != "next" {
		t.Fatalf("read %q, %v", b, err)
	}
}
