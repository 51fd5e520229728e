// A player's rating over time in one variant (GET
// /api/players/{id}/ratings/{variant}): a line through the rating after
// each rated race, the deviation as a band around it, in inline SVG drawn
// here. The player page reserves the chart's box (its CSS aspect ratio)
// before the points arrive, so nothing moves then, and the chart is drawn
// at the box's own size, so that its labels read the same on a phone.

import { s } from "./ui.js";

/** The chart's size, in CSS pixels, when its box has none yet. */
export const CHART_W = 560, CHART_H = 240;

// Margins inside the viewBox: the rating labels on the left, the dates
// below; INSET keeps the first and last points off the plot's edges.
const L = 46, R = 12, T = 12, B = 28, INSET = 8;

// MIN_W and MIN_H are the least size drawn at (a box not laid out yet
// measures 0): room for the labels and a plot.
const MIN_W = 200, MIN_H = 120;

// DOTS_UP_TO is how many races still get a dot each (with its own
// tooltip); past that the line alone reads better, and costs less.
const DOTS_UP_TO = 120;

// A rating step between the horizontal lines: the first that gives at
// most five of them.
const STEPS = [5, 10, 20, 25, 50, 100, 200, 250, 500, 1000];

const HOUR = 3600e3, DAY = 24 * HOUR;

let clipIds = 0;

/**
 * chartLabel says what the chart shows, for those who cannot see it:
 * "Rating in classic from 1500 to 1623 over 42 rated races".
 */
export function chartLabel(variant, changes) {
  if (!changes.length) return `No rated races in ${variant} yet`;
  const from = Math.round(changes[0].before.rating), to = Math.round(changes[changes.length - 1].after.rating);
  return `Rating in ${variant} from ${from} to ${to} over ${changes.length} rated ${changes.length === 1 ? "race" : "races"}`;
}

/**
 * ratingChart draws changes (oldest first: {race, at, before, after}) as
 * an <svg> of W by H units (the box's pixels), titled with chartLabel.
 * The rating before the first race is a ring, joined to the first point
 * by a dashed line: where the player started.
 */
export function ratingChart(variant, changes, W = CHART_W, H = CHART_H) {
  W = Math.max(W, MIN_W);
  H = Math.max(H, MIN_H);
  const label = chartLabel(variant, changes);
  const pts = changes.map((c) => ({ t: Date.parse(c.at), r: c.after.rating, d: c.after.deviation, c }));
  let t0 = pts[0].t, t1 = pts[pts.length - 1].t;
  if (t1 - t0 < HOUR) { t0 -= HOUR / 2; t1 += HOUR / 2; } // one race, or a few at once: an hour's width
  const ratings = pts.map((p) => p.r).concat([changes[0].before.rating]);
  const lo0 = Math.min(...ratings), hi0 = Math.max(...ratings);
  const pad = Math.max(10, (hi0 - lo0) * 0.08);
  const step = STEPS.find((st) => (hi0 - lo0 + 2 * pad) / st <= 5) || 2000;
  const lo = Math.floor((lo0 - pad) / step) * step, hi = Math.ceil((hi0 + pad) / step) * step;
  const x = (t) => L + INSET + ((t - t0) / (t1 - t0)) * (W - L - R - 2 * INSET);
  const y = (r) => T + (1 - (r - lo) / (hi - lo)) * (H - T - B);
  const f = (v) => v.toFixed(1);

  const grid = [];
  for (let v = lo; v <= hi; v += step) {
    grid.push(s("line", { x1: L, x2: W - R, y1: f(y(v)), y2: f(y(v)), stroke: "#8883", "stroke-width": 1 }));
    grid.push(s("text", { x: L - 6, y: f(y(v) + 4), "text-anchor": "end", "font-size": 13, fill: "currentColor" }, String(v)));
  }
  const ticks = W < 420 ? 3 : 4;
  for (let i = 0; i < ticks; i++) {
    const t = t0 + ((t1 - t0) * i) / (ticks - 1);
    const anchor = i === 0 ? "start" : i === ticks - 1 ? "end" : "middle";
    grid.push(s("text", { x: f(i === 0 ? L : i === ticks - 1 ? W - R : x(t)), y: H - 8, "text-anchor": anchor, "font-size": 13, fill: "currentColor", "data-tick": "" }, dateLabel(t, t1 - t0)));
  }

  // The band: rating ± deviation, clipped to the plot (a new player's
  // deviation of 350 reaches far past the line's range).
  const clip = `rating-clip-${++clipIds}`;
  const band = pts.length > 1
    ? s("polygon", {
      points: pts.map((p) => `${f(x(p.t))},${f(y(p.r + p.d))}`).concat(pts.slice().reverse().map((p) => `${f(x(p.t))},${f(y(p.r - p.d))}`)).join(" "),
      fill: "#ffd54f", "fill-opacity": 0.13, stroke: "none", "clip-path": `url(#${clip})`, "data-band": "",
    })
    : null;
  const line = s("path", {
    d: pts.map((p, i) => `${i ? "L" : "M"}${f(x(p.t))} ${f(y(p.r))}`).join(" "),
    fill: "none", stroke: "#ffd54f", "stroke-width": 2.5, "stroke-linejoin": "round", "data-line": "",
  });
  const first = changes[0].before.rating;
  const start = [
    s("line", { x1: f(x(pts[0].t)), x2: f(x(pts[0].t)), y1: f(y(first)), y2: f(y(pts[0].r)), stroke: "#ffd54f", "stroke-width": 1.5, "stroke-dasharray": "3 3" }),
    s("circle", { cx: f(x(pts[0].t)), cy: f(y(first)), r: 4, fill: "#0b3222", stroke: "#ffd54f", "stroke-width": 1.5, "data-start": "" },
      s("title", {}, `Before the first rated race: ${Math.round(first)}`)),
  ];
  const dots = pts.length <= DOTS_UP_TO
    ? pts.map((p) => s("circle", { cx: f(x(p.t)), cy: f(y(p.r)), r: pts.length > 40 ? 2.5 : 3.5, fill: "#ffd54f", "data-point": p.c.race },
      s("title", {}, pointText(p.c))))
    : [];
  return s("svg", {
    viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "chart-svg rating-svg",
    "data-points": pts.length, preserveAspectRatio: "xMidYMid meet",
  },
  s("title", {}, label),
  s("defs", {}, s("clipPath", { id: clip }, s("rect", { x: L, y: T, width: W - L - R, height: H - T - B }))),
  ...grid, band, ...start, line, ...dots);
}

/** pointText is one race's change, for its dot's tooltip. */
function pointText(c) {
  const d = Math.round(c.after.rating - c.before.rating);
  return `${new Date(c.at).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })}: ${Math.round(c.before.rating)} → ${Math.round(c.after.rating)} (${d >= 0 ? "+" : ""}${d}), ±${Math.round(c.after.deviation)}`;
}

/** dateLabel is a time on the chart's axis, as precise as its span needs. */
function dateLabel(t, span) {
  const d = new Date(t);
  if (span < 2 * DAY) return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  if (span < 300 * DAY) return d.toLocaleDateString(undefined, { month: "short", day: "numeric" });
  return d.toLocaleDateString(undefined, { month: "short", year: "numeric" });
}
