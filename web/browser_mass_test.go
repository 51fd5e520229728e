package web_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"sirtommy/race"
)

// massLine is the lobby's line of the classic mass race.
const massLine = `[data-testid=mass-races] [data-mass=classic]`

// waitMassLine waits until p's classic mass race line matches the regular
// expression re (a JavaScript literal).
func (p *page) waitMassLine(re string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`%s.test((document.querySelector(%q)||{}).textContent || "")`, re, massLine+" .what-mass"))
}

// waitMassYou waits until p's own place in the mass race reads as re
// (a JavaScript literal), shown.
func (p *page) waitMassYou(re string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`!document.querySelector("[data-testid=mass-you]").hidden && %s.test(document.querySelector("[data-testid=mass-you-text]").textContent)`, re))
}

// TestBrowserMassRace: three players join the classic mass race from the
// lobby with real clicks (cleo on a phone, refused first while she waits in
// quick play). The count follows on every page: at three the countdown
// runs; when bob leaves it stops, and it runs again when he is back. Another
// variant chosen lists its race too. When it
// starts all three are in one race of three with standings; they resign
// one by one with the button and its confirm, and every page shows the
// ranking of three, the API's.
func TestBrowserMassRace(t *testing.T) {
	srv := startLiveServer(t)
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 900)
	bob := b.newPage("bob", 1280, 900)
	cleo := b.newPage("cleo", 360, 740)
	racers := []*page{ann, bob, cleo}
	names := []string{"ann", "bob", "cleo"}
	for i, p := range racers {
		p.do(chromedp.Navigate(srv.url + "/"))
		p.rename(names[i])
	}

	// Before anyone joins, the chosen variant's race waits for three.
	ann.waitMassLine(`/^Mass race · classic · 0 of 10 joined · starts when 3 have joined/`)
	ann.screenshot("lobby-open")
	ann.click(massLine + ` [data-action=join-mass]`)
	ann.waitMassYou(`/^You're in: starts when 3 have joined \(1 of 10 joined\)\.$/`)
	if eval[string](ann, `document.activeElement.dataset.action`) != "leave-mass" {
		t.Errorf("after joining, the focus is not on Leave")
	}
	bob.click(massLine + ` [data-action=join-mass]`)
	ann.waitMassYou(`/\(2 of 10 joined\)/`)
	cleo.waitMassLine(`/^Mass race · classic · 2 of 10 joined · starts when 3 have joined$/`)
	cleo.screenshot("lobby-open-phone")

	// cleo, waiting in quick play, is told why she cannot join.
	cleo.click(`[data-action=queue]`)
	cleo.waitJS(`document.querySelector("[data-panel=quickplay]").dataset.queued === "classic"`)
	cleo.click(massLine + ` [data-action=join-mass]`)
	cleo.waitJS(`document.querySelector("[data-testid=mass-error]").textContent.startsWith("You are already waiting for a race")`)
	cleo.click(`[data-action=unqueue]`)
	cleo.waitJS(`document.querySelector("[data-panel=quickplay]").dataset.queued === ""`)
	cleo.click(massLine + ` [data-action=join-mass]`)
	cleo.waitJS(`document.querySelector("[data-testid=mass-error]").textContent === ""`)

	// Three: the countdown runs on every page.
	for _, p := range racers {
		p.waitMassLine(`/^Mass race · classic · 3 of 10 joined · starts in 0:1[0-5]$/`)
		p.waitMassYou(`/^You're in: starts in 0:1[0-5] \(3 of 10 joined\)\.$/`)
	}
	expectNoSidewaysScroll(cleo, "in the mass race")
	ann.screenshot("lobby-joined")
	cleo.screenshot("lobby-joined-phone")
	ann.expectAccessible("the lobby in a mass race")
	cleo.expectAccessible("the lobby in a mass race on a phone")

	// bob leaves: the count and the countdown follow; he joins again.
	bob.click(`[data-action=leave-mass]`)
	bob.waitJS(`document.querySelector("[data-testid=mass-you]").hidden && document.activeElement.dataset.action === "join-mass"`)
	for _, p := range racers {
		p.waitMassLine(`/^Mass race · classic · 2 of 10 joined · starts when 3 have joined$/`)
	}
	ann.waitMassYou(`/^You're in: starts when 3 have joined \(2 of 10 joined\)\.$/`)
	bob.click(massLine + ` [data-action=join-mass]`)
	for _, p := range racers {
		p.waitMassYou(`/^You're in: starts in 0:1[0-5] \(3 of 10 joined\)\.$/`)
	}

	// Choosing another variant lists its race first, the joined one still
	// below, with no Join while she is in one.
	ann.click(`.chip[data-variant=aces-out]`)
	ann.waitJS(`[...document.querySelectorAll("[data-testid=mass-races] li")].map(li => li.dataset.mass).join() === "aces-out,classic"`)
	if got := ann.text(`[data-mass=aces-out] .what-mass`); got != "Mass race · aces-out · 0 of 10 joined · starts when 3 have joined" {
		t.Errorf("the aces-out mass race reads %q", got)
	}
	if eval[bool](ann, `[...document.querySelectorAll("[data-action=join-mass]")].some(b => !b.hidden)`) {
		t.Errorf("ann, in the classic mass race, is offered to join another")
	}
	ann.click(`.chip[data-variant=classic]`)
	ann.waitJS(`[...document.querySelectorAll("[data-testid=mass-races] li")].map(li => li.dataset.mass).join() === "classic"`)

	// The countdown's end (15 s) takes all three to one race of three.
	for _, p := range racers {
		p.waitRaceState("running")
	}
	id := ann.raceID()
	for i, p := range racers {
		if got := p.raceID(); got != id || id == "" {
			t.Fatalf("%s is in race %q, ann in %q", p.name, got, id)
		}
		if title := p.text(`[data-testid=race-title]`); !strings.HasPrefix(title, "Race of 3: ") {
			t.Errorf("%s's race title is %q", p.name, title)
		}
		want := slices.Delete(slices.Clone(names), i, i+1)
		got := eval[[]string](p, `[...document.querySelectorAll("[data-testid=standings] tbody th")].map(e => e.textContent).sort()`)
		if !slices.Equal(got, want) {
			t.Errorf("%s's standings list %v, want %v", p.name, got, want)
		}
	}
	if info := srv.raceInfo(t, id); len(info.Counts) != 3 {
		t.Errorf("the race has %d seats, want 3", len(info.Counts))
	}

	// They resign one by one until the race ends (the last may not need to).
	resignInTurn(cleo, bob, ann)
	ann.waitRaceState("finished")
	final := srv.raceInfo(t, id)
	if final.State != race.Finished || final.Result == nil || len(final.Result.Ranking) != 3 {
		t.Fatalf("the race ended with %+v: want a ranking of three", final.Result)
	}
	for _, p := range racers {
		p.waitJS(`document.querySelectorAll("[data-testid=ranking] tbody tr").length === 3`)
		seats := eval[[]string](p, `[...document.querySelectorAll("[data-testid=ranking] tbody tr")].map(r => r.dataset.seat)`)
		for j, want := range final.Result.Ranking {
			if seats[j] != fmt.Sprint(want.Seat) {
				t.Errorf("%s's ranking has seat %s in place %d; the API has %+v", p.name, seats[j], j+1, want)
			}
		}
	}
	cleo.screenshot("result-phone")
	for _, p := range racers {
		p.expectCleanConsole()
	}
}
