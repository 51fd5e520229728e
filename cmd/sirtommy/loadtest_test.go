package main

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestLoadtestBadCommandLines(t *testing.T) {
	for _, args := range [][]string{
		{"loadtest"},
		{"loadtest", "--url", "ws://127.0.0.1:1/ws", "--races", "0"},
		{"loadtest", "--url", "ws://127.0.0.1:1/ws", "--rate", "0"},
		{"loadtest", "--url", "ws://127.0.0.1:1/ws", "--bot", "genius"},
		{"loadtest", "--url", "ws://127.0.0.1:1/ws", "--duration", "-1s"},
		{"loadtest", "--url", "ws://127.0.0.1:1/ws", "--duration", "30s", "--warmup", "30s"},
		{"loadtest", "--url", "ws://127.0.0.1:1/ws", "--warmup", "-1s"},
		{"loadtest", "--url", "ws://127.0.0.1:1/ws", "--direct", "--local-share", "1.5"},
		{"loadtest", "--url", "ws://127.0.0.1:1/ws", "--direct", "--local-share", "-0.1"},
		{"loadtest", "--url", "ws://127.0.0.1:1/ws", "--url", "ws://127.0.0.1:2/ws", "--local-share", "0.5"},
	} {
		_, err := runCLI(t, args...)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("%q: got %v, want a usage error", args, err)
		}
	}
}

// TestLoadtestEchoJSON runs the echo half of the command against the echo
// server and reads its JSON report, with the server's CPU from its
// /metrics (here the test's own process, so only its presence is checked).
func TestLoadtestEchoJSON(t *testing.T) {
	ts := httptest.NewServer(echoServer(false))
	defer ts.Close()
	out, err := runCLI(t, "loadtest", "--echo", "ws"+strings.TrimPrefix(ts.URL, "http"),
		"--races", "2", "--spectators", "1", "--duration", "1s", "--rate", "20", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep loadtestReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if rep.Echo == nil || rep.Echo.Connections != 5 || rep.Echo.Messages == 0 || rep.Race != nil {
		t.Errorf("report %s", out)
	}
	if c := rep.CPU; c == nil || c.EchoSeconds <= 0 || c.EchoPerMsgMicros <= 0 || c.RaceSeconds != 0 || c.Ratio != 0 {
		t.Errorf("CPU report %+v in %s", rep.CPU, out)
	}
}
