package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"sirtommy/lobby"
)

// lobbyNow reads GET /api/lobby.
func (s *liveServer) lobbyNow(t *testing.T) lobby.LobbyEvent {
	t.Helper()
	res, err := http.Get(s.url + "/api/lobby")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var ev lobby.LobbyEvent
	if err := json.NewDecoder(res.Body).Decode(&ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// raceID is the race the page is on (/?race=ID or /?watch=ID).
func (p *page) raceID() string {
	p.t.Helper()
	return eval[string](p, `(() => { const q = new URLSearchParams(location.search); return q.get("race") || q.get("watch") || ""; })()`)
}

// TestBrowserQuickPlay is the lobby's race from start to end: ann and bob
// press Play now in quick play and are paired; carol sees their race in
// the live race list with the presence counts and watches it from there
// (the list then counts her, as dave's lobby shows; all three pages show
// the count, and carol sees both players' ratings). They play the whole
// deal out with real clicks until the race is decided. All three see the
// same result, the API's; afterwards the winner's lobby shows their rating
// up, the race in their history and them on top of the leaderboard.
func TestBrowserQuickPlay(t *testing.T) {
	srv := startLiveServer(t)
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 900)
	bob := b.newPage("bob", 1280, 900)
	carol := b.newPage("carol", 1280, 900)

	for _, p := range []*page{ann, bob, carol} {
		p.do(chromedp.Navigate(srv.url + "/"))
	}
	ann.rename("ann")
	bob.rename("bob")
	carol.waitLobby()

	ann.click(`[data-action=queue]`)
	// The queue says how long she has waited (a running timer) and who else waits.
	ann.waitJS(`/^Waiting for an opponent in classic · 0:0[1-9] · nobody else waiting yet$/.test(document.querySelector("[data-testid=queue-status]").textContent)`)
	carol.waitJS(`document.querySelector("[data-count=queued]").textContent === "1" && document.querySelector("[data-count=online]").textContent === "3"`)
	ann.screenshot("queued")

	// The chosen variant's rule shows under quick play, from the server's list.
	if got := bob.text(`[data-testid=quick-variant-summary]`); !strings.Contains(got, "One card at a time") {
		t.Errorf("quick play's variant summary reads %q", got)
	}
	bob.click(`[data-action=queue]`)
	ann.waitRaceState("countdown")
	bob.waitRaceState("countdown")
	id := bob.raceID()
	if a := ann.raceID(); a != id || id == "" {
		t.Fatalf("ann is in race %q, bob in %q", a, id)
	}
	names := eval[string](bob, `document.querySelector(".opponent h2").textContent`)
	if names != "ann" {
		t.Errorf("bob's opponent is %q, want ann", names)
	}

	// carol finds the race in the list and watches it.
	row := fmt.Sprintf(`[data-testid=live-races] [data-race=%q]`, id)
	carol.waitJS(fmt.Sprintf(`!!document.querySelector(%q) && document.querySelector("[data-count=racing]").textContent === "2"`, row))
	listed := carol.text(row)
	if !strings.Contains(listed, "ann") || !strings.Contains(listed, "bob") || !strings.Contains(listed, "0 watching") {
		t.Errorf("carol's live race row reads %q", listed)
	}
	carol.screenshot("lobby")
	carol.click(row + ` [data-action=watch]`)
	carol.waitJS(`!!document.querySelector(".seat1 .board")`)
	// A public race's boards follow with the server's delay, and the page says so.
	carol.waitJS(`!document.querySelector("[data-testid=delay]").hidden && document.querySelector("[data-testid=delay]").textContent === "Boards 0.2 s behind live"`)
	// The list counts her.
	deadline := time.Now().Add(waitTimeout)
	for {
		ev := srv.lobbyNow(t)
		if len(ev.Races) == 1 && ev.Races[0].Spectators == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lobby lists %+v, want one race with one spectator", ev.Races)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// dave, arriving in the lobby, sees her counted in the list.
	dave := b.newPage("dave", 1280, 900)
	dave.do(chromedp.Navigate(srv.url + "/"))
	dave.waitJS(fmt.Sprintf(`(document.querySelector(%q)||{textContent:""}).textContent.includes("1 watching")`, row+" [data-testid=spectators]"))
	// The spectate page shows the count too, and so do the players' pages.
	for _, p := range []*page{carol, ann, bob} {
		p.waitJS(`document.querySelector("[data-testid=watchers]").dataset.count === "1"`)
	}
	// and both players' ratings as the race was made (new players: 1500).
	for s := range 2 {
		if got := carol.text(fmt.Sprintf(".seat%d h2", s)); !strings.Contains(got, "(1500)") {
			t.Errorf("carol sees seat %d as %q, want its player's rating (1500)", s, got)
		}
	}

	ann.waitRaceState("running")
	bob.waitRaceState("running")
	// Both play the deal out with real clicks, taking turns, until the
	// race ends (a win, or both stuck and the cards counted): bob spreads
	// his cards over all four waste piles, ann over two, so their games
	// differ (any result is checked below).
	annMoves, bobMoves := true, true
	for n := 0; annMoves || bobMoves; n++ {
		if annMoves = ann.playStep(n, 2); annMoves && n == 10 {
			ann.screenshot("race")
		}
		bobMoves = bob.playStep(n, 4)
		if n > 200 {
			t.Fatal("over 200 moves each and the race goes on")
		}
	}
	for _, p := range []*page{ann, bob, carol} {
		p.waitJS(`!!document.querySelector("[data-testid=result-headline]")`)
	}

	info := srv.raceInfo(t, id)
	seatOf := map[*page]int{}
	for _, p := range []*page{ann, bob} {
		seatOf[p] = eval[int](p, `Number(JSON.parse(sessionStorage.getItem("sirtommy.seat."+new URLSearchParams(location.search).get("race"))).seat)`)
	}
	res := info.Result
	if res == nil || res.Outcome == "aborted" || !res.Rated || res.Scores[0] == 0 && res.Scores[1] == 0 {
		t.Fatalf("result %+v, want a rated race played out", res)
	}
	t.Logf("played out: %s by %s, scores %v", res.Outcome, res.Reason, res.Scores)
	seatNames := map[int]string{seatOf[ann]: "ann", seatOf[bob]: "bob"}
	want := map[*page]string{ann: "Draw", bob: "Draw", carol: "Draw"}
	var winner, winnerName string
	if res.Winner != nil {
		winnerName = seatNames[*res.Winner]
		for _, p := range []*page{ann, bob, carol} {
			want[p] = winnerName + " won"
		}
		if winnerName == "ann" {
			want[ann] = "You won"
		} else {
			want[bob] = "You won"
		}
		winner = winnerName
	}
	for _, p := range []*page{ann, bob, carol} {
		if got := p.text(`[data-testid=result-headline]`); got != want[p] {
			t.Errorf("%s sees %q, want %q", p.name, got, want[p])
		}
		scores := eval[[]string](p, `[...document.querySelectorAll(".result [data-score]")].map(e => e.textContent)`)
		if len(scores) != 2 || scores[0] != fmt.Sprint(res.Scores[0]) || scores[1] != fmt.Sprint(res.Scores[1]) {
			t.Errorf("%s sees scores %v; the API says %v", p.name, scores, res.Scores)
		}
	}
	// The rating change shows on the rated result, as the lobby recorded it.
	for _, p := range []*page{ann, bob, carol} {
		p.waitJS(`document.querySelectorAll(".result .delta[data-change]").length === 2`)
		got := eval[[]int](p, `[...document.querySelectorAll(".result .delta[data-change]")].map(e => Number(e.dataset.change))`)
		switch {
		case res.Winner != nil && (got[*res.Winner] <= 0 || got[1-*res.Winner] >= 0):
			t.Errorf("%s sees rating changes %v; seat %d won", p.name, got, *res.Winner)
		case res.Winner == nil && (got[0] != 0 || got[1] != 0):
			t.Errorf("%s sees rating changes %v after a draw between equals", p.name, got)
		}
	}
	carol.screenshot("result")
	if winner == "" {
		for _, p := range []*page{ann, bob, carol, dave} {
			p.expectCleanConsole()
		}
		return // a draw between two new players moves nobody up
	}
	winPage := map[string]*page{"ann": ann, "bob": bob}[winner]

	// Back in the lobby, the winner's rating went up and the race is in
	// their history.
	winPage.do(chromedp.Navigate(srv.url + "/"))
	winPage.waitJS(`!!document.querySelector("[data-testid=profile] [data-variant=classic] [data-rating]") && !!document.querySelector("[data-testid=profile] [data-outcome=win]")`)
	if r := eval[string](winPage, `document.querySelector("[data-testid=profile] [data-variant=classic] [data-rating]").textContent`); r <= "1500" || len(r) != 4 {
		t.Errorf("%s's classic rating shows %q, want above 1500", winner, r)
	}
	winPage.waitJS(fmt.Sprintf(`(document.querySelector("[data-testid=leaderboard] li strong")||{}).textContent === %q`, winner))
	winPage.screenshot("lobby-after")

	// The leaderboard's names lead to each player's page: the loser's shows
	// their rating and this race, with a link back to the winner's page.
	loser := map[string]string{"ann": "bob", "bob": "ann"}[winner]
	loserID := info.Players[1-*res.Winner].Player
	winPage.click(fmt.Sprintf(`[data-testid=leaderboard] li[data-player=%q] a`, loserID))
	winPage.waitJS(fmt.Sprintf(`(document.querySelector(".player-page h1")||{}).textContent === %q && !!document.querySelector('[data-testid=profile] [data-race=%q]')`, loser, id))
	if r := eval[string](winPage, `document.querySelector("[data-testid=profile] [data-variant=classic] [data-rating]").textContent`); r >= "1500" || len(r) != 4 {
		t.Errorf("%s's page shows a classic rating of %q, want below 1500", loser, r)
	}
	if got := winPage.text(fmt.Sprintf(`[data-race=%q] a[href^="/?player="]`, id)); got != winner {
		t.Errorf("%s's history links to %q, want the winner %s", loser, got, winner)
	}
	if got := winPage.text(fmt.Sprintf(`[data-race=%q]`, id)); !strings.HasPrefix(got, "lost to "+winner) {
		t.Errorf("%s's history reads %q, want a loss to %s", loser, got, winner)
	}
	winPage.screenshot("player-page")

	for _, p := range []*page{ann, bob, carol, dave} {
		p.expectCleanConsole()
	}
}

// TestBrowserNameChange: a first visit makes a guest; a name the server
// refuses shows its reason and changes nothing; a good one is shown, kept
// across a reload, and is the name the player races under.
func TestBrowserNameChange(t *testing.T) {
	srv := startLiveServer(t)
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 900)
	ann.do(chromedp.Navigate(srv.url + "/"))
	ann.waitLobby()
	if n := ann.text("[data-testid=my-name]"); !strings.HasPrefix(n, "guest-") {
		t.Errorf("a new player is called %q, want guest-…", n)
	}
	ann.do(chromedp.SetValue(chromedp.CSS("#lobby-name"), "<ann>"))
	ann.click(`[data-action=rename]`)
	ann.waitJS(`document.querySelector("[data-testid=name-error]").textContent !== ""`)
	if msg := ann.text("[data-testid=name-error]"); !strings.Contains(msg, "<") {
		t.Errorf("the refusal reads %q", msg)
	}
	if got := eval[string](ann, `document.querySelector("#lobby-name").getAttribute("aria-invalid")`); got != "true" {
		t.Errorf("aria-invalid %q", got)
	}
	ann.rename("Ann B")
	if msg := eval[string](ann, `document.querySelector("[data-testid=name-error]").textContent`); msg != "" {
		t.Errorf("an error stays after a good name: %q", msg)
	}
	ann.screenshot("renamed")
	ann.do(chromedp.Reload())
	ann.waitLobby()
	if n := ann.text("[data-testid=my-name]"); n != "Ann B" {
		t.Errorf("after a reload the name is %q", n)
	}
	ann.click(`[data-action=computer]`)
	ann.waitRaceState("countdown")
	if n := eval[string](ann, `document.querySelector(".me h2").textContent`); n != "Ann B (you)" {
		t.Errorf("ann races as %q", n)
	}
	ann.expectCleanConsole()
}

// TestBrowserChallenge: ann posts a challenge; it is listed for both, but
// only bob may accept it. He does from the list, and both are taken to the
// race, which counts down.
func TestBrowserChallenge(t *testing.T) {
	srv := startLiveServer(t)
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 900)
	bob := b.newPage("bob", 1280, 900)
	ann.do(chromedp.Navigate(srv.url + "/"))
	bob.do(chromedp.Navigate(srv.url + "/"))
	ann.rename("ann")
	bob.waitLobby()

	ann.do(chromedp.SetValue(chromedp.CSS("#ch-variant"), "aces-out"), chromedp.SetValue(chromedp.CSS("#ch-bestof"), "3"))
	ann.click(`[data-action=challenge]`)
	ann.waitJS(`!!document.querySelector("[data-testid=challenges] li.own") && !!document.querySelector("[data-action=cancel-challenge]")`)
	if eval[bool](ann, `!!document.querySelector("[data-testid=challenges] [data-action=accept-challenge]")`) {
		t.Error("ann may accept her own challenge")
	}
	bob.waitJS(`!!document.querySelector("[data-testid=challenges] [data-challenge] [data-action=accept-challenge]")`)
	if row := bob.text("[data-testid=challenges] [data-challenge]"); !strings.Contains(row, "ann") || !strings.Contains(row, "aces-out") || !strings.Contains(row, "best of 3") {
		t.Errorf("bob's challenge row reads %q", row)
	}
	bob.screenshot("challenges")
	bob.click(`[data-testid=challenges] [data-action=accept-challenge]`)
	ann.waitRaceState("countdown")
	bob.waitRaceState("countdown")
	if a, b := ann.raceID(), bob.raceID(); a != b {
		t.Fatalf("ann in %q, bob in %q", a, b)
	}
	if v := srv.raceInfo(t, bob.raceID()).Variant; v != "aces-out" {
		t.Errorf("variant %q", v)
	}
	ann.expectCleanConsole()
	bob.expectCleanConsole()
}

// TestBrowserInviteCode: ann gets an invite code in the lobby; bob opens
// its link, accepts, and both are in the race.
func TestBrowserInviteCode(t *testing.T) {
	srv := startLiveServer(t)
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 900)
	bob := b.newPage("bob", 1280, 900)
	ann.do(chromedp.Navigate(srv.url + "/"))
	ann.waitLobby()
	ann.click(`[data-action=invite]`)
	ann.waitJS(`!!document.querySelector("#invite-code-link")`)
	link := eval[string](ann, `document.querySelector("#invite-code-link").value`)
	if !strings.Contains(link, "/?invite=") {
		t.Fatalf("invite link %q", link)
	}
	bob.do(chromedp.Navigate(link))
	bob.waitLobby()
	bob.click(`[data-action=accept-invite]`)
	ann.waitRaceState("countdown")
	bob.waitRaceState("countdown")
	if a, b := ann.raceID(), bob.raceID(); a != b {
		t.Fatalf("ann in %q, bob in %q", a, b)
	}
	// The code works once.
	bob.do(chromedp.Navigate(link))
	bob.waitLobby()
	bob.click(`[data-action=accept-invite]`)
	bob.waitJS(`document.querySelector("[data-panel=invite] .error").textContent !== ""`)
	ann.expectCleanConsole()
	bob.expectCleanConsole()
}

// TestBrowserComputerOffer: alone in the quick-play queue, ann is offered
// the computer and accepts; she races it, and it moves.
func TestBrowserComputerOffer(t *testing.T) {
	srv := startLiveServerWith(t, liveOptions{offerAfter: 500 * time.Millisecond})
	b := newBrowser(t)
	ann := b.newPage("ann", 1280, 900)
	ann.do(chromedp.Navigate(srv.url + "/"))
	ann.waitLobby()
	ann.click(`[data-action=queue]`)
	ann.waitJS(`!document.querySelector("[data-testid=computer-offer]").hidden`)
	ann.screenshot("offer")
	ann.click(`[data-action=play-computer]`)
	ann.waitRaceState("countdown")
	if n := eval[string](ann, `document.querySelector(".opponent h2").textContent`); !strings.HasPrefix(n, "computer") {
		t.Errorf("ann's opponent is %q", n)
	}
	ann.waitRaceState("running")
	// The computer plays.
	ann.waitJS(`Number(([...document.querySelectorAll(".opponent .stats dd")][2]||{}).textContent) > 0`)
	id := ann.raceID()

	// Out of the game, ann has a way back to the lobby, and taking it
	// forfeits nothing: the race is decided on the cards.
	ann.resign()
	ann.waitJS(`!document.querySelector("[data-action=leave]").hidden`)
	ann.click(`[data-action=leave]`)
	ann.waitLobby()
	deadline := time.Now().Add(waitTimeout)
	for srv.raceInfo(t, id).Result == nil {
		if time.Now().After(deadline) {
			t.Fatal("the race against the computer never ended")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res := srv.raceInfo(t, id).Result; res.Reason == "forfeit" || res.Outcome == "aborted" {
		t.Errorf("leaving after resigning ended the race as %s (%s)", res.Outcome, res.Reason)
	}
	ann.expectCleanConsole()
}
