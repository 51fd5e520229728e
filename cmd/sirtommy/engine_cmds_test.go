package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"sirtommy/engine"
)

// runCLI runs the program in-process and returns its output and error.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, &out, &errOut)
	return out.String(), err
}

func TestDealPrintsTheOrder(t *testing.T) {
	out, err := runCLI(t, "deal", "1", "2")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two lines, got %q", out)
	}
	for i, n := range []uint64{1, 2} {
		order := engine.Deal(n)
		want := strings.Fields(lines[i])[1:]
		if got := strings.Fields(engine.FormatCards(order[:])); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("deal %d: printed %v, engine deals %v", n, want, got)
		}
	}
	out, err = runCLI(t, "deal", "5", "--variant", "puss-in-the-corner")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.SplitN(out, "\n", 2)[0], "K") {
		t.Errorf("puss-in-the-corner's stock holds a King: %q", out)
	}
}

// TestSolveBySAT: a deal the search leaves unknown within its budget is
// decided by the SAT encoding, and its game replays to a win.
func TestSolveBySAT(t *testing.T) {
	out, err := runCLI(t, "solve", "143", "--max-nodes", "5000", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Result    string `json:"result"`
		SAT       bool   `json:"sat"`
		Conflicts int64  `json:"conflicts"`
		Game      string `json:"game"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Result != "won" || !got.SAT || got.Conflicts <= 0 {
		t.Fatalf("got %+v, want won by the SAT encoding", got)
	}
	rec, err := engine.ParseRecord(got.Game)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := rec.Replay(); err != nil || g.Status() != engine.Won {
		t.Fatalf("the game does not replay to a win: %v", err)
	}
	out, err = runCLI(t, "solve", "143", "--max-nodes", "5000", "--search-only")
	if err != nil || !strings.Contains(out, "unknown") {
		t.Fatalf("--search-only: %q, %v", out, err)
	}
}

func TestSolveJSONReplays(t *testing.T) {
	out, err := runCLI(t, "solve", "3", "8", "--json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	for n := 0; dec.More(); n++ {
		var got struct {
			Deal      uint64 `json:"deal"`
			Result    string `json:"result"`
			BestScore int    `json:"bestScore"`
			Game      string `json:"game"`
		}
		if err := dec.Decode(&got); err != nil {
			t.Fatal(err)
		}
		rec, err := engine.ParseRecord(got.Game)
		if err != nil {
			t.Fatalf("deal %d: %v", got.Deal, err)
		}
		g, err := rec.Replay()
		if err != nil {
			t.Fatalf("deal %d: %v", got.Deal, err)
		}
		if got.Result == "won" && g.Status() != engine.Won {
			t.Errorf("deal %d: said won, the game ends %s", got.Deal, g.Status())
		}
		if g.Score() != got.BestScore {
			t.Errorf("deal %d: best score %d, the game ends with %d", got.Deal, got.BestScore, g.Score())
		}
	}
}

func TestOddsWithABot(t *testing.T) {
	out, err := runCLI(t, "odds", "--deals", "40", "--start", "100", "--bot", "medium", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep oddsReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Deals != 40 || rep.Won+rep.Lost+rep.Unknown != 40 || rep.Unknown != 0 || rep.Player != "bot:medium" {
		t.Fatalf("report does not add up: %+v", rep)
	}
	if rep.Lower95 > rep.WinRate || rep.Upper95 < rep.WinRate {
		t.Errorf("interval %.3f..%.3f does not hold the rate %.3f", rep.Lower95, rep.Upper95, rep.WinRate)
	}
}

func TestWilsonInterval(t *testing.T) {
	// Reference values of the Wilson score interval at 95%.
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{1, 10, 0.01788, 0.40416},
		{0, 10, 0, 0.27753},
		{50, 100, 0.40383, 0.59617},
	} {
		lo, hi := wilson(c.k, c.n)
		if math.Abs(lo-c.lo) > 1e-4 || math.Abs(hi-c.hi) > 1e-4 {
			t.Errorf("wilson(%d, %d) = %.5f..%.5f, want %.5f..%.5f", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

// cnf writes a DIMACS formula whose header counts its clauses, and says
// what it asks.
func TestCNFCommand(t *testing.T) {
	out, err := runCLI(t, "cnf", "7450", "--at-least", "50")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "at least 50 cards") {
		t.Fatalf("%.200q", out)
	}
	var vars, clauses int
	if _, err := fmt.Sscanf(lines[1], "p cnf %d %d", &vars, &clauses); err != nil || vars == 0 || clauses != len(lines)-2 {
		t.Fatalf("header %q for %d clause lines (%v)", lines[1], len(lines)-2, err)
	}
	for _, l := range lines[2:] {
		if !strings.HasSuffix(l, " 0") {
			t.Fatalf("clause %q does not end with 0", l)
		}
	}
}

func TestBadCommandLines(t *testing.T) {
	for _, args := range [][]string{
		{"deal"},
		{"deal", "x"},
		{"deal", "-1"},
		{"deal", "1", "--variant", "bogus"},
		{"solve", "1", "--variant", "bogus"},
		{"solve", "18446744073709551616"},
		{"odds", "--deals", "0"},
		{"odds", "--bot", "genius"},
		{"grade"},
		{"grade", "--deals", "5-1"},
		{"grade", "--deal", "x"},
		{"grade", "--deal", "1", "--deals", "1-2"},
		{"cnf"},
		{"cnf", "1", "2"},
		{"cnf", "1", "--at-least", "53"},
		{"cnf", "1", "--variant", "in-suit"},
		{"nonsense"},
		{"backup"},
		{"backup", "--to", "x", "extra"},
	} {
		_, err := runCLI(t, args...)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("%v: want a usage error (exit 2), got %v", args, err)
		}
	}
	for _, cmd := range []string{"deal", "solve", "odds", "grade", "cnf", "backup"} {
		out, err := runCLI(t, cmd, "--help")
		if err != nil || strings.Count(out, "usage: sirtommy "+cmd) != 1 {
			t.Errorf("%s --help: want the usage once, got %v, %q", cmd, err, out)
		}
	}
}

// grade rebuilds the shipped grades: its file for deals 1-4 is the
// shipped file's first grades, and --deal says the same as the file.
func TestGradeRebuildsTheShippedGrades(t *testing.T) {
	shipped, ok := engine.Graded("classic")
	if !ok {
		t.Fatal("classic is not graded")
	}
	out, err := runCLI(t, "grade", "--variant", "classic", "--deals", "1-4")
	if err != nil {
		t.Fatal(err)
	}
	got, err := engine.ParseGradeTable(out)
	if err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	for i, g := range got.Grades {
		if want, _ := shipped.Grade(uint64(i + 1)); g != want {
			t.Errorf("deal %d: graded %v, shipped %v", i+1, g, want)
		}
	}
	want, _ := shipped.Grade(3)
	out, err = runCLI(t, "grade", "--deal", "3")
	if err != nil || !strings.Contains(out, "classic deal 3: "+want.String()) || !strings.Contains(out, "shipped grade: "+want.String()) {
		t.Errorf("grade --deal 3: %v, %q; want %v", err, out, want)
	}
}
