package web

import (
	"fmt"
	"path"

	"github.com/evanw/esbuild/pkg/api"
)

// minified is src, the client's file name, as it is sent: modules and the
// stylesheet minified by esbuild (whitespace, syntax and local names; the
// modules' imports and exports keep theirs), everything else as it is.
// Done once per file and process, before compression (encoded.go): it
// saves the phone parsing and compiling the client's JavaScript, not only
// bytes.
func minified(name string, src []byte) ([]byte, error) {
	var loader api.Loader
	switch path.Ext(name) {
	case ".js":
		loader = api.LoaderJS
	case ".css":
		loader = api.LoaderCSS
	default:
		return src, nil
	}
	res := api.Transform(string(src), api.TransformOptions{
		Loader:            loader,
		Sourcefile:        name,
		MinifyWhitespace:  true,
		MinifySyntax:      true,
		MinifyIdentifiers: true,
		LegalComments:     api.LegalCommentsNone,
	})
	if len(res.Errors) > 0 {
		e := res.Errors[0]
		line := 0
		if e.Location != nil {
			line = e.Location.Line
		}
		return nil, fmt.Errorf("minify %s:%d: %s", name, line, e.Text)
	}
	return res.Code, nil
}
