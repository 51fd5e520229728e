package main

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"sirtommy/engine"
)

func gradeCommand(ctx context.Context, e env) error {
	fs := newFlagSet(e, "grade", "grade --variant V --deals FIRST-LAST | grade --deal N [--variant V]\n\nGrades deals by what the hard bot (seeded with the deal number, as odds --bot hard\nplays) achieves on them without knowing the stock: easy when it wins, medium when it\nloses with "+strconv.Itoa(engine.GradeMediumScore)+" or more cards up, hard when with fewer. With --deals it prints\nthe grade file the server ships (engine/grades/VARIANT.txt); with --deal it prints\none deal's grade, the bot's game, and the grade shipped for it, if any.")
	variant := fs.String("variant", engine.DefaultVariant, "variant to grade")
	deals := fs.String("deals", "", "a range of deals, FIRST-LAST, to grade into a grade file")
	deal := fs.String("deal", "", "one deal to grade")
	workers := fs.Int("workers", runtime.NumCPU(), "deals graded at once")
	args, err := parseInterspersed(fs, e.args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usagef("grade: unexpected argument %q", args[0])
	}
	rules, err := engine.Variant(*variant)
	if err != nil {
		return usageError{err}
	}
	if (*deals == "") == (*deal == "") {
		return usagef("grade: give either --deals FIRST-LAST or --deal N")
	}
	if *workers <= 0 {
		return usagef("grade: --workers must be positive")
	}
	if *deal != "" {
		n, err := parseDeal(*deal)
		if err != nil {
			return err
		}
		g, game := engine.GradeDeal(rules, n)
		fmt.Fprintf(e.stdout, "%s deal %d: %s (the hard bot ends %s with %d cards up)\n", rules.Name, n, g, game.Status(), game.Score())
		if t, ok := engine.Graded(rules.Name); ok {
			if sg, ok := t.Grade(n); ok {
				fmt.Fprintf(e.stdout, "shipped grade: %s\n", sg)
			} else {
				fmt.Fprintf(e.stdout, "not among the shipped graded deals (%d-%d)\n", t.First, t.First+uint64(len(t.Grades))-1)
			}
		}
		return nil
	}
	lo, hi, ok := strings.Cut(*deals, "-")
	first, err1 := strconv.ParseUint(lo, 10, 64)
	last, err2 := strconv.ParseUint(hi, 10, 64)
	if !ok || err1 != nil || err2 != nil || last < first || last-first >= 1<<20 {
		return usagef("grade: --deals must be FIRST-LAST, at most 1048576 deals, not %q", *deals)
	}
	n := int(last - first + 1)
	t := &engine.GradeTable{Variant: rules.Name, First: first, Grades: make([]engine.Grade, n)}
	next := make(chan int)
	var wg sync.WaitGroup
	for range *workers {
		wg.Go(func() {
			for i := range next {
				t.Grades[i], _ = engine.GradeDeal(rules, first+uint64(i))
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("grade: stopped: %w", err)
	}
	_, err = fmt.Fprint(e.stdout, t.String())
	return err
}
