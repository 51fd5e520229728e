package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// axeSource is axe-core 4.14.1 (its axe.min.js, gzipped, in testdata;
// MPL-2.0, testdata/axe.LICENSE), the accessibility checker the browser
// tests run on each kind of page.
var axeSource = sync.OnceValues(func() (string, error) {
	f, err := os.Open("testdata/axe.min.js.gz")
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, zr); err != nil {
		return "", err
	}
	return b.String(), nil
})

// axeViolation is one rule axe found broken, with where.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// expectAccessible runs axe-core on the page as it stands (WCAG 2.x A and
// AA rules and axe's best practices), in the dark theme and in the light
// one (the system's preferred colour scheme, emulated), and fails the test
// for every violation, naming the rule and the first elements that break
// it. The page is left as the system prefers.
func (p *page) expectAccessible(what string) {
	p.t.Helper()
	for _, scheme := range []string{"dark", "light"} {
		p.do(colourScheme(scheme))
		p.waitJS(`matchMedia("(prefers-color-scheme: ` + scheme + `)").matches`)
		p.runAxe(what + ", " + scheme + " theme")
		p.screenshot(strings.NewReplacer(" ", "-", ",", "", "'", "").Replace(what) + "-" + scheme)
	}
	p.do(colourScheme(""))
}

// colourScheme makes the page's system prefer the dark or the light
// colour scheme; "" gives the choice back to the browser.
func colourScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		var features []*emulation.MediaFeature
		if scheme != "" {
			features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}
		}
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features})
		return err
	})
}

// runAxe runs axe-core once and fails the test for every violation.
func (p *page) runAxe(what string) {
	p.t.Helper()
	src, err := axeSource()
	if err != nil {
		p.t.Fatalf("load axe-core: %v", err)
	}
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`typeof axe === "object" || (() => { `+src+`; return true; })()`)); err != nil {
		p.t.Fatalf("%s: inject axe-core: %v", p.name, err)
	}
	out, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`axe.run(document, { resultTypes: ["violations"] }).then((r) => JSON.stringify(r.violations.map((v) => ({
		id: v.id, impact: v.impact || "", help: v.help + " (" + v.nodes.length + " elements)", nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ") + " " + n.html.slice(0, 300)),
	}))))`, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("%s: axe.run: %v", p.name, err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		p.t.Fatalf("%s: axe's answer %q: %v", p.name, out, err)
	}
	for _, v := range vs {
		p.t.Errorf("%s, %s: axe %s (%s): %s, at %v", p.name, what, v.ID, v.Impact, v.Help, v.Nodes)
	}
}
