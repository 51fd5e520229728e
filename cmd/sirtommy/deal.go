package main

import (
	"context"
	"encoding/json"
	"fmt"

	"sirtommy/engine"
)

func dealCommand(_ context.Context, e env) error {
	fs := newFlagSet(e, "deal", "deal N... [--variant V]\n\nPrints the order of deal N's stock, top card (the first turned) first.")
	variant := fs.String("variant", engine.DefaultVariant, "variant whose deck is dealt (cards taken out before play are shown on their own line)")
	args, err := parseInterspersed(fs, e.args)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usagef("deal: give at least one deal number")
	}
	rules, err := engine.Variant(*variant)
	if err != nil {
		return usageError{err}
	}
	for _, a := range args {
		n, err := parseDeal(a)
		if err != nil {
			return err
		}
		if rules.Name == engine.DefaultVariant {
			order := engine.Deal(n)
			fmt.Fprintf(e.stdout, "%d: %s\n", n, engine.FormatCards(order[:]))
			continue
		}
		stock, starters := engine.Layout(rules, n)
		fmt.Fprintf(e.stdout, "%d (%s): stock %s\n", n, rules.Name, engine.FormatCards(stock))
		if starters != [4]engine.Card{} {
			fmt.Fprintf(e.stdout, "%d (%s): foundations %s\n", n, rules.Name, engine.FormatCards(starters[:]))
		}
	}
	return nil
}

func solveCommand(_ context.Context, e env) error {
	fs := newFlagSet(e, "solve", "solve N... [--variant V] [--json] [--max-nodes K] [--max-conflicts C] [--search-only]\n\nSays whether each deal can be won by a player who knows the stock order,\nwith a winning game, or the best score reachable when it cannot. A deal\nthe search does not settle within its budget goes to a SAT encoding, in\nevery variant but in-suit and redeal; in strategy that finds wins without\nwaste-to-waste moves but proves no loss.")
	variant := fs.String("variant", engine.DefaultVariant, "variant to solve")
	asJSON := fs.Bool("json", false, "one JSON object a line: deal, result, bestScore, scoreExact, nodes, sat, conflicts, game")
	maxNodes := fs.Int64("max-nodes", engine.DefaultMaxNodes, "positions searched per deal before the SAT encoding decides")
	searchOnly := fs.Bool("search-only", false, "answer unknown where the search runs out of positions, without the SAT encoding")
	maxConflicts := fs.Int64("max-conflicts", engine.DefaultMaxConflicts, "the SAT encoding's conflicts per deal before answering unknown (a lost deal's best score gets a quarter as many more)")
	args, err := parseInterspersed(fs, e.args)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usagef("solve: give at least one deal number")
	}
	rules, err := engine.Variant(*variant)
	if err != nil {
		return usageError{err}
	}
	deals := make([]uint64, len(args))
	for i, a := range args {
		if deals[i], err = parseDeal(a); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false) // moves are written 3H>F2
	for _, n := range deals {
		sol := engine.Solve(rules, n, engine.SolveOptions{MaxNodes: *maxNodes, SearchOnly: *searchOnly, MaxConflicts: *maxConflicts})
		line, err := engine.LineRecord(rules, n, sol.Line)
		if err != nil {
			return fmt.Errorf("solve %d: the solver's line does not replay: %w", n, err)
		}
		rec := line.String()
		if *asJSON {
			if err := enc.Encode(struct {
				Deal uint64 `json:"deal"`
				engine.Solution
				Game string `json:"game"`
			}{n, sol, rec}); err != nil {
				return err
			}
			continue
		}
		exact := ""
		if !sol.ScoreExact {
			exact = " (best found; the search stopped before it was sure)"
		}
		how := ""
		if sol.Conflicts > 0 {
			how = fmt.Sprintf(", then %d conflicts of the SAT encoding", sol.Conflicts)
		}
		fmt.Fprintf(e.stdout, "deal %d (%s): %s, best score %d%s, %d positions%s\n%s\n", n, rules.Name, sol.Outcome, sol.BestScore, exact, sol.Nodes, how, rec)
	}
	return nil
}
