package web

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// staticFiles is the browser client: index.html, plain ES modules and CSS,
// with no build step.
//
//go:embed static
var staticFiles embed.FS

// contentSecurityPolicy keeps the client to its own origin: no scripts,
// styles, fonts or images from other sites.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self' ws: wss:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// handleStatic serves the embedded client: "/" (with any query, such as an
// invite's ?race=ID) is the single page, and its modules and styles sit
// beside it. The files change only with the binary, so browsers revalidate
// them on every load rather than caching a stale client.
func handleStatic() http.Handler {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic("web: embedded static files: " + err.Error()) // cannot happen: the directory is embedded
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		if r.URL.Path != "/" && strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		files.ServeHTTP(w, r)
	})
}
