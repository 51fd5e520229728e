package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// safetyTimeout only keeps a broken test from hanging; it is generous, for
// a busy machine.
const safetyTimeout = 30 * time.Second

// syncBuffer is a bytes.Buffer safe for the server's and the test's
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs the real program on port 0, with a data folder of the
// test's own (a later --data in args wins), and returns its base URL, the
// cancel that stops it, and a channel with run's error.
func startServe(t testing.TB, args ...string) (string, *syncBuffer, context.CancelFunc, <-chan error) {
	t.Helper()
	args = append([]string{"--data", t.TempDir()}, args...) // never ./sirtommy-data in the source tree
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	stopped := make(chan struct{})
	getenv := func(k string) string {
		if k == "SIRTOMMY_LOG_FORMAT" {
			return "json"
		}
		return ""
	}
	go func() {
		done <- run(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), getenv, &stdout, &stderr)
		close(stopped)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-stopped:
		case <-time.After(safetyTimeout):
			t.Error("server did not stop")
		}
	})
	deadline := time.Now().Add(safetyTimeout)
	for time.Now().Before(deadline) {
		if base, ok := listenURL(stdout.String()); ok {
			for time.Now().Before(deadline) {
				res, err := http.Get(base + "/healthz")
				if err == nil {
					res.Body.Close()
					if res.StatusCode == http.StatusOK {
						return base, &stderr, cancel, done
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("server did not start: %s", stderr.String())
	return "", nil, nil, nil
}

func TestServeRaceAndDrain(t *testing.T) {
	base, logs, stop, done := startServe(t, "--drain-timeout", "100ms")
	res, err := http.Post(base+"/api/races", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ Race, Commitment, Websocket string }
	_ = json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	if created.Race == "" || len(created.Commitment) != 64 {
		t.Fatalf("created %+v", created)
	}
	var clients [2]*websocket.Conn
	for i := range clients {
		ws, _, err := websocket.DefaultDialer.Dial(created.Websocket, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		clients[i] = ws
		// Seats are for identified players: hello first.
		if err := ws.WriteJSON(map[string]any{"v": 1, "type": "hello", "name": "p" + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
		readUntil(t, ws, `"type":"welcome"`)
		if err := ws.WriteJSON(map[string]any{"v": 1, "type": "join", "race": created.Race}); err != nil {
			t.Fatal(err)
		}
	}
	// Both seats taken: the countdown runs when the server is told to stop.
	readUntil(t, clients[0], `"state":"countdown"`)
	stop()
	// The drain timeout aborts the race; then the websockets close with 1001.
	readUntil(t, clients[0], `"reason":"shutdown"`)
	for {
		_ = clients[1].SetReadDeadline(time.Now().Add(safetyTimeout))
		_, _, err := clients[1].ReadMessage()
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
				t.Fatalf("closed with %v, want 1001", err)
			}
			break
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, want := range []string{`"race":"` + created.Race + `"`, `"message":"listening"`, `"message":"stopped"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s", want)
		}
	}
}

func readUntil(t *testing.T, ws *websocket.Conn, substr string) {
	t.Helper()
	for {
		_ = ws.SetReadDeadline(time.Now().Add(safetyTimeout))
		_, b, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for %s: %v", substr, err)
		}
		if strings.Contains(string(b), substr) {
			return
		}
	}
}

func TestServeFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	env := func(k string) string {
		if k == "SIRTOMMY_LOG_LEVEL" {
			return "loud"
		}
		return ""
	}
	if err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, env, &out, &errOut); err == nil {
		t.Fatal("a bad SIRTOMMY_LOG_LEVEL was accepted")
	}
	errOut.Reset()
	if err := run(context.Background(), []string{"serve", "--help"}, env, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"-addr", "SIRTOMMY_ADDR", "-log-format", "-log-level", "-drain-timeout", "-spectator-delay", "-allowed-origins", "-origin", "SIRTOMMY_ORIGIN", "-grace", "-secret", "SIRTOMMY_SECRET", "-computer-offer-after", "-redis", "SIRTOMMY_REDIS", "-redis-prefix", "-redis-retention", "-seat-moves", "SIRTOMMY_SEAT_MOVES", "-retention", "SIRTOMMY_RETENTION", "-api-races-per-minute", "-data", "SIRTOMMY_DATA", "-database", "SIRTOMMY_DATABASE", "-arenas", "SIRTOMMY_ARENAS"} {
		if !strings.Contains(errOut.String(), f) {
			t.Errorf("--help lacks %s", f)
		}
	}
	var u usageError
	for _, args := range [][]string{
		{"serve", "--retention", "0s"}, {"serve", "--api-races-per-minute", "-1"},
		{"serve", "--data", ""}, {"serve", "--database", "sqlite:///tmp/x.db"},
		{"serve", "--redis", "redis://127.0.0.1:1/0", "--data", t.TempDir()},
		{"serve", "--arenas", "Hourly,classic,5m,4m,1h"}, {"serve", "--arenas", "Hourly,classic,5m"},
	} {
		if err := run(context.Background(), args, func(string) string { return "" }, &out, &errOut); !errors.As(err, &u) {
			t.Errorf("%v: want a usage error, got %v", args, err)
		}
	}
}

// TestServeMetrics reads /metrics from a running server with one
// websocket open.
func TestServeMetrics(t *testing.T) {
	base, _, _, _ := startServe(t)
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.WriteJSON(map[string]any{"v": 1, "type": "ping", "id": "p"}); err != nil {
		t.Fatal(err)
	}
	readUntil(t, ws, `"type":"pong"`) // the connection is counted by now
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, want := range []string{
		"sirtommy_websocket_connections 1", `sirtommy_races{state="running"} 0`,
		"sirtommy_move_handling_seconds_bucket", "sirtommy_send_queue_drops_total 0",
		"sirtommy_rate_limited_total 0", "go_goroutines ", "process_resident_memory_bytes ",
		`go_sql_open_connections{db_name="sirtommy"} `, "sirtommy_database_ping_seconds_count ",
		"sirtommy_database_ping_failures_total 0", "sirtommy_archive_queue 0",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
