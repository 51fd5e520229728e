package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/account"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/web"
)

// browserTimeout bounds one browser test; it only keeps a broken test from
// hanging (races in these tests last seconds, a whole test under 20 s on a
// quiet machine), so it is generous: on a machine loaded twentyfold a test
// still has several times what it needs.
const browserTimeout = 3 * time.Minute

// browserSolveBudget is the solver's budget behind the solution page in
// these tests: small, so that under the race detector on a busy machine the
// answer (won, lost or unknown, which the tests all accept) comes within a
// fraction of waitTimeout. The full budget is the engine's to test.
var browserSolveBudget = engine.SolveOptions{MaxNodes: 20_000, MaxConflicts: 1_000}

// waitTimeout bounds one wait for the page, generously for a busy machine
// (a page answers in well under a second on a quiet one); pollInterval is
// how often a condition is checked.
const (
	waitTimeout  = 45 * time.Second
	pollInterval = 25 * time.Millisecond
)

// chromiumNames are the executables tried, in order, on PATH.
func chromiumNames() []string {
	return []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
}

// liveServer is the real server on a real clock, in process, with the
// lobby and the engine's bots as computer players, as cmd/sirtommy serves.
type liveServer struct {
	url   string
	races *race.Service
	lobby *lobby.Lobby
	socks *sockets
	// site is the server's address as http://localhost:PORT: passkeys
	// need a host name (an IP address is no relying party).
	site string
}

// liveOptions change the live server's lobby for a test: offerAfter is when
// a quick-play player is offered the computer (long by default, so that
// tests pairing two people never see it).
type liveOptions struct {
	offerAfter time.Duration
	// tamper, when set, rewrites the body of every GET /api/races/{id}
	// reply: a server that lies in its after-race record.
	tamper func(body []byte) []byte
	// limits, when set, replace the default message limits (scripted
	// clients that move as fast as they can).
	limits *web.Limits
	// daily gives the lobby a day's deal.
	daily bool
	// ratings, when set, is the lobby's store, which the test may fill.
	ratings lobby.Ratings
	// gate, when set, is called before each request is served: it may
	// hold one back until the test has looked at the page without it.
	gate func(r *http.Request)
	// accounts gives the server accounts with passkeys (in memory) for
	// its site, http://localhost:PORT.
	accounts bool
}

// tamperRecorder holds a reply's body back so that liveOptions.tamper can
// rewrite it.
type tamperRecorder struct {
	http.ResponseWriter
	status int
	buf    []byte
}

func (t *tamperRecorder) WriteHeader(status int) { t.status = status }
func (t *tamperRecorder) Write(b []byte) (int, error) {
	t.buf = append(t.buf, b...)
	return len(b), nil
}

// browserSecret signs the live server's player tokens.
const browserSecret = "browser-tests-secret-0123456789ab"

// engineComputer makes the engine's bot at a level, as the server does.
func engineComputer(level string, seed uint64) (race.Player, error) {
	l, err := engine.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	return engine.NewBot(l, seed), nil
}

// sockets records the server's hijacked (websocket) connections, so a test
// can cut them as a network failure would.
type sockets struct {
	mu    sync.Mutex
	conns []net.Conn
}

// cut closes every websocket connection without a close frame.
func (s *sockets) cut() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
	n := len(s.conns)
	s.conns = nil
	return n
}

// hijackRecorder is a ResponseWriter whose Hijack records the connection.
type hijackRecorder struct {
	http.ResponseWriter
	socks *sockets
}

// Hijack hands over the connection, remembering it.
func (h hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err == nil {
		h.socks.mu.Lock()
		h.socks.conns = append(h.socks.conns, c)
		h.socks.mu.Unlock()
	}
	return c, rw, err
}

func startLiveServer(t *testing.T) *liveServer {
	t.Helper()
	return startLiveServerWith(t, liveOptions{})
}

func startLiveServerWith(t *testing.T, o liveOptions) *liveServer {
	t.Helper()
	if o.offerAfter <= 0 {
		o.offerAfter = time.Minute
	}
	clock := race.SystemClock{}
	races := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	tokens, err := lobby.NewTokens([]byte(browserSecret), clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	stores := memlobby.NewStores(lobby.MatchConfig{}, clock)
	if o.ratings != nil {
		stores.Ratings = o.ratings
	}
	lob := lobby.New(lobby.Config{
		ComputerOfferAfter: o.offerAfter,
		ComputerPace:       300 * time.Millisecond,
		Tick:               200 * time.Millisecond,
		SpectatorDelay:     200 * time.Millisecond,
	}, lobby.Deps{
		Clock: clock, Log: zerolog.Nop(), Races: races, Tokens: tokens,
		Stores: stores, Computer: lobby.ComputerFactory(engineComputer),
		DailySecret: dailySecret(o.daily),
	})
	t.Cleanup(lob.Close) // after the connections close (cleanups run last first)
	deps := web.Deps{Log: zerolog.Nop(), Races: races, Lobby: lob, Computer: engineComputer, SolveBudget: browserSolveBudget, AnalysisBudget: analysisBudget,
		Mistakes: stores.Mistakes}
	if o.limits != nil {
		deps.Limits = *o.limits
	}
	var srv *web.Server
	socks := &sockets{}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.gate != nil {
			o.gate(r)
		}
		if o.tamper != nil && r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/races/") && strings.Count(r.URL.Path, "/") == 3 {
			rec := &tamperRecorder{ResponseWriter: w, status: http.StatusOK}
			r = r.Clone(r.Context())
			r.Header.Del("Accept-Encoding") // the lie is told in plain JSON
			srv.ServeHTTP(rec, r)
			body := o.tamper(rec.buf)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(rec.status)
			_, _ = w.Write(body)
			return
		}
		srv.ServeHTTP(hijackRecorder{w, socks}, r)
	}))
	site := fmt.Sprintf("http://localhost:%d", ts.Listener.Addr().(*net.TCPAddr).Port)
	if o.accounts {
		svc, err := account.New(account.NewMemory(), account.Config{Origin: site, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		deps.Accounts = svc
	}
	srv = web.NewServer(deps)
	ts.Start()
	t.Cleanup(func() {
		// A test that failed mid-race leaves it running: abort it soon.
		drain, cancelDrain := context.WithTimeout(context.Background(), time.Second)
		defer cancelDrain()
		races.Drain(drain)
		// A hang bound, not a speed test: closing waits for the coach's
		// position being solved (a result page asks for an analysis), which
		// under -race on a loaded machine can take well over 10 s.
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		if err := srv.CloseConns(ctx); err != nil {
			t.Errorf("close conns: %v", err)
		}
		ts.Close()
	})
	return &liveServer{url: ts.URL, races: races, lobby: lob, socks: socks, site: site}
}

// createRace makes a race over the API and returns its id.
func (s *liveServer) createRace(t *testing.T, body string) string {
	t.Helper()
	res, err := http.Post(s.url+"/api/races", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Race string `json:"race"`
	}
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create race: status %d", res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Race
}

// raceInfo reads GET /api/races/{id}.
func (s *liveServer) raceInfo(t *testing.T, id string) race.Info {
	t.Helper()
	res, err := http.Get(s.url + "/api/races/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var in race.Info
	if err := json.NewDecoder(res.Body).Decode(&in); err != nil {
		t.Fatal(err)
	}
	return in
}

// solution reads GET /api/races/{id}/solution.
func (s *liveServer) solution(t *testing.T, id string) solutionBody {
	t.Helper()
	res, err := http.Get(s.url + "/api/races/" + id + "/solution")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b solutionBody
	if err := json.NewDecoder(res.Body).Decode(&b); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("solution: status %d %+v", res.StatusCode, b)
	}
	return b
}

// browser is one headless Chromium; pages are separate browser contexts
// (like separate people: no shared storage).
type browser struct {
	t   *testing.T
	ctx context.Context
}

// shared is the one headless Chromium of a test run, started by the first
// browser test and closed by TestMain: starting Chromium per test cost
// seconds each on a busy 2-core machine, and each page is a browser context
// of its own anyway (no storage shared between tests or players).
var shared struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	dir    string
	err    error
}

// closeBrowser stops the shared Chromium, if one was started, and removes
// its profile folder.
func closeBrowser() {
	if shared.cancel != nil {
		shared.cancel()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// newBrowser gives a test the shared Chromium (starting it the first time),
// bounded by browserTimeout for this test, or skips the test when none is
// installed or under -short (unless SIRTOMMY_REQUIRE_BROWSER=1, which makes
// a missing Chromium fail the test).
func newBrowser(t *testing.T) *browser {
	t.Helper()
	if testing.Short() && os.Getenv("SIRTOMMY_REQUIRE_BROWSER") != "1" {
		t.Skip("browser tests skipped with -short")
	}
	var path string
	for _, n := range chromiumNames() {
		if p, err := exec.LookPath(n); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("SIRTOMMY_REQUIRE_BROWSER") == "1" {
			t.Fatalf("no Chromium on PATH (tried %v) and SIRTOMMY_REQUIRE_BROWSER=1", chromiumNames())
		}
		t.Skipf("no Chromium on PATH (tried %v): browser tests skipped", chromiumNames())
	}
	shared.once.Do(func() { shared.err = startBrowser(path) })
	if shared.err != nil {
		t.Fatalf("start chromium: %v", shared.err)
	}
	ctx, cancel := context.WithTimeout(shared.ctx, browserTimeout)
	t.Cleanup(cancel)
	return &browser{t: t, ctx: ctx}
}

// startBrowser starts the shared Chromium from the binary at path.
func startBrowser(path string) error {
	dir, err := os.MkdirTemp("", "sirtommy-chromium-")
	if err != nil {
		return err
	}
	shared.dir = dir
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1280, 900),
	)
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	shared.ctx = bctx
	shared.cancel = func() {
		cancelBrowser()
		cancelAlloc()
	}
	return chromedp.Do(bctx)
}

// page is one tab in its own browser context, with its console recorded.
type page struct {
	t    *testing.T
	name string
	ctx  context.Context

	mu      sync.Mutex
	console []string // errors and exceptions
	done    chan struct{}
}

// newPage opens a tab in a new browser context, sized w×h.
func (b *browser) newPage(name string, w, h int64) *page {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	p := &page{t: b.t, name: name, ctx: ctx, done: make(chan struct{})}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, h)); err != nil {
		b.t.Fatalf("%s: open tab: %v", name, err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		defer close(p.done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				p.mu.Lock()
				p.console = append(p.console, m.String())
				p.mu.Unlock()
			}
		}
	}()
	b.t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// do runs actions, failing the test on error.
func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", p.name, err)
	}
}

// eval evaluates JavaScript and decodes its value into T.
func eval[T any](p *page, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("%s: eval %q: %v", p.name, js, err)
	}
	return v
}

// text is the text of the first element matching a CSS selector, waiting for it.
func (p *page) text(sel string) string {
	p.t.Helper()
	p.do(chromedp.WaitVisible(chromedp.CSS(sel)))
	return eval[string](p, fmt.Sprintf(`document.querySelector(%q).textContent`, sel))
}

// waitJS polls a JavaScript condition until it is true, through page
// loads (an evaluation that a navigation interrupts is tried again).
func (p *page) waitJS(cond string) {
	p.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if p.ctx.Err() != nil {
			break
		}
		last = err
		time.Sleep(pollInterval)
	}
	p.t.Fatalf("%s: waiting for %s (last error %v)", p.name, cond, last)
}

// click clicks the element a CSS selector finds, with the mouse.
func (p *page) click(sel string) {
	p.t.Helper()
	p.do(chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// consoleErrors are the errors the page logged so far.
func (p *page) consoleErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.console...)
}

// expectCleanConsole fails the test if the page logged an error.
func (p *page) expectCleanConsole() {
	p.t.Helper()
	if errs := p.consoleErrors(); len(errs) > 0 {
		p.t.Errorf("%s: console errors:\n%s", p.name, strings.Join(errs, "\n"))
	}
}

// screenshot writes a PNG of the viewport to screenshots/TEST/NAME.png
// (gitignored), for people to look at.
func (p *page) screenshot(name string) {
	p.t.Helper()
	buf, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("%s: screenshot: %v", p.name, err)
	}
	dir := filepath.Join("screenshots", strings.ReplaceAll(p.t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// state is the race page's state ("waiting", "running", …).
func (p *page) waitRaceState(state string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`(document.querySelector(".race-page")||{dataset:{}}).dataset.state === %q`, state))
}

// turned is the first turned card on the own board, or "" once the race
// is not running. A move shows on the board at once, before the server
// has turned the next card: this waits for the card (or the race's end).
func (p *page) turned() string {
	p.t.Helper()
	p.waitJS(`!!document.querySelector(".me .turned [data-card]") || (document.querySelector(".race-page")||{dataset:{}}).dataset.state !== "running"`)
	return eval[string](p, `(document.querySelector(".me .turned [data-card]")||{dataset:{card:""}}).dataset.card`)
}

// touchDrag drags with one finger from the centre of one element to the
// centre of another.
func (p *page) touchDrag(from, to string) {
	p.t.Helper()
	centre := func(sel string) (float64, float64) {
		xy := eval[[]float64](p, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`, sel))
		return xy[0], xy[1]
	}
	p.do(chromedp.ScrollIntoView(chromedp.CSS(from)))
	x0, y0 := centre(from)
	x1, y1 := centre(to)
	touch := func(typ input.DispatchTouchEventType, pts ...*input.TouchPoint) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: typ, TouchPoints: pts})
			return err
		})
	}
	steps := []chromedp.Action[chromedp.Void]{touch(input.DispatchTouchEventTypeTouchStart, &input.TouchPoint{X: x0, Y: y0})}
	const n = 8
	for i := 1; i <= n; i++ {
		f := float64(i) / n
		steps = append(steps, touch(input.DispatchTouchEventTypeTouchMove, &input.TouchPoint{X: x0 + f*(x1-x0), Y: y0 + f*(y1-y0)}))
	}
	steps = append(steps, touch(input.DispatchTouchEventTypeTouchEnd))
	p.do(steps...)
}

// clickMove plays card to pile with two real clicks.
func (p *page) clickMove(card, pile string) {
	p.t.Helper()
	p.clickCard(fmt.Sprintf(`.me [data-src][data-card=%q]`, card))
	p.click(fmt.Sprintf(`.me [data-pile=%q]`, pile))
}

// clickCard clicks a card where a player would: near its top edge, on the
// corner that shows its rank, which stays in sight when later cards of a
// fan (the four turned cards of four-at-a-time, a waste pile) cover the
// rest of it.
func (p *page) clickCard(sel string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`!!document.querySelector(%q)`, sel))
	xy := eval[[]float64](p, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.left + r.width / 2, r.top + Math.min(10, r.height / 4)]; })()`, sel))
	p.do(chromedp.MouseClickXY(xy[0], xy[1]))
}

// waitLobby waits for the lobby page to have said hello.
func (p *page) waitLobby() {
	p.t.Helper()
	p.waitJS(`(document.querySelector(".lobby-page")||{dataset:{}}).dataset.lobby === "ready"`)
}

// rename changes the player's name in the lobby's name panel.
func (p *page) rename(name string) {
	p.t.Helper()
	p.waitLobby()
	p.do(chromedp.SetValue(chromedp.CSS("#lobby-name"), name))
	p.click(`[data-action=rename]`)
	p.waitJS(fmt.Sprintf(`document.querySelector("[data-testid=my-name]").textContent === %q`, name))
}

// placeTurned clicks the turned card onto a foundation if it is an Ace,
// else onto waste pile i%4+1, and waits until the move is taken (or the
// race is over).
func (p *page) placeTurned(i int) {
	p.t.Helper()
	c := p.turned()
	pile := fmt.Sprintf("W%d", i%4+1)
	if c[0] == 'A' {
		pile = "F1"
	}
	p.clickMove(c, pile)
	p.waitJS(fmt.Sprintf(`document.querySelector(".race-page").dataset.state === "finished" || (document.querySelector(".me .turned [data-card]")||{dataset:{}}).dataset.card !== %q`, c))
}

// nextMoveJS picks a classic move from the page's own board, as a simple
// player would: any card that fits a foundation (a waste top or the turned
// card), else the turned card onto waste pile W(n mod piles + 1). It returns
// [card, pile, where the card is], or null when the player has nothing
// left to do.
const nextMoveJS = `((n, piles) => {
  const R = "A23456789TJQK";
  const wants = [...document.querySelectorAll(".me [data-pile^=F]")].map((f) => {
    const top = f.querySelector("[data-card]");
    if (!top) return { pile: f.dataset.pile, rank: "A" };
    const i = R.indexOf(top.dataset.card[0]);
    return { pile: f.dataset.pile, rank: i < 12 ? R[i + 1] : "" };
  });
  for (const e of document.querySelectorAll(".me [data-src][data-card]")) {
    const f = wants.find((w) => w.rank === e.dataset.card[0]);
    if (f) return [e.dataset.card, f.pile, e.dataset.src];
  }
  const t = document.querySelector(".me .turned [data-card]");
  return t ? [t.dataset.card, "W" + (n % piles + 1), t.closest("[data-src]").dataset.src] : null;
})`

// playStep makes the n-th move of a simple player who uses the first piles
// waste piles, with real clicks, and waits until the board shows it; it
// reports false when the player has no move left (their game is over) or
// the race is.
func (p *page) playStep(n, piles int) bool {
	p.t.Helper()
	if eval[bool](p, `document.querySelector(".race-page").dataset.state !== "running"`) {
		return false
	}
	mv := eval[[]string](p, fmt.Sprintf("%s(%d, %d)", nextMoveJS, n, piles))
	if len(mv) != 3 {
		return false
	}
	p.clickMove(mv[0], mv[1])
	p.waitJS(fmt.Sprintf(`document.querySelector(".race-page").dataset.state !== "running" || (!document.querySelector('.me [data-src=%q][data-card=%q]') && !document.querySelector(".me .card.pending"))`, mv[2], mv[0]))
	return true
}

// dailySecret is the live server's day's deal secret, if it has one.
func dailySecret(on bool) []byte {
	if !on {
		return nil
	}
	return []byte(browserSecret)
}
