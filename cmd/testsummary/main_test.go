package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	onefail := filepath.Join("testdata", "onefail.txt")
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		status int
		out    string // the output's last line, or ""
		errOut string // part of the error output, or ""
	}{
		{name: "file", args: []string{onefail}, out: "2 packages passed, 1 failed; 1 test failed"},
		{name: "stdin", args: []string{"-"}, stdin: "ok  \tp/a\t1.5s\n", out: "1 package passed, 0 failed; 0 tests failed"},
		{name: "no file", args: []string{filepath.Join("testdata", "missing.txt")}, status: 2, errOut: "missing.txt"},
		{name: "no argument", status: 2, errOut: "usage"},
		{name: "two arguments", args: []string{onefail, onefail}, status: 2, errOut: "usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			status := run(tc.args, strings.NewReader(tc.stdin), &out, &errOut)
			if status != tc.status {
				t.Errorf("status %d, want %d; stderr %q", status, tc.status, errOut.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if tc.out != "" && lines[len(lines)-1] != tc.out {
				t.Errorf("last line %q, want %q", lines[len(lines)-1], tc.out)
			}
			if !strings.Contains(errOut.String(), tc.errOut) {
				t.Errorf("stderr %q, want it to have %q", errOut.String(), tc.errOut)
			}
		})
	}
}

// The summary of stdin refers to the log by a name that is not a file's.
func TestRunStdinLogName(t *testing.T) {
	var out, errOut strings.Builder
	log := "--- FAIL: TestA (0.00s)\n" + strings.Repeat("    a_test.go:3: line\n", 20) + "FAIL\nFAIL\tp/a\t0.1s\n"
	if status := run([]string{"-"}, strings.NewReader(log), &out, &errOut); status != 0 {
		t.Fatalf("status %d: %s", status, errOut.String())
	}
	if !strings.Contains(out.String(), "… 10 more lines in the full output\n") {
		t.Errorf("summary:\n%s", out.String())
	}
}
