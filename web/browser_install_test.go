package web_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
)

// awaitJS evaluates a JavaScript promise and decodes what it resolves to.
func awaitJS[T any](p *page, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("%s: await %q: %v", p.name, js, err)
	}
	return v
}

// TestBrowserInstallableAndOffline: the page names a web app manifest
// whose icons load; the service worker takes the page over and, with the
// server out of reach, serves the client's files from its cache and the
// offline page for a navigation, but never answers the API.
func TestBrowserInstallableAndOffline(t *testing.T) {
	var offline atomic.Bool
	srv := startLiveServerWith(t, liveOptions{gate: func(*http.Request) {
		if offline.Load() {
			panic(http.ErrAbortHandler) // the connection drops, as with no network
		}
	}})
	b := newBrowser(t)
	p := b.newPage("ann", 390, 844)
	p.do(chromedp.Navigate(srv.url + "/"))
	p.waitJS(`!!document.querySelector("[data-count=online]")`)

	manifest := awaitJS[string](p, `(async () => {
		const link = document.querySelector('link[rel=manifest]');
		const m = await (await fetch(link.href)).json();
		const bad = [];
		for (const icon of m.icons) {
			const r = await fetch(icon.src);
			const type = r.headers.get("content-type") || "";
			if (!r.ok || !type.startsWith(icon.type)) bad.push(icon.src + " " + r.status + " " + type);
		}
		const big = m.icons.some((i) => i.sizes === "512x512" && i.type === "image/png");
		return [m.name, m.start_url, m.display, big ? "512" : "no 512 png", ...bad].join("|");
	})()`)
	if manifest != "Sir Tommy race|/|standalone|512" {
		t.Errorf("manifest and its icons: %s", manifest)
	}

	if state := awaitJS[string](p, `navigator.serviceWorker.ready.then((r) => r.active.state === "activated" ? "activated" :
		new Promise((done) => r.active.addEventListener("statechange", () => done(r.active.state))))`); state != "activated" {
		t.Fatalf("service worker %s", state)
	}
	p.do(chromedp.Reload())
	p.waitJS(`!!navigator.serviceWorker.controller && !!document.querySelector("[data-count=online]")`)

	offline.Store(true)
	p.do(chromedp.Navigate(srv.url + "/?player=someone"))
	p.waitJS(`!!document.querySelector("[data-testid=offline]")`)
	if got := eval[string](p, `document.querySelector("[data-testid=offline] h1").textContent`); got != "You are offline" {
		t.Errorf("offline page says %q", got)
	}
	// Its stylesheet came from the cache: the felt is green, not white.
	if bg := eval[string](p, `getComputedStyle(document.documentElement).backgroundColor`); bg == "rgba(0, 0, 0, 0)" || bg == "rgb(255, 255, 255)" {
		t.Errorf("offline page unstyled: background %s", bg)
	}
	if got := awaitJS[string](p, `fetch("/api/lobby", { cache: "no-store" }).then(() => "answered", () => "failed")`); got != "failed" {
		t.Errorf("the API with the server out of reach: %s (the worker must not answer it)", got)
	}
	p.screenshot("offline-390")
}
