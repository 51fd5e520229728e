package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// summarize returns the summary of testdata/file, line by line.
func summarize(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return summarizeReader(t, f, file)
}

// summarizeReader returns the summary of the log read from f, which it
// calls name.
func summarizeReader(t *testing.T, f io.Reader, name string) []string {
	t.Helper()
	r, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Write(&b, r, DefaultOptions(name)); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// The fixtures are real outputs of `go test -race -timeout 5s` on a
// scratch module (testdata/README.md).
func TestSummaryOfFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		// want holds lines or parts of lines the summary must have.
		want []string
		// not holds whole lines the summary must not have.
		not []string
		// failed holds the "failed:" lines, in order.
		failed []string
		// last is the summary's last line.
		last string
	}{{
		file: "red.txt",
		want: []string{
			"FAIL scratch/failing TestLogsAroundError",
			"    failing_test.go:17: foundation count: got 4, want 3",
			"FAIL scratch/subtests TestTable/open",
			"    subtests_test.go:12: open: score got 2, want 3",
			"FAIL scratch/subtests TestTable/speed",
			"FAIL scratch/subtests TestNested/outer/inner",
			"    subtests_test.go:21: inner broke",
			"PANIC scratch/panics TestPanics",
			"    panic: assignment to entry in nil map",
			"    scratch/panics.TestPanics(",
			"PANIC scratch/gopanic TestSpawn (found in its stack)",
			"    panic: runtime error: index out of range [52] with length 52",
			"RACE scratch/racy TestRace",
			"    Read at 0x",
			"      scratch/racy.TestRace.func1()",
			"    Previous write at 0x",
			"TIMEOUT scratch/hangs: test timed out after 5s; running: TestHang (5s)",
			"    scratch/hangs.TestHang(",
			"BUILD scratch/broken",
			"    broken/broken.go:4:17: cannot use 3 (untyped int constant) as string value",
			"VET scratch/vetfail",
			`    vetfail/vet_test.go:8:42: fmt.Printf format %d has arg "seven" of wrong type string`,
			"SETUP scratch/setupfail",
			"    setupfail/setup_test.go:6:2: package scratch/nothere is not in std",
			"FAIL scratch/exits (no failing test, panic, race or build error found in its output)",
			"    setup: cannot reach the test database",
		},
		not: []string{
			"FAIL scratch/subtests TestTable",
			"FAIL scratch/subtests TestNested",
			"FAIL scratch/subtests TestNested/outer",
		},
		failed: []string{
			"failed: scratch/setupfail [setup failed]",
			"failed: scratch/broken [build failed]",
			"failed: scratch/exits (no failing test found: see its output above)",
			"failed: scratch/failing TestLogsAroundError",
			"failed: scratch/gopanic TestSpawn (panic)",
			"failed: scratch/hangs TestHang (timed out after 5s)",
			"failed: scratch/panics TestPanics (panic)",
			"failed: scratch/racy TestRace (data race)",
			"failed: scratch/subtests TestTable/open",
			"failed: scratch/subtests TestTable/speed",
			"failed: scratch/subtests TestNested/outer/inner",
			"failed: scratch/vetfail [build failed]",
		},
		last: "9 packages passed, 10 failed; 8 tests failed",
	}, {
		file:   "onefail.txt",
		want:   []string{"FAIL scratch/failing TestLogsAroundError", "    failing_test.go:17: foundation count: got 4, want 3", "    … 28 more lines in onefail.txt"},
		not:    []string{"FAIL scratch/failing TestPasses"},
		failed: []string{"failed: scratch/failing TestLogsAroundError"},
		last:   "2 packages passed, 1 failed; 1 test failed",
	}, {
		file: "panic.txt",
		want: []string{
			"FAIL scratch/panics TestPanics (panic)",
			"    panics_test.go:9: about to deal",
			"PANIC scratch/panics TestPanics",
			"    panic: assignment to entry in nil map [recovered, repanicked]",
			"    scratch/panics.deal(...)",
			"PANIC scratch/gopanic TestSpawn (found in its stack)",
			"    created by scratch/gopanic.TestSpawn in goroutine 20",
		},
		failed: []string{"failed: scratch/panics TestPanics (panic)", "failed: scratch/gopanic TestSpawn (panic)"},
		last:   "1 package passed, 2 failed; 2 tests failed",
	}, {
		file: "race.txt",
		want: []string{
			"FAIL scratch/racy TestRace (data race)",
			"    testing.go:1712: race detected during execution of test",
			"RACE scratch/racy TestRace",
			"      scratch/racy.add()",
		},
		not:    []string{"FAIL scratch/racy TestFine"},
		failed: []string{"failed: scratch/racy TestRace (data race)"},
		last:   "1 package passed, 1 failed; 1 test failed",
	}, {
		file:   "timeout.txt",
		want:   []string{"TIMEOUT scratch/hangs: test timed out after 5s; running: TestHang (5s)", "    scratch/hangs.TestHang("},
		failed: []string{"failed: scratch/hangs TestHang (timed out after 5s)"},
		last:   "1 package passed, 1 failed; 1 test failed",
	}, {
		file: "timeout_parallel.txt",
		want: []string{
			"TIMEOUT scratch2/hangpar: test timed out after 5s; running: TestPar1 (5s), TestPar2 (5s)",
			"    scratch2/hangpar.TestPar1(",
			"    scratch2/hangpar.lockTwice()",
			"    scratch2/hangpar.TestPar2(",
			"TIMEOUT scratch2/hangsub: test timed out after 5s; running: TestParent/child (5s)",
			"    scratch2/hangsub.TestParent.func1(",
		},
		failed: []string{
			"failed: scratch2/hangpar TestPar1 (timed out after 5s)",
			"failed: scratch2/hangpar TestPar2 (timed out after 5s)",
			"failed: scratch2/hangsub TestParent/child (timed out after 5s)",
		},
		last: "0 packages passed, 2 failed; 3 tests failed",
	}, {
		file: "subtests.txt",
		want: []string{
			"FAIL scratch/subtests TestTable/speed",
			"    subtests_test.go:12: speed: score got 5, want 7",
			"        board:",
			"          4 5 6",
		},
		not: []string{"FAIL scratch/subtests TestTable"},
		failed: []string{
			"failed: scratch/subtests TestTable/open",
			"failed: scratch/subtests TestTable/speed",
			"failed: scratch/subtests TestNested/outer/inner",
		},
		last: "0 packages passed, 1 failed; 3 tests failed",
	}, {
		file: "build.txt",
		want: []string{"BUILD scratch/broken", "VET scratch/vetfail", "SETUP scratch/setupfail",
			"    broken/broken.go:5:9: cannot use s (variable of type string) as int value in return statement"},
		failed: []string{
			"failed: scratch/setupfail [setup failed]",
			"failed: scratch/broken [build failed]",
			"failed: scratch/vetfail [build failed]",
		},
		last: "1 package passed, 3 failed; 0 tests failed",
	}, {
		file:   "exits.txt",
		want:   []string{"FAIL scratch/exits (no failing test, panic, race or build error found in its output)", "    setup: cannot reach the test database"},
		failed: []string{"failed: scratch/exits (no failing test found: see its output above)"},
		last:   "1 package passed, 1 failed; 0 tests failed",
	}} {
		t.Run(strings.TrimSuffix(tc.file, ".txt"), func(t *testing.T) {
			lines := summarize(t, tc.file)
			text := strings.Join(lines, "\n")
			for _, w := range tc.want {
				if !hasPrefixLine(lines, w) {
					t.Errorf("no line starting with %q in the summary:\n%s", w, text)
				}
			}
			for _, n := range tc.not {
				for _, l := range lines {
					if l == n {
						t.Errorf("line %q in the summary:\n%s", n, text)
					}
				}
			}
			var failed []string
			for _, l := range lines {
				if strings.HasPrefix(l, "failed: ") {
					failed = append(failed, l)
				}
			}
			if strings.Join(failed, "\n") != strings.Join(tc.failed, "\n") {
				t.Errorf("failed lines:\n%s\nwant:\n%s", strings.Join(failed, "\n"), strings.Join(tc.failed, "\n"))
			}
			// The list and the counts are the very last lines.
			tail := lines[len(lines)-len(tc.failed)-1:]
			if got := tail[len(tail)-1]; got != tc.last {
				t.Errorf("last line %q, want %q", got, tc.last)
			}
			if strings.Join(tail[:len(tail)-1], "\n") != strings.Join(tc.failed, "\n") {
				t.Errorf("the failed lines are not just before the last line:\n%s", text)
			}
			if len(lines) > 150 {
				t.Errorf("%d lines of summary", len(lines))
			}
		})
	}
}

func hasPrefixLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// With one failing test, its name and its message are in the last 40
// lines even though it logged 30 lines after its error.
func TestOneFailureNearTheEnd(t *testing.T) {
	lines := summarize(t, "onefail.txt")
	last := lines[max(0, len(lines)-40):]
	for _, w := range []string{
		"FAIL scratch/failing TestLogsAroundError",
		"    failing_test.go:17: foundation count: got 4, want 3",
		"failed: scratch/failing TestLogsAroundError",
	} {
		if !hasPrefixLine(last, w) {
			t.Errorf("%q not in the last 40 lines:\n%s", w, strings.Join(last, "\n"))
		}
	}
}

// A test that logs many lines before its error and after it: the error is
// quoted, and the test's quote stays short.
func TestErrorAmidLogs(t *testing.T) {
	var log strings.Builder
	log.WriteString("--- FAIL: TestLong (3.00s)\n")
	for i := range 60 {
		log.WriteString("    long_test.go:20: step " + strings.Repeat("x", i%7) + " done\n")
	}
	log.WriteString("    long_test.go:31: board after the race: want 52 cards home,\n")
	log.WriteString("        got 51\n")
	for range 60 {
		log.WriteString("    long_test.go:40: cleanup: stopping a server\n")
	}
	log.WriteString("FAIL\nFAIL\tsirtommy/web\t3.100s\nok  \tsirtommy/engine\t1.000s\nFAIL\n")
	lines := summarizeReader(t, strings.NewReader(log.String()), "test.log")
	text := strings.Join(lines, "\n")
	last := lines[max(0, len(lines)-40):]
	for _, w := range []string{
		"FAIL sirtommy/web TestLong",
		"    long_test.go:31: board after the race: want 52 cards home,",
		"        got 51",
		"    … 113 more lines in test.log",
		"failed: sirtommy/web TestLong",
		"1 package passed, 1 failed; 1 test failed",
	} {
		if !hasPrefixLine(last, w) {
			t.Errorf("%q not in the last 40 lines:\n%s", w, text)
		}
	}
	if len(lines) > 20 {
		t.Errorf("%d lines:\n%s", len(lines), text)
	}
}

func TestGreenRun(t *testing.T) {
	lines := summarize(t, "green.txt")
	want := []string{
		"slowest packages:",
		"      1.917s  scratch/green/g6",
		"      1.765s  scratch/green/g5",
		"      1.616s  scratch/green/g4",
		"      1.464s  scratch/green/g3",
		"      1.319s  scratch/green/g2",
		"8 packages passed, 0 failed; 0 tests failed",
	}
	if len(lines) < len(want) {
		t.Fatalf("summary:\n%s", strings.Join(lines, "\n"))
	}
	got := lines[len(lines)-len(want):]
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("last lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "failed:") {
			t.Errorf("green summary has %q", l)
		}
	}
}

func TestLongLinesAreCut(t *testing.T) {
	long := strings.Repeat("é", 5000)
	log := "--- FAIL: TestWide (0.00s)\n    wide_test.go:9: " + long + "\nFAIL\nFAIL\tsirtommy/x\t0.1s\n"
	lines := summarizeReader(t, strings.NewReader(log), "test.log")
	found := false
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 300+utf8.RuneCountInString(cutMark) {
			t.Errorf("a line of %d characters", n)
		}
		if strings.HasPrefix(l, "    wide_test.go:9: éé") {
			found = true
			if !strings.HasSuffix(l, cutMark) || !utf8.ValidString(l) {
				t.Errorf("cut line %q", l)
			}
		}
	}
	if !found {
		t.Errorf("the long line is not quoted:\n%s", strings.Join(lines, "\n"))
	}
}

func TestPick(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		max   int
		want  []string
		left  int
	}{{
		name:  "short enough",
		lines: []string{"a.go:1: one", "a.go:2: two"},
		max:   10,
		want:  []string{"a.go:1: one", "a.go:2: two"},
	}, {
		name:  "from the start",
		lines: []string{"a.go:1: l1", "a.go:1: l2", "a.go:1: l3", "a.go:1: l4", "a.go:1: l5"},
		max:   3,
		want:  []string{"a.go:1: l1", "a.go:1: l2", "a.go:1: l3"},
		left:  2,
	}, {
		name:  "the failure first, a gap marked",
		lines: []string{"a.go:1: l1", "a.go:1: l2", "a.go:1: l3", "a.go:1: l4", "a.go:2: got 3, want 4", "    more", "a.go:1: l5"},
		max:   5,
		want:  []string{"a.go:1: l1", "a.go:1: l2", "…", "a.go:2: got 3, want 4", "    more"},
		left:  3,
	}, {
		name:  "a file name is not a failure",
		lines: []string{"a.go:1: l1", "a.go:1: l2", "failing_test.go:1: l3", "a.go:1: l4"},
		max:   2,
		want:  []string{"a.go:1: l1", "a.go:1: l2"},
		left:  2,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, left := pick(tc.lines, tc.max)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") || left != tc.left {
				t.Errorf("pick = %q, %d; want %q, %d", got, left, tc.want, tc.left)
			}
		})
	}
}
