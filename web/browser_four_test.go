package web_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserFourAtATimeTurn: in four-at-a-time, once the four turned cards
// are placed the next four stay face down, the stock shows it is the
// button that turns them ("turn the next four"), and a click on it, or the
// key T, turns them.
func TestBrowserFourAtATimeTurn(t *testing.T) {
	srv := startLiveServer(t)
	// Deal 1: 7H 9S 4H 8D, then 8H 5C JH 6H, then 9C JS 5H KH.
	id := srv.createRace(t, `{"deal":"1","variant":"four-at-a-time"}`)
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 900)
	bob := b.newPage("bob", 1280, 900)
	seatBoth(t, srv, id, ann, bob)

	if eval[bool](ann, `!!document.querySelector(".me .stock.can-turn")`) {
		t.Error("the stock offers a turn with four cards turned")
	}
	for i, c := range []string{"7H", "9S", "4H", "8D"} {
		placeAndWait(ann, c, []string{"W1", "W2", "W3", "W4"}[i])
	}
	ann.waitJS(`!!document.querySelector(".me .stock.can-turn[role=button]") && !document.querySelector(".me .turned [data-card]")`)
	if got := ann.text(`.me .turn-hint`); got != "turn the next four" {
		t.Errorf("the stock's hint is %q", got)
	}
	if eval[bool](ann, `!!document.querySelector('.me [data-card="8H"], .me [data-card="5C"], .me [data-card="JH"], .me [data-card="6H"]')`) {
		t.Error("a card of the next four shows before the turn")
	}
	ann.screenshot("between-turns")

	ann.click(`.me [data-pile=stock]`)
	ann.waitJS(`!!document.querySelector('.me .turned [data-card="8H"]') && !document.querySelector(".me .stock.can-turn")`)
	for i, c := range []string{"8H", "5C", "JH", "6H"} {
		placeAndWait(ann, c, []string{"W1", "W2", "W3", "W4"}[i])
	}
	ann.waitJS(`!!document.querySelector(".me .stock.can-turn")`)
	ann.do(chromedp.KeyEvent("t"))
	ann.waitJS(`!!document.querySelector('.me .turned [data-card="9C"]')`)

	for _, p := range []*page{ann, bob} {
		p.expectCleanConsole()
	}
}

// placeAndWait plays card to pile and waits for the server to confirm it,
// so that the next click does not land while the board is redrawn.
func placeAndWait(p *page, card, pile string) {
	p.t.Helper()
	p.clickMove(card, pile)
	p.waitJS(fmt.Sprintf(`!!document.querySelector('.me [data-pile=%s] [data-card=%q]:not(.pending)')`, pile, card))
}
