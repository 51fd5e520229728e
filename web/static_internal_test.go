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
