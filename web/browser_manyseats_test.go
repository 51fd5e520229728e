package web_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"sirtommy/race"
)

// TestBrowserRaceOfFour: a race made over the API with "seats": 4 on a
// secret deal. Four people join with the invite link and their names (dan
// on a phone), the first three seeing how many have joined; a fifth
// watches, as a spectator of every board. Each racer sees the other three
// in a standings list that follows their moves and who is away; the
// spectator sees four small boards, the cards a racer behind has not
// turned face down. They play a few real moves, then resign one by one
// with the button and its confirm until the race ends; every page shows
// the ranking of the race's record.
func TestBrowserRaceOfFour(t *testing.T) {
	srv := startLiveServer(t)
	id := srv.createRace(t, `{"seats":4}`)
	b := newBrowser(t)
	names := []string{"ann", "bob", "cleo", "dan"}
	racers := []*page{
		b.newPage("ann", 1280, 800),
		b.newPage("bob", 1280, 800),
		b.newPage("cleo", 1280, 800),
		b.newPage("dan", 360, 740),
	}
	ann, dan := racers[0], racers[3]
	watcher := b.newPage("watcher", 1280, 800)
	watcher.do(chromedp.Navigate(srv.url + "/?watch=" + id))
	watcher.waitJS(`document.querySelector("[data-testid=phase]").textContent.startsWith("Waiting")`)

	for i, p := range racers {
		p.do(chromedp.Navigate(srv.url+"/?race="+id), chromedp.SendKeys(chromedp.CSS("#join-name"), names[i]))
		p.click(`[data-action=join]`)
		p.waitJS(`!!document.querySelector(".race-page[data-state]")`)
		if i == 2 {
			// The waiting room counts the seats taken, on every racer's page.
			for _, q := range racers[:3] {
				q.waitJS(`(document.querySelector("[data-testid=invite-head]")||{}).textContent === "Waiting for racers: 3 of 4 joined"`)
			}
			if got := ann.text(`[data-testid=phase]`); got != "Waiting for racers: 3 of 4 joined." {
				t.Errorf("ann's phase while waiting reads %q", got)
			}
			ann.screenshot("waiting")
		}
	}
	for _, p := range racers {
		p.waitRaceState("running")
	}

	// Every racer sees the other three, and a title that is no duel's.
	for i, p := range racers {
		if title := p.text(`[data-testid=race-title]`); strings.Contains(title, " vs ") || !strings.HasPrefix(title, "Race of 4: ") {
			t.Errorf("%s's title is %q", p.name, title)
		}
		if eval[bool](p, `!document.querySelector(".opponent").hidden`) {
			t.Errorf("%s sees the panel of a single opponent", p.name)
		}
		want := slices.Delete(slices.Clone(names), i, i+1)
		slices.Sort(want)
		got := eval[[]string](p, `[...document.querySelectorAll("[data-testid=standings] tbody th")].map(e => e.textContent).sort()`)
		if !slices.Equal(got, want) {
			t.Errorf("%s's standings list %v, want %v", p.name, got, want)
		}
	}

	// ann plays until she has a card up (or her game ends); the others
	// make fewer moves: everyone moves within the first 30 s.
	for n := 0; n < 40 && eval[int](ann, `+document.querySelector(".me .progress").getAttribute("aria-valuenow")`) == 0; n++ {
		if !ann.playStep(n, 4) {
			break
		}
	}
	for i, moves := range []int{0, 4, 2, 1} {
		for n := range moves {
			racers[i].playStep(n, 4)
		}
	}

	// The standings follow every move: each racer's row on the others'
	// pages shows the cards up and left of the race's record, most cards
	// first.
	info := srv.raceInfo(t, id)
	for i, p := range racers {
		for seat, c := range info.Counts {
			if seat == i {
				continue
			}
			p.waitJS(fmt.Sprintf(`(() => { const r = document.querySelector("[data-testid=standings] tr[data-seat='%d']");
				return !!r && r.children[1].textContent === "%d" && r.children[2].textContent === "%d"; })()`, seat, c.Score, c.Stock))
		}
		ups := eval[[]int](p, `[...document.querySelectorAll("[data-testid=standings] tbody td[data-score]")].map(e => +e.textContent)`)
		if !slices.IsSortedFunc(ups, func(a, b int) int { return b - a }) {
			t.Errorf("%s's standings are not by cards up: %v", p.name, ups)
		}
	}
	// cleo leaves the page mid-game: the others see her away, then
	// playing again when she is back (her seat resumed).
	cleo := racers[2]
	cleo.do(chromedp.Navigate("about:blank"))
	for _, p := range []*page{ann, dan} {
		p.waitJS(`(document.querySelector("[data-testid=standings] tr[data-seat='2']")||{dataset:{}}).dataset.status === "away"`)
	}
	dan.screenshot("racer-phone-away")
	cleo.do(chromedp.Navigate(srv.url + "/?race=" + id))
	cleo.waitRaceState("running")
	for _, p := range []*page{ann, dan} {
		p.waitJS(`document.querySelector("[data-testid=standings] tr[data-seat='2']").dataset.status === "playing"`)
	}

	expectNoSidewaysScroll(dan, "mid-race")
	ann.screenshot("racer")
	dan.screenshot("racer-phone")
	ann.expectAccessible("a racer of four")
	dan.expectAccessible("a racer of four on a phone")

	// The spectator sees four boards; dan is behind ann, so the cards ann
	// turned ahead of him are face down, and the legend says so.
	watcher.waitJS(`document.querySelectorAll(".field .seat .board").length === 4 && [...document.querySelectorAll(".field .seat .board")].every(b => b.querySelector(".card"))`)
	for seat, name := range names {
		watcher.waitJS(fmt.Sprintf(`document.querySelector(".field .seat%d h2").textContent === %q`, seat, name))
	}
	if info.Counts[0].Moves > info.Counts[3].Moves+1 {
		watcher.waitJS(`!!document.querySelector('.field .seat0 [data-card="??"]') && !document.querySelector("[data-testid=hidden-legend]").hidden`)
	}
	watcher.screenshot("spectator")
	watcher.expectAccessible("the spectator of four")

	// dan, cleo and bob resign; ann too if the race still runs (with a card
	// up and the others out, it does not: she has passed them all) and her
	// game is not over already (stuck).
	resignInTurn(racers[3], racers[2], racers[1], racers[0])

	ann.waitRaceState("finished")
	final := srv.raceInfo(t, id)
	if final.State != race.Finished || final.Result == nil || len(final.Result.Ranking) != 4 {
		t.Fatalf("the race ended with %+v: want a ranking of four", final.Result)
	}
	pages := append(slices.Clone(racers), watcher)
	for k, p := range pages {
		p.waitJS(`document.querySelectorAll("[data-testid=ranking] tbody tr").length === 4`)
		rows := eval[[][]string](p, `[...document.querySelectorAll("[data-testid=ranking] tbody tr")].map(r => [r.dataset.seat, ...[...r.children].map(c => c.textContent)])`)
		for j, want := range final.Result.Ranking {
			finished := "–"
			if want.FinishedMs != nil {
				s := *want.FinishedMs / 1000
				finished = fmt.Sprintf("%d:%02d", s/60, s%60)
			}
			you := ""
			if k == want.Seat {
				you = " (you)"
			}
			got := rows[j]
			if got[0] != fmt.Sprint(want.Seat) || got[1] != fmt.Sprint(want.Place) || got[2] != names[want.Seat]+you || got[3] != fmt.Sprint(want.Cards) || got[5] != finished {
				t.Errorf("%s's ranking row %d is %q; the API has %+v (finished %s)", p.name, j, got, want, finished)
			}
		}
		if txt := p.text(".result"); strings.Contains(txt, "null") || strings.Contains(txt, "undefined") || strings.Contains(txt, "NaN") || strings.Contains(txt, "[object") {
			t.Errorf("%s: the result shows a JavaScript value: %q", p.name, txt)
		}
	}
	expectNoSidewaysScroll(dan, "on the result")
	ann.screenshot("result")
	dan.screenshot("result-phone")
	watcher.screenshot("result-spectator")
	ann.expectAccessible("the ranking")

	// The result says where each of the four games was lost.
	ann.waitJS(`document.querySelector(".result [data-testid=coach]").dataset.state === "done"`)
	if n := eval[int](ann, `document.querySelectorAll(".result [data-testid^=coach-]:not([data-testid^=coach-chance])").length`); n != 4 {
		t.Errorf("the result's coach tells of %d games, want 4", n)
	}

	// The replay shows the four games, small, and steps to the end.
	ann.click(`a[href^="/?replay="]`)
	ann.waitJS(`document.querySelectorAll(".replay-page .field .seat .board").length === 4`)
	ann.click(`[aria-label="To the end"]`)
	ann.waitJS(`(() => { const m = document.querySelector("[data-testid=replay-pos]").textContent.match(/Move (\d+) of (\d+)/); return m && m[1] === m[2] && m[1] !== "0"; })()`)
	ann.waitJS(`document.querySelector("[data-testid=coach]").dataset.state === "done"`)
	if n := eval[int](ann, `document.querySelectorAll("[data-testid^=coach-]:not([data-testid^=coach-chance])").length`); n != 4 {
		t.Errorf("the replay's coach tells of %d games, want 4", n)
	}
	ann.screenshot("replay")
	for _, p := range pages {
		p.expectCleanConsole()
	}
}

// sidewaysJS names the element reaching furthest past the window's right
// edge, or "" when the page does not scroll sideways.
const sidewaysJS = `(() => {
  if (document.documentElement.scrollWidth <= window.innerWidth) return "";
  let far = null, right = 0;
  for (const e of document.querySelectorAll("body *")) {
    const r = e.getBoundingClientRect().right;
    if (r > right) { right = r; far = e; }
  }
  return far ? far.tagName + "." + far.className + " reaches " + Math.round(right) + " px" : "something";
})()`

// expectNoSidewaysScroll fails the test if p's page is wider than its window.
func expectNoSidewaysScroll(p *page, when string) {
	p.t.Helper()
	if far := eval[string](p, sidewaysJS); far != "" {
		p.t.Errorf("%s's page scrolls sideways %s: %s", p.name, when, far)
	}
}
