package web

import (
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"sort"
)

// pageEntry is the module a page of the client starts from.
type pageEntry struct {
	query  string // the query key that opens the page ("" for the lobby)
	module string // its module, relative to the client's root
}

// pageEntries are the client's pages by the query key that opens each, as
// js/app.js routes them; the first key present wins, the lobby otherwise.
// The page served for a query preloads its page's modules and no others.
var pageEntries = []pageEntry{
	{"race", "js/race.js"},
	{"watch", "js/spectate.js"},
	{"replay", "js/replay.js"},
	{"practice", "js/practice.js"},
	{"result", "js/result.js"},
	{"player", "js/profile.js"},
	{"room", "js/room.js"},
	{"arena", "js/arena.js"},
	{"", "js/lobby.js"},
}

// pageFor is the page a query opens.
func pageFor(q url.Values) pageEntry {
	for _, p := range pageEntries {
		if p.query == "" || q.Get(p.query) != "" {
			return p
		}
	}
	return pageEntries[len(pageEntries)-1]
}

// staticImport finds a module's static imports of its siblings
// (`import … from "./x.js"`); dynamic import() calls are not followed, as
// the browser does not fetch them up front either.
var staticImport = regexp.MustCompile(`(?m)^import\s[^;]*?from\s+"(\./[a-z0-9_-]+\.js)"`)

// moduleClosure is every module that loading the entries fetches at once:
// the entries and, transitively, what they import statically. Sorted.
func moduleClosure(files fs.FS, entries ...string) ([]string, error) {
	seen := map[string]bool{}
	todo := append([]string(nil), entries...)
	for len(todo) > 0 {
		m := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[m] {
			continue
		}
		seen[m] = true
		src, err := fs.ReadFile(files, m)
		if err != nil {
			return nil, err
		}
		for _, imp := range staticImport.FindAllSubmatch(src, -1) {
			todo = append(todo, path.Join(path.Dir(m), string(imp[1])))
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out, nil
}
