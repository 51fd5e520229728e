// Command sirtommy is the Sir Tommy race service and its tools: serve (the
// default) runs the server; backup copies its SQLite data; deal, solve and
// odds work with the engine.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// usageError marks a bad command line: the process exits with code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef makes a usageError.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// env is what every subcommand gets from main: arguments after the
// subcommand's name, the environment lookup and the output streams.
type env struct {
	args   []string
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}

// subcommand is one of the binary's verbs.
type subcommand struct {
	summary string
	run     func(ctx context.Context, e env) error
}

func subcommands() map[string]subcommand {
	return map[string]subcommand{
		"deal":        {"print the order of a deal's cards", dealCommand},
		"solve":       {"say whether deals can be won, with a winning game or the best score", solveCommand},
		"cnf":         {"write a deal's SAT encoding in DIMACS CNF, to check the solver's proofs with any SAT solver", cnfCommand},
		"odds":        {"win rates over many deals, by the solver or a bot", oddsCommand},
		"grade":       {"grade deals easy, medium or hard by what the hard bot achieves on them", gradeCommand},
		"serve":       {"run the race server (the default command)", runServe},
		"loadtest":    {"drive a server with bot races and spectators over websockets; report latency", loadtestCommand},
		"echo":        {"run a bare websocket echo server, the load test's baseline", echoCommand},
		"healthcheck": {"exit 0 when a running server answers /healthz (for containers)", healthcheckCommand},
		"backup":      {"copy the SQLite data folder's database to a new file while the server runs (docs/storage.md)", backupCommand},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sirtommy:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run is the whole program; main only supplies the process's context,
// arguments, environment and streams, so tests can run it in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmds := subcommands()
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" || (len(args) > 0 && name == "serve" && (args[0] == "help")) {
		printUsage(stdout, cmds)
		return nil
	}
	cmd, ok := cmds[name]
	if !ok {
		printUsage(stderr, cmds)
		return usagef("unknown command %q", name)
	}
	err := cmd.run(ctx, env{args: args, getenv: getenv, stdout: stdout, stderr: stderr})
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

func printUsage(w io.Writer, cmds map[string]subcommand) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: sirtommy [command] [flags]   (the command defaults to serve)")
	fmt.Fprintln(w, "\ncommands:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nsirtommy COMMAND --help describes a command's flags.")
}
