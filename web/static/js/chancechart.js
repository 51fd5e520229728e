// The expert's chance without peeking over each racer's game (the
// analysis's curve, PROTOCOL.md): "with what you could see, an expert
// wins x% from here", as a small inline SVG chart with its text
// alternative, and the chance at the replay's current move.

import { h, s } from "./ui.js";

const SEAT_COLOURS = ["#2f6fde", "#d9534f", "#43a047", "#f9a825", "#8e24aa", "#00897b", "#ef6c00", "#6d4c41", "#c2185b", "#78909c"]; // as the foundation chart's

/** where names a position of a game in words. */
function where(k) { return k === 0 ? "the start" : `move ${k}`; }

/**
 * curveAt is the curve's point of game g at its position ply, or the
 * nearest before it where the curve is sampled; undefined without a curve.
 */
export function curveAt(g, ply) {
  let at;
  for (const c of (g && g.curve) || []) if (c.ply <= ply) at = c;
  return at;
}

/**
 * fallText says where a racer's chance fell most: the largest drop
 * between two points of the curve, or that it never fell.
 */
export function fallText(g, name) {
  const cs = g.curve || [];
  let worst = null;
  for (let i = 1; i < cs.length; i++) {
    const d = cs[i - 1].percent - cs[i].percent;
    if (d > 0 && (!worst || d > worst.d)) worst = { d, from: cs[i - 1], to: cs[i] };
  }
  if (!cs.length) return "";
  if (cs.length === 1) return `${name}'s chance: ${cs[0].percent}% ${cs[0].ply ? `after move ${cs[0].ply}` : "at the start"}, the game's only point.`;
  const span = `from ${cs[0].percent}% at the start to ${cs[cs.length - 1].percent}% after move ${cs[cs.length - 1].ply}`;
  if (!worst) return `${name}'s chance never fell: ${span}.`;
  const step = worst.to.ply - worst.from.ply === 1 ? `at move ${worst.to.ply}` : `between ${where(worst.from.ply)} and move ${worst.to.ply}`;
  return `${name}'s chance fell most ${step}, from ${worst.from.percent}% to ${worst.to.percent}% (${span}).`;
}

/**
 * chanceChart draws each game's curve (x: the game's moves, y: 0–100%)
 * with a dot a point, in a figure whose label says where each chance fell
 * most; null when no game has a curve (an analysis stored before it).
 */
export function chanceChart(analysis, names) {
  const games = analysis.games || [];
  if (!games.some((g) => g.curve && g.curve.length)) return null;
  const W = 440, H = 160, L = 48, R = 10, T = 10, B = 26;
  const end = Math.max(1, ...games.map((g) => g.plies || 0));
  const x = (p) => L + (p / end) * (W - L - R);
  const y = (v) => T + (1 - v / 100) * (H - T - B);
  const f = (v) => v.toFixed(1);
  const grid = [];
  for (const v of [0, 50, 100]) {
    grid.push(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#8883", "stroke-width": 1 }));
    grid.push(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 13, fill: "currentColor" }, `${v}%`));
  }
  grid.push(s("text", { x: L, y: H - 8, "font-size": 13, fill: "currentColor" }, "start"));
  grid.push(s("text", { x: W - R, y: H - 8, "text-anchor": "end", "font-size": 13, fill: "currentColor" }, `move ${end}`));
  const lines = games.flatMap((g, i) => {
    const cs = g.curve || [];
    if (!cs.length) return [];
    const d = cs.map((c, k) => `${k ? "L" : "M"}${f(x(c.ply))} ${f(y(c.percent))}`).join(" ");
    return [
      s("path", { d, fill: "none", stroke: SEAT_COLOURS[i], "stroke-width": 2.5, "stroke-dasharray": i ? "6 3" : null, "data-seat": i }),
      ...cs.map((c) => s("circle", { cx: f(x(c.ply)), cy: f(y(c.percent)), r: 3, fill: SEAT_COLOURS[i], "data-seat": i, "data-ply": c.ply, "data-percent": c.percent },
        s("title", {}, `${names[i]}, ${c.ply ? `after move ${c.ply}` : "at the start"}: an expert wins ${c.percent}%`))),
    ];
  });
  const falls = games.map((g, i) => fallText(g, names[i])).filter(Boolean);
  const every = Math.max(...games.map((g) => g.curveEvery || 1));
  const label = `Chart of the expert's chance with what each player could see, over the game. ${falls.join(" ")}`;
  return h("figure", { class: "chance-chart", "data-testid": "chance-chart" },
    s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "chart-svg" }, s("title", {}, label), ...grid, ...lines),
    h("figcaption", {},
      games.map((g, i) => (g && g.curve ? h("span", { class: "legend" }, h("span", { class: `dot seat${i}`, "aria-hidden": "true" }), names[i]) : null)),
      h("span", { class: "legend muted" }, `With what each player could see, how often an expert (the computer that does not peek) wins from there${every > 1 ? `; a point every ${every} moves in a long game` : ""}.`),
      h("p", { class: "chance-falls", "data-testid": "chance-falls" }, falls.join(" "))));
}
