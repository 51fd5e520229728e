package web_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserRoomOfFour: ann makes a room from the lobby ("Race a group")
// and sends its link; bob and dan (on a phone), here for the first time,
// open it and give their names; cleo pastes it into the lobby. Everyone
// sees the four of them, ann marked the host; only ann has the start
// button, the others are told whom they wait for. ann starts: all four
// race, resign one by one with the button and its confirm, and see the
// ranking of four. From the result three go back to the room, where ann's
// button now reads "Race again"; she presses it and all four are in the
// next race, dan straight from the result. A code no room has is refused
// in words.
func TestBrowserRoomOfFour(t *testing.T) {
	srv := startLiveServer(t)
	b := newBrowser(t)
	names := []string{"ann", "bob", "cleo", "dan"}
	pages := []*page{
		b.newPage("ann", 1280, 800),
		b.newPage("bob", 1280, 800),
		b.newPage("cleo", 1280, 800),
		b.newPage("dan", 360, 740),
	}
	ann, bob, dan := pages[0], pages[1], pages[3]

	ann.do(chromedp.Navigate(srv.url + "/"))
	ann.rename("ann")
	ann.screenshot("lobby")
	ann.click(`[data-action=make-room]`)
	waitMembers(ann, 1)
	link := eval[string](ann, `document.querySelector("#room-link").value`)
	if !strings.Contains(link, "/?room=") {
		t.Fatalf("the room's link is %q", link)
	}
	// Alone, the host cannot start yet, and is told why.
	if !eval[bool](ann, `document.querySelector("[data-action=start-room]").disabled`) {
		t.Error("ann can start a race alone")
	}
	if why := ann.text(`[data-testid=room-start-why]`); !strings.Contains(why, "at least two") {
		t.Errorf("ann's disabled start button is explained as %q", why)
	}

	// bob and dan, new here, open the link and give their names; cleo,
	// who has been in the lobby, pastes it there and is known already.
	for i, p := range pages[1:] {
		if p.name == "cleo" {
			p.do(chromedp.Navigate(srv.url + "/"))
			p.rename("cleo")
			p.do(chromedp.SetValue(chromedp.CSS("#join-code"), link))
			p.click(`[data-action=join-code]`)
		} else {
			open := link
			if p == bob {
				open = strings.ToLower(link) // the code in lower case is the same room
			}
			p.do(chromedp.Navigate(open))
			p.do(chromedp.WaitVisible(chromedp.CSS("#room-name")), chromedp.SetValue(chromedp.CSS("#room-name"), names[i+1]))
			if p == dan {
				dan.screenshot("name-phone")
			}
			p.click(`[data-action=join-room]`)
		}
		waitMembers(p, i+2)
	}
	ann.waitJS(`document.querySelector("[data-testid=room-news]").textContent === "dan joined."`)
	for i, p := range pages {
		waitMembers(p, 4)
		if got := p.text(`[data-testid=room-count]`); got != "4 of 10" {
			t.Errorf("%s's count reads %q", p.name, got)
		}
		got := eval[[]string](p, `[...document.querySelectorAll("[data-testid=room-members] li")].map(li => li.textContent)`)
		want := []string{"ann host", "bob", "cleo", "dan"}
		want[i] += " (you)"
		if !slices.Equal(got, want) {
			t.Errorf("%s's members are %q, want %q", p.name, got, want)
		}
	}
	for _, p := range pages[1:] {
		if eval[bool](p, `!document.querySelector(".room-start").hidden`) {
			t.Errorf("%s, a guest, sees the start button", p.name)
		}
		if got := p.text(`[data-testid=room-wait]`); got != "Waiting for ann (the host) to start the race." {
			t.Errorf("%s waits with %q", p.name, got)
		}
	}
	if eval[bool](ann, `document.querySelector("[data-action=start-room]").disabled`) {
		t.Error("ann cannot start a race of four")
	}
	expectNoSidewaysScroll(dan, "in the room")
	ann.screenshot("room")
	dan.screenshot("room-phone")
	ann.expectAccessible("the room of the host")
	dan.expectAccessible("the room on a phone")

	ann.click(`[data-action=start-room]`)
	first := raceOfAll(t, pages)
	for _, p := range pages {
		p.waitRaceState("running")
		if title := p.text(`[data-testid=race-title]`); !strings.HasPrefix(title, "Race of 4: ") {
			t.Errorf("%s's race is titled %q", p.name, title)
		}
	}
	expectNoSidewaysScroll(dan, "racing")
	ann.screenshot("racer")
	dan.screenshot("racer-phone")

	// Everyone resigns, the last only if the race still runs.
	resignInTurn(pages[3], pages[2], pages[1], pages[0])
	final := srv.raceInfo(t, first)
	for _, p := range pages {
		p.waitRaceState("finished")
		p.waitJS(`document.querySelectorAll("[data-testid=ranking] tbody tr").length === 4`)
		got := eval[[]string](p, `[...document.querySelectorAll("[data-testid=ranking] tbody tr")].map(r => r.children[1].textContent.replace(" (you)", "")).sort()`)
		if !slices.Equal(got, names) {
			t.Errorf("%s's ranking names %q", p.name, got)
		}
	}
	if final.Result == nil || len(final.Result.Ranking) != 4 {
		t.Errorf("the room's race ended with %+v: want a ranking of four", final.Result)
	}
	ann.screenshot("result")
	dan.screenshot("result-phone")

	// Back in the room, the host races again, with all four: dan, who
	// stays on the result, follows into the new race.
	for _, p := range pages[:3] {
		p.click(`[data-action=back-to-room]`)
		waitMembers(p, 4)
	}
	dan.do(chromedp.WaitVisible(chromedp.CSS(`[data-action=back-to-room]`)))
	ann.waitJS(`document.querySelector("[data-action=start-room]").textContent === "Race again"`)
	if got := bob.text(`[data-testid=room-wait]`); got != "Waiting for ann (the host) to start the next race." {
		t.Errorf("bob waits with %q", got)
	}
	ann.screenshot("room-after-race")
	ann.click(`[data-action=start-room]`)
	if second := raceOfAll(t, pages); second == first {
		t.Errorf("race again went back to race %s", first)
	}

	// A code no room has is said so, in words.
	bob.do(chromedp.Navigate(srv.url + "/?room=ZZZZZZZZZZ"))
	bob.waitJS(`document.querySelector("[data-testid=room-error]").textContent.startsWith("No room has the code ZZZZZZZZZZ")`)
	for _, p := range pages {
		p.expectCleanConsole()
	}
}

// waitMembers waits for p's room page to list n members.
func waitMembers(p *page, n int) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`(document.querySelector("[data-testid=room]")||{dataset:{}}).dataset.members === "%d"`, n))
}

// raceOfAll waits for every page to be seated in a race that is counting
// down or running, the same race for all; it returns the race's id.
func raceOfAll(t *testing.T, pages []*page) string {
	t.Helper()
	id := ""
	for _, p := range pages {
		p.waitJS(`["countdown", "running"].includes((document.querySelector(".race-page")||{dataset:{}}).dataset.state)`)
		if got := p.raceID(); id == "" {
			id = got
		} else if got != id {
			t.Fatalf("%s is in race %q, the others in %q", p.name, got, id)
		}
	}
	return id
}
