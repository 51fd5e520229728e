package main

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"sirtommy/lobby/sqlstore"
)

// TestGreet checks the first screen a person sees: a server on every
// interface is named by localhost, one on a given address by that address,
// the first line is the one listenURL reads back, and it says where the
// data is.
func TestGreet(t *testing.T) {
	for _, tc := range []struct {
		addr    net.Addr
		url     string
		network bool // lists the network addresses too
	}{
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "http://localhost:8080", true},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 9000}, "http://localhost:9000", true},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234}, "http://127.0.0.1:41234", false},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 80}, "http://[::1]:80", false},
	} {
		t.Run(tc.addr.String(), func(t *testing.T) {
			var out bytes.Buffer
			greet(&out, tc.addr, "sirtommy-data/ (SQLite)")
			got, ok := listenURL(out.String())
			if !ok || got != tc.url {
				t.Fatalf("listenURL(%q) = %q, %v; want %q", out.String(), got, ok, tc.url)
			}
			if !strings.Contains(out.String(), "Open "+tc.url+" in a browser") {
				t.Errorf("no line saying what to open:\n%s", out.String())
			}
			if !strings.Contains(out.String(), "\n  Data: sirtommy-data/ (SQLite)\n") {
				t.Errorf("no line saying where the data is:\n%s", out.String())
			}
			if !tc.network && strings.Contains(out.String(), "On your network") {
				t.Errorf("a server on one address listed network addresses:\n%s", out.String())
			}
		})
	}
	if _, ok := listenURL("listening on http://localhost:80"); ok {
		t.Error("listenURL accepted a line still being written")
	}
}

// TestDataLine: the greeting names the data folder as a folder, and a
// PostgreSQL database by the host and name sqlstore gives.
func TestDataLine(t *testing.T) {
	for _, tc := range []struct {
		kind        sqlstore.Kind
		where, want string
	}{
		{sqlstore.SQLite, defaultData, "sirtommy-data/ (SQLite)"},
		{sqlstore.SQLite, "/data/", "/data/ (SQLite)"},
		{sqlstore.Postgres, "db.internal:5432/sirtommy", "db.internal:5432/sirtommy (PostgreSQL)"},
	} {
		t.Run(tc.where, func(t *testing.T) {
			if got := dataLine(tc.kind, tc.where); got != tc.want {
				t.Fatalf("dataLine(%s, %q) = %q, want %q", tc.kind, tc.where, got, tc.want)
			}
		})
	}
}

// TestLogFormatAuto checks that auto logs JSON when the output is not a
// terminal (a file, a pipe, a container's log), and that console still
// wins when asked for.
func TestLogFormatAuto(t *testing.T) {
	var out bytes.Buffer
	log, err := newLogger(&out, logAuto, "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Msg("hello")
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil || line["message"] != "hello" {
		t.Fatalf("auto on a buffer: want a JSON line, got %q (%v)", out.String(), err)
	}
	out.Reset()
	if log, err = newLogger(&out, logConsole, "info"); err != nil {
		t.Fatal(err)
	}
	log.Info().Msg("hello")
	if json.Valid(out.Bytes()) || !strings.Contains(out.String(), "hello") {
		t.Fatalf("console: want a console line, got %q", out.String())
	}
}
