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
