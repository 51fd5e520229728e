package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"sirtommy/engine"
)

// layoutProblems is JavaScript that lists what is wrong with the boards'
// layout: piles overlapping each other, anything cut off at the sides or
// scrolling sideways, cards outside their pile, fanned waste cards whose
// corner is hidden by the card above, and JavaScript values (null,
// undefined, NaN) shown as text.
const layoutProblems = `(() => {
  const out = [];
  const W = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > W + 1) out.push("page scrolls sideways: " + document.documentElement.scrollWidth + " > " + W);
  const leak = document.body.innerText.match(/\bnull\b|\bundefined\b|\bNaN\b|\[object /);
  if (leak) out.push("the page shows a JavaScript value: " + leak[0]);
  const boards = [...document.querySelectorAll(".board")];
  if (!boards.length) out.push("no board");
  boards.forEach((b, bi) => {
    const piles = [...b.querySelectorAll("[data-pile]")].map(e => [e.dataset.pile, e.getBoundingClientRect()]);
    if (piles.length !== 10) out.push("board " + bi + " has " + piles.length + " piles");
    for (const [n, r] of piles) {
      if (r.left < -0.5 || r.right > W + 0.5) out.push("board " + bi + " " + n + " cut off: " + r.left + ".." + r.right + " of " + W);
      if (r.width < 20 || r.height < 20) out.push("board " + bi + " " + n + " too small: " + r.width + "x" + r.height);
    }
    for (let i = 0; i < piles.length; i++) for (let j = i + 1; j < piles.length; j++) {
      const [a, ra] = piles[i], [c, rc] = piles[j];
      const ox = Math.min(ra.right, rc.right) - Math.max(ra.left, rc.left);
      const oy = Math.min(ra.bottom, rc.bottom) - Math.max(ra.top, rc.top);
      if (ox > 0.5 && oy > 0.5) out.push("board " + bi + " " + a + " overlaps " + c);
    }
    for (const p of b.querySelectorAll(".pile")) {
      const pr = p.getBoundingClientRect();
      const cards = [...p.querySelectorAll(".card")];
      cards.forEach((c, k) => {
        const r = c.getBoundingClientRect();
        if (r.left < pr.left - 0.5 || r.right > pr.right + 0.5 || r.top < pr.top - 0.5 || r.bottom > pr.bottom + 0.5) out.push("board " + bi + " " + p.dataset.pile + ": card " + c.dataset.card + " outside its pile");
        const next = cards[k + 1];
        if (next && p.classList.contains("waste") && c.querySelector(".corner")) {
          const corner = c.querySelector(".corner").getBoundingClientRect();
          if (next.getBoundingClientRect().top < corner.bottom - 0.5) out.push("board " + bi + " " + p.dataset.pile + ": " + c.dataset.card + "'s corner is hidden");
        }
      });
    }
  });
  return out;
})()`

// extraBoards draws two more boards below the page from made-up views.
const extraBoards = `import("/js/board.js").then(({renderBoard}) => {
  const f = (top, count, wants) => ({top, count, wants, step: 1});
  const w = (cards, count) => ({cards, count: count ?? cards.length});
  const four = {variant: "four-at-a-time", stock: 20, turned: ["KH", "2C", "TD", "AS"],
    foundations: [f("KS", 13), f("9H", 9, "T"), f(undefined, 0, "A"), f("2D", 2, "3")],
    waste: [w(["QS","JD","TC","9S","8D","7C","6H","5S","4D","3C","QH","JH","TH"]), w(["4S"]), w([]), w(["5C","6C"])],
    redealsLeft: 0, status: "playing", score: 24, target: 52, moves: 30};
  const strict = {variant: "strict", stock: 30, turned: ["7D"],
    foundations: [f("3S", 3, "4"), f(undefined, 0, "A"), f(undefined, 0, "A"), f(undefined, 0, "A")],
    waste: [w(["9C"], 6), w(["KD"], 1), w([]), w(["QC"], 3)],
    redealsLeft: 0, status: "playing", score: 3, target: 52, moves: 13};
  // A spectator's view of cards not every racer still playing has turned.
  const hidden = {variant: "classic", stock: 40, turned: ["??"],
    foundations: [f("??", 1, "2"), f(undefined, 0, "A"), f(undefined, 0, "A"), f(undefined, 0, "A")],
    waste: [w(["9C", "??", "??"]), w(["??"]), w([]), w([])],
    redealsLeft: 0, status: "playing", score: 1, target: 52, moves: 6};
  const box = document.createElement("section");
  box.id = "extra-boards";
  box.className = "duel";
  for (const v of [four, strict, hidden]) {
    const seat = document.createElement("div");
    seat.className = "seat";
    const b = document.createElement("div");
    seat.append(b);
    box.append(seat);
    renderBoard(b, v, {interactive: true});
  }
  document.getElementById("app").append(box);
  return true;
})`

// boardsFitted is true once every board a page sizes to the screen has
// been sized for its present width (after a resize they are sized again).
const boardsFitted = `[...document.querySelectorAll(".board[data-fit-w]")].every(b => Number(b.dataset.fitW) === b.clientWidth)`

// checkLayout fails the test for each layout problem at width w.
func checkLayout(t *testing.T, p *page, w, h int64) {
	t.Helper()
	p.do(chromedp.EmulateViewport(w, h))
	p.waitJS(fmt.Sprintf(`document.documentElement.clientWidth === %d && %s`, w, boardsFitted))
	if probs := eval[[]string](p, layoutProblems); len(probs) > 0 {
		t.Errorf("%s at %d px:\n%s", p.name, w, strings.Join(probs, "\n"))
	}
}

// TestBrowserLayout: cards go to the waste piles by click and by drag and
// drop (mouse and touch); at 360 px and 1280 px, the race and spectate pages
// show every pile whole (and the lobby fits 360 px), none overlapping, with every fanned waste card's
// corner in sight. It also checks the client's deal shuffle against the
// engine's, which the replays rely on.
func TestBrowserLayout(t *testing.T) {
	srv := startLiveServer(t)
	id := srv.createRace(t, `{"deal":"`+deal9+`"}`)
	b := newBrowser(t)
	ann := b.newPage("ann", 360, 740)
	bob := b.newPage("bob", 1280, 900)
	carol := b.newPage("carol", 360, 740)
	// The lobby fits 360 px: nothing wider than the screen.
	carol.do(chromedp.Navigate(srv.url + "/"))
	carol.waitLobby()
	if w := eval[int](carol, `document.documentElement.scrollWidth`); w > 360 {
		t.Errorf("the lobby is %d px wide at 360 px", w)
	}
	carol.screenshot("lobby-360")
	carol.do(chromedp.Navigate(srv.url + "/?watch=" + id))
	ann.do(chromedp.Navigate(srv.url+"/?race="+id), chromedp.SendKeys(chromedp.CSS("#join-name"), "ann"))
	ann.click(`[data-action=join]`)
	ann.waitRaceState("waiting")
	ann.screenshot("waiting-360")
	seatBoth(t, srv, id, ann, bob)

	// Twelve cards on the waste piles, three on each, for ann and bob; ann
	// drags her first two with a finger, bob his first four with the mouse.
	for _, p := range []*page{ann, bob} {
		for i := range 12 {
			c := p.turned()
			if p == ann && i < 2 {
				p.touchDrag(fmt.Sprintf(`.me [data-src][data-card=%q]`, c), fmt.Sprintf(`.me [data-pile=W%d]`, i%4+1))
			} else if p == bob && i < 4 {
				p.do(chromedp.DragAndDrop(chromedp.CSS(fmt.Sprintf(`.me [data-src][data-card=%q]`, c)), chromedp.CSS(fmt.Sprintf(`.me [data-pile=W%d]`, i%4+1))))
			} else {
				p.clickMove(c, fmt.Sprintf("W%d", i%4+1))
			}
			p.waitJS(fmt.Sprintf(`!!document.querySelector('.me [data-pile=W%d] [data-card=%q]')`, i%4+1, c))
		}
	}
	carol.waitJS(`document.querySelectorAll(".board [data-pile^=W] .card").length === 24`)

	for _, w := range []int64{360, 1280} {
		for _, p := range []*page{ann, bob, carol} {
			checkLayout(t, p, w, 800)
		}
	}
	checkLayout(t, ann, 360, 740)
	ann.screenshot("race-360")
	checkLayout(t, carol, 360, 740)
	carol.screenshot("spectate-360")
	carol.do(chromedp.EmulateViewport(1280, 900))
	carol.screenshot("spectate-1280")

	// Boards the race did not reach: four turned cards, the strict rule's
	// hidden waste, a long fanned pile, complete and part-built foundations.
	ann.do(chromedp.EmulateViewport(360, 740))
	_, err := chromedp.Run(ann.ctx, chromedp.Evaluate[bool](extraBoards, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	checkLayout(t, ann, 360, 740)
	checkLayout(t, ann, 1280, 900)
	// "??" is drawn as a card back in its place, never as text.
	if n := eval[int](ann, `document.querySelectorAll("#extra-boards .hidden-card").length`); n != 5 {
		t.Errorf("%d face-down cards drawn for the five hidden ones", n)
	}
	if txt := eval[string](ann, `document.getElementById("extra-boards").innerText`); strings.Contains(txt, "??") {
		t.Errorf("a hidden card shows as text: %q", txt)
	}
	ann.do(chromedp.EmulateViewport(360, 740), chromedp.ScrollIntoView(chromedp.CSS("#extra-boards")))
	ann.screenshot("extra-boards-360")
	eval[bool](ann, `document.getElementById("extra-boards").remove() || true`)

	// The client deals as the engine does.
	for _, n := range []uint64{1, 9, 18446744073709551615} {
		want := engine.Deal(n)
		var ws []string
		for _, c := range want {
			ws = append(ws, c.String())
		}
		got, err := chromedp.Run(ann.ctx, chromedp.Evaluate[string](fmt.Sprintf(`import("/js/game.js").then(m => m.deal("%d").cards.join(" "))`, n), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		if got != strings.Join(ws, " ") {
			t.Errorf("deal %d: client %s\nengine %s", n, got, strings.Join(ws, " "))
		}
	}

	ann.resign()
	bob.resign()
	carol.waitJS(`!!document.querySelector("[data-testid=result-headline]")`)
	checkLayout(t, carol, 360, 740)
	carol.screenshot("result-360")
	for _, p := range []*page{ann, bob, carol} {
		p.expectCleanConsole()
	}
}
