package web_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gorilla/websocket"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/web/coach"
)

// TestBrowserFindTheBetterMove: after a race on deal 3 that ann plays to
// stuck with the medium bot (her game lost by one move, as in
// TestBrowserWhereYouLostIt), the result page links to "find the better
// move" at her last winnable position. There, on a wide screen, the move
// she played (by clicks) is refused as losing too, a card put by keys on
// a foundation that does not take it is refused with the engine's reason,
// and the solver's move is accepted, with its winning line stepped by
// keys to the win. On a phone, in another practice of the same position
// opened from the replay, three wrong tries bring the answer, stepped
// with the buttons.
func TestBrowserFindTheBetterMove(t *testing.T) {
	srv := startLiveServerWith(t, liveOptions{limits: &playLimits})
	b := newBrowser(t)
	id, res := raceLostOnDeal3(t, srv)
	g := waitAnalysisOf(t, srv.url, id)
	if g.Verdict != "lost-at" {
		t.Fatalf("ann's verdict %q", g.Verdict)
	}
	n := g.LastWinnable
	rec, err := engine.ParseRecord(res.Games[0])
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := engine.Variant(rec.Variant)
	at := engine.New(rules, rec.Deal)
	for _, m := range rec.Moves[:n] {
		if err := at.ApplyRecorded(m); err != nil {
			t.Fatal(err)
		}
	}
	// Illegal tries by keys: the turned card (T selects it) put on each
	// foundation that does not take it (Shift+digit).
	var turned engine.Card
	var refusals []*engine.IllegalMoveError
	for _, m := range at.Moves() {
		if m.Kind == engine.Place && m.To.Kind == engine.Waste {
			turned = m.Card // only a turned card may go to a waste pile here
		}
	}
	for f := range 4 {
		g := at
		var ill *engine.IllegalMoveError
		if errors.As(g.Apply(engine.PlaceMove(turned, engine.F(f))), &ill) {
			refusals = append(refusals, ill)
		}
	}
	if len(refusals) < 2 {
		t.Fatalf("the turned card %s fits %d foundations: too few wrong tries by keys", turned, 4-len(refusals))
	}
	t.Logf("position %d: played %s, the solver's %s; the turned card %s", n, g.LosingMove, g.WinningMove, turned)

	// clickTry plays move by clicks: the card, then its pile.
	clickTry := func(p *page, move string) {
		t.Helper()
		card, pile, _ := strings.Cut(move, ">")
		p.clickCard(fmt.Sprintf(`[data-testid=practice-board] [data-src][data-card=%q]`, card))
		p.click(fmt.Sprintf(`[data-testid=practice-board] [data-pile=%q]`, pile))
	}
	// keyTry plays the turned card to foundation f+1 by keys.
	keyTry := func(p *page, f int) {
		t.Helper()
		p.do(chromedp.KeyEvent("t"))
		p.waitJS(fmt.Sprintf(`!!document.querySelector("[data-testid=practice-board] .card.selected[data-card='%s']")`, turned))
		p.do(chromedp.KeyEvent(strconv.Itoa(f+1), chromedp.KeyModifiers(chromedp.ModifierShift)))
	}
	// verdict waits for the n-th try's verdict and returns what it says.
	verdict := func(p *page, n int, want string) string {
		t.Helper()
		p.waitJS(fmt.Sprintf(`document.querySelectorAll("[data-testid=practice-tries] li").length === %d`, n))
		got := eval[string](p, `document.querySelector("[data-testid=practice-feedback]").dataset.verdict`)
		said := p.text("[data-testid=practice-feedback]")
		if got != want {
			t.Fatalf("try %d: %q (%s), want %s", n, got, said, want)
		}
		return said
	}
	stepToWin := func(p *page, next func()) {
		t.Helper()
		steps := eval[int](p, `Number(document.querySelector("[data-testid=line-pos]").textContent.match(/of (\d+)/)[1])`)
		for i := 1; i <= steps; i++ {
			next()
			p.waitJS(fmt.Sprintf(`document.querySelector("[data-testid=line-pos]").dataset.step === %q`, strconv.Itoa(i)))
		}
		if got := p.text("[data-testid=line-pos]"); !strings.Contains(got, "52 of 52 cards up · won") {
			t.Fatalf("after the line's %d moves: %q", steps, got)
		}
	}

	// The wide screen: from the result page's link.
	wide := b.newPage("ann", 1280, 800)
	wide.do(chromedp.Navigate(srv.url + "/?result=" + id))
	wide.waitJS(`(document.querySelector("[data-testid=coach]")||{dataset:{}}).dataset.state === "done"`)
	if n := eval[int](wide, `document.querySelectorAll("[data-action=practice]").length`); n != 1 {
		t.Fatalf("%d practice links on the result page, want ann's alone", n)
	}
	wide.click(`[data-action=practice][data-seat='0']`)
	wide.waitJS(`(document.querySelector("[data-testid=practice]")||{dataset:{}}).dataset.state === "trying"`)
	if got := wide.text("[data-testid=practice] header"); !strings.Contains(got, "after move "+strconv.Itoa(n)) || !strings.Contains(got, "lost the game: find one that keeps it winnable") {
		t.Fatalf("the practice says %q", got)
	}
	wide.screenshot("trying")
	clickTry(wide, g.LosingMove)
	if said := verdict(wide, 1, "lost"); !strings.Contains(said, "this loses too") {
		t.Fatalf("the move played: %q", said)
	}
	keyTry(wide, int(refusals[0].Move.To.Index))
	if said := verdict(wide, 2, "illegal"); !strings.Contains(said, refusals[0].Detail) {
		t.Fatalf("an illegal try: %q, want the engine's %q", said, refusals[0].Detail)
	}
	if left := eval[string](wide, `document.querySelector("[data-testid=practice-left]").dataset.left`); left != "1" {
		t.Fatalf("%s tries left after two wrong ones", left)
	}
	wide.screenshot("refused")
	clickTry(wide, g.WinningMove)
	if said := verdict(wide, 3, "winnable"); !strings.Contains(said, "well found") {
		t.Fatalf("the solver's move: %q", said)
	}
	wide.waitJS(`document.querySelector("[data-testid=practice]").dataset.state === "found" && !!document.querySelector("[data-testid=line-pos]")`)
	stepToWin(wide, func() { wide.do(chromedp.KeyEvent(kb.ArrowRight)) })
	wide.do(chromedp.KeyEvent(kb.ArrowLeft))
	wide.expectAccessible("the practice, found")
	wide.screenshot("found")
	wide.expectCleanConsole()

	// The phone: from the replay's link, three wrong tries, then the answer.
	phone := b.newPage("ann-phone", 360, 740)
	phone.do(chromedp.Navigate(srv.url + "/?replay=" + id))
	phone.waitJS(`(document.querySelector("[data-testid=coach]")||{dataset:{}}).dataset.state === "done"`)
	phone.click(`[data-action=practice][data-seat='0']`)
	phone.waitJS(`(document.querySelector("[data-testid=practice]")||{dataset:{}}).dataset.state === "trying"`)
	phone.screenshot("phone-trying")
	clickTry(phone, g.LosingMove)
	verdict(phone, 1, "lost")
	keyTry(phone, int(refusals[0].Move.To.Index))
	verdict(phone, 2, "illegal")
	keyTry(phone, int(refusals[1].Move.To.Index))
	verdict(phone, 3, "illegal")
	phone.waitJS(`document.querySelector("[data-testid=practice]").dataset.state === "answer" && !!document.querySelector("[data-testid=line-pos]")`)
	if got := phone.text(".line-bar"); !strings.Contains(got, "the answer is") {
		t.Fatalf("after three tries: %q", got)
	}
	if eval[bool](phone, `document.querySelector("[data-testid=practice-board]").classList.contains("interactive")`) {
		t.Fatal("the board takes moves once the answer is shown")
	}
	phone.screenshot("phone-answer")
	stepToWin(phone, func() { phone.click(`[data-action=line-next]`) })
	phone.click(`[data-action=line-prev]`)
	phone.waitJS(`document.querySelector("[data-testid=line-pos]").dataset.step !== ""`)
	phone.screenshot("phone-answer-stepped")
	phone.expectCleanConsole()
}

// waitAnalysisOf asks for race id's analysis until it is done and returns
// seat 0's game.
func waitAnalysisOf(t *testing.T, url, id string) *coach.Game {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		res, err := http.Get(url + "/api/races/" + id + "/analysis")
		if err != nil {
			t.Fatal(err)
		}
		var a analysisBody
		err = json.NewDecoder(res.Body).Decode(&a)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode == http.StatusOK {
			return a.Games[0]
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the analysis did not finish")
	return nil
}

// TestBrowserMyMistakes: ann's lobby race on deal 3 (an invite that names
// the deal) lost by one move; opening its practice from the result page
// keeps the position in her mistakes, finding the move marks it found,
// and her player page lists it with a link back to the practice. bob's
// practice of her game keeps nothing in his list.
func TestBrowserMyMistakes(t *testing.T) {
	srv := startLiveServerWith(t, liveOptions{limits: &playLimits})
	b := newBrowser(t)
	dial := func() *client {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.url, "http")+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		return &client{t: t, ws: ws}
	}
	a, bo := dial(), dial()
	ann, bob := a.hello("ann"), bo.hello("bob")
	a.send(map[string]any{"type": "invite", "deal": "3", "id": "i"})
	inv := decode[invited](t, a.untilType("invited"))
	bo.send(map[string]any{"type": "accept-invite", "code": inv.Code, "id": "a"})
	id := a.takeSeat().Race
	bo.takeSeat()
	a.untilState(race.Running)
	bo.untilState(race.Running)
	botMoves(a, 3, 200)
	bo.send(map[string]any{"type": "resign"})
	if a.result() == nil {
		t.Fatal("no result")
	}
	seat := a.seat
	var g *coach.Game
	for range 1200 { // the analysis, as the page waits for it
		if st, got := analysisOf(t, srv.url, id); st == http.StatusOK {
			g = got.Games[seat]
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if g == nil || g.Verdict != "lost-at" {
		t.Fatalf("ann's game: %+v", g)
	}

	// as opens a tab holding who's identity, as the lobby left it.
	as := func(name string, w welcome, wd, ht int64) *page {
		p := b.newPage(name, wd, ht)
		p.do(chromedp.Navigate(srv.url + "/?result=" + id)) // a page of the site, which says no hello
		eval[bool](p, fmt.Sprintf(`localStorage.setItem("sirtommy.player", JSON.stringify({player: %q, name: %q, token: %q})) || true`, w.Player, w.Name, w.Token))
		return p
	}
	// bob practises ann's game: nothing kept for him.
	bp := as("bob", bob, 1280, 800)
	bp.do(chromedp.Navigate(fmt.Sprintf("%s/?practice=%s&seat=%d", srv.url, id, seat)))
	bp.waitJS(`(document.querySelector("[data-testid=practice]")||{dataset:{}}).dataset.state === "trying"`)
	if !eval[bool](bp, `document.querySelector("[data-testid=practice-kept]").hidden`) {
		t.Fatal("bob's practice of ann's game says it is kept")
	}

	p := as("ann", ann, 1280, 800)
	p.do(chromedp.Navigate(srv.url + "/?result=" + id))
	p.waitJS(`(document.querySelector("[data-testid=coach]")||{dataset:{}}).dataset.state === "done"`)
	p.click(fmt.Sprintf(`[data-action=practice][data-seat='%d']`, seat))
	p.waitJS(`(document.querySelector("[data-testid=practice-kept]")||{dataset:{}}).dataset.state === "kept"`)
	card, pile, _ := strings.Cut(g.WinningMove, ">")
	p.clickCard(fmt.Sprintf(`[data-testid=practice-board] [data-src][data-card=%q]`, card))
	p.click(fmt.Sprintf(`[data-testid=practice-board] [data-pile=%q]`, pile))
	p.waitJS(`document.querySelector("[data-testid=practice-kept]").dataset.state === "solved"`)
	p.screenshot("practice-found")

	p.do(chromedp.Navigate(srv.url + "/?player=" + ann.Player))
	p.waitJS(`(document.querySelector("[data-testid=mistakes]")||{dataset:{}}).dataset.state === "done"`)
	rows := eval[[]string](p, `[...document.querySelectorAll("[data-testid=mistakes] li")].map((li) => li.dataset.race + "/" + li.dataset.seat + "/" + li.dataset.solved)`)
	if want := fmt.Sprintf("%s/%d/yes", id, seat); len(rows) != 1 || rows[0] != want {
		t.Fatalf("ann's mistakes %v, want %s", rows, want)
	}
	if said := p.text("[data-testid=mistakes] li"); !strings.Contains(said, fmt.Sprintf("after move %d", g.LastWinnable)) || !strings.Contains(said, "Found.") {
		t.Fatalf("ann's mistake says %q", said)
	}
	p.do(chromedp.ScrollIntoView(chromedp.CSS("#mistakes")))
	p.screenshot("mistakes")
	// No axe here: the player page's "Races" (an h3 under its h1) skips a
	// heading level, which is older than this section.
	phone := as("ann-phone", ann, 360, 740)
	phone.do(chromedp.Navigate(srv.url + "/?player=" + ann.Player + "#mistakes"))
	phone.waitJS(`(document.querySelector("[data-testid=mistakes]")||{dataset:{}}).dataset.state === "done"`)
	phone.screenshot("phone-mistakes")
	phone.click(`[data-testid=mistakes] [data-action=practice]`)
	phone.waitJS(`(document.querySelector("[data-testid=practice-kept]")||{dataset:{}}).dataset.state === "solved"`)

	bp.do(chromedp.Navigate(srv.url + "/?player=" + bob.Player))
	bp.waitJS(`(document.querySelector("[data-testid=mistakes]")||{dataset:{}}).dataset.state === "done"`)
	if n := eval[int](bp, `document.querySelectorAll("[data-testid=mistakes] li").length`); n != 0 {
		t.Fatalf("bob's list has %d mistakes", n)
	}
	for _, pg := range []*page{p, phone, bp} {
		pg.expectCleanConsole()
	}
}

// analysisOf is the status and body of race id's analysis.
func analysisOf(t *testing.T, url, id string) (int, analysisBody) {
	t.Helper()
	res, err := http.Get(url + "/api/races/" + id + "/analysis")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var a analysisBody
	if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, a
}
