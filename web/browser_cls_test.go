package web_test

import (
	"strings"

	"github.com/chromedp/chromedp"
)

// maxLayoutShift is the target for every page: Lighthouse and Core Web
// Vitals call a cumulative layout shift below 0.1 good; the project's
// target is 0.05.
const maxLayoutShift = 0.05

// layoutShiftJS is the page's cumulative layout shift so far as Core Web
// Vitals count it: the shifts not caused by the player's own input
// (within half a second of it), grouped into windows of shifts less than
// a second apart and at most five seconds long; the largest window's sum,
// with the elements that moved in it, for a failure to name.
const layoutShiftJS = `new Promise((done) => {
  let max = 0, sum = 0, first = 0, last = 0, moved = [], worst = [];
  const name = (n) => !n ? "?" : n.nodeType !== 1 ? "#text in " + name(n.parentElement) :
    n.tagName.toLowerCase() + (n.id ? "#" + n.id : "") + (n.className && typeof n.className === "string" ? "." + n.className.trim().split(/\s+/).join(".") : "") +
    (n.dataset.panel ? "[data-panel=" + n.dataset.panel + "]" : "") + (n.dataset.testid ? "[data-testid=" + n.dataset.testid + "]" : "");
  const finish = () => done({ cls: max, moved: [...new Set(worst)].slice(0, 8) });
  new PerformanceObserver((list, obs) => {
    for (const e of list.getEntries()) {
      if (e.hadRecentInput) continue;
      if (sum && e.startTime - last < 1000 && e.startTime - first < 5000) sum += e.value;
      else { sum = e.value; first = e.startTime; moved = []; }
      last = e.startTime;
      moved.push(...(e.sources || []).map((s) => name(s.node) + " at " + Math.round(e.startTime) + " ms"));
      if (sum > max) { max = sum; worst = moved.slice(); }
    }
    obs.disconnect();
    finish();
  }).observe({ type: "layout-shift", buffered: true });
  setTimeout(finish, 200); // no shift at all: the observer is never called
})`

// layoutShift is what layoutShiftJS measures.
type layoutShift struct {
	CLS   float64  `json:"cls"`
	Moved []string `json:"moved"`
}

// expectSteady fails the test when the page's layout shifted more than
// maxLayoutShift since it was loaded (what names the page).
func (p *page) expectSteady(what string) {
	p.t.Helper()
	ls, err := chromedp.Run(p.ctx, chromedp.Evaluate[layoutShift](layoutShiftJS, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("%s: measure the layout shift on %s: %v", p.name, what, err)
	}
	p.t.Logf("%s: cumulative layout shift on %s: %.4f", p.name, what, ls.CLS)
	if ls.CLS >= maxLayoutShift {
		p.t.Errorf("%s: %s shifted its layout by %.4f (cumulative layout shift), want below %.2f; moved: %s",
			p.name, what, ls.CLS, maxLayoutShift, strings.Join(ls.Moved, "; "))
	}
}
