package web_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"sirtommy/race"
	"sirtommy/race/racetest"
)

// dialLive opens a scripted client on the live server.
func (s *liveServer) dialLive(t *testing.T) *client {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.url, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return &client{t: t, ws: ws}
}

// TestBrowserGhostRace: ann and bob race (scripted clients, as fast as
// they can); ann turns her game into a ghost challenge. Cat, a first-time
// visitor, opens the link, reads what she is challenged to, races the
// recording with real clicks to the end, sees it marked as a recording
// beside her board and the result; her game becomes a challenge of its
// own, and ann, online, hears how it went.
func TestBrowserGhostRace(t *testing.T) {
	srv := startLiveServerWith(t, liveOptions{limits: &playLimits, daily: true})
	d := ghostDeal(t)
	ann, bob := srv.dialLive(t), srv.dialLive(t)
	ann.hello("ann")
	bob.hello("bob")
	ann.send(map[string]any{"type": "invite", "deal": strconvU(d), "id": "i"})
	inv := decode[invited](t, ann.untilType("invited"))
	bob.send(map[string]any{"type": "accept-invite", "code": inv.Code, "id": "a"})
	mt := ann.takeSeat()
	bob.takeSeat()
	ann.untilState(race.Running)
	ga, gb := newGame(d), newGame(d)
	for i := 0; stepTo(ann, &ga, racetest.Greedy, "a"+strconvU(uint64(i))); i++ {
	}
	for i := 0; stepTo(bob, &gb, racetest.Dumb, "b"+strconvU(uint64(i))); i++ {
	}
	ann.result()
	ann.send(map[string]any{"type": "ghost", "race": mt.Race, "seat": ann.seat, "id": "g"})
	made := decode[ghostMade](t, ann.untilType("ghost-made"))

	b := newBrowser(t)
	cat := b.newPage("cat", 1280, 900)
	cat.do(chromedp.Navigate(made.Link))
	cat.waitLobby()
	cat.waitJS(`document.querySelector("[data-testid=ghost-about]").textContent.includes("cards on the foundations")`)
	// The front page shows the day's deal too, not played yet.
	cat.waitJS(`document.querySelector("[data-testid=daily-commitment]").textContent.length > 8 && document.querySelector("[data-testid=daily-you]").textContent.includes("not yet")`)
	cat.click(`[data-action=race-ghost]`)
	cat.waitRaceState("running")
	cat.waitJS(`document.querySelector("[data-ghost]") && document.querySelector("[data-ghost]").textContent.includes("(recording)")`)
	for n := 0; cat.playStep(n, 2); n++ {
		if n > 200 {
			t.Fatal("the race does not end")
		}
	}
	cat.waitRaceState("finished")
	cat.waitJS(`document.querySelector("[data-testid=result-headline]") && document.querySelector("[data-testid=result-headline]").textContent.length > 0`)
	head := cat.text("[data-testid=result-headline]")
	run := decode[struct {
		Run struct{ Name, Outcome string }
	}](t, ann.untilType("ghost-raced"))
	if !strings.Contains(head, "ann") && !strings.Contains(head, "You") {
		t.Errorf("headline %q", head)
	}
	if run.Run.Outcome == "" {
		t.Fatalf("ghost-raced %+v", run)
	}
	// A counter-challenge: cat's game becomes a ghost too.
	cat.click(`[data-action=make-ghost]`)
	cat.waitJS(`(document.querySelector("[data-testid=ghost-link-input]")||{value:""}).value.includes("?ghost=")`)
	cat.expectCleanConsole()
}

func strconvU(n uint64) string { return strconv.FormatUint(n, 10) }
