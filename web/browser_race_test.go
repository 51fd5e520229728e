package web_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserRaceToTheEnd: ann names herself in the lobby, makes a private
// race and sends the invite link to bob, a first-time visitor who gives his
// name when he joins (the first one refused); carol watches (seeing ann's
// card ahead of bob face down until bob turns it). Everyone plays with real clicks:
// ann places a card and resigns, bob plays until an Ace reaches a
// foundation, which wins him the race. All three see the same result, which
// matches the API's; the commitment checks out in the browser; the replay
// steps and plays back to the same final scores; the result page asks the
// solver whether the deal was winnable and shows the API's answer.
func TestBrowserRaceToTheEnd(t *testing.T) {
	srv := startLiveServer(t)
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 900)
	bob := b.newPage("bob", 1280, 900)
	carol := b.newPage("carol", 1280, 900)

	ann.do(chromedp.Navigate(srv.url + "/"))
	ann.rename("ann")
	ann.click(`[data-action=create]`)
	ann.waitRaceState("waiting")
	invite := eval[string](ann, `document.querySelector("#invite-link").value`)
	if !strings.Contains(invite, "?race=") {
		t.Fatalf("invite link %q", invite)
	}
	id := invite[strings.Index(invite, "?race=")+6:]

	carol.do(chromedp.Navigate(srv.url + "/?watch=" + id))
	carol.waitJS(`document.querySelector("[data-testid=phase]").textContent.startsWith("Waiting")`)

	// A name the server refuses is asked again, with its reason.
	bob.do(chromedp.Navigate(invite), chromedp.SendKeys(chromedp.CSS("#join-name"), "<bob>"))
	bob.click(`[data-action=join]`)
	bob.waitJS(`(document.querySelector("[data-testid=join-error]")||{textContent:""}).textContent.includes("markup")`)
	bob.do(chromedp.SetValue(chromedp.CSS("#join-name"), "bob"))
	bob.click(`[data-action=join]`)
	bob.waitRaceState("countdown")
	bob.screenshot("countdown")
	ann.waitRaceState("running")
	bob.waitRaceState("running")

	// ann: one real move, then resign (two clicks: resign, confirm).
	c := ann.turned()
	ann.clickMove(c, "W1")
	ann.waitJS(fmt.Sprintf(`!!document.querySelector('.me [data-pile=W1] [data-card=%q]')`, c))
	// carol sees the card ann turned next face down in its place: bob has
	// not turned it yet.
	carol.waitJS(`!!document.querySelector('.seat0 .turned .card.back[data-card="??"]')`)
	bob.waitJS(`document.querySelector("[data-testid=opp-score]") && document.querySelector("[data-testid=opp-status]").textContent.startsWith("playing")`)
	ann.click(`[data-action=resign]`)
	ann.click(`[data-action=resign][data-confirm]`)

	// bob: waste everything but Aces, round robin, until the race ends.
	shot := false
	for i := 0; ; i++ {
		bob.waitJS(`document.querySelector(".race-page").dataset.state === "finished" || !!document.querySelector(".me .turned [data-card]")`)
		if eval[bool](bob, `document.querySelector(".race-page").dataset.state === "finished"`) {
			break
		}
		if i == 3 && !shot {
			// bob has turned ann's cards by now: she is out and he is past
			// them, so carol sees them face up.
			carol.waitJS(`!document.querySelector('.seat0 [data-card="??"]') && !!document.querySelector('.seat0 [data-card]')`)
			bob.screenshot("race")
			carol.waitJS(`document.querySelectorAll(".seat1 .board .card").length > 1`)
			carol.screenshot("spectate")
			shot = true
		}
		bob.placeTurned(i)
		if i > 60 {
			t.Fatal("bob played the whole stock without the race ending")
		}
	}

	info := srv.raceInfo(t, id)
	if info.Result == nil || info.Result.Winner == nil || *info.Result.Winner != 1 || info.Result.Reason != "passed" {
		t.Fatalf("result %+v, want bob (seat 1) winning by passed", info.Result)
	}
	want := map[*page]string{ann: "bob won", bob: "You won", carol: "bob won"}
	for _, p := range []*page{ann, bob, carol} {
		got := p.text(`[data-testid=result-headline]`)
		if got != want[p] {
			t.Errorf("%s sees %q, want %q", p.name, got, want[p])
		}
		reason := eval[string](p, `document.querySelector(".result .reason").dataset.reason`)
		scores := eval[[]string](p, `[...document.querySelectorAll(".result [data-score]")].map(e => e.textContent)`)
		if reason != "passed" || len(scores) != 2 || scores[0] != fmt.Sprint(info.Result.Scores[0]) || scores[1] != fmt.Sprint(info.Result.Scores[1]) {
			t.Errorf("%s sees reason %q scores %v; the API says %s %v", p.name, reason, scores, info.Result.Reason, info.Result.Scores)
		}
		p.waitJS(`document.querySelectorAll(".chart-svg path[data-seat]").length === 2`)
		if txt := p.text(".result"); strings.Contains(txt, "null") || strings.Contains(txt, "undefined") || strings.Contains(txt, "[object") {
			t.Errorf("%s: the result shows a JavaScript value: %q", p.name, txt)
		}
	}

	// The commitment opens in the browser, checked against the one bob's
	// page was sent at the start, and so do the cards he was shown.
	bob.waitJS(`!!document.querySelector("[data-testid=fair-verdict][data-ok=true]") && !!document.querySelector("[data-testid=shown-verdict][data-ok=true]")`)
	bob.screenshot("result")

	// A reload after the end shows the result again, from bob's seat.
	bob.do(chromedp.Reload())
	bob.waitJS(`(document.querySelector("[data-testid=result-headline]")||{}).textContent === "You won"`)

	// The replay ends on the result's scores.
	carol.do(chromedp.Navigate(srv.url + "/?replay=" + id))
	// → and ← step through it; the move is told in words.
	carol.waitJS(`!!document.querySelector("[data-testid=replay-pos]")`)
	carol.do(chromedp.KeyEvent(kb.ArrowRight))
	carol.waitJS(`document.querySelector("[data-testid=replay-pos]").textContent.startsWith("Move 1 of")`)
	if last := carol.text(".last-move"); !regexp.MustCompile(`^ann: (.{1,3}[♠♥♦♣] to (waste pile|foundation) [1-4]|resigned)$`).MatchString(last) {
		t.Errorf("the first move reads %q", last)
	}
	carol.do(chromedp.KeyEvent(kb.ArrowLeft))
	carol.waitJS(`document.querySelector("[data-testid=replay-pos]").textContent.startsWith("Move 0 of")`)
	carol.click(`[data-action=next]`)
	carol.waitJS(`document.querySelector("[data-testid=replay-pos]").textContent.startsWith("Move 1 of")`)
	carol.do(chromedp.SetValue(chromedp.CSS(`select[aria-label=Speed]`), "30"))
	carol.click(`[data-action=play]`)
	carol.waitJS(`document.querySelector("input[type=range]").value === document.querySelector("input[type=range]").max && document.querySelector("[data-action=play]").textContent === "Play"`)
	carol.do(chromedp.Focus(chromedp.CSS(`input[type=range]`)), chromedp.KeyEvent(kb.Home))
	carol.waitJS(`document.querySelector("[data-testid=replay-pos]").textContent.startsWith("Move 0 of")`)
	carol.do(chromedp.KeyEvent(kb.End))
	carol.waitJS(`document.querySelector("input[type=range]").value === document.querySelector("input[type=range]").max`)
	got := eval[[]string](carol, `[...document.querySelectorAll(".seat .progress")].map(e => e.getAttribute("aria-valuenow"))`)
	if len(got) != 2 || got[0] != fmt.Sprint(info.Result.Scores[0]) || got[1] != fmt.Sprint(info.Result.Scores[1]) {
		t.Errorf("replay ends with scores %v, want %v", got, info.Result.Scores)
	}
	carol.screenshot("replay")
	carol.expectAccessible("the replay")
	carol.expectSteady("the replay")

	// The result has its own address too.
	carol.do(chromedp.Navigate(srv.url + "/?result=" + id))
	carol.waitJS(`(document.querySelector("[data-testid=result-headline]")||{}).textContent === "bob won"`)

	// Was the deal winnable? The solver's answer, as the API gives it.
	carol.click(`[data-action=solve]`)
	carol.waitJS(`!!document.querySelector("[data-testid=solver-verdict]").dataset.result`)
	verdict := carol.text(`[data-testid=solver-verdict]`)
	sol := srv.solution(t, id)
	wantVerdict := map[string]string{
		"won":     "Winnable: yes (the solver found a win).",
		"lost":    fmt.Sprintf("No: the best possible was %d cards.", sol.BestScore),
		"unknown": fmt.Sprintf("Unknown within the search budget (the best it found was %d cards).", sol.BestScore),
	}[sol.Result]
	if sol.Result == "lost" && !sol.ScoreExact {
		wantVerdict = fmt.Sprintf("No: the best possible was at least %d cards.", sol.BestScore)
	}
	if verdict != wantVerdict {
		t.Errorf("carol sees %q; the API says %+v", verdict, sol)
	}
	if game := eval[string](carol, `document.querySelector(".solver pre.game-text").textContent`); game != sol.Game {
		t.Errorf("the solver's game text on the page is %q, want %q", game, sol.Game)
	}
	eval[bool](carol, `document.querySelector(".solver details").open = true`)
	carol.screenshot("solver")

	for _, p := range []*page{ann, bob, carol} {
		p.expectCleanConsole()
	}
}
