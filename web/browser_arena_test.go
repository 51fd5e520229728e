package web_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/web"
)

// newArenaBrowserEnv is newLobbyEnv for a browser: the server on a fake
// clock (the lobby's heartbeat, which pairs an arena's pool, and the
// races' countdowns move only when the test moves it), with the small
// solver budgets of the browser tests behind the result page.
func newArenaBrowserEnv(t *testing.T) *lobbyEnv {
	t.Helper()
	var l *lobby.Lobby
	e := newEnvWith(t, func(clock *racetest.Clock, d *web.Deps) {
		tokens, err := lobby.NewTokens([]byte(testSecret), clock, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		l = lobby.New(lobby.Config{}, lobby.Deps{
			Clock: clock, Log: zerolog.Nop(), Races: d.Races, Tokens: tokens,
			Stores: memlobby.NewStores(lobby.MatchConfig{}, clock), Computer: lobby.ComputerFactory(d.Computer),
		})
		d.Lobby = l
		d.SolveBudget = browserSolveBudget
		d.AnalysisBudget = analysisBudget
	})
	t.Cleanup(l.Close) // after the connections close (cleanups run last first)
	return &lobbyEnv{env: e, lobby: l}
}

// waitTicking waits for cond on p while the fake clock moves a second
// (a heartbeat) every 300 ms, as time would: the arena sends its
// changes to those watching it on the heartbeat.
func (e *lobbyEnv) waitTicking(p *page, cond string) {
	p.t.Helper()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(300 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				e.clock.Advance(time.Second)
			}
		}
	}()
	defer func() {
		close(stop)
		<-done
	}()
	p.waitJS(cond)
}

// arenaYou is the arena page's own line, and its state.
func (p *page) arenaYou() (text, state string) {
	p.t.Helper()
	return p.text(`[data-testid=arena-you-text]`), eval[string](p, `document.querySelector("[data-testid=arena]").dataset.you`)
}

// waitArenaYou waits until p's arena page has the player in state.
func (p *page) waitArenaYou(state string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`(document.querySelector("[data-testid=arena]")||{dataset:{}}).dataset.you === %q`, state))
}

// arenaStandingsJS reads the arena page's leaderboard: each row's name,
// points, races, berserks, sheet and state.
const arenaStandingsJS = `[...document.querySelectorAll("[data-testid=arena-standings] tbody tr[data-player]")].map((r) => [
  r.querySelector(".pname").textContent, r.querySelector("td.pts").firstChild.textContent, r.querySelector("td.races").textContent,
  r.querySelector("td.bzk").textContent, r.querySelector("td.sheet").textContent, r.dataset.state])`

// TestBrowserArena: an arena is made to start in two minutes; the lobby
// lists it (name, variant, race time, status, players, a countdown to its
// start) and ann, bob and cleo (on a phone) open its page from there and
// join, cleo pausing and joining again on the way; dan, new here, opens
// its link, gives his name and watches. When the clock reaches
// the start, ann and bob, first on the board, are paired and taken to
// their race; cleo is left waiting, and her page says so. ann goes
// berserk in the countdown with the keyboard (the button then reads
// "Berserk!", her clock shows half the time, bob's page marks her);
// after the countdown the button is gone. bob resigns and ann wins by
// playing on. Both results lead back to the arena, bob with the button,
// ann by herself after the countdown; the leaderboard has ann at 3 points
// (a win 2, berserk 1), then cleo (paused meanwhile, no race) and bob at
// 0, and nobody is paired again (ann and bob just met; cleo is paused).
// When the time is up every page shows the podium.
func TestBrowserArena(t *testing.T) {
	b := newBrowser(t)
	e := newArenaBrowserEnv(t)
	start := e.clock.Now().Add(2 * time.Minute).Truncate(time.Second)
	spec := lobby.ArenaSpec{Name: "Test arena", Variant: "classic", TimeLimit: 5 * time.Minute, Duration: 30 * time.Minute}
	if _, err := e.lobby.MakeArena("test-arena", spec, start); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second) // a heartbeat lists it in the lobby

	ann := b.newPage("ann", 1280, 800)
	bob := b.newPage("bob", 1280, 800)
	cleo := b.newPage("cleo", 360, 740)
	pages := []*page{ann, bob, cleo}
	names := []string{"ann", "bob", "cleo"}
	for i, p := range pages {
		p.do(chromedp.Navigate(e.ts.URL + "/"))
		p.rename(names[i])
	}

	// The lobby's section: the arena with its countdown to the start.
	const line = `[data-testid=arenas] [data-arena=test-arena]`
	for _, p := range []*page{ann, cleo} {
		p.waitJS(`!document.querySelector("[data-panel=arenas]").hidden && !!document.querySelector(` + "`" + line + "`" + `)`)
		if got := p.text(line + ` .arena-name`); got != "Test arena" {
			t.Errorf("%s's lobby names the arena %q", p.name, got)
		}
		if got := p.text(line + ` .what`); got != "classic · 5 min races · 0\u00a0players" {
			t.Errorf("%s's lobby describes the arena as %q", p.name, got)
		}
		if got := p.text(line + ` .arena-status`); got != "starting soon" {
			t.Errorf("%s's lobby has the arena's status %q", p.name, got)
		}
		if got := p.text(line + ` .arena-when`); !regexp.MustCompile(`^starts in [12]:\d\d$`).MatchString(got) {
			t.Errorf("%s's lobby counts down %q", p.name, got)
		}
	}
	expectNoSidewaysScroll(cleo, "in the lobby with an arena")
	ann.screenshot("lobby-arenas")
	cleo.screenshot("lobby-arenas-phone")

	// Each opens the arena from the lobby and joins, in turn.
	for _, p := range pages {
		p.click(line + ` [data-action=open-arena]`)
		p.waitJS(`(document.querySelector("[data-testid=arena]")||{dataset:{}}).dataset.status === "soon"`)
		p.click(`[data-action=arena-join]`)
		p.waitArenaYou("waiting")
		if eval[string](p, `document.activeElement.dataset.action`) != "arena-pause" {
			t.Errorf("%s: after joining, the focus is not on Pause", p.name)
		}
	}
	if got := cleo.text(`[data-testid=arena-rule]`); got != "Only people race in an arena: no computer players. If nobody is free, you wait." {
		t.Errorf("the arena page's rule reads %q", got)
	}
	if got := ann.text(`[data-testid=arena-what]`); got != "classic · 5 min races, back to back for 30 min" {
		t.Errorf("the arena page describes it as %q", got)
	}
	if got := ann.text(`[data-testid=arena-when]`); !regexp.MustCompile(`^Starts in [12]:\d\d$`).MatchString(got) {
		t.Errorf("the arena page counts down %q", got)
	}
	// cleo pauses and joins again.
	cleo.click(`[data-action=arena-pause]`)
	cleo.waitArenaYou("paused")
	if got := cleo.text(`[data-action=arena-join]`); got != "Join again" {
		t.Errorf("after a pause, the join button reads %q", got)
	}
	cleo.click(`[data-action=arena-join]`)
	cleo.waitArenaYou("waiting")
	// The others' pages hear of each join on the next heartbeat; the page
	// drawn again keeps the focus where it was.
	for _, p := range pages {
		e.waitTicking(p, `document.querySelectorAll("[data-testid=arena-standings] tbody tr[data-player]").length === 3`)
	}
	if eval[string](ann, `document.activeElement.dataset.action`) != "arena-pause" {
		t.Errorf("ann's page, drawn again as the others joined, lost the focus from Pause")
	}
	if text, _ := ann.arenaYou(); text != "Rank 1 · 0 points · joined: pairing begins at the start" {
		t.Errorf("ann's line reads %q", text)
	}
	expectNoSidewaysScroll(cleo, "on the arena page")
	ann.screenshot("arena")
	cleo.screenshot("arena-phone")
	ann.expectAccessible("the arena page")
	cleo.expectAccessible("the arena page on a phone")

	// dan, here for the first time, opens the arena's link: he gives his
	// name and watches it, not joined. An arena that does not exist is
	// said so in words.
	dan := b.newPage("dan", 1280, 800)
	dan.do(chromedp.Navigate(e.ts.URL+"/?arena=test-arena"), chromedp.WaitVisible(chromedp.CSS("#arena-name-input")),
		chromedp.SetValue(chromedp.CSS("#arena-name-input"), "dan"))
	dan.click(`[data-action=arena-name]`)
	dan.waitJS(`(document.querySelector("[data-testid=arena-you-text]")||{}).textContent === "You have not joined this arena."`)
	if eval[bool](dan, `document.querySelector("[data-action=arena-join]").hidden`) {
		t.Error("dan, not in the arena, is not offered to join it")
	}
	dan.do(chromedp.Navigate(e.ts.URL + "/?arena=nope"))
	dan.waitJS(`(document.querySelector("[data-testid=arena-error]")||{textContent:""}).textContent.startsWith("There is no such arena")`)
	dan.expectCleanConsole()

	// The start: ann and bob, first on the board, race; cleo waits.
	for e.clock.Now().Before(start) {
		e.clock.Advance(time.Second)
	}
	for _, p := range []*page{ann, bob} {
		p.waitRaceState("countdown")
	}
	id := ann.raceID()
	if got := bob.raceID(); got != id || id == "" {
		t.Fatalf("ann is in race %q, bob in %q", id, got)
	}
	cleo.waitJS(`document.querySelector("[data-testid=arena]").dataset.status === "running"`)
	cleo.waitJS(`/waiting for an opponent \(only you in the pool\)$/.test(document.querySelector("[data-testid=arena-you-text]").textContent)`)
	cleo.waitJS(`!document.querySelector("[data-testid=arena-wait]").hidden && /^Waiting for \d+:\d\d$/.test(document.querySelector("[data-testid=arena-wait]").textContent)`)
	cleo.waitJS(`!document.querySelector(".arena-top").hidden`)
	if href := eval[string](cleo, `document.querySelector("[data-action=watch-top]").getAttribute("href")`); href != "/?watch="+id {
		t.Errorf("the top race's link is %q, want the race %s", href, id)
	}
	if got := cleo.text(`[data-testid=arena-when]`); !regexp.MustCompile(`^Ends in (30:00|29:\d\d)$`).MatchString(got) {
		t.Errorf("the running arena counts down %q", got)
	}
	expectNoSidewaysScroll(cleo, "waiting in the arena")
	cleo.screenshot("arena-waiting-phone")
	// cleo pauses while the others race: nobody is paired after their race.
	cleo.click(`[data-action=arena-pause]`)
	cleo.waitArenaYou("paused")

	// ann goes berserk in the countdown, with the keyboard.
	for _, p := range []*page{ann, bob} {
		p.waitJS(`!document.querySelector("[data-testid=berserk-box]").hidden`)
	}
	if got := ann.text(`.berserk-why`); got != "Half your time, +1 point if you win." {
		t.Errorf("berserk is explained as %q", got)
	}
	ann.screenshot("race-berserk-button")
	ann.do(chromedp.Focus(chromedp.CSS(`[data-action=berserk]`)), chromedp.KeyEvent(kb.Enter))
	ann.waitJS(`(() => { const b = document.querySelector("[data-action=berserk]"); return b.disabled && b.textContent === "Berserk!"; })()`)
	ann.waitJS(`!document.querySelector("[data-testid=berserk-mark]").hidden && document.querySelector("[data-testid=clock]").textContent.startsWith("2:")`)
	bob.waitJS(`!!document.querySelector("[data-testid=opp-berserk]")`)
	bob.screenshot("race-opponent-berserk")
	ann.screenshot("race-berserked")
	ann.expectAccessible("an arena race's countdown")

	e.clock.Advance(race.DefaultCountdown)
	for _, p := range []*page{ann, bob} {
		p.waitRaceState("running")
		p.waitJS(`document.querySelector("[data-testid=berserk-box]").hidden`)
	}

	// bob resigns; ann plays on until she has passed him.
	resignInTurn(bob)
	for n := 0; ann.playStep(n, 4); n++ {
	}
	ann.waitRaceState("finished")
	final := e.info(id)
	if final.Result == nil || final.Result.Winner == nil || final.Players[*final.Result.Winner].Name != "ann" {
		t.Fatalf("the race ended with %+v: want ann the winner", final.Result)
	}
	// ann's result first: it goes back to the arena by itself in 8 s.
	for _, p := range []*page{ann, bob} {
		p.waitRaceState("finished")
		p.do(chromedp.WaitVisible(chromedp.CSS(`[data-action=back-to-arena]`)))
		if p == ann {
			if got := ann.text(`[data-testid=arena-return-left]`); !regexp.MustCompile(`^Back to the arena in [1-8] s\.$`).MatchString(got) {
				t.Errorf("ann's result counts down %q", got)
			}
			ann.screenshot("result-back-to-arena")
		}
		if eval[bool](p, `!!document.querySelector("[data-action=rematch]")`) {
			t.Errorf("%s is offered a rematch of an arena's race", p.name)
		}
	}

	// bob goes back at once; ann's page goes by itself.
	bob.click(`[data-action=back-to-arena]`)
	e.waitTicking(bob, `(document.querySelector("[data-testid=arena]")||{dataset:{}}).dataset.you === "waiting" && /^Rank 3 · 0 points/.test(document.querySelector("[data-testid=arena-you-text]").textContent)`)
	e.waitTicking(ann, `location.search === "?arena=test-arena" && (document.querySelector("[data-testid=arena]")||{dataset:{}}).dataset.you === "waiting" && /^Rank 1 · 3 points/.test(document.querySelector("[data-testid=arena-you-text]").textContent)`)
	e.waitTicking(cleo, `/^ann,3,/.test(String(`+arenaStandingsJS+`[0]))`)
	// Equal points: fewer races first.
	want := [][]string{
		{"ann", "3", "1", "1", "3", "waiting"},
		{"cleo", "0", "0", "0", "", "paused"},
		{"bob", "0", "1", "0", "0", "waiting"},
	}
	for _, p := range pages {
		got := eval[[][]string](p, arenaStandingsJS)
		if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
			t.Errorf("%s's leaderboard is %q, want %q", p.name, got, want)
		}
	}
	if text, _ := ann.arenaYou(); !strings.HasSuffix(text, "waiting for an opponent (2 in the pool)") {
		t.Errorf("ann, back in the pool, reads %q", text)
	}
	// Each player's races: ann's own are shown to her once she has raced,
	// with the replay; cleo opens bob's from his name on the board.
	ann.waitJS(`(document.querySelector("[data-testid=arena-races] h2")||{}).textContent === "Your races" && document.querySelectorAll("[data-testid=arena-races] li[data-race]").length === 1`)
	if got := ann.text(`[data-testid=arena-races] li`); got != "Won against bob · 3 points (berserk) · replay" {
		t.Errorf("ann's race reads %q", got)
	}
	if href := eval[string](ann, `document.querySelector("[data-testid=arena-races] li a").getAttribute("href")`); href != "/?replay="+id {
		t.Errorf("ann's race links to %q, want its replay", href)
	}
	if !eval[bool](cleo, `document.querySelector("[data-testid=arena-races]").hidden`) {
		t.Error("cleo, who has not raced, is shown races")
	}
	eval[bool](cleo, `(() => { [...document.querySelectorAll("[data-action=arena-races]")].find((b) => b.textContent === "bob").click(); return true; })()`)
	cleo.waitJS(`(document.querySelector("[data-testid=arena-races] h2")||{}).textContent === "bob's races" && document.activeElement === document.querySelector("[data-testid=arena-races] h2") && document.querySelectorAll("[data-testid=arena-races] li[data-race]").length === 1`)
	if got := cleo.text(`[data-testid=arena-races] li`); got != "Lost against ann · 0 points · replay" {
		t.Errorf("bob's race, as cleo reads it: %q", got)
	}
	ann.screenshot("arena-after-race")
	cleo.screenshot("arena-after-race-phone")

	// The time is up with nobody racing: the podium, and no more joining.
	e.clock.Advance(spec.Duration)
	for _, p := range pages {
		p.waitJS(`document.querySelector("[data-testid=arena]").dataset.status === "over" && !document.querySelector("[data-testid=arena-podium]").hidden`)
		if got := eval[[]string](p, `[...document.querySelectorAll("[data-testid=arena-podium-list] li strong")].map((e) => e.textContent)`); !slices.Equal(got, []string{"ann", "cleo", "bob"}) {
			t.Errorf("%s's podium is %q", p.name, got)
		}
		if eval[bool](p, `[...document.querySelectorAll("[data-action=arena-join], [data-action=arena-pause]")].some((b) => !b.hidden)`) {
			t.Errorf("%s may still join or pause an arena that is over", p.name)
		}
	}
	if got := ann.text(`[data-testid=arena-when]`); got != "The arena is over." {
		t.Errorf("the arena's clock reads %q once it is over", got)
	}
	// A sheet's doubled races (marked "!") are drawn in bold, and said so.
	sheet, err := chromedp.Run(ann.ctx, chromedp.Evaluate[string](`import("/js/arena.js").then((m) => m.sheetEl("24!4!0").innerHTML)`, chromedp.EvalAwaitPromise))
	if want := `<span>2</span><strong class="x2">4<span class="visually-hidden"> (double)</span></strong><strong class="x2">4<span class="visually-hidden"> (double)</span></strong><span>0</span>`; err != nil || sheet != want {
		t.Errorf("the sheet 24!4!0 is drawn as %q (%v), want %q", sheet, err, want)
	}
	expectNoSidewaysScroll(cleo, "on the podium")
	ann.screenshot("arena-podium")
	cleo.screenshot("arena-podium-phone")
	for _, p := range pages {
		p.expectCleanConsole()
	}
}
