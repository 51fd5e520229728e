package web_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"sirtommy/engine"
)

// offScreenJS lists what of the race page lies outside the viewport: the
// top card of every waste pile, the stock, the turned card(s), the
// foundations, the clock, the phase (the status) and the opponent's
// progress. The game must be playable without scrolling.
const offScreenJS = `(() => {
  const W = innerWidth, H = innerHeight, out = [];
  const inside = (what, el) => {
    if (!el) { out.push(what + ": missing"); return; }
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) { out.push(what + ": not shown"); return; }
    if (r.left < -0.5 || r.top < -0.5 || r.right > W + 0.5 || r.bottom > H + 0.5)
      out.push(what + " at " + [r.left, r.top, r.right, r.bottom].map(Math.round).join(",") + " outside " + W + "x" + H);
  };
  for (const p of document.querySelectorAll(".me .pile.waste")) {
    const cards = p.querySelectorAll(".card");
    inside(p.dataset.pile + (cards.length ? " top card" : ""), cards.length ? cards[cards.length - 1] : p);
  }
  for (const f of document.querySelectorAll(".me .pile.foundation")) inside(f.dataset.pile, f);
  inside("stock", document.querySelector(".me .stock"));
  for (const c of document.querySelectorAll(".me .turned .card")) inside("turned " + c.dataset.card, c);
  inside("clock", document.querySelector("[data-testid=clock]"));
  inside("status", document.querySelector("[data-testid=phase]"));
  inside("opponent's progress", document.querySelector(".opponent .progress"));
  return out;
})()`

// longestPile is the number of cards on the own longest waste pile.
const longestPile = `Math.max(...[...document.querySelectorAll(".me .pile.waste")].map(p => p.querySelectorAll(".card").length))`

// checkOnScreen fails the test for each part of the game off the screen.
func checkOnScreen(t *testing.T, p *page, w, h int64) {
	t.Helper()
	p.do(chromedp.EmulateViewport(w, h))
	p.waitJS(fmt.Sprintf(`innerWidth === %d && innerHeight === %d && %s`, w, h, boardsFitted))
	if off := eval[[]string](p, offScreenJS); len(off) > 0 {
		t.Errorf("%s at %dx%d with a pile of %d:\n%s", p.name, w, h, eval[int](p, longestPile), strings.Join(off, "\n"))
	}
	if probs := eval[[]string](p, layoutProblems); len(probs) > 0 {
		t.Errorf("%s at %dx%d:\n%s", p.name, w, h, strings.Join(probs, "\n"))
	}
}

// pileUp plays p's turned cards, Aces to the foundations and everything
// else onto waste pile W1, until W1 holds n cards; touch drags with a
// finger instead of clicks.
func pileUp(t *testing.T, p *page, n int, touch bool) {
	t.Helper()
	for i := 0; eval[int](p, `document.querySelectorAll(".me [data-pile=W1] .card").length`) < n; i++ {
		if i > 60 {
			t.Fatalf("%s: W1 never reached %d cards", p.name, n)
		}
		c := p.turned()
		if c == "" {
			t.Fatalf("%s: the race ended while piling up", p.name)
		}
		pile := "W1"
		if c[0] == 'A' {
			pile = fmt.Sprintf("F%d", 1+eval[int](p, `document.querySelectorAll(".me .pile.foundation .card").length`))
		}
		if touch && i%4 == 0 {
			p.touchDrag(fmt.Sprintf(`.me [data-src][data-card=%q]`, c), fmt.Sprintf(`.me [data-pile=%s]`, pile))
		} else {
			p.clickMove(c, pile)
		}
		p.waitJS(fmt.Sprintf(`!!document.querySelector('.me [data-pile=%s] [data-card=%q]:not(.pending)')`, pile, c))
	}
}

// TestBrowserScreenFits: a real race, ann on a phone (360×740, then
// 390×844) and bob at 1280×800, each building one waste pile past a
// dozen cards (ann's to twenty, partly with a finger): every top card, the
// stock and turned card, the foundations, the clock, the status and the
// opponent's progress stay on the screen, with every fanned card's rank
// in sight; a notice does not move the board; the sealed deal shows from
// the start and is the server's. A spectator sees both boards and the
// result page checks the deal against the commitment the page kept.
func TestBrowserScreenFits(t *testing.T) {
	srv := startLiveServer(t)
	b := newBrowser(t)
	ann := b.newPage("ann", 360, 740)
	bob := b.newPage("bob", 1280, 800)
	carol := b.newPage("carol", 1280, 800)

	// The lobby, as a new player first sees it.
	carol.do(chromedp.Navigate(srv.url + "/"))
	carol.waitLobby()
	carol.screenshot("lobby-1280")
	carol.expectAccessible("the lobby")
	carol.expectSteady("the lobby")
	carol.do(chromedp.EmulateViewport(360, 740))
	carol.waitJS(`innerWidth === 360`)
	carol.do(chromedp.Reload())
	carol.waitLobby()
	carol.screenshot("lobby-360")
	carol.expectSteady("the lobby on a phone")
	carol.do(chromedp.EmulateViewport(1280, 800))

	id := srv.createRace(t, `{}`) // a secret deal, sealed by a commitment
	carol.do(chromedp.Navigate(srv.url + "/?watch=" + id))
	seatBoth(t, srv, id, ann, bob)
	info := srv.raceInfo(t, id)
	for _, p := range []*page{ann, bob} {
		p.waitJS(`!!document.querySelector("[data-testid=commitment]") && document.querySelector("[data-testid=commitment]").offsetParent !== null`)
		if got := eval[string](p, `document.querySelector("[data-testid=commitment]").dataset.value`); got != info.Commitment || got == "" {
			t.Errorf("%s's page shows the commitment %q; the race's is %q", p.name, got, info.Commitment)
		}
	}
	if got := eval[string](bob, `document.querySelector("[data-testid=race-title]").textContent`); got != "ann vs bob" {
		t.Errorf("bob's title %q, want ann vs bob", got)
	}

	// bob makes his first move (a race with none aborts), then both build.
	pileUp(t, bob, 12, false)
	pileUp(t, ann, 20, true)
	checkOnScreen(t, ann, 360, 740)
	ann.screenshot("race-360-late")
	ann.expectSteady("the race on a phone, mid-game")
	ann.do(chromedp.Reload())
	ann.waitRaceState("running")
	ann.waitJS(`document.querySelectorAll(".me [data-pile=W1] .card").length >= 20`)
	ann.expectSteady("the race on a phone, reloaded mid-game")
	checkOnScreen(t, ann, 390, 844)
	ann.screenshot("race-390-late")
	checkOnScreen(t, bob, 1280, 800)
	bob.screenshot("race-1280-late")
	bob.expectAccessible("the race, mid-game")
	bob.expectSteady("the race, mid-game")

	// Help opens where it can be seen.
	ann.do(chromedp.EmulateViewport(360, 740))
	ann.click(`[data-action=help]`)
	ann.waitJS(`!document.querySelector(".help").hidden`)
	if off := eval[bool](ann, `(() => { const r = document.querySelector(".help").getBoundingClientRect(); return r.top < 0 || r.bottom > innerHeight || r.left < 0 || r.right > innerWidth; })()`); off {
		t.Error("the key help opens off the screen")
	}
	ann.click(`[data-action=close-help]`)

	// A notice (the connection drops and comes back) leaves the board where it is.
	before := eval[[]float64](ann, `(() => { const r = document.querySelector(".me .board").getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	srv.socks.cut()
	ann.waitJS(`/Connection lost|Reconnected/.test(document.querySelector(".notices").textContent)`)
	after := eval[[]float64](ann, `(() => { const r = document.querySelector(".me .board").getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("a notice moved the board from %v to %v", before, after)
	}
	ann.waitJS(`document.querySelector(".notices").textContent.includes("Reconnected")`)
	bob.waitRaceState("running")

	carol.waitJS(`document.querySelectorAll(".seat0 .board [data-pile=W1] .card").length >= 20 && document.querySelectorAll(".seat1 .board [data-pile=W1] .card").length >= 12`)
	carol.waitJS(`!/Connection lost/.test(document.querySelector(".notices").textContent)`) // back after the cut
	carol.screenshot("spectate-1280")
	carol.expectAccessible("watching a race")
	carol.expectSteady("watching a race")

	ann.resign()
	bob.resign()
	for _, p := range []*page{ann, bob, carol} {
		p.waitJS(`!!document.querySelector("[data-testid=fair-verdict][data-ok]")`)
		if got := eval[string](p, `document.querySelector("[data-testid=fair-verdict]").dataset.ok`); got != "true" {
			t.Errorf("%s: the deal check says %q: %s", p.name, got, eval[string](p, `document.querySelector("[data-testid=fair-verdict]").textContent`))
		}
		if txt := eval[string](p, `document.body.innerText`); strings.Contains(txt, "NaN") || strings.Contains(txt, "undefined") {
			t.Errorf("%s's page shows %q", p.name, txt)
		}
	}
	ann.screenshot("result-360")
	// The result page as a visitor first opens it, on a phone.
	dave := b.newPage("dave", 412, 823)
	dave.do(chromedp.Navigate(srv.url + "/?result=" + id))
	dave.waitJS(`!!document.querySelector("[data-testid=fair-verdict][data-ok]") && !!document.querySelector("[data-testid=coach][data-state]")`)
	dave.screenshot("result-412-visitor")
	dave.expectSteady("the result page on a phone")
	bob.screenshot("result-1280")
	bob.expectAccessible("the race's result")
	bob.expectSteady("the race's result")
	for _, p := range []*page{ann, bob, carol} {
		p.expectCleanConsole()
	}
}

// TestBrowserDealCheckUsesTheStart: the client deals as the engine does
// (checkDealsMatchTheEngine); a move the server refuses is shown and then
// taken back with the reason; a server that rewrites its after-race
// record (another deal and salt, with a commitment that matches them) is
// caught: the result page checks against the commitment it received when
// the race began, not the record's own.
func TestBrowserDealCheckUsesTheStart(t *testing.T) {
	fake := func(body []byte) []byte {
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			return body
		}
		res, ok := m["result"].(map[string]any)
		if !ok || res["commitment"] == nil {
			return body
		}
		deal, salt := "4242", "00112233445566778899aabbccddeeff"
		sum := sha256.Sum256([]byte(deal + ":" + salt))
		res["deal"], res["salt"], res["commitment"] = deal, salt, hex.EncodeToString(sum[:])
		m["commitment"] = res["commitment"]
		out, _ := json.Marshal(m)
		return out
	}
	srv := startLiveServerWith(t, liveOptions{tamper: fake})
	id := srv.createRace(t, `{}`)
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 800)
	bob := b.newPage("bob", 1280, 800)
	seatBoth(t, srv, id, ann, bob)
	checkDealsMatchTheEngine(t, bob)
	ann.clickMove(ann.turned(), "W1")
	ann.waitJS(`!document.querySelector(".me .card.pending")`)

	// A move shows at once and is taken back, with the server's reason,
	// when refused: the socket here rewrites it into one the server refuses.
	eval[bool](ann, `(() => { const send = WebSocket.prototype.send; WebSocket.prototype.send = function (d) { const m = JSON.parse(d); if (m.type === "move") { m.move = m.move.replace(/>W\d/, ">W9"); d = JSON.stringify(m); WebSocket.prototype.send = send; } return send.call(this, d); }; return true; })()`)
	c := ann.turned()
	ann.clickMove(c, "W2")
	ann.waitJS(`document.querySelector("[data-testid=move-error]").textContent !== ""`)
	ann.waitJS(fmt.Sprintf(`!!document.querySelector('.me .turned [data-card=%q]:not(.pending)') && !document.querySelector('.me [data-pile=W2] [data-card=%q]')`, c, c))
	ann.clickMove(c, "W2")
	ann.waitJS(fmt.Sprintf(`!!document.querySelector('.me [data-pile=W2] [data-card=%q]:not(.pending)') && document.querySelector("[data-testid=move-error]").textContent === ""`, c))

	ann.resign()
	bob.resign()
	ann.waitJS(`!!document.querySelector("[data-testid=fair-verdict][data-ok]")`)
	if got := eval[string](ann, `document.querySelector("[data-testid=fair-verdict]").dataset.ok`); got != "false" {
		t.Errorf("the check of a rewritten record says %q: %s", got, eval[string](ann, `document.querySelector("[data-testid=fair-verdict]").textContent`))
	}
	// The cards ann was shown do not come in the fake deal's order either
	// (they would only by a 1 in 132,600 chance: three cards in place).
	ann.waitJS(`!!document.querySelector("[data-testid=shown-verdict][data-ok]")`)
	if got := eval[string](ann, `document.querySelector("[data-testid=shown-verdict]").dataset.ok`); got != "false" {
		t.Errorf("the cards' order check of a rewritten deal says %q", got)
	}
	ann.screenshot("tampered")
}

// checkDealsMatchTheEngine: the client's deal and layout (game.js, which
// checks the revealed deal and replays games) are the engine's, for
// several deal numbers in every variant with its own layout.
func checkDealsMatchTheEngine(t *testing.T, p *page) {
	t.Helper()
	for _, variant := range []string{"classic", "aces-out", "calculation", "puss-in-the-corner", "four-at-a-time"} {
		rules, err := engine.Variant(variant)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []uint64{1, 9, 7450, 18446744073709551615} {
			stock, starters := engine.Layout(rules, n)
			var want []string
			for _, c := range starters {
				if c != engine.NoCard {
					want = append(want, c.String())
				}
			}
			want = append(want, "|")
			for _, c := range stock {
				want = append(want, c.String())
			}
			got, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf(`import("/js/game.js").then(m => { const g = new m.Game(%q, "%d"); return [...g.found.filter(f => f.top).map(f => f.top), "|", ...g.stock].join(" "); })`, variant, n), chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatal(err)
			}
			if got != strings.Join(want, " ") {
				t.Errorf("%s deal %d:\nclient %s\nengine %s", variant, n, got, strings.Join(want, " "))
			}
		}
	}
}
