package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// newFlagSet makes a subcommand's flag set that reports errors instead of
// exiting, with a usage text naming the subcommand.
func newFlagSet(e env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.stdout, "usage: sirtommy %s\n\nflags:\n", synopsis)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseInterspersed parses flags that may stand before, between or after
// the positional arguments, as in "solve 1 2 --variant strict", and returns
// the positionals. On --help the flag package has printed the usage; it
// returns errHelp.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// errHelp ends a subcommand after it printed its usage; run returns nil.
var errHelp = errors.New("help shown")

// parseDeal reads a deal number: an unsigned 64-bit decimal.
func parseDeal(s string) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, usagef("deal %q is not a number from 0 to 18446744073709551615", s)
	}
	return n, nil
}

// printFlag writes one flag as the flag package's PrintDefaults does:
// "  -name type" and its usage indented below, with the default.
func printFlag(w io.Writer, f *flag.Flag) {
	kind, text := flag.UnquoteUsage(f)
	line := "  -" + f.Name
	if kind != "" {
		line += " " + kind
	}
	fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(text, "\n", "\n    \t"))
	switch {
	case f.DefValue == "" || f.DefValue == "0" || f.DefValue == "0s":
	case kind == "string":
		fmt.Fprintf(w, " (default %q)", f.DefValue)
	default:
		fmt.Fprintf(w, " (default %s)", f.DefValue)
	}
	fmt.Fprintln(w)
}
