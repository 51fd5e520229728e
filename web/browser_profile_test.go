package web_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"sirtommy/lobby"
	"sirtommy/lobby/glicko2"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
)

// browserHistory is a player's lobby history saved into a store: the
// races' ids, oldest first, and the ids and last rating of the rated races
// of each variant.
type browserHistory struct {
	ids   []string
	rated map[string][]string
	last  map[string]glicko2.Rating
}

// fillHistory saves 27 races of player's (named ann), one every seven
// hours from the first of March: against bob and carol, rated, in classic
// or every fourth in aces-out, won, lost or drawn by a fixed pattern, rated
// by Glicko-2 as the lobby rates; every fifth against the computer.
func fillHistory(t *testing.T, r lobby.Ratings, player string) browserHistory {
	t.Helper()
	const pattern = "WWLWDWLLWWWLWWDLWWLWWWLWDWW"
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	h := browserHistory{rated: map[string][]string{}, last: map[string]glicko2.Rating{}}
	mine, theirs := map[string]lobby.Standing{}, map[string]lobby.Standing{}
	for i, c := range pattern {
		id := fmt.Sprintf("%032x", i+1)
		h.ids = append(h.ids, id)
		opp := []lobby.PlayerRef{{ID: "p-bob", Name: "bob"}, {ID: "p-carol", Name: "carol"}}[i%2]
		g := lobby.GameRecord{Race: id, Variant: "classic", At: start.Add(time.Duration(i) * 7 * time.Hour),
			Players: []lobby.PlayerRef{{ID: player, Name: "ann"}, opp}, Reason: race.ReasonMoreCards}
		score := map[rune]float64{'W': glicko2.Win, 'L': glicko2.Loss, 'D': glicko2.Draw}[c]
		switch score {
		case glicko2.Win:
			g.Outcome, g.Winner, g.Scores = race.OutcomeWin, new(0), []int{30 + i%12, 22}
		case glicko2.Loss:
			g.Outcome, g.Winner, g.Scores = race.OutcomeWin, new(1), []int{18, 27 + i%9}
		default:
			g.Outcome, g.Reason, g.Scores = race.OutcomeDraw, race.ReasonEqualCards, []int{24, 24}
		}
		var after []lobby.Standing
		if i%5 == 4 {
			g.Players[1] = lobby.PlayerRef{Name: "computer", Computer: true}
		} else {
			if i%4 == 3 {
				g.Variant = "aces-out"
			}
			g.Rated = true
			me, them := mine[g.Variant], theirs[g.Variant+opp.ID]
			if me.Games == 0 {
				me = lobby.NewStanding(player, "ann", g.Variant)
			}
			if them.Games == 0 {
				them = lobby.NewStanding(opp.ID, opp.Name, g.Variant)
			}
			g.Before = []glicko2.Rating{me.Rating, them.Rating}
			g.After = []glicko2.Rating{
				glicko2.Update(me.Rating, []glicko2.Result{{Opponent: them.Rating, Score: score}}, 0.5),
				glicko2.Update(them.Rating, []glicko2.Result{{Opponent: me.Rating, Score: 1 - score}}, 0.5),
			}
			me, them = lobby.ApplyResult(me, score, g.After[0]), lobby.ApplyResult(them, 1-score, g.After[1])
			mine[g.Variant], theirs[g.Variant+opp.ID] = me, them
			after = []lobby.Standing{me, them}
			h.rated[g.Variant] = append(h.rated[g.Variant], id)
			h.last[g.Variant] = g.After[0]
		}
		if err := r.Save(context.Background(), g, after); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// screenshotIn writes PNGs of the page to dir: NAME.png what the screen
// shows, NAME-full.png the whole page.
func (p *page) screenshotIn(dir, name string) {
	p.t.Helper()
	for file, shot := range map[string]chromedp.Action[[]byte]{name: chromedp.CaptureScreenshot(), name + "-full": chromedp.FullScreenshot(100)} {
		buf, err := chromedp.Run(p.ctx, shot)
		if err != nil {
			p.t.Fatalf("%s: screenshot: %v", p.name, err)
		}
		path := filepath.Join(dir, file+".png")
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			p.t.Fatal(err)
		}
		p.t.Logf("screenshot %s", path)
	}
}

// chartLayoutJS measures the chart's box and where the races begin below
// it: [box width, box height, the races' heading's top].
const chartLayoutJS = `(() => {
  const box = document.querySelector("[data-testid=rating-chart]").getBoundingClientRect();
  const races = [...document.querySelectorAll("[data-testid=profile] h3")].find((e) => e.textContent === "Races").getBoundingClientRect();
  return [box.width, box.height, races.top];
})()`

// TestBrowserPlayerPage: a player (this browser's, as the lobby made
// them) with rated races in two variants opens their page. The chart's box has its size before its points arrive (held
// back by the server here), so nothing below it moves when they do; it
// shows a point per rated race of the most played variant, with a label
// saying so, and the other variant's on a click. "More games" loads the
// races after the first 20 with the profile's cursor, every race once,
// newest first; "Download my games" links to games.txt. At 360 px, in
// another browser, nothing overflows the screen and the chart's labels
// are as big as on a computer.
func TestBrowserPlayerPage(t *testing.T) {
	ratings := memlobby.NewRatings()
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	srv := startLiveServerWith(t, liveOptions{ratings: ratings, gate: func(r *http.Request) {
		if strings.Contains(r.URL.Path, "/ratings/") {
			<-release
		}
	}})
	t.Cleanup(open) // before the server closes (cleanups run last first)
	shots := t.ArtifactDir()
	b := newBrowser(t)

	wide := b.newPage("wide", 1280, 800)
	wide.do(chromedp.Navigate(srv.url + "/"))
	wide.waitLobby()
	player := eval[string](wide, `JSON.parse(localStorage.getItem("sirtommy.player")).player`)
	hist := fillHistory(t, ratings, player)
	wide.do(chromedp.Navigate(srv.url + "/?player=" + player))
	wide.waitJS(`document.querySelectorAll("[data-testid=history] li").length === 20`)
	if eval[bool](wide, `!!document.querySelector("[data-testid=rating-chart][data-state]")`) {
		t.Fatal("the chart was drawn while its points were held back")
	}
	before := eval[[]float64](wide, chartLayoutJS)
	if w, h := before[0], before[1]; w != 560 || math.Abs(h-240) > 1 {
		t.Errorf("the chart's box is %.0f×%.0f before its points, want 560×240", w, h)
	}
	open()
	wide.waitJS(`(document.querySelector("[data-testid=rating-chart]")||{dataset:{}}).dataset.state === "done"`)
	if after := eval[[]float64](wide, chartLayoutJS); !slices.Equal(after, before) {
		t.Errorf("the page moved when the chart came: box and races at %v, were %v", after, before)
	}

	checkChart := func(variant string) {
		t.Helper()
		ids := hist.rated[variant]
		points := eval[[]string](wide, `[...document.querySelectorAll("[data-testid=rating-chart] svg circle[data-point]")].map((c) => c.dataset.point)`)
		if !slices.Equal(points, ids) {
			t.Errorf("%s: points %v, want the rated races %v", variant, points, ids)
		}
		want := fmt.Sprintf("Rating in %s from 1500 to %.0f over %d rated races", variant, hist.last[variant].Rating, len(ids))
		label := eval[string](wide, `document.querySelector("[data-testid=rating-chart] svg").getAttribute("aria-label")`)
		title := eval[string](wide, `document.querySelector("[data-testid=rating-chart] svg > title").textContent`)
		if label != want || title != want {
			t.Errorf("%s: label %q, title %q, want %q", variant, label, title, want)
		}
	}
	checkChart("classic") // the most played first
	wide.screenshotIn(shots, "wide-first-page")

	wide.click(`[data-chart-variant="aces-out"]`)
	wide.waitJS(`(() => { const b = document.querySelector("[data-testid=rating-chart]"); return b.dataset.variant === "aces-out" && b.dataset.state === "done"; })()`)
	checkChart("aces-out")
	if c := eval[string](wide, `document.querySelector("[data-chart-variant=aces-out]").getAttribute("aria-checked")`); c != "true" {
		t.Errorf("the aces-out chip is aria-checked %q", c)
	}

	wide.click(`[data-action=more-games]`)
	wide.waitJS(`document.querySelectorAll("[data-testid=history] li").length === 27`)
	rows := eval[[]string](wide, `[...document.querySelectorAll("[data-testid=history] li")].map((li) => li.dataset.race)`)
	newest := slices.Clone(hist.ids)
	slices.Reverse(newest)
	if !slices.Equal(rows, newest) {
		t.Errorf("the races shown: %v, want every race once, newest first: %v", rows, newest)
	}
	if !eval[bool](wide, `document.querySelector("[data-action=more-games]").hidden`) {
		t.Error(`"More games" is still offered after the last page`)
	}
	if s := wide.text(".games-status"); s != "All 27 races shown." {
		t.Errorf("status %q", s)
	}
	if href, text := eval[string](wide, `document.querySelector("[data-action=download-games]").getAttribute("href")`), wide.text("[data-action=download-games]"); href != "/api/players/"+player+"/games.txt" || text != "Download my games" {
		t.Errorf("download link %q: %q", text, href)
	}
	if got := wide.text(fmt.Sprintf(`[data-race=%q] a[href^="/?replay="]`, hist.ids[0])); got != "replay" {
		t.Errorf("the oldest race's replay link reads %q", got)
	}
	wide.do(chromedp.ScrollIntoView(chromedp.CSS(`[data-action=download-games]`)))
	wide.screenshotIn(shots, "wide-all-races")

	phone := b.newPage("phone", 360, 740)
	phone.do(chromedp.Navigate(srv.url + "/?player=" + player))
	phone.waitJS(`(document.querySelector("[data-testid=rating-chart]")||{dataset:{}}).dataset.state === "done"`)
	if w := eval[float64](phone, `document.documentElement.scrollWidth`); w > 360 {
		t.Errorf("the page is %.0f px wide on a 360 px screen", w)
	}
	// On a phone the chart is taller for its width, and drawn in the box's
	// own pixels, so that its labels are as big as on a computer.
	box := eval[[]float64](phone, chartLayoutJS)
	view := eval[[]float64](phone, `(() => { const v = document.querySelector("[data-testid=rating-chart] svg").viewBox.baseVal; return [v.width, v.height]; })()`)
	if w, h := box[0], box[1]; math.Abs(h-w*3/4) > 1 || math.Abs(view[0]-w) > 1 || math.Abs(view[1]-h) > 1 {
		t.Errorf("the chart's box is %.0f×%.0f at 360 px (want 4:3), drawn in %v units", w, h, view)
	}
	if text := phone.text("[data-action=download-games]"); text != "Download all games" {
		t.Errorf("another player's download reads %q", text)
	}
	phone.screenshotIn(shots, "phone")
	phone.click(`[data-action=more-games]`)
	phone.waitJS(`document.querySelectorAll("[data-testid=history] li").length === 27`)
	phone.screenshotIn(shots, "phone-all-races")

	phone.expectSteady("the player page")

	// The lobby of a player with a history: its panels keep their places
	// as the leaderboard, the day's deal and the player's races arrive.
	eval[bool](wide, `(() => { const i = JSON.parse(localStorage.getItem("sirtommy.player")); i.raced = true; localStorage.setItem("sirtommy.player", JSON.stringify(i)); return true; })()`)
	wide.do(chromedp.Navigate(srv.url + "/"))
	wide.waitLobby()
	wide.waitJS(`document.querySelectorAll("[data-testid=leaderboard] li[data-player]").length >= 3 && document.querySelectorAll("[data-testid=profile] [data-testid=history] li").length > 0`)
	wide.screenshotIn(shots, "wide-lobby")
	wide.expectSteady("the lobby of a player with a history")
	wide.expectAccessible("the lobby of a player with a history")

	wide.expectCleanConsole()
	phone.expectCleanConsole()
}
