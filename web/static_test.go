package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

// TestStaticClient: the browser client is served from the binary at "/",
// invite links included, with its modules beside it and a policy that
// keeps it to its own origin; the API's routes are not shadowed.
func TestStaticClient(t *testing.T) {
	e := newEnv(t, nil)
	id := e.create(`{}`)
	cases := []struct {
		path, status, ctype, body string
	}{
		{"/", "200", "text/html", `<meta name="description"`},
		{"/?race=" + id, "200", "text/html", `<main id="app"`},
		{"/js/proto.js", "200", "text/javascript", "export class Socket"},
		{"/style.css", "200", "text/css", ".card"},
		{"/favicon.svg", "200", "image/svg+xml", "<svg"},
		{"/js/nope.js", "404", "text/plain", "not found"},
		{"/js/", "404", "text/plain", "not found"},
		{"/api/races/" + id, "200", "application/json", `"race":"` + id + `"`},
		{"/healthz", "200", "application/json", "ok"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			res, err := http.Get(e.ts.URL + c.path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if got := res.Status[:3]; got != c.status {
				t.Errorf("status %s, want %s", res.Status, c.status)
			}
			if got := res.Header.Get("Content-Type"); !strings.HasPrefix(got, c.ctype) {
				t.Errorf("content type %q, want %s", got, c.ctype)
			}
			if !strings.Contains(string(b), c.body) {
				t.Errorf("body does not contain %q", c.body)
			}
			if strings.HasPrefix(c.path, "/api") || c.path == "/healthz" {
				return
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("Content-Security-Policy %q", csp)
			}
		})
	}
}

// get fetches path from the test server with the given request headers.
func get(t *testing.T, url string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	// A transport of its own, so that Go's client does not ask for gzip
	// and decode it behind the test's back.
	res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// assetPrefix is the versioned path the page names its files under.
var assetPrefix = regexp.MustCompile(`src="(/assets/[0-9a-f]{12}/)js/app\.js"`)

// TestStaticServedLikeAProductionSite: the page names its files under a
// version and preloads the modules of its own page only; versioned files are
// cached for good and the page is revalidated; each is sent in the best
// encoding the client takes, with an ETag per encoding that answers 304.
func TestStaticServedLikeAProductionSite(t *testing.T) {
	e := newEnv(t, nil)
	res, page := get(t, e.ts.URL+"/")
	m := assetPrefix.FindSubmatch(page)
	if m == nil {
		t.Fatalf("the page names no versioned app.js:\n%s", page)
	}
	prefix := string(m[1])
	if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("page Cache-Control %q, want no-cache", cc)
	}
	for _, want := range []string{`rel="modulepreload" href="` + prefix + `js/lobby.js"`, `<meta property="og:title"`, `<meta name="viewport"`, prefix + "style.css"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the lobby's page lacks %s", want)
		}
	}
	if strings.Contains(string(page), prefix+"js/race.js") {
		t.Error("the lobby's page preloads the race's module")
	}
	_, racePage := get(t, e.ts.URL+"/?race=abc")
	for _, want := range []string{prefix + "js/race.js", prefix + "js/board.js", prefix + "js/proto.js"} {
		if !strings.Contains(string(racePage), `rel="modulepreload" href="`+want+`"`) {
			t.Errorf("the race's page does not preload %s", want)
		}
	}

	plain := func(path string) []byte {
		_, b := get(t, e.ts.URL+path)
		return b
	}
	app := plain(prefix + "js/app.js")
	cases := []struct {
		name, accept, encoding string
	}{
		{"brotli preferred", "gzip, deflate, br", "br"},
		{"gzip", "gzip", "gzip"},
		{"brotli refused", "br;q=0, gzip", "gzip"},
		{"any", "*", "br"},
		{"none", "", ""},
		{"identity only", "identity", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, body := get(t, e.ts.URL+prefix+"js/app.js", "Accept-Encoding", c.accept)
			if got := res.Header.Get("Content-Encoding"); got != c.encoding {
				t.Fatalf("Content-Encoding %q, want %q", got, c.encoding)
			}
			if got := res.Header.Get("Cache-Control"); !strings.Contains(got, "immutable") {
				t.Errorf("versioned file Cache-Control %q, want immutable", got)
			}
			if !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("Vary %q", res.Header.Get("Vary"))
			}
			if got := decodeBody(t, c.encoding, body); !bytes.Equal(got, app) {
				t.Errorf("decoded body differs from the plain file (%d bytes, want %d)", len(got), len(app))
			}
			again, _ := get(t, e.ts.URL+prefix+"js/app.js", "Accept-Encoding", c.accept, "If-None-Match", res.Header.Get("ETag"))
			if again.StatusCode != http.StatusNotModified {
				t.Errorf("conditional request: status %d, want 304", again.StatusCode)
			}
		})
	}
	checkServiceWorker(t, e.ts.URL, prefix)
	for path, status := range map[string]int{
		"/assets/000000000000/js/app.js": http.StatusNotFound, // another version
		prefix + "js/nope.js":            http.StatusNotFound,
		prefix + "js/":                   http.StatusNotFound,
		prefix + "index.html":            http.StatusNotFound,
		prefix + "sw.js":                 http.StatusNotFound, // a template: rendered at the root only
		"/sw.js":                         http.StatusOK,
		"/offline.html":                  http.StatusOK,
		"/head.html":                     http.StatusNotFound, // a part of the pages, never served
		"/manifest.webmanifest":          http.StatusOK,
		"/js/app.js":                     http.StatusOK, // the plain name, revalidated
	} {
		if res, _ := get(t, e.ts.URL+path); res.StatusCode != status {
			t.Errorf("%s: status %d, want %d", path, res.StatusCode, status)
		}
	}
}

// checkServiceWorker: the worker at the root names this version's files to
// keep, and neither its own template nor the API.
func checkServiceWorker(t *testing.T, url, prefix string) {
	t.Helper()
	res, sw := get(t, url+"/sw.js")
	if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("sw.js Cache-Control %q, want no-cache (a new version must reach the browser)", cc)
	}
	for _, want := range []string{`"` + prefix + `js/app.js"`, `"` + prefix + `style.css"`} {
		if !strings.Contains(string(sw), want) {
			t.Errorf("sw.js does not keep %s", want)
		}
	}
	for _, bad := range []string{"{{", prefix + "sw.js", prefix + "index.html", `"/api`} {
		if strings.Contains(string(sw), bad) {
			t.Errorf("sw.js contains %q", bad)
		}
	}
}

// decodeBody undoes a Content-Encoding.
func decodeBody(t *testing.T, encoding string, body []byte) []byte {
	t.Helper()
	var r io.Reader
	switch encoding {
	case "":
		return body
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	case "gzip":
		gz, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", encoding, err)
	}
	return b
}

// TestAPICompressed: a JSON answer big enough to gain is gzipped for a
// client that takes gzip, and plain for one that does not.
func TestAPICompressed(t *testing.T) {
	e := newEnv(t, nil)
	_, plain := get(t, e.ts.URL+"/api/variants")
	res, body := get(t, e.ts.URL+"/api/variants", "Accept-Encoding", "gzip")
	if got := res.Header.Get("Content-Encoding"); got != "gzip" {
		t.Fatalf("Content-Encoding %q for %d bytes of JSON, want gzip", got, len(plain))
	}
	if got := decodeBody(t, "gzip", body); !bytes.Equal(got, plain) {
		t.Errorf("decoded answer differs from the plain one")
	}
	if len(body) >= len(plain) {
		t.Errorf("gzipped %d bytes, plain %d", len(body), len(plain))
	}
}
