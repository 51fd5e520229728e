package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// buildTimeout bounds building the binary for the process tests.
const buildTimeout = 2 * time.Minute

// built is this command, built once for all the process tests of a run:
// building and linking it per test cost several seconds each on a busy
// 2-core machine, and every test runs the same program.
var built struct {
	once sync.Once
	dir  string // removed by TestMain
	path string
	err  error
	out  []byte
}

// TestMain removes the shared binary after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildBinary builds this command (once per test run) and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "sirtommy-bin-")
		if built.err != nil {
			return
		}
		bin := filepath.Join(built.dir, "sirtommy")
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		built.out, built.err = exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput()
		built.path = bin
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.path
}
