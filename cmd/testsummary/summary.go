package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Options says how much the summary quotes and how it names the log.
type Options struct {
	// Log names the whole output in "… N more lines in LOG"; empty, it
	// is "the full output".
	Log string
	// TestLines is the most lines quoted from one test's output.
	TestLines int
	// StackLines is the most lines quoted from a panic or a timeout.
	StackLines int
	// RaceLines is the most lines quoted from a data race's first access.
	RaceLines int
	// BuildLines is the most lines quoted from one package's build errors.
	BuildLines int
	// Width is the most characters of one line; a longer line is cut and
	// says so.
	Width int
	// MaxTests is the most failing tests quoted; the others are only
	// listed at the end.
	MaxTests int
	// MaxEach is the most panics, races, timeouts or build failures
	// quoted, each.
	MaxEach int
	// MaxListed is the most "failed:" lines at the end.
	MaxListed int
}

// DefaultOptions returns the limits the command uses, for a log named log
// ("" for one read from stdin).
func DefaultOptions(log string) Options {
	return Options{
		Log:        log,
		TestLines:  10,
		StackLines: 8,
		RaceLines:  12,
		BuildLines: 10,
		Width:      300,
		MaxTests:   10,
		MaxEach:    5,
		MaxListed:  50,
	}
}

// log returns what the summary calls the whole output.
func (s *summary) log() string {
	if s.o.Log == "" {
		return "the full output"
	}
	return s.o.Log
}

// cutMark ends a line that was cut to Options.Width.
const cutMark = " …[cut]"

// Write prints the summary of r to w: the failures in detail, then one
// "failed:" line per failure and, last, the counts. On a green run it
// prints the slowest packages and the counts.
func Write(w io.Writer, r *Report, o Options) error {
	bw := bufio.NewWriter(w)
	s := &summary{w: bw, r: r, o: o}
	s.write()
	return bw.Flush()
}

// summary writes one summary.
type summary struct {
	w *bufio.Writer
	r *Report
	o Options
}

// line writes l, the tabs of its indentation made four spaces each, cut
// to the width.
func (s *summary) line(l string) {
	i, width := 0, 0
	for ; i < len(l) && (l[i] == ' ' || l[i] == '\t'); i++ {
		if l[i] == '\t' {
			s.w.WriteString("    ")
			width += 4
		} else {
			s.w.WriteByte(' ')
			width++
		}
	}
	if s.o.Width > 0 {
		s.w.WriteString(cut(l[i:], max(s.o.Width-width, 40)))
	} else {
		s.w.WriteString(l[i:])
	}
	s.w.WriteByte('\n')
}

// quote writes lines indented under an entry's first line.
func (s *summary) quote(lines []string) {
	for _, l := range lines {
		s.line("    " + l)
	}
}

// more writes the line that says how many lines were left out, if any.
func (s *summary) more(n int) {
	if n > 0 {
		s.line(fmt.Sprintf("    … %d more %s in %s", n, plural(n, "line", "lines"), s.log()))
	}
}

// cut returns s cut to width characters, marked as cut when it was.
func cut(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	n := 0
	for i := range s {
		if n == width {
			return s[:i] + cutMark
		}
		n++
	}
	return s
}

// write writes the whole summary: the failures and their list on a red
// run, the slowest packages on a green one, and the counts.
func (s *summary) write() {
	r := s.r
	passed, failed := 0, 0
	for _, p := range r.Packages {
		if p.Passed {
			passed++
		} else {
			failed++
		}
	}
	list := s.failures()
	if s.o.Log == "" {
		s.line("==== test summary ====")
	} else {
		s.line(fmt.Sprintf("==== test summary (the whole output is in %s) ====", s.log()))
	}
	if failed == 0 {
		s.trailing()
		s.slowest()
	} else {
		s.tests()
		s.panics()
		s.races()
		s.timeouts()
		s.builds()
		s.unexplained()
		s.trailing()
		s.line("")
		for i, f := range list {
			if i == s.o.MaxListed {
				s.line(fmt.Sprintf("failed: … and %d more", len(list)-i))
				break
			}
			s.line("failed: " + f.text)
		}
	}
	tests := 0
	for _, f := range list {
		if f.test {
			tests++
		}
	}
	s.line(fmt.Sprintf("%d %s passed, %d failed; %d %s failed",
		passed, plural(passed, "package", "packages"), failed, tests, plural(tests, "test", "tests")))
}

// failure is one line of the list at the end.
type failure struct {
	text string
	test bool // it names a test, and counts as one
}

// shown reports whether a failed test is quoted and listed: a parent
// only when it has lines of its own, besides its failed subtests.
func shown(t TestFailure) bool {
	return t.FailedSubtests == 0 || len(t.Lines) > 0
}

// failures returns the list at the end, package by package in the order
// go test printed them.
func (s *summary) failures() []failure {
	r := s.r
	var list []failure
	seen := map[string]bool{}
	add := func(pkg, test, note string) {
		if test != "" {
			if seen[pkg+" "+test] {
				return
			}
			seen[pkg+" "+test] = true
		}
		text := pkg
		if test != "" {
			text += " " + test
		}
		if note != "" {
			text += " " + note
		}
		list = append(list, failure{text: text, test: test != ""})
	}
	for _, p := range r.Packages {
		if p.Passed {
			continue
		}
		n := len(list)
		for _, t := range r.Tests {
			if t.Package == p.Name && shown(t) {
				add(p.Name, t.Name, s.note(p.Name, t.Name))
			}
		}
		for _, pn := range r.Panics {
			if pn.Package == p.Name {
				if pn.Test == "" {
					add(p.Name, "", "(panic outside any test)")
				} else {
					add(p.Name, pn.Test, "(panic)")
				}
			}
		}
		for _, rc := range r.Races {
			if rc.Package == p.Name {
				if rc.Test == "" {
					add(p.Name, "", "(data race outside any test)")
				} else {
					add(p.Name, rc.Test, "(data race)")
				}
			}
		}
		for _, to := range r.Timeouts {
			if to.Package != p.Name {
				continue
			}
			note := "(timed out after " + to.After + ")"
			if len(to.Running) == 0 {
				add(p.Name, "", note)
			}
			for _, t := range to.Running {
				add(p.Name, t.Name, note)
			}
		}
		if p.Reason != "" {
			add(p.Name, "", "["+p.Reason+"]")
		}
		if len(list) == n {
			add(p.Name, "", "(no failing test found: see its output above)")
		}
	}
	return list
}

// note returns what the list says about a failed test besides its name:
// that it panicked or raced.
func (s *summary) note(pkg, test string) string {
	for _, pn := range s.r.Panics {
		if pn.Package == pkg && pn.Test == test {
			return "(panic)"
		}
	}
	for _, rc := range s.r.Races {
		if rc.Package == pkg && rc.Test == test {
			return "(data race)"
		}
	}
	return ""
}

// tests quotes the failed tests.
func (s *summary) tests() {
	n := 0
	for _, t := range s.r.Tests {
		if !shown(t) {
			continue
		}
		n++
		if n > s.o.MaxTests {
			continue
		}
		s.line("")
		head := "FAIL " + t.Package + " " + t.Name
		if t.FailedSubtests > 0 {
			head += fmt.Sprintf(" (and %d failed %s)", t.FailedSubtests, plural(t.FailedSubtests, "subtest", "subtests"))
		}
		if note := s.note(t.Package, t.Name); note != "" {
			head += " " + note
		}
		s.line(head)
		lines, left := pick(t.Lines, s.o.TestLines)
		s.quote(lines)
		s.more(left)
	}
	if n > s.o.MaxTests {
		s.line("")
		s.line(fmt.Sprintf("… %d more failed tests, listed below", n-s.o.MaxTests))
	}
}

// panics quotes the panics: the message and the first goroutine's stack
// from the frame that panicked.
func (s *summary) panics() {
	for i, pn := range s.r.Panics {
		if i == s.o.MaxEach {
			s.line("")
			s.line(fmt.Sprintf("… %d more panics in %s", len(s.r.Panics)-i, s.log()))
			break
		}
		s.line("")
		s.line(heading("PANIC", pn.Package, pn.Test, pn.TestFromStack))
		lines := panicLines(pn.Package, pn.Lines, s.o.StackLines)
		s.quote(lines)
		s.more(len(pn.Lines) - len(lines))
	}
}

// heading is the first line of a panic's or a race's quote: kind, the
// package, and the test it was in, if known (fromStack: found in the
// stack rather than named by the test's own lines).
func heading(kind, pkg, test string, fromStack bool) string {
	switch {
	case test == "":
		return kind + " " + pkg + " (outside any test)"
	case fromStack:
		return kind + " " + pkg + " " + test + " (found in its stack)"
	}
	return kind + " " + pkg + " " + test
}

// panicLines returns the start of a panic in package pkg: its message
// (three lines at most) and its first goroutine's stack without the
// frames above the one that panicked (the testing package's recovery,
// runtime.panic…) and below the test's function, max lines in all.
func panicLines(pkg string, lines []string, max int) []string {
	var out []string
	i := 0
	for ; i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "goroutine "); i++ {
		if len(out) < 3 {
			out = append(out, lines[i])
		}
	}
	g := firstGoroutine(lines[i:])
	if len(g) > 0 {
		out = append(out, g[0])
		frames := g[1:]
		top := 0
		for j := 0; j < len(frames); j += 2 {
			if strings.HasPrefix(frames[j], "panic(") {
				top = j + 2
			}
		}
		if top > 0 {
			for top < len(frames) && strings.HasPrefix(frames[top], "runtime.") {
				top += 2
			}
		}
		if top < len(frames) {
			frames = frames[top:]
			if at := testFrame(pkg, frames); at >= 0 && at+2 <= len(frames) {
				frames = frames[:at+2]
			}
			out = append(out, frames...)
		}
	}
	return out[:min(len(out), max)]
}

// races quotes the data races: the first access's frames and the start of
// the previous access.
func (s *summary) races() {
	for i, rc := range s.r.Races {
		if i == s.o.MaxEach {
			s.line("")
			s.line(fmt.Sprintf("… %d more data races in %s", len(s.r.Races)-i, s.log()))
			break
		}
		s.line("")
		s.line(heading("RACE", rc.Package, rc.Test, rc.TestFromStack))
		var lines []string
		first := section(rc.Lines, 0)
		lines = append(lines, first[:min(len(first), s.o.RaceLines)]...)
		if prev := section(rc.Lines, len(first)+1); len(prev) > 0 && strings.HasPrefix(prev[0], "Previous ") {
			lines = append(lines, prev[:min(len(prev), 3)]...)
		}
		s.quote(lines)
		s.more(len(rc.Lines) - len(lines))
	}
}

// section returns the lines from lines[i] to the next blank line.
func section(lines []string, i int) []string {
	if i >= len(lines) {
		return nil
	}
	end := i
	for end < len(lines) && lines[end] != "" {
		end++
	}
	return lines[i:end]
}

// timeouts quotes the timeouts: the tests that were running and where
// each was in its stack.
func (s *summary) timeouts() {
	for i, to := range s.r.Timeouts {
		if i == s.o.MaxEach {
			s.line("")
			s.line(fmt.Sprintf("… %d more timeouts in %s", len(s.r.Timeouts)-i, s.log()))
			break
		}
		s.line("")
		var running []string
		for _, t := range to.Running {
			running = append(running, t.Name+" ("+t.For+")")
		}
		head := "TIMEOUT " + to.Package + ": test timed out after " + to.After
		if len(running) > 0 {
			head += "; running: " + strings.Join(running, ", ")
		}
		s.line(head)
		shownLines := 0
		for j, t := range to.Running {
			if j == 3 {
				break
			}
			g := testGoroutine(to.Package, t.Name, to.Lines)
			lines := stackWindow(to.Package, g, s.o.StackLines)
			s.quote(lines)
			shownLines += len(lines)
		}
		s.more(len(to.Lines) - shownLines)
	}
}

// testGoroutine returns the stack of the goroutine that runs test name in
// a timeout's output, or nil. For a subtest, whose function is a closure
// of its top-level test's, it prefers a goroutine that is not a parent
// waiting in t.Run for its subtests.
func testGoroutine(pkg, name string, lines []string) []string {
	var found []string
	for _, g := range goroutines(lines) {
		if stackTest(pkg, g) != topLevel(name) {
			continue
		}
		at := testFrame(pkg, g)
		if !strings.Contains(name, "/") || at < 3 || !strings.HasPrefix(g[at-2], "testing.(*T).Run(") {
			return g
		}
		if found == nil {
			found = g
		}
	}
	return found
}

// testFrame returns the index of the first frame of a test function of
// package pkg in a goroutine's stack, or -1.
func testFrame(pkg string, g []string) int {
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(pkg) + `(?:_test)?\.(?:Test|Fuzz|Example)`)
	for i, l := range g {
		if re.MatchString(l) {
			return i
		}
	}
	return -1
}

// stackWindow returns at most max lines of a goroutine's stack: its first
// line and the frames down to the test's own function, the frames in
// between left out when there are too many.
func stackWindow(pkg string, g []string, max int) []string {
	at := testFrame(pkg, g)
	if at >= 0 && at+2 <= len(g) {
		g = g[:at+2]
	}
	if len(g) <= max {
		return g
	}
	if at < 0 || at+2 <= max {
		return g[:max]
	}
	// The goroutine's line and its top frame, then the frames that lead
	// to the test's function.
	out := slices.Clone(g[:3])
	out = append(out, "…")
	from := at + 2 - (max - len(out))
	return append(out, g[from:at+2]...)
}

// builds quotes the packages that did not build, with their errors.
func (s *summary) builds() {
	for i, b := range s.r.Builds {
		if i == s.o.MaxEach {
			s.line("")
			s.line(fmt.Sprintf("… %d more packages that did not build, in %s", len(s.r.Builds)-i, s.log()))
			break
		}
		s.line("")
		kind := "BUILD"
		if b.Vet {
			kind = "VET"
		}
		for _, p := range s.r.Packages {
			if p.Name == b.Package && p.Reason == "setup failed" {
				kind = "SETUP"
			}
		}
		s.line(kind + " " + b.Package)
		lines := b.Lines[:min(len(b.Lines), s.o.BuildLines)]
		s.quote(lines)
		s.more(len(b.Lines) - len(lines))
	}
}

// unexplained quotes the last lines of the failed packages in which no
// failed test, panic, race, timeout or build error was found.
func (s *summary) unexplained() {
	for _, p := range s.r.Packages {
		if p.Passed || p.Reason != "" || s.explained(p.Name) {
			continue
		}
		s.line("")
		s.line("FAIL " + p.Name + " (no failing test, panic, race or build error found in its output)")
		from := max(0, len(p.Output)-5)
		s.quote(p.Output[from:])
		if from > 0 {
			s.line(fmt.Sprintf("    … %d earlier %s in %s", from, plural(from, "line", "lines"), s.log()))
		}
	}
}

// explained reports whether some failure was found in package pkg.
func (s *summary) explained(pkg string) bool {
	r := s.r
	for _, t := range r.Tests {
		if t.Package == pkg {
			return true
		}
	}
	for _, p := range r.Panics {
		if p.Package == pkg {
			return true
		}
	}
	for _, rc := range r.Races {
		if rc.Package == pkg {
			return true
		}
	}
	for _, t := range r.Timeouts {
		if t.Package == pkg {
			return true
		}
	}
	for _, b := range r.Builds {
		if b.Package == pkg {
			return true
		}
	}
	return false
}

// trailing quotes the last lines after the last package result, such as
// the go command's own errors.
func (s *summary) trailing() {
	t := s.r.Trailing
	if len(t) == 0 {
		return
	}
	s.line("")
	s.line("OUTPUT after the last package result:")
	from := max(0, len(t)-10)
	s.quote(t[from:])
	if from > 0 {
		s.line(fmt.Sprintf("    … %d earlier %s in %s", from, plural(from, "line", "lines"), s.log()))
	}
}

// slowest lists the five slowest packages of a green run.
func (s *summary) slowest() {
	var timed []Package
	for _, p := range s.r.Packages {
		if p.Passed && p.Elapsed > 0 {
			timed = append(timed, p)
		}
	}
	sort.SliceStable(timed, func(i, j int) bool { return timed[i].Elapsed > timed[j].Elapsed })
	s.line("")
	if len(timed) == 0 {
		s.line("no package times (every result was cached, or no package ran)")
		return
	}
	s.line("slowest packages:")
	for _, p := range timed[:min(len(timed), 5)] {
		s.line(fmt.Sprintf("  %9.3fs  %s", p.Elapsed.Seconds(), p.Name))
	}
}

// plural returns one or many for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

var (
	// fileLine is the "file_test.go:12: " that starts a test's message.
	fileLine = regexp.MustCompile(`^\S+\.go:\d+: `)
	// strongWords mark a message that likely says what failed.
	strongWords = regexp.MustCompile(`(?i)\b(fail(s|ed|ure)?|want(ed)?|got|expected|unexpected|mismatch|differ(s|ent)?|panic(ked)?|timed out|timeout|race detected|not equal|should|must|missing|wrong|invalid|cannot|can't|could not|couldn't|unable)\b|!=`)
	// weakWords mark a message that may say what failed.
	weakWords = regexp.MustCompile(`(?i)\berr(or|ors)?\b`)
)

// pick chooses at most max lines of a test's output to quote, in their
// order: first the messages that look like failures ("got …, want …",
// "unexpected …", "error …"), then the lines from the start. Where lines
// are left out between two chosen ones, a "…" line stands for them (and
// counts in max). It returns the lines and how many were left out.
func pick(lines []string, max int) ([]string, int) {
	if len(lines) <= max {
		return lines, 0
	}
	// A message is a line without leading space and its continuation
	// lines.
	var starts []int
	for i, l := range lines {
		if i == 0 || !strings.HasPrefix(l, " ") {
			starts = append(starts, i)
		}
	}
	end := func(g int) int {
		if g+1 < len(starts) {
			return starts[g+1]
		}
		return len(lines)
	}
	matches := func(g int, re *regexp.Regexp) bool {
		for i := starts[g]; i < end(g) && i < starts[g]+3; i++ {
			if re.MatchString(fileLine.ReplaceAllString(lines[i], "")) {
				return true
			}
		}
		return false
	}
	var chosen []int // sorted
	cost := func(c []int) int {
		n := len(c)
		prev := -1
		for _, i := range c {
			if i > prev+1 {
				n++ // a "…" line
			}
			prev = i
		}
		return n
	}
	try := func(i int) bool {
		at, found := slices.BinarySearch(chosen, i)
		if found {
			return true
		}
		c := slices.Insert(slices.Clone(chosen), at, i)
		if cost(c) > max {
			return false
		}
		chosen = c
		return true
	}
	for g := range starts {
		if matches(g, strongWords) {
			try(starts[g])
		}
	}
	for g := range starts {
		if !matches(g, strongWords) && matches(g, weakWords) {
			try(starts[g])
		}
	}
	for g := range starts {
		if matches(g, strongWords) {
			for i := starts[g] + 1; i < end(g); i++ {
				if !try(i) {
					break
				}
			}
		}
	}
	for i := range lines {
		if cost(chosen) >= max {
			break
		}
		try(i)
	}
	var out []string
	prev := -1
	for _, i := range chosen {
		if i > prev+1 {
			out = append(out, "…")
		}
		out = append(out, lines[i])
		prev = i
	}
	return out, len(lines) - len(chosen)
}
