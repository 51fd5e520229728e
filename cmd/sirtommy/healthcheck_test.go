package main

import (
	"strings"
	"testing"
)

// TestHealthcheck asks a running server, then an address nobody serves.
func TestHealthcheck(t *testing.T) {
	base, _, stop, done := startServe(t)
	addr := strings.TrimPrefix(base, "http://")
	out, err := runCLI(t, "healthcheck", "--addr", addr)
	if err != nil || strings.TrimSpace(out) != "ok" {
		t.Errorf("healthcheck of a running server: %q, %v", out, err)
	}
	stop()
	<-done
	if _, err := runCLI(t, "healthcheck", "--addr", addr); err == nil {
		t.Error("healthcheck of a stopped server succeeded")
	}
	if _, err := runCLI(t, "healthcheck", "--addr", "no-port"); err == nil {
		t.Error("a bad --addr was accepted")
	}
}
