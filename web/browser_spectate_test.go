package web_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"sirtommy/race"
	"sirtommy/race/racetest"
)

// lossyWebSocket is a page script that loses the first "board" message the
// page would get and counts the "watch" messages it sends.
const lossyWebSocket = `(() => {
  const Real = window.WebSocket;
  window.__boards = 0;
  window.__watches = 0;
  window.WebSocket = class extends Real {
    send(data) {
      if (String(data).includes('"type":"watch"')) window.__watches++;
      return super.send(data);
    }
    set onmessage(fn) {
      super.onmessage = (ev) => {
        try {
          if (JSON.parse(ev.data).type === "board" && ++window.__boards === 1) return;
        } catch (e) {}
        fn(ev);
      };
    }
    get onmessage() { return super.onmessage; }
  };
})();`

// TestBrowserSpectatorResyncsOnAGap: the spectate page loses bob's only
// board; the next message's version shows the gap, the page watches again
// and its fresh state shows bob's move.
func TestBrowserSpectatorResyncsOnAGap(t *testing.T) {
	srv := startLiveServer(t)
	b := newBrowser(t)
	carol := b.newPage("carol", 1280, 900)
	carol.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: lossyWebSocket})
		return err
	}))
	id := srv.createRace(t, `{"deal":"7"}`)
	carol.do(chromedp.Navigate(srv.url + "/?watch=" + id))
	carol.waitJS(`document.querySelector("[data-testid=phase]").textContent.startsWith("Waiting")`)

	var players [2]*client
	for i, name := range []string{"ann", "bob"} {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.url, "http")+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		c := &client{t: t, ws: ws}
		c.hello(name)
		c.join(id, name)
		players[i] = c
	}
	for _, c := range players {
		c.untilState(race.Running)
	}
	step := func(c *client, n int) {
		for i := range n {
			mv, ok := racetest.FromView(lastView(c))
			if !ok || !c.move(mv, "m"+strconv.Itoa(i)) {
				t.Fatal("no move")
			}
		}
	}
	bob, ann := players[1], players[0]
	step(bob, 1) // the board the page loses
	carol.waitJS(`window.__boards === 1`)
	step(ann, 3)
	carol.waitJS(`window.__watches >= 2`)
	carol.waitJS(`document.querySelector("[data-testid=counts-1]").textContent.includes(" 1 move ")`)
	carol.waitJS(`document.querySelector("[data-testid=counts-0]").textContent.includes(" 3 moves ")`)
	carol.expectCleanConsole()
}
