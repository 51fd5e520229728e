// A solver's winning line stepped move by move: previous and next
// buttons, ← and → keys, and where one is ("Line move 3 of 12: …").

import { h, fill } from "./ui.js";
import { moveText } from "./cards.js";

/**
 * lineStepper fills bar with title and the line's controls, and shows the
 * position after k of line's moves with show(k), which draws it and
 * returns its View. It starts at 0 and returns {step(d)}.
 */
export function lineStepper(bar, line, title, show) {
  let i = 0;
  const pos = h("span", { class: "pos", "data-testid": "line-pos", role: "status" });
  const step = (d) => {
    i = Math.max(0, Math.min(line.length, i + d));
    const v = show(i);
    const m = line[i - 1];
    pos.textContent = `Line move ${i} of ${line.length}${m ? `: ${moveText(m)}` : ""} · ${v.score} of ${v.target} cards up${v.status === "won" ? " · won" : ""}`;
    pos.dataset.step = String(i);
    pos.dataset.score = String(v.score);
  };
  fill(bar,
    h("strong", {}, title), " ",
    h("button", { "data-action": "line-prev", "aria-label": "Previous move of the line", onclick: () => step(-1) }, "◀"),
    h("button", { "data-action": "line-next", "aria-label": "Next move of the line", onclick: () => step(1) }, "▶"), " ",
    pos);
  bar.hidden = false;
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target.closest && e.target.closest("input, select, textarea")) return;
    const d = { ArrowLeft: -1, ArrowRight: 1 }[e.key];
    if (!d) return;
    e.preventDefault();
    step(d);
  });
  step(0);
  return { step };
}
