package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Deals whose first cards the tests rely on (the deal algorithm of docs/engine.md).
const (
	deal9  = "9"  // 7C 8C AH 7S 7D 5D …
	deal10 = "10" // AS 6D KD 2S KH AC …
)

// seatBoth opens the invite link in two pages and joins them by clicks,
// then waits for the race to run.
func seatBoth(t *testing.T, srv *liveServer, id string, a, b *page) {
	t.Helper()
	for _, p := range []*page{a, b} {
		if eval[bool](p, `!!document.querySelector(".race-page[data-state]")`) {
			continue // seated already
		}
		p.do(chromedp.Navigate(srv.url+"/?race="+id), chromedp.SendKeys(chromedp.CSS("#join-name"), p.name))
		p.click(`[data-action=join]`)
		p.waitJS(`!!document.querySelector(".race-page[data-state]")`)
	}
	a.waitRaceState("running")
	b.waitRaceState("running")
}

// resign gives up with the two clicks the button asks for.
func (p *page) resign() {
	p.t.Helper()
	p.click(`[data-action=resign]`)
	p.click(`[data-action=resign][data-confirm]`)
}

// resignInTurn has each racer in turn resign, with the button and its
// confirm, while their game and the race are still on (a race of many
// may end before the last of them: no place can change any more).
func resignInTurn(racers ...*page) {
	for _, p := range racers {
		p.t.Helper()
		if eval[bool](p, `document.querySelector(".race-page").dataset.state !== "running" || document.querySelector(".me .board").dataset.status !== "playing"`) {
			continue
		}
		p.resign()
		p.waitJS(`document.querySelector(".me .board").dataset.status === "resigned" || document.querySelector(".race-page").dataset.state !== "running"`)
	}
}

// TestBrowserReloadResumes: a player who reloads mid-race is back in their
// seat without a click (the resume token is in sessionStorage) and sees
// their game as it was; the opponent is told they left (with the grace
// time) and came back; after a network failure both pages reconnect and
// resume by themselves; an illegal move is explained next to the board; a
// rematch moves both to a new race.
func TestBrowserReloadResumes(t *testing.T) {
	srv := startLiveServer(t)
	id := srv.createRace(t, `{"deal":"`+deal9+`"}`)
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 900)
	bob := b.newPage("bob", 1280, 900)
	seatBoth(t, srv, id, ann, bob)

	ann.clickMove("7C", "W1")
	ann.waitJS(`!!document.querySelector('.me [data-pile=W1] [data-card="7C"]')`)
	bob.waitJS(`document.querySelector("[data-testid=opp-score]") && document.querySelector(".opponent .stats").textContent.includes("Moves1")`)

	ann.do(chromedp.Reload())
	ann.waitRaceState("running")
	ann.waitJS(`!!document.querySelector('.me [data-pile=W1] [data-card="7C"]') && document.querySelector(".me .turned [data-card]").dataset.card === "8C"`)
	if eval[bool](ann, `!document.querySelector(".join").hidden`) {
		t.Error("the join form shows after a reload; want an automatic resume")
	}
	bob.waitJS(`document.querySelector(".notices").textContent.includes("ann is back")`)

	// 7C does not go on an empty foundation: the server's sentence shows.
	ann.click(`.me [data-pile=W1]`)
	ann.click(`.me [data-pile=F1]`)
	ann.waitJS(`document.querySelector("[data-testid=move-error]").textContent.includes("does not fit")`)
	msg := ann.text(`[data-testid=move-error]`)
	if !strings.Contains(msg, "7C") {
		t.Errorf("move error %q does not name the card", msg)
	}

	// The network drops both players: each page says so, reconnects and
	// resumes by itself; moves work again.
	if n := srv.socks.cut(); n < 2 {
		t.Fatalf("cut %d websockets, want both players'", n)
	}
	ann.waitJS(`/Connection lost|Reconnected/.test(document.querySelector(".notices").textContent)`)
	ann.waitJS(`document.querySelector(".notices").textContent.includes("Reconnected: your game resumed")`)
	ann.clickMove("8C", "W2")
	ann.waitJS(`!!document.querySelector('.me [data-pile=W2] [data-card="8C"]')`)
	if got := ann.text(`[data-testid=move-error]`); got != "" {
		t.Errorf("move error %q left after a legal move", got)
	}
	if got := eval[string](ann, `document.querySelector('.me [data-pile=W2] [data-card="8C"]').getAttribute("aria-label")`); got != "8 of Clubs on waste pile 2" {
		t.Errorf("the card's accessible name is %q", got)
	}

	ann.resign()
	bob.resign()
	ann.waitJS(`!!document.querySelector("[data-testid=result-headline]")`)
	if got := ann.text(`[data-testid=result-headline]`); got != "Draw" {
		t.Errorf("ann sees %q, want Draw (both resigned with no cards up)", got)
	}

	// Both ask for a rematch: a new race on a new deal, same seats. Nothing
	// on either page may read NaN or undefined meanwhile (the previous
	// race's presence once made "forfeit in NaN s"): an observer records
	// any such text as it appears.
	for _, p := range []*page{ann, bob} {
		eval[bool](p, watchForLeaks)
	}
	bob.waitJS(`!!document.querySelector("[data-action=rematch]")`)
	ann.click(`[data-action=rematch]`)
	bob.waitJS(`document.querySelector(".notices").textContent.includes("ann asks for a rematch")`)
	bob.click(`[data-action=rematch]`)
	for _, p := range []*page{ann, bob} {
		p.waitJS(`!location.search.includes(` + "`" + id + "`" + `)`)
		p.waitRaceState("running")
	}
	next := eval[string](ann, `new URLSearchParams(location.search).get("race")`)
	if got := eval[string](bob, `new URLSearchParams(location.search).get("race")`); got != next || next == id {
		t.Errorf("after the rematch ann is in %q and bob in %q (the first race was %q)", next, got, id)
	}

	for _, p := range []*page{ann, bob} {
		if leaks := eval[[]string](p, `window.__leaks`); len(leaks) > 0 {
			t.Errorf("%s's page showed: %q", p.name, leaks)
		}
	}

	// ann leaves the page: bob is told how long she has to come back; she
	// comes back by opening the race again in the same tab.
	// The wait is for the new race's own notice, with its grace time: the
	// previous race's presence (ann leaving it for this one, no grace time)
	// must not satisfy it, or ann could come back before the server saw her
	// leave, and then there is no return for bob to be told of.
	ann.do(chromedp.Navigate("about:blank"))
	bob.waitJS(`/ann disconnected: they forfeit in \d+ s/.test(document.querySelector(".notices").textContent)`)
	ann.do(chromedp.Navigate(srv.url + "/?race=" + next))
	ann.waitRaceState("running")
	bob.waitJS(`document.querySelector(".notices").textContent.includes("ann is back")`)
	for _, p := range []*page{ann, bob} {
		if txt := eval[string](p, `document.body.innerText`); strings.Contains(txt, "NaN") || strings.Contains(txt, "undefined") {
			t.Errorf("%s's page shows %q", p.name, txt)
		}
	}

	ann.resign()
	bob.resign()
	ann.waitRaceState("finished")
	bob.waitJS(`!!document.querySelector("[data-testid=result-headline]")`)
	if leaks := eval[[]string](bob, `window.__leaks`); len(leaks) > 0 {
		t.Errorf("bob's page showed: %q", leaks)
	}
	for _, p := range []*page{ann, bob} {
		p.expectCleanConsole()
	}
}

// watchForLeaks installs an observer that records, in window.__leaks, any
// text on the page with NaN, undefined or null in it, whenever it appears.
const watchForLeaks = `(() => {
  window.__leaks = [];
  const bad = /\bNaN\b|\bundefined\b|\bnull\b/;
  const check = () => { const t = document.body.innerText; if (bad.test(t)) window.__leaks.push(t.match(/[^\n]*(NaN|undefined|null)[^\n]*/)[0]); };
  new MutationObserver(check).observe(document.body, { subtree: true, childList: true, characterData: true });
  return true;
})()`

// TestBrowserKeyboardOnly: ann joins and plays by keyboard alone (Enter in
// the name field, T, F, 1-4, Shift+1-4), hears each move and bob's progress
// in words, keeps the focus on the board, and wins once bob resigns.
func TestBrowserKeyboardOnly(t *testing.T) {
	srv := startLiveServer(t)
	id := srv.createRace(t, `{"deal":"`+deal10+`"}`)
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 900)
	bob := b.newPage("bob", 1280, 900)

	ann.do(chromedp.Navigate(srv.url+"/?race="+id), chromedp.WaitVisible(chromedp.CSS("#join-name")),
		chromedp.KeyEvent("ann"), chromedp.KeyEvent(kb.Enter))
	ann.waitRaceState("waiting")
	bob.do(chromedp.Navigate(srv.url+"/?race="+id), chromedp.SendKeys(chromedp.CSS("#join-name"), "bob"))
	bob.click(`[data-action=join]`)
	ann.waitRaceState("running")

	step := func(keys string, shift bool, wantPile, card string) {
		t.Helper()
		for _, k := range keys {
			var opts []chromedp.KeyOption
			if shift && k >= '1' && k <= '4' {
				opts = append(opts, chromedp.KeyModifiers(chromedp.ModifierShift))
			}
			ann.do(chromedp.KeyEvent(string(k), opts...))
		}
		// The move shows at once; the next card comes with the server's reply.
		ann.waitJS(fmt.Sprintf(`!!document.querySelector('.me [data-pile=%s] [data-card=%q]:not(.pending)')`, wantPile, card))
	}
	// The turned card has the focus as it goes: the focus stays on the
	// board, on the next card turned up.
	ann.waitJS(`!!document.querySelector(".me .turned [tabindex]")`)
	ann.do(chromedp.Focus(chromedp.CSS(".me .turned [tabindex]")))
	step("f", false, "F1", "AS") // F: the turned card to a foundation it fits
	ann.hears("Ace of Spades to foundation 1. Turned: 6 of Diamonds.")
	if got := eval[string](ann, `(() => { const a = document.activeElement; return a && a.closest(".me .board") ? a.dataset.card || a.dataset.pile || "board" : "lost: " + (a && a.tagName); })()`); got != "6D" {
		t.Errorf("after the move the focus is on %s, want the next turned card 6D", got)
	}
	// bob's first card up is said to ann at once (later ones at a calm rate).
	bob.do(chromedp.KeyEvent("f"))
	ann.waitJS(`document.querySelector("[data-testid=announce-opp]").textContent === "bob: 1 of 52 cards up."`)
	ann.do(chromedp.KeyEvent("t")) // T selects the turned card…
	ann.waitJS(`document.querySelectorAll(".me .pile.target").length === 4 && !!document.querySelector(".me .card.selected[data-card=\"6D\"]")`)
	if eval[bool](ann, `!document.querySelector(".countdown").hidden`) {
		t.Error("the countdown still shows while the race runs")
	}
	ann.screenshot("selected")
	step("1", false, "W1", "6D") // …and 1 puts it on W1
	ann.hears("6 of Diamonds to waste pile 1. Turned: King of Diamonds.")
	step("t2", false, "W2", "KD")
	step("t1", true, "F1", "2S") // Shift+1: foundation 1

	// Tab reaches the piles, and the focus is visible.
	for range 8 {
		ann.do(chromedp.KeyEvent(kb.Tab))
	}
	focus := eval[string](ann, `(() => { const a = document.activeElement; return a && a.closest(".board") ? getComputedStyle(a).outlineStyle : "not on the board: " + (a && a.outerHTML.slice(0, 80)); })()`)
	if focus == "none" || strings.HasPrefix(focus, "not") {
		t.Errorf("after Tabs the focus is %s; want a pile or card with a visible outline", focus)
	}

	// ? shows the keys.
	ann.do(chromedp.KeyEvent("?"))
	ann.waitJS(`!document.querySelector(".help").hidden && document.querySelector(".help").textContent.includes("Shift + 1 – 4")`)
	ann.screenshot("keys")

	bob.resign()
	ann.waitJS(`!!document.querySelector("[data-testid=result-headline]")`)
	if got := ann.text(`[data-testid=result-headline]`); got != "You won" {
		t.Errorf("ann sees %q, want You won", got)
	}
	if got := eval[string](ann, `document.querySelector(".result .reason").dataset.reason`); got != "passed" {
		t.Errorf("reason %q, want passed", got)
	}
	for _, p := range []*page{ann, bob} {
		p.expectCleanConsole()
	}
}

// TestBrowserMatchRounds: in a best-of-3 match the next round follows by
// itself, with both players moved to it and the round shown.
func TestBrowserMatchRounds(t *testing.T) {
	srv := startLiveServer(t)
	id := srv.createRace(t, `{"bestOf":3}`)
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 900)
	bob := b.newPage("bob", 1280, 900)
	seatBoth(t, srv, id, ann, bob)
	if got := ann.text(`[data-testid=phase]`); !strings.Contains(got, "Round 1 of 3") {
		t.Errorf("phase %q, want round 1 of 3", got)
	}

	// bob places a card and resigns; ann's first Ace wins her the round.
	bob.clickMove(bob.turned(), "W1")
	bob.resign()
	for i := 0; ; i++ {
		ann.waitJS(`!location.search.includes(` + "`" + id + "`" + `) || !!document.querySelector(".me .turned [data-card]")`)
		if eval[bool](ann, `!location.search.includes(`+"`"+id+"`"+`)`) {
			break
		}
		c := ann.turned()
		pile := fmt.Sprintf("W%d", i%4+1)
		if c[0] == 'A' {
			pile = "F1"
		}
		ann.clickMove(c, pile)
		ann.waitJS(fmt.Sprintf(`!location.search.includes(`+"`"+id+"`"+`) || (document.querySelector(".me .turned [data-card]")||{dataset:{}}).dataset.card !== %q`, c))
		if i > 60 {
			t.Fatal("ann played the whole stock without the round ending")
		}
	}
	for _, p := range []*page{ann, bob} {
		p.waitRaceState("running")
		p.waitJS(`document.querySelector("[data-testid=phase]").textContent.includes("Round 2 of 3; wins 1–0")`)
	}
	ann.resign()
	bob.resign()
	for _, p := range []*page{ann, bob} {
		p.expectCleanConsole()
	}
}

// hears waits until the page's screen-reader announcement of its own
// moves says text.
func (p *page) hears(text string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`document.querySelector("[data-testid=announce]").textContent === %q`, text))
}
