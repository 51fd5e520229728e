// The result of a finished race: who won and why, a chart of both players'
// foundation counts over time, the opened commitment, rematch and replay.

import { h, s, fill, fmtClock } from "./ui.js";
import { reasonText, getRace, getSolution } from "./proto.js";
import { timeline } from "./game.js";
import { sha256Hex } from "./sha256.js";

const SEAT_COLOURS = ["#2f6fde", "#d9534f"];

/** headline says who won, from the point of view of seat (or a spectator). */
export function headline(result, names, seat) {
  if (result.outcome === "aborted") return "Race aborted";
  if (result.outcome === "draw") return "Draw";
  if (seat === 0 || seat === 1) return result.winner === seat ? "You won!" : `${names[result.winner]} won`;
  return `${names[result.winner]} won`;
}

/**
 * renderResult fills el with the result of race info (GET /api/races/{id}).
 * opts: seat (for players), onRematch (shows the button).
 */
export function renderResult(el, info, opts = {}) {
  const r = info.result;
  const names = info.players.map((p, i) => p.name || `Player ${i + 1}`);
  const rematchBtn = opts.onRematch
    ? h("button", { class: "primary", "data-action": "rematch", onclick: (e) => { e.target.disabled = true; e.target.textContent = "Rematch asked…"; opts.onRematch(); } }, "Rematch")
    : null;
  fill(el,
    h("h2", { "data-testid": "result-headline" }, headline(r, names, opts.seat)),
    h("p", { class: "reason", "data-reason": r.reason }, capital(reasonText(r.reason)) + "."),
    r.match && r.match.bestOf > 1 ? h("p", { class: "match" }, matchText(r.match, names)) : null,
    h("table", { class: "scores" },
      h("thead", {}, h("tr", {}, h("th", {}, "Player"), h("th", {}, "Cards on foundations"), h("th", {}, "Game"))),
      h("tbody", {}, [0, 1].map((i) => h("tr", { class: r.winner === i ? "winner" : "" },
        h("th", { scope: "row" }, h("span", { class: `dot seat${i}`, "aria-hidden": "true" }), names[i], opts.seat === i ? " (you)" : ""),
        h("td", { "data-score": i }, String(r.scores[i])),
        h("td", {}, r.statuses[i]))))),
    h("div", { class: "actions" },
      rematchBtn,
      h("a", { class: "button", href: `/?replay=${encodeURIComponent(info.race)}` }, "Watch the replay"),
      h("a", { class: "button", href: "/" }, "Back to the lobby")),
    h("p", { class: "rematch-note", role: "status", "aria-live": "polite" }),
    chartSection(info, names),
    fairness(r),
    solverSection(info.race),
  );
}

/**
 * solverSection asks the server's solver, on a click (a solve costs the
 * server up to a fraction of a second), whether the deal could be won.
 */
function solverSection(id) {
  const out = h("p", { class: "solver-verdict", "data-testid": "solver-verdict", role: "status", "aria-live": "polite" });
  const game = h("div", { class: "solver-game" });
  const btn = h("button", {
    "data-action": "solve",
    onclick: async () => {
      btn.disabled = true;
      out.textContent = "Asking the solver…";
      try {
        const sol = await getSolution(id);
        out.textContent = solutionText(sol);
        out.dataset.result = sol.result;
        btn.remove();
        if (sol.game) {
          fill(game, h("details", {},
            h("summary", {}, sol.result === "won" ? "The solver's winning game" : `The solver's game (${sol.bestScore} cards)`),
            h("pre", { class: "game-text" }, sol.game)));
        }
      } catch (err) {
        out.textContent = `The solver could not answer: ${err.message}`;
        btn.disabled = false;
      }
    },
  }, "Ask the solver");
  return h("section", { class: "solver", "aria-labelledby": "solver-h" },
    h("h3", { id: "solver-h" }, "Was this deal winnable?"),
    h("p", { class: "muted" }, "The solver knows the order of the stock: it says whether a perfect player could have won."),
    btn, out, game);
}

/** solutionText says what the solver found, never calling "unknown" a loss. */
export function solutionText(sol) {
  switch (sol.result) {
    case "won":
      return "Winnable: yes (the solver found a win).";
    case "lost":
      return `No: the best possible was ${sol.scoreExact ? "" : "at least "}${sol.bestScore} cards.`;
    default:
      return `Unknown within the search budget (the best it found was ${sol.bestScore} cards).`;
  }
}

/** matchText sums up a best-of-N match after a round. */
function matchText(m, names) {
  const score = `${names[0]} ${m.wins[0]} – ${m.wins[1]} ${names[1]}`;
  if (!m.over) return `Round ${m.round} of ${m.bestOf}: ${score}. The next round starts by itself.`;
  return `Match over after ${m.round} rounds: ${score}` + (m.winner !== undefined ? `; ${names[m.winner]} wins the match.` : "; a drawn match.");
}

const capital = (t) => t.charAt(0).toUpperCase() + t.slice(1);

function chartSection(info, names) {
  const r = info.result;
  const sec = h("section", { class: "chart", "aria-labelledby": "chart-h" }, h("h3", { id: "chart-h" }, "Cards on the foundations over time"));
  let series;
  try {
    series = timeline(info.variant, r.deal, info.moves || []);
  } catch (err) {
    sec.append(h("p", { class: "muted" }, `No chart: ${err.message}`));
    return sec;
  }
  sec.append(chart(series, names, Math.max(r.scores[0], r.scores[1], 13)));
  return sec;
}

/** chart draws both series as step lines in inline SVG. */
export function chart(series, names, top) {
  const W = 440, H = 220, L = 34, R = 10, T = 12, B = 30;
  const end = Math.max(1000, ...series.flat().map((p) => p.atMs));
  const x = (ms) => L + (ms / end) * (W - L - R);
  const y = (v) => T + (1 - v / top) * (H - T - B);
  const grid = [];
  for (let v = 0; v <= top; v += top > 26 ? 13 : 4) {
    grid.push(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#8883", "stroke-width": 1 }));
    grid.push(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 13, fill: "currentColor" }, String(v)));
  }
  const secs = end / 1000;
  const tick = secs > 1200 ? 300 : secs > 300 ? 120 : secs > 60 ? 15 : secs > 20 ? 5 : 1;
  for (let t = 0; t <= secs; t += tick) {
    grid.push(s("text", { x: x(t * 1000), y: H - 12, "text-anchor": "middle", "font-size": 13, fill: "currentColor" }, secs > 60 ? fmtClock(t * 1000) : `${t}s`));
  }
  const lines = series.map((pts, i) => {
    let d = `M${x(0)} ${y(pts[0].score)}`;
    for (const p of pts.slice(1)) d += ` H${x(p.atMs).toFixed(1)} V${y(p.score).toFixed(1)}`;
    d += ` H${x(end)}`;
    return s("path", { d, fill: "none", stroke: SEAT_COLOURS[i], "stroke-width": 2.5, "stroke-dasharray": i ? "6 3" : null, "data-seat": i });
  });
  const last = series.map((p) => p[p.length - 1].score);
  const label = `Chart: ${names[0]} reached ${last[0]} cards, ${names[1]} reached ${last[1]}, over ${Math.round(secs)} seconds`;
  return h("figure", {},
    s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "chart-svg" },
      s("title", {}, label), ...grid, ...lines),
    h("figcaption", {}, [0, 1].map((i) => h("span", { class: "legend" }, h("span", { class: `dot seat${i}`, "aria-hidden": "true" }), `${names[i]} (${last[i]})`))));
}

function fairness(r) {
  const sec = h("section", { class: "fairness", "aria-labelledby": "fair-h" }, h("h3", { id: "fair-h" }, "The deal"));
  if (!r.commitment) {
    sec.append(h("p", {}, `Deal ${r.deal}, named when the race was made (no commitment needed).`));
    return sec;
  }
  const out = h("p", { class: "verdict", role: "status", "aria-live": "polite" });
  sec.append(
    h("dl", {},
      h("dt", {}, "Deal number"), h("dd", { "data-field": "deal" }, r.deal),
      h("dt", {}, "Salt"), h("dd", { "data-field": "salt" }, h("code", {}, r.salt)),
      h("dt", {}, "Commitment shown at the start"), h("dd", { "data-field": "commitment" }, h("code", {}, r.commitment))),
    h("button", {
      "data-action": "verify",
      onclick: async () => {
        const got = await sha256Hex(`${r.deal}:${r.salt}`);
        const ok = got === r.commitment;
        out.textContent = ok
          ? "✔ SHA-256(deal:salt) matches the commitment: the deal was fixed before the race began."
          : `✘ Mismatch: SHA-256(deal:salt) is ${got}.`;
        out.className = "verdict " + (ok ? "ok" : "bad");
      },
    }, "Check the commitment"),
    out);
  return sec;
}

/** loadResult fetches a finished race and renders it into el. */
export async function loadResult(el, id, opts = {}) {
  const info = await getRace(id);
  if (!info.result) {
    el.replaceChildren(h("p", {}, "This race is not over yet."));
    return info;
  }
  renderResult(el, info, opts);
  return info;
}
