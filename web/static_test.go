package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
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
		{"/", "200", "text/html", `<script type="module" src="/js/app.js">`},
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
