package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	textTemplate "text/template"
	"time"
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

// assetsPath is where the client's files are served under their version:
// /assets/<version>/js/app.js.
const assetsPath = "/assets/"

// Cache lifetimes: a versioned file never changes under its name, so a
// browser keeps it for a year without asking; the page and the unversioned
// names are asked about on every load.
const (
	cacheImmutable   = "public, max-age=31536000, immutable"
	cacheRevalidate  = "no-cache"
	versionHexDigits = 12 // of the SHA-256 of the client's files: 48 bits, no accidental reuse
)

// client is the embedded browser client as it is served: its files under
// a path named by a hash of all their contents, so that a new binary's
// client has new names and an old one can be cached for good, and the page
// that names them, with every module preloaded so the first screen needs
// no waterfall of imports. One version for the whole client rather than a
// hash per file: modules import each other by relative names, so a common
// prefix keeps those imports versioned too without rewriting the modules
// or an import map (which the content security policy would have to allow).
type client struct {
	files   fs.FS
	version string
	pages   map[string][]byte // index.html rendered for each page entry's module
	// rendered are the other templates, by name, served at the root:
	// the service worker (its scope must be "/") and the offline page.
	rendered map[string][]byte
	encoded  encodedFiles
}

// embeddedClient is the client of this binary, built once per process: it
// is derived from the embedded files alone, and every server (tests start
// many) serves the same one, compressed once.
var embeddedClient = sync.OnceValue(newClient)

// Kinds of embedded file that are not served as they stand.
var (
	// rootTemplates are served rendered, only at the root, never under
	// the version's path.
	rootTemplates = map[string]bool{"index.html": true, "sw.js": true, "offline.html": true}
	// partials are parts of the other templates, never served.
	partials = map[string]bool{"head.html": true}
)

// newClient hashes the embedded files and renders the templates.
func newClient() *client {
	files, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic("web: embedded static files: " + err.Error()) // cannot happen: the directory is embedded
	}
	h := sha256.New()
	var assets []string // the versioned files the service worker keeps, unprefixed
	err = fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || name == "index.html" {
			return err
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(b)
		// The manifest and its icons are fetched by their plain names.
		if !rootTemplates[name] && !partials[name] && !strings.HasPrefix(name, "icons/") && !strings.HasSuffix(name, ".webmanifest") {
			assets = append(assets, name)
		}
		return nil
	})
	if err != nil {
		panic("web: embedded static files: " + err.Error())
	}
	c := &client{
		files:    files,
		version:  hex.EncodeToString(h.Sum(nil))[:versionHexDigits],
		pages:    map[string][]byte{},
		rendered: map[string][]byte{},
		encoded:  encodedFiles{files: map[string]func() *encodedFile{}},
	}
	for i, name := range assets {
		assets[i] = c.prefix() + name
	}
	version, _ := json.Marshal(c.version)
	list, _ := json.Marshal(assets)
	c.rendered["sw.js"] = render(textTemplate.Must(textTemplate.ParseFS(files, "sw.js")), struct{ Version, Assets string }{string(version), string(list)})
	c.rendered["offline.html"] = render(template.Must(template.ParseFS(files, "offline.html", "head.html")), struct{ Prefix string }{c.prefix()})
	tmpl := template.Must(template.ParseFS(files, "index.html", "head.html"))
	for _, p := range pageEntries {
		modules, err := moduleClosure(files, "js/app.js", p.module)
		if err != nil {
			panic("web: the client's modules: " + err.Error())
		}
		c.pages[p.module] = render(tmpl, struct {
			Prefix  string
			Modules []string
		}{c.prefix(), modules})
	}
	return c
}

// executor is a parsed template, HTML or text.
type executor interface {
	Execute(w io.Writer, data any) error
	Name() string
}

// render executes an embedded template, which cannot fail but for a
// mistake in the embedded file that every test would show.
func render(t executor, data any) []byte {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		panic("web: " + t.Name() + ": " + err.Error())
	}
	return b.Bytes()
}

// prefix is the path under which this version's files are served.
func (c *client) prefix() string { return assetsPath + c.version + "/" }

// handleStatic serves the embedded client: "/" (with any query, such as an
// invite's ?race=ID) is the single page; /assets/<version>/… are its files,
// cached for good; the files' plain names (/js/app.js) still answer, asked
// about on every load, for links and tools that name them.
func handleStatic() http.Handler {
	c := embeddedClient()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		name, cache, ok := c.resolve(r.URL.Path)
		if !ok {
			h.Set("Cache-Control", cacheRevalidate)
			http.NotFound(w, r)
			return
		}
		h.Set("Cache-Control", cache)
		switch name {
		case "index.html":
			// One page per entry, each preloading what its page imports.
			entry := pageFor(r.URL.Query()).module
			page := c.pages[entry]
			h.Set("Content-Type", "text/html; charset=utf-8")
			c.encoded.serve(w, r, "index.html#"+entry, func() ([]byte, error) { return page, nil })
			return
		case "sw.js", "offline.html":
			body := c.rendered[name]
			c.encoded.serve(w, r, name, func() ([]byte, error) { return body, nil })
			return
		}
		if strings.HasSuffix(name, ".webmanifest") {
			h.Set("Content-Type", "application/manifest+json")
		}
		c.encoded.serve(w, r, name, func() ([]byte, error) {
			b, err := fs.ReadFile(c.files, name)
			if err != nil {
				return nil, err
			}
			return minified(name, b)
		})
	})
}

// resolve maps a request path to an embedded file's name and its cache
// policy, or reports that there is no such file.
func (c *client) resolve(p string) (name, cache string, ok bool) {
	if p == "/" || p == "/index.html" {
		return "index.html", cacheRevalidate, true
	}
	cache = cacheRevalidate
	if rest, found := strings.CutPrefix(p, c.prefix()); found {
		p, cache = "/"+rest, cacheImmutable
	} else if strings.HasPrefix(p, assetsPath) {
		return "", "", false // another version's files: not ours to serve under that name
	}
	name = strings.TrimPrefix(path.Clean(p), "/")
	if name == "" || name == "index.html" || strings.HasSuffix(p, "/") {
		return "", "", false // no directory listings; the page only at "/"
	}
	if partials[name] || rootTemplates[name] && cache == cacheImmutable {
		return "", "", false // templates are served rendered, at the root only
	}
	if st, err := fs.Stat(c.files, name); err != nil || st.IsDir() {
		return "", "", false
	}
	return name, cache, true
}

// modTime is what the served files claim as their modification time: none,
// so that validation goes by ETag alone.
var modTime time.Time
