package main

import (
	"bufio"
	"io"
	"regexp"
	"strings"
	"time"
)

// Report is what Parse found in the plain text output of `go test ./...`.
// Every failure names the package whose result line ended the block it was
// found in.
type Report struct {
	// Packages holds every package result line ("ok" and "FAIL"), in the
	// order go test printed them.
	Packages []Package
	// NoTestFiles names the packages printed as "?   pkg [no test files]".
	NoTestFiles []string
	// Tests holds every "--- FAIL" test, parents and subtests alike.
	Tests []TestFailure
	// Panics holds every panic and fatal error but the test timeouts.
	Panics []Panic
	// Races holds every "WARNING: DATA RACE" report.
	Races []Race
	// Timeouts holds every "panic: test timed out after …".
	Timeouts []Timeout
	// Builds holds every "# pkg" block of compiler, setup or vet errors.
	Builds []BuildFailure
	// Trailing holds the lines after the last package result line, such
	// as the go command's own errors, without the noise (a lone "FAIL",
	// "go: downloading …").
	Trailing []string
}

// Package is one package's result line.
type Package struct {
	// Name is the package's import path.
	Name string
	// Passed is true for an "ok" line, false for a "FAIL" line.
	Passed bool
	// Elapsed is the time printed on the line, 0 when none was (a cached
	// result, a build failure).
	Elapsed time.Duration
	// Cached is true for an "ok pkg (cached)" line.
	Cached bool
	// Reason is what a FAIL line says instead of a time: "build failed"
	// or "setup failed"; empty otherwise.
	Reason string
	// Output holds a failed package's lines at the left margin that are
	// part of no test's output, panic or race report (whatever the test
	// binary printed itself), without the noise.
	Output []string
}

// TestFailure is one "--- FAIL: TestX (0.01s)" block.
type TestFailure struct {
	// Package is the import path of the test's package.
	Package string
	// Name is the test's full name, "TestX" or "TestX/sub/case".
	Name string
	// Lines is the test's own output (its t.Error, t.Log … lines and
	// their continuation lines), without its subtests', indented relative
	// to the test: a message line has no leading space, its continuation
	// lines keep theirs.
	Lines []string
	// FailedSubtests counts the failed tests below this one.
	FailedSubtests int
}

// Panic is one "panic: …" or "fatal error: …" and what follows it.
type Panic struct {
	// Package is the import path of the package whose test binary
	// panicked.
	Package string
	// Test names the test that panicked, or is empty when not known.
	Test string
	// TestFromStack is true when Test was found in the stack rather than
	// in the "--- FAIL" line just before the panic.
	TestFromStack bool
	// Lines holds the panic message and the goroutine stacks, to the end
	// of the package's output.
	Lines []string
}

// Race is one data race report.
type Race struct {
	// Package is the import path of the package whose test binary found
	// the race.
	Package string
	// Test names the test during which it was found, or is empty.
	Test string
	// TestFromStack is true when Test was found in the race's stacks
	// rather than in a test's "race detected during execution of test".
	TestFromStack bool
	// Lines holds the report between its "==================" lines,
	// without the "WARNING: DATA RACE" line.
	Lines []string
}

// Timeout is one "panic: test timed out after …".
type Timeout struct {
	// Package is the import path of the package whose tests timed out.
	Package string
	// After is the timeout as printed, such as "10m0s".
	After string
	// Running holds the tests named under "running tests:", without
	// the parents of the others.
	Running []RunningTest
	// Lines holds the whole panic output, goroutine stacks included.
	Lines []string
}

// RunningTest is one test named under "running tests:" in a timeout.
type RunningTest struct {
	// Name is the test's full name.
	Name string
	// For is how long it had run, as printed.
	For string
}

// BuildFailure is one "# pkg" block of errors printed by the go command.
type BuildFailure struct {
	// Package is the import path named in the block's first line.
	Package string
	// Vet is true for the vet checks that go test runs ("# [pkg]").
	Vet bool
	// Lines holds the errors, as printed.
	Lines []string
}

var (
	okLine       = regexp.MustCompile(`^ok  \t(\S+)\t(\S+)`)
	failLine     = regexp.MustCompile(`^FAIL\t(\S+)(?:\t(\S+)| \[([a-z ]+)\])`)
	noTestsLine  = regexp.MustCompile(`^\?   \t(\S+)\t\[no test files\]`)
	testHeader   = regexp.MustCompile(`^( *)--- (FAIL|PASS|SKIP): (\S+) \(`)
	buildHeader  = regexp.MustCompile(`^# (\S+)(?: \[\S+\])?$`)
	compilerLine = regexp.MustCompile(`^(\S+\.\w+:\d+(:\d+)?: |# \[|too many errors|(\S*/)?(gcc|g\+\+|cc|cc1|clang|ld|collect2|cgo|vet|go|note|compile|link|asm): )`)
	timeoutLine  = regexp.MustCompile(`^panic: test timed out after (\S+)`)
	runningLine  = regexp.MustCompile(`^\t\t(\S+) \((.*)\)$`)
	exitStatus   = regexp.MustCompile(`^exit status \d+$`)
)

// maxLine is the longest line kept whole; the rest of a longer line is
// dropped while reading (the summary cuts lines far shorter anyway).
const maxLine = 64 << 10

// raceDetected is what the testing package says in a test during which
// the race detector found a race.
const raceDetected = "race detected during execution of test"

// Parse reads the plain text output of `go test` from r. It fails only
// when r does.
func Parse(r io.Reader) (*Report, error) {
	p := &parser{report: &Report{}}
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(line) < maxLine {
			line = append(line, chunk[:min(len(chunk), maxLine-len(line))]...)
		}
		if err == io.EOF {
			if len(line) > 0 {
				p.line(string(line))
			}
			break
		}
		if err != nil {
			return nil, err
		}
		if isPrefix {
			continue
		}
		p.line(string(line))
		line = line[:0]
	}
	p.finish()
	return p.report, nil
}

// parser holds what Parse has read but not yet placed.
type parser struct {
	report *Report
	// block holds the lines since the last package result line.
	block []string
	// build is the "# pkg" block being read, or nil, and buildHeader
	// its first line.
	build       *BuildFailure
	buildHeader string
}

// line places one line of the output: in the "# pkg" block being read,
// as a package's result (which places the lines before it), or in the
// lines waiting for one.
func (p *parser) line(s string) {
	s = strings.TrimSuffix(s, "\r")
	if p.build != nil {
		if compilerLine.MatchString(s) && !structural(s) ||
			strings.HasPrefix(s, "\t") && len(p.build.Lines) > 0 {
			if strings.HasPrefix(s, "# [") {
				p.build.Vet = true
			} else {
				p.build.Lines = append(p.build.Lines, s)
			}
			return
		}
		p.endBuild()
	}
	if m := buildHeader.FindStringSubmatch(s); m != nil {
		p.startBuild(m[1], s)
		return
	}
	if m := okLine.FindStringSubmatch(s); m != nil {
		pkg := Package{Name: m[1], Passed: true}
		if m[2] == "(cached)" {
			pkg.Cached = true
		} else if d, err := time.ParseDuration(m[2]); err == nil {
			pkg.Elapsed = d
		}
		p.report.Packages = append(p.report.Packages, pkg)
		p.block = p.block[:0]
		return
	}
	if m := failLine.FindStringSubmatch(s); m != nil {
		pkg := Package{Name: m[1], Reason: m[3]}
		if d, err := time.ParseDuration(m[2]); err == nil {
			pkg.Elapsed = d
		}
		p.report.Packages = append(p.report.Packages, pkg)
		p.analyze(&p.report.Packages[len(p.report.Packages)-1], p.block)
		p.block = p.block[:0]
		return
	}
	if m := noTestsLine.FindStringSubmatch(s); m != nil {
		p.report.NoTestFiles = append(p.report.NoTestFiles, m[1])
		p.block = p.block[:0]
		return
	}
	p.block = append(p.block, s)
}

// startBuild starts reading a "# pkg" block, or goes on with the one for
// the same package (the vet checks print "# pkg" and then "# [pkg]").
func (p *parser) startBuild(pkg, header string) {
	p.buildHeader = header
	for i := range p.report.Builds {
		if p.report.Builds[i].Package == pkg {
			p.build = &p.report.Builds[i]
			return
		}
	}
	p.report.Builds = append(p.report.Builds, BuildFailure{Package: pkg})
	p.build = &p.report.Builds[len(p.report.Builds)-1]
}

// endBuild ends the "# pkg" block being read. One that got no error line
// was no compiler's: its line goes back to the package output it was in
// (a test may print "# Title").
func (p *parser) endBuild() {
	b := p.build
	p.build = nil
	if len(b.Lines) > 0 || b.Vet {
		return
	}
	if last := len(p.report.Builds) - 1; &p.report.Builds[last] == b {
		p.report.Builds = p.report.Builds[:last]
	}
	p.block = append(p.block, p.buildHeader)
}

// finish keeps the lines after the last package result as Trailing.
func (p *parser) finish() {
	if p.build != nil {
		p.endBuild()
	}
	for _, s := range p.block {
		if !noise(s) {
			p.report.Trailing = append(p.report.Trailing, s)
		}
	}
	p.block = nil
}

// structural reports whether s is a line of go test's own structure, which
// no compiler error block goes on with.
func structural(s string) bool {
	return okLine.MatchString(s) || failLine.MatchString(s) || noTestsLine.MatchString(s) ||
		testHeader.MatchString(s) || s == "FAIL" || s == "PASS" ||
		strings.HasPrefix(s, "panic: ") || strings.HasPrefix(s, "fatal error: ") ||
		strings.HasPrefix(s, "==================") || strings.HasPrefix(s, "=== ") ||
		strings.HasPrefix(s, "    ")
}

// noise reports whether s is a line that says nothing about a failure.
func noise(s string) bool {
	return strings.TrimSpace(s) == "" || s == "FAIL" || s == "PASS" ||
		exitStatus.MatchString(s) || strings.HasPrefix(s, "go: downloading ") ||
		strings.HasPrefix(s, "=== ") || strings.HasPrefix(s, "testing: warning: no tests to run")
}

// analyze places the lines of a failed package's block: its tests'
// output, its panics, its races and the rest.
func (p *parser) analyze(pkg *Package, lines []string) {
	r := p.report
	firstTest := len(r.Tests)
	type open struct {
		indent int
		test   int // index in r.Tests, or -1 for a passed or skipped test
	}
	var stack []open
	// headerAt maps a test's index in r.Tests to its line in the block.
	headerAt := map[int]int{}
	// justFailed is the test whose "--- FAIL" line, with its own lines
	// only, came just before the current line, or -1.
	justFailed := -1
	var races []int // lines at which races were reported, by r.Races index
	for i := 0; i < len(lines); i++ {
		s := lines[i]
		if m := testHeader.FindStringSubmatch(s); m != nil {
			indent := len(m[1])
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
			o := open{indent: indent, test: -1}
			if m[2] == "FAIL" {
				o.test = len(r.Tests)
				headerAt[o.test] = i
				r.Tests = append(r.Tests, TestFailure{Package: pkg.Name, Name: m[3]})
				justFailed = o.test
			}
			stack = append(stack, o)
			continue
		}
		indent := len(s) - len(strings.TrimLeft(s, " "))
		if indent > 0 && len(stack) > 0 {
			for len(stack) > 1 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
			if top := stack[len(stack)-1]; top.indent < indent {
				if top.test >= 0 {
					cut := min(indent, top.indent+4)
					r.Tests[top.test].Lines = append(r.Tests[top.test].Lines, s[cut:])
				}
				continue
			}
		}
		stack = stack[:0]
		switch {
		case s == "==================" && i+1 < len(lines) && lines[i+1] == "WARNING: DATA RACE":
			end := i + 2
			for end < len(lines) && lines[end] != "==================" {
				end++
			}
			races = append(races, i)
			r.Races = append(r.Races, Race{Package: pkg.Name, Lines: append([]string(nil), lines[i+2:end]...)})
			i = end
			justFailed = -1
			continue
		case strings.HasPrefix(s, "panic: ") || strings.HasPrefix(s, "fatal error: "):
			rest := trimNoiseEnd(lines[i:])
			if m := timeoutLine.FindStringSubmatch(s); m != nil {
				r.Timeouts = append(r.Timeouts, Timeout{
					Package: pkg.Name, After: m[1],
					Running: runningTests(rest), Lines: rest,
				})
			} else {
				pn := Panic{Package: pkg.Name, Lines: rest}
				fromStack := stackTest(pkg.Name, firstGoroutine(rest))
				if justFailed >= 0 {
					pn.Test = r.Tests[justFailed].Name
				}
				if fromStack != "" && topLevel(pn.Test) != fromStack {
					pn.Test, pn.TestFromStack = fromStack, true
				}
				r.Panics = append(r.Panics, pn)
			}
			i = len(lines)
			continue
		}
		justFailed = -1
		if !noise(s) {
			pkg.Output = append(pkg.Output, s)
		}
	}

	tests := r.Tests[firstTest:]
	for i := range tests {
		for j := range tests {
			if strings.HasPrefix(tests[j].Name, tests[i].Name+"/") {
				tests[i].FailedSubtests++
			}
		}
	}
	for k, at := range races {
		race := &r.Races[len(r.Races)-len(races)+k]
		for t := range tests {
			if headerAt[firstTest+t] > at && hasLine(tests[t].Lines, raceDetected) {
				race.Test = tests[t].Name
				break
			}
		}
		if race.Test == "" {
			race.Test = stackTest(pkg.Name, race.Lines)
			race.TestFromStack = race.Test != ""
		}
	}
}

// trimNoiseEnd returns lines without the noise at their end (the lone
// "FAIL", "exit status 2").
func trimNoiseEnd(lines []string) []string {
	end := len(lines)
	for end > 0 && noise(lines[end-1]) {
		end--
	}
	return append([]string(nil), lines[:end]...)
}

// runningTests returns the tests a timeout panic names as running, without
// those that are only the parents of others.
func runningTests(lines []string) []RunningTest {
	var all []RunningTest
	for i := 1; i < len(lines); i++ {
		if i == 1 && strings.TrimSpace(lines[i]) == "running tests:" {
			continue
		}
		m := runningLine.FindStringSubmatch(lines[i])
		if m == nil {
			break
		}
		all = append(all, RunningTest{Name: m[1], For: m[2]})
	}
	var leaves []RunningTest
	for _, t := range all {
		parent := false
		for _, u := range all {
			if strings.HasPrefix(u.Name, t.Name+"/") {
				parent = true
				break
			}
		}
		if !parent {
			leaves = append(leaves, t)
		}
	}
	return leaves
}

// firstGoroutine returns the lines of the first goroutine's stack in a
// panic's output: from its "goroutine N [" line to the blank line after.
func firstGoroutine(lines []string) []string {
	for i, s := range lines {
		if strings.HasPrefix(s, "goroutine ") {
			end := i
			for end < len(lines) && lines[end] != "" {
				end++
			}
			return lines[i:end]
		}
	}
	return nil
}

// goroutines splits a panic's output into its goroutines' stacks.
func goroutines(lines []string) [][]string {
	var all [][]string
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "goroutine ") {
			continue
		}
		end := i
		for end < len(lines) && lines[end] != "" {
			end++
		}
		all = append(all, lines[i:end])
		i = end
	}
	return all
}

// stackTest returns the name of the first test function of package pkg
// found in the frames of a stack (its top-level name: a subtest runs in a
// closure of it), or "".
func stackTest(pkg string, frames []string) string {
	re := regexp.MustCompile(`^\s*(?:created by )?` + regexp.QuoteMeta(pkg) +
		`(?:_test)?\.((?:Test|Fuzz|Example)\w*)(?:[.( ]|$)`)
	for _, s := range frames {
		if m := re.FindStringSubmatch(s); m != nil {
			return m[1]
		}
	}
	return ""
}

// topLevel returns the top-level test of a test's full name.
func topLevel(name string) string {
	top, _, _ := strings.Cut(name, "/")
	return top
}

// hasLine reports whether one of lines contains s.
func hasLine(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
