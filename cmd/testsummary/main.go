package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the command: it reads the log named by its one argument ("-" for
// stdin) and writes its summary to stdout. It returns the exit status: 0
// whatever the tests did, 2 when the log cannot be read or the summary
// written, or the arguments are wrong.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testsummary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: testsummary FILE  (or - for stdin)")
		fmt.Fprintln(stderr, "Summarizes the plain text output of `go test ./...` saved in FILE.")
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	name := fs.Arg(0)
	in, logName := stdin, ""
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(stderr, "testsummary:", err)
			return 2
		}
		defer f.Close()
		in, logName = f, name
	}
	report, err := Parse(in)
	if err != nil {
		fmt.Fprintln(stderr, "testsummary: reading", name+":", err)
		return 2
	}
	if err := Write(stdout, report, DefaultOptions(logName)); err != nil && !errors.Is(err, os.ErrClosed) {
		fmt.Fprintln(stderr, "testsummary: writing the summary:", err)
		return 2
	}
	return 0
}
