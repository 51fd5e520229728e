package web

import (
	"io/fs"
	"strings"
	"testing"
)

// TestStaticFilesSelfContained: nothing in the client loads from another
// site (the only URL allowed is the SVG namespace, which is a name, not a
// download).
func TestStaticFilesSelfContained(t *testing.T) {
	n := 0
	err := fs.WalkDir(staticFiles, "static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := staticFiles.ReadFile(path)
		if err != nil {
			return err
		}
		text := strings.ReplaceAll(string(b), "http://www.w3.org/2000/svg", "")
		for _, bad := range []string{"http://", "https://", "//cdn", "@import", "url(http"} {
			if i := strings.Index(text, bad); i >= 0 {
				t.Errorf("%s refers to another site: %q", path, text[max(0, i-20):min(len(text), i+40)])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("only %d static files embedded", n)
	}
}

// TestClientMinifies: every module and the stylesheet minify without
// error, each smaller than its source, and a module keeps its exports'
// names (other modules import them).
func TestClientMinifies(t *testing.T) {
	err := fs.WalkDir(staticFiles, "static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".js") && !strings.HasSuffix(name, ".css") || strings.HasSuffix(name, "sw.js") {
			return err
		}
		src, err := fs.ReadFile(staticFiles, name)
		if err != nil {
			return err
		}
		out, err := minified(name, src)
		if err != nil {
			t.Error(err)
			return nil
		}
		if len(out) >= len(src) {
			t.Errorf("%s: minified to %d bytes from %d", name, len(out), len(src))
		}
		for _, line := range strings.Split(string(src), "\n") {
			if rest, ok := strings.CutPrefix(line, "export function "); ok {
				fn := rest[:strings.IndexAny(rest, "( ")]
				if !strings.Contains(string(out), fn) {
					t.Errorf("%s: the export %s is gone", name, fn)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
