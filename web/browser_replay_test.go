package web_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"sirtommy/engine"
)

// compareGames is JavaScript that replays each case's moves with the
// client's game.js and lists where its board differs from the engine's
// (the engine's full View, waste piles uncovered).
const compareGames = `(cases) => import("/js/game.js").then(({Game}) => {
  const norm = (v) => JSON.stringify({
    stock: v.stock, turned: v.turned, score: v.score, target: v.target, moves: v.moves, redealsLeft: v.redealsLeft,
    found: v.foundations.map((f) => [f.top || "", f.count, f.wants || "", f.step]),
    waste: v.waste.map((w) => w.cards),
  });
  const out = [];
  for (const c of cases) {
    const g = new Game(c.variant, c.deal);
    c.moves.forEach((m) => g.apply(m));
    const got = norm(g.view()), want = norm(c.view);
    if (got !== want) out.push(c.variant + " deal " + c.deal + " after " + c.moves.length + " moves:\n client " + got + "\n engine " + want);
  }
  return out;
})`

// replayCase is one game for compareGames.
type replayCase struct {
	Variant string          `json:"variant"`
	Deal    string          `json:"deal"`
	Moves   []string        `json:"moves"`
	View    json.RawMessage `json:"view"`
}

// TestBrowserReplayEngine: the client's replay of a game (game.js, which
// the replay page and the result chart use, since the API sends moves but
// no boards) ends on the engine's board, in every variant, for games of
// random legal moves that favour the foundations (and, in four-at-a-time,
// for the same games recorded without the move T, as before it existed).
func TestBrowserReplayEngine(t *testing.T) {
	var cases []replayCase
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rules := range engine.Variants() {
		for _, deal := range []uint64{1, 2, 18446744073709551615} {
			g := engine.New(rules, deal)
			var moves []string
			for len(moves) < 300 && g.Status() == engine.Playing {
				ms := g.Moves()
				m := ms[rng.IntN(len(ms))]
				for _, f := range ms {
					if f.To.Kind == engine.Foundation && rng.IntN(4) > 0 {
						m = f
						break
					}
				}
				if err := g.Apply(m); err != nil {
					t.Fatalf("%s deal %d: %v", rules.Name, deal, err)
				}
				moves = append(moves, m.String())
			}
			view, err := json.Marshal(g.Memory())
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, replayCase{Variant: rules.Name, Deal: fmt.Sprint(deal), Moves: moves, View: view})
			if rules.Turn > 1 {
				// A record from before the move T, which the engine's
				// Replay and the client read as the same game.
				var old []string
				for _, m := range moves {
					if m != engine.TurnMove.String() {
						old = append(old, m)
					}
				}
				cases = append(cases, replayCase{Variant: rules.Name, Deal: fmt.Sprint(deal), Moves: old, View: view})
			}
		}
	}
	arg, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}

	srv := startLiveServer(t)
	b := newBrowser(t)
	p := b.newPage("replayer", 1280, 900)
	p.do(chromedp.Navigate(srv.url + "/"))
	diffs, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](fmt.Sprintf("(%s)(%s)", compareGames, arg), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Errorf("the client's replay differs from the engine:\n%s", strings.Join(diffs, "\n"))
	}
	p.expectCleanConsole()
}

// TestBrowserChanceChart: chancechart.js on a sampled curve the engine
// computed (a medium game of 8 points at most): the chart has one dot a
// point at its move and percentage; at every move curveAt gives the
// nearest point at or before it; an analysis stored before the curve
// draws no chart.
func TestBrowserChanceChart(t *testing.T) {
	rules, _ := engine.Variant("classic")
	const deal = 2
	g := engine.New(rules, deal)
	bot := engine.NewBot(engine.Medium, deal)
	var moves []engine.Move
	for g.Status() == engine.Playing {
		v := g.Memory()
		m, ok := bot.Choose(&v, g.Moves())
		if !ok || g.Apply(m) != nil {
			break
		}
		moves = append(moves, m)
	}
	start := engine.New(rules, deal)
	a, err := engine.AnalyzeGame(&start, moves, engine.AnalyzeOptions{Solve: engine.SolveOptions{MaxNodes: 20_000, MaxConflicts: 1_000}, CurvePoints: 8})
	if err != nil || a.CurveEvery < 2 {
		t.Fatalf("a sampled curve: every %d, %v", a.CurveEvery, err)
	}
	var wantAt []int // the ply of curveAt at each position
	for ply := 0; ply <= a.Plies; ply++ {
		at := 0
		for _, c := range a.Curve {
			if c.Ply <= ply {
				at = c.Ply
			}
		}
		wantAt = append(wantAt, at)
	}
	arg, err := json.Marshal(map[string]any{"games": []any{a, map[string]any{"plies": 3}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := startLiveServer(t)
	b := newBrowser(t)
	p := b.newPage("charter", 1280, 900)
	p.do(chromedp.Navigate(srv.url + "/"))
	type got struct {
		Dots    []string `json:"dots"`
		At      []int    `json:"at"`
		Label   string   `json:"label"`
		NoCurve bool     `json:"noCurve"`
	}
	res, err := chromedp.Run(p.ctx, chromedp.Evaluate[got](fmt.Sprintf(`import("/js/chancechart.js").then((m) => {
  const a = %s;
  const fig = m.chanceChart(a, ["ann", "bob"]);
  const at = [];
  for (let p = 0; p <= a.games[0].plies; p++) at.push(m.curveAt(a.games[0], p).ply);
  return {
    dots: [...fig.querySelectorAll("circle[data-seat='0']")].map((c) => c.dataset.ply + ":" + c.dataset.percent),
    at, label: fig.querySelector("svg").getAttribute("aria-label"),
    noCurve: m.chanceChart({games: [{plies: 3}, {plies: 0}]}, ["ann", "bob"]) === null,
  };
})`, arg), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	var wantDots []string
	for _, c := range a.Curve {
		wantDots = append(wantDots, fmt.Sprintf("%d:%d", c.Ply, c.Percent))
	}
	if strings.Join(res.Dots, " ") != strings.Join(wantDots, " ") {
		t.Errorf("dots %v, want %v", res.Dots, wantDots)
	}
	if fmt.Sprint(res.At) != fmt.Sprint(wantAt) {
		t.Errorf("curveAt %v, want %v", res.At, wantAt)
	}
	if !strings.Contains(res.Label, "ann's chance") || strings.Contains(res.Label, "bob's chance") {
		t.Errorf("label %q: want ann's chance and nothing of bob's, who has no curve", res.Label)
	}
	if !res.NoCurve {
		t.Error("a chart drawn for an analysis without a curve")
	}
	t.Logf("%d moves, every %d: %s", a.Plies, a.CurveEvery, res.Label)
	p.expectCleanConsole()
}
