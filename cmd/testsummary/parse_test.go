package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func parseFixture(t *testing.T, file string) *Report {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseRed(t *testing.T) {
	r := parseFixture(t, "red.txt")

	var passed, failed []string
	for _, p := range r.Packages {
		if p.Passed {
			passed = append(passed, p.Name)
		} else {
			failed = append(failed, p.Name+" "+p.Reason)
		}
	}
	wantFailed := []string{
		"scratch/setupfail setup failed", "scratch/broken build failed", "scratch/exits ",
		"scratch/failing ", "scratch/gopanic ", "scratch/hangs ", "scratch/panics ",
		"scratch/racy ", "scratch/subtests ", "scratch/vetfail build failed",
	}
	if !slices.Equal(failed, wantFailed) {
		t.Errorf("failed packages %q, want %q", failed, wantFailed)
	}
	if len(passed) != 9 {
		t.Errorf("passed packages %q, want 9", passed)
	}
	if !slices.Equal(r.NoTestFiles, []string{"scratch/notests"}) {
		t.Errorf("no test files: %q", r.NoTestFiles)
	}

	var tests []string
	for _, tf := range r.Tests {
		tests = append(tests, tf.Package+" "+tf.Name)
	}
	wantTests := []string{
		"scratch/failing TestLogsAroundError", "scratch/panics TestPanics", "scratch/racy TestRace",
		"scratch/subtests TestTable", "scratch/subtests TestTable/open", "scratch/subtests TestTable/speed",
		"scratch/subtests TestNested", "scratch/subtests TestNested/outer", "scratch/subtests TestNested/outer/inner",
	}
	if !slices.Equal(tests, wantTests) {
		t.Errorf("tests %q, want %q", tests, wantTests)
	}
	for _, tf := range r.Tests {
		switch tf.Name {
		case "TestLogsAroundError":
			if len(tf.Lines) != 38 || tf.Lines[2] != "failing_test.go:17: foundation count: got 4, want 3" {
				t.Errorf("%s: %d lines, third %q", tf.Name, len(tf.Lines), tf.Lines[2])
			}
		case "TestTable/open":
			want := []string{"subtests_test.go:12: open: score got 2, want 3", "    board:", "      A 2 3", "      4 5 6"}
			if !slices.Equal(tf.Lines, want) {
				t.Errorf("%s: lines %q, want %q", tf.Name, tf.Lines, want)
			}
		case "TestTable", "TestNested/outer":
			if len(tf.Lines) != 0 {
				t.Errorf("%s: lines of its own %q", tf.Name, tf.Lines)
			}
		}
	}
	for name, want := range map[string]int{"TestTable": 2, "TestNested": 2, "TestNested/outer": 1, "TestTable/open": 0} {
		for _, tf := range r.Tests {
			if tf.Name == name && tf.FailedSubtests != want {
				t.Errorf("%s: %d failed subtests, want %d", name, tf.FailedSubtests, want)
			}
		}
	}

	if len(r.Panics) != 2 ||
		r.Panics[0].Package != "scratch/gopanic" || r.Panics[0].Test != "TestSpawn" || !r.Panics[0].TestFromStack ||
		r.Panics[1].Package != "scratch/panics" || r.Panics[1].Test != "TestPanics" || r.Panics[1].TestFromStack ||
		!strings.HasPrefix(r.Panics[1].Lines[0], "panic: assignment to entry in nil map") {
		t.Errorf("panics %+v", r.Panics)
	}
	if len(r.Races) != 1 || r.Races[0].Package != "scratch/racy" || r.Races[0].Test != "TestRace" ||
		r.Races[0].TestFromStack || !strings.HasPrefix(r.Races[0].Lines[0], "Read at ") {
		t.Errorf("races %+v", r.Races)
	}
	if len(r.Timeouts) != 1 || r.Timeouts[0].Package != "scratch/hangs" || r.Timeouts[0].After != "5s" ||
		!slices.Equal(r.Timeouts[0].Running, []RunningTest{{Name: "TestHang", For: "5s"}}) {
		t.Errorf("timeouts %+v", r.Timeouts)
	}
	var builds []string
	for _, b := range r.Builds {
		builds = append(builds, b.Package)
		if len(b.Lines) == 0 {
			t.Errorf("build failure of %s without lines", b.Package)
		}
	}
	if !slices.Equal(builds, []string{"scratch/setupfail", "scratch/broken", "scratch/vetfail"}) || !r.Builds[2].Vet || r.Builds[1].Vet {
		t.Errorf("builds %+v", r.Builds)
	}
	if len(r.Trailing) != 0 {
		t.Errorf("trailing lines %q", r.Trailing)
	}
}

func TestParseGreen(t *testing.T) {
	r := parseFixture(t, "green.txt")
	if len(r.Packages) != 8 || len(r.Tests)+len(r.Panics)+len(r.Races)+len(r.Timeouts)+len(r.Builds) != 0 {
		t.Fatalf("report %+v", r)
	}
	if p := r.Packages[0]; p.Name != "scratch/green/g1" || !p.Cached || p.Elapsed != 0 {
		t.Errorf("first package %+v", p)
	}
	if p := r.Packages[5]; p.Name != "scratch/green/g6" || p.Cached || p.Elapsed != 1917*time.Millisecond {
		t.Errorf("sixth package %+v", p)
	}
}

// Lines end in CRLF, the last has no newline, one is far longer than
// what is kept of a line: the parse still places everything.
func TestParseOddLines(t *testing.T) {
	huge := strings.Repeat("x", 3*maxLine)
	log := "--- FAIL: TestA (0.00s)\r\n    a_test.go:3: " + huge + "\r\n    a_test.go:4: second\r\nFAIL\r\nFAIL\tp/a\t0.1s\r\n" +
		"go: something went wrong"
	r, err := Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tests) != 1 || len(r.Tests[0].Lines) != 2 || r.Tests[0].Lines[1] != "a_test.go:4: second" ||
		len(r.Tests[0].Lines[0]) != maxLine-4 {
		t.Errorf("tests %d, %+v", len(r.Tests), r.Tests)
	}
	if len(r.Packages) != 1 || r.Packages[0].Name != "p/a" {
		t.Errorf("packages %+v", r.Packages)
	}
	if !slices.Equal(r.Trailing, []string{"go: something went wrong"}) {
		t.Errorf("trailing %q", r.Trailing)
	}
}

// A line like a "# pkg" header that a test printed itself is its
// package's output, not a build failure.
func TestParseHashLineInOutput(t *testing.T) {
	log := "# Results\nscore: 3 of 4\nFAIL\tp/a\t0.1s\n" +
		"# p/b\nb.go:3:2: undefined: x\nFAIL\tp/b [build failed]\n"
	r, err := Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Builds) != 1 || r.Builds[0].Package != "p/b" || !slices.Equal(r.Builds[0].Lines, []string{"b.go:3:2: undefined: x"}) {
		t.Errorf("builds %+v", r.Builds)
	}
	if len(r.Packages) != 2 || !slices.Equal(r.Packages[0].Output, []string{"# Results", "score: 3 of 4"}) {
		t.Errorf("packages %+v", r.Packages)
	}
}
