package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"sirtommy/race"
	"sirtommy/web/coach"
)

// raceLostOnDeal3 plays a race on deal 3 over websockets to its end:
// ann plays the easy bot's moves until her game is lost (deal 3 is
// winnable), bob resigns. It returns the race and its result.
func raceLostOnDeal3(t *testing.T, srv *liveServer) (string, *race.Result) {
	t.Helper()
	id := srv.createRace(t, `{"deal":"3"}`)
	var players [2]*client
	for i, name := range []string{"ann", "bob"} {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.url, "http")+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		c := &client{t: t, ws: ws}
		c.hello(name)
		c.join(id, name)
		players[i] = c
	}
	ann, bob := players[0], players[1]
	for _, c := range players {
		c.untilState(race.Running)
	}
	botMoves(ann, 3, 200)
	bob.send(map[string]any{"type": "resign"})
	res := ann.result()
	if res == nil || res.Deal != "3" {
		t.Fatalf("result %+v", res)
	}
	return id, res
}

// TestBrowserWhereYouLostIt: after a race on deal 3 that ann plays to
// stuck with the medium bot and bob resigns at once, the result page says
// where each game was lost and marks it on the chart, and its link opens
// the replay on ann's last winnable position, where stepping through the
// solver's line with real clicks ends with every card on the foundations.
func TestBrowserWhereYouLostIt(t *testing.T) {
	srv := startLiveServerWith(t, liveOptions{limits: &playLimits}) // the bot's moves come fast
	b := newBrowser(t)
	id, _ := raceLostOnDeal3(t, srv)

	p := b.newPage("ann", 1280, 900)
	p.do(chromedp.Navigate(srv.url + "/?result=" + id))
	p.waitJS(`(document.querySelector("[data-testid=coach]")||{dataset:{}}).dataset.state === "done"`)
	if v := eval[string](p, `document.querySelector("[data-testid=coach-0]").dataset.verdict`); v != "lost-at" {
		t.Fatalf("ann's verdict %q: %s", v, p.text("[data-testid=coach]"))
	}
	if v := eval[string](p, `document.querySelector("[data-testid=coach-1]").dataset.verdict`); v != "winnable-throughout" {
		t.Fatalf("bob's verdict %q", v)
	}
	said := p.text("[data-testid=coach-0]")
	if !strings.Contains(said, "lost it") || !strings.Contains(said, "would have kept it winnable") {
		t.Fatalf("ann's analysis says %q", said)
	}
	if n := eval[int](p, `document.querySelectorAll(".chart-svg [data-mark=lost][data-seat='0'], .chart-svg [data-mark=winnable][data-seat='0']").length`); n != 2 {
		t.Fatalf("%d marks on ann's line of the chart, want 2", n)
	}
	// Beside the verdict, the expert's chances without peeking: the
	// server's figures, in words.
	res, err := http.Get(srv.url + "/api/races/" + id + "/analysis")
	if err != nil {
		t.Fatal(err)
	}
	var analysis analysisBody
	err = json.NewDecoder(res.Body).Decode(&analysis)
	res.Body.Close()
	if err != nil || len(analysis.Games) != 2 || len(analysis.Games[0].Chances) == 0 {
		t.Fatalf("the analysis: %v %+v", err, analysis)
	}
	annGame := analysis.Games[0]
	chanceSaid := p.text("[data-testid=coach-chance-0]")
	for _, c := range annGame.Chances {
		where := fmt.Sprintf("%d%% after move %d", c.Percent, c.Ply)
		if c.Ply == 0 {
			where = fmt.Sprintf("%d%% from the start", c.Percent)
		}
		if !strings.Contains(chanceSaid, "With what ann could see, an expert") || !strings.Contains(chanceSaid, where) {
			t.Fatalf("ann's chances say %q, want %q", chanceSaid, where)
		}
	}
	checkChanceChart(t, p, annGame)
	p.screenshot("result")

	// The words for positions the solver could not settle say unknown,
	// never lost.
	for _, c := range []struct{ game, want string }{
		{`{verdict:"unknown",plies:70,lastWinnable:9,firstLost:37}`, "ann's game was winnable after move 9 and lost after move 37; in between, unknown"},
		{`{verdict:"unknown",plies:70,lastWinnable:12,firstLost:-1}`, "ann's game was winnable after move 12; after that, unknown"},
		{`{verdict:"unknown",plies:70,lastWinnable:-1,firstLost:-1}`, "ann's game is not known to be winnable anywhere; throughout, unknown"},
		{`{verdict:"winnable-throughout",plies:70,lastWinnable:70,firstLost:-1,status:"playing"}`, "could still be won at its end (after 70 moves), when time ran out"},
	} {
		got, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf(`import("/js/coach.js").then((m) => m.verdictText(%s, "ann", {reason: "time"}))`, c.game), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("verdict %s: %q, want %q", c.game, got, c.want)
		}
	}

	p.click(`[data-action=open-line][data-seat='0']`)
	p.waitJS(`!!document.querySelector("[data-testid=line-pos]")`)
	steps := eval[int](p, `Number(document.querySelector("[data-testid=line-pos]").textContent.match(/of (\d+)/)[1])`)
	if steps <= 0 {
		t.Fatal("an empty line")
	}
	start := eval[string](p, `document.querySelector("[data-testid=line-pos]").dataset.score`)
	for _, c := range annGame.Chances {
		if c.Ply != annGame.LastWinnable {
			continue
		}
		want := fmt.Sprintf("an expert wins %d%% from here", c.Percent)
		if got := p.text(".last-move"); !strings.Contains(got, want) {
			t.Fatalf("at the line's start the replay says %q, want %q", got, want)
		}
	}
	for i := 1; i <= steps; i++ {
		p.click(`[data-action=line-next]`)
		p.waitJS(fmt.Sprintf(`document.querySelector("[data-testid=line-pos]").dataset.step === %q`, strconv.Itoa(i)))
	}
	if got := p.text("[data-testid=line-pos]"); !strings.Contains(got, "52 of 52 cards up · won") {
		t.Fatalf("after the line's %d moves from %s cards: %q", steps, start, got)
	}
	if n := eval[int](p, `document.querySelectorAll(".seat0 .board [data-pile^=F] [data-card]").length`); n == 0 {
		t.Fatal("no foundation cards drawn on ann's board")
	}
	p.click(`[data-action=line-prev]`)
	p.waitJS(fmt.Sprintf(`document.querySelector("[data-testid=line-pos]").dataset.step === %q`, strconv.Itoa(steps-1)))
	p.click(`[data-action=line-exit]`)
	p.waitJS(`document.querySelector(".line-bar").hidden`)
	// The replay has the chart too, and beside its step each racer's
	// chance there: at the end, the curve's last points.
	checkChanceChart(t, p, annGame)
	p.click(`[aria-label="To the end"]`)
	bobGame := analysis.Games[1]
	want := fmt.Sprintf("ann %d%% · bob %d%%", annGame.Curve[len(annGame.Curve)-1].Percent, bobGame.Curve[len(bobGame.Curve)-1].Percent)
	p.waitJS(fmt.Sprintf(`document.querySelector("[data-testid=replay-chance]").textContent.includes(%q)`, want))
	p.click(`[aria-label="To the start"]`)
	want = fmt.Sprintf("ann %d%% · bob %d%%", annGame.Curve[0].Percent, bobGame.Curve[0].Percent)
	p.waitJS(fmt.Sprintf(`document.querySelector("[data-testid=replay-chance]").textContent.includes(%q)`, want))
	p.expectAccessible("the replay with its analysis")
	p.screenshot("replay")
	p.expectCleanConsole()
}

// checkChanceChart checks the page's chart of the expert's chance: one
// dot for each point of ann's curve, at its position and percentage, and
// a label that says where her chance fell most (the curve's largest drop).
func checkChanceChart(t *testing.T, p *page, g *coach.Game) {
	t.Helper()
	if len(g.Curve) == 0 {
		t.Fatal("no curve in ann's analysis")
	}
	dots := eval[[]string](p, `[...document.querySelectorAll("[data-testid=chance-chart] circle[data-seat='0']")].map((c) => c.dataset.ply + ":" + c.dataset.percent)`)
	var want []string
	for _, c := range g.Curve {
		want = append(want, fmt.Sprintf("%d:%d", c.Ply, c.Percent))
	}
	if strings.Join(dots, " ") != strings.Join(want, " ") {
		t.Fatalf("the chance chart's dots %v, want %v", dots, want)
	}
	drop, from, to := 0, 0, 0
	for i := 1; i < len(g.Curve); i++ {
		if d := g.Curve[i-1].Percent - g.Curve[i].Percent; d > drop {
			drop, from, to = d, g.Curve[i-1].Percent, g.Curve[i].Percent
		}
	}
	said := "ann's chance never fell"
	if drop > 0 {
		said = "ann's chance fell most"
	}
	label := eval[string](p, `document.querySelector("[data-testid=chance-chart] svg").getAttribute("aria-label")`)
	if !strings.Contains(label, said) || (drop > 0 && !strings.Contains(label, fmt.Sprintf("from %d%% to %d%%", from, to))) {
		t.Fatalf("the chance chart's label %q: want %q, a fall from %d%% to %d%%", label, said, from, to)
	}
	t.Logf("chance chart: %s", label)
}
