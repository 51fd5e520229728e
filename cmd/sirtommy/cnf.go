package main

import (
	"context"

	"sirtommy/engine"
)

// cnfCommand writes a deal's SAT encoding in DIMACS CNF, so that the
// engine's proofs (a deal lost, a best score) can be checked with any SAT
// solver (docs/solver.md).
func cnfCommand(_ context.Context, e env) error {
	fs := newFlagSet(e, "cnf", "cnf N [--variant V] [--at-least K]\n\nWrites the SAT encoding of deal N in DIMACS CNF to standard output, for\nany SAT solver: satisfiable exactly when the deal can be won (with\n--at-least K: when some game ends with at least K cards on the\nfoundations). Not for in-suit and redeal, which the encoding does not\ncover; in strategy only a satisfiable answer tells.")
	variant := fs.String("variant", engine.DefaultVariant, "the deal's variant")
	atLeast := fs.Int("at-least", 0, "ask for a game with at least this many cards on the foundations instead of a win (0: a win)")
	args, err := parseInterspersed(fs, e.args)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("cnf: give one deal number")
	}
	rules, err := engine.Variant(*variant)
	if err != nil {
		return usageError{err}
	}
	n, err := parseDeal(args[0])
	if err != nil {
		return err
	}
	if *atLeast < 0 || *atLeast > rules.Deck() {
		return usagef("cnf: --at-least %d: want 0 (a win) to %d", *atLeast, rules.Deck())
	}
	g := engine.New(rules, n)
	if err := engine.WriteCNF(e.stdout, &g, *atLeast); err != nil {
		return usageError{err}
	}
	return nil
}
