// "Where you lost it": the server's analysis of each racer's game
// (GET /api/races/{id}/analysis, PROTOCOL.md), in words and as marks on
// the foundation chart. The analysis exists only once the race is over.

import { h } from "./ui.js";
import { getAnalysis } from "./proto.js";
import { moveText } from "./cards.js";

const POLL_MS = 1000; // how often an analysis in progress is asked again
const POLL_TRIES = 300; // then the page gives up (the server's budget is far smaller)

/**
 * waitAnalysis asks for a finished race's analysis until it is done,
 * telling onProgress(percent) meanwhile; it resolves to the analysis.
 */
export async function waitAnalysis(id, onProgress = () => {}) {
  for (let i = 0; i < POLL_TRIES; i++) {
    const a = await getAnalysis(id);
    if (a.state === "done") return a;
    onProgress(a.percent || 0);
    await new Promise((res) => setTimeout(res, POLL_MS));
  }
  throw new Error("the analysis took too long");
}

/** ends says how a game that was still winnable at its end ended. */
function ends(g, result) {
  if (g.status === "resigned") return "when the game was resigned";
  if (result && result.reason === "time") return "when time ran out";
  return "when the race ended";
}

/**
 * verdictText says, for one racer's game, where it was lost: never a guess
 * where the solver did not settle a position ("unknown").
 */
export function verdictText(g, name, result) {
  switch (g.verdict) {
    case "won": return `${name} won the deal: winnable throughout.`;
    case "winnable-throughout": return `${name}'s game could still be won at its end (after ${g.plies} moves), ${ends(g, result)}: winnable throughout.`;
    case "lost-from-start": return `The deal could not be won: lost from the start, whatever ${name} played.`;
    case "lost-at": return `${name}'s game was winnable until move ${g.lastWinnable + 1}: ${moveText(g.losingMove)} lost it; ${moveText(g.winningMove)} would have kept it winnable.`;
  }
  const pos = (k) => (k === 0 ? "at the start" : `after move ${k}`);
  const won = g.lastWinnable >= 0 ? `${name}'s game was winnable ${pos(g.lastWinnable)}` : `${name}'s game is not known to be winnable anywhere`;
  const lost = g.firstLost >= 0 ? ` and lost ${pos(g.firstLost)}` : "";
  const where = g.firstLost >= 0 ? (g.lastWinnable >= 0 ? "in between" : "before that") : g.lastWinnable >= 0 ? "after that" : "throughout";
  return `${won}${lost}; ${where}, unknown: the solver ran out of budget.`;
}

/** where names a position of a game in words. */
function where(k) { return k === 0 ? "from the start" : `after move ${k}`; }

/**
 * chanceAt is the expert's chance without peeking at position ply of g, or
 * undefined where the analysis has none.
 */
export function chanceAt(g, ply) {
  return (g.chances || []).find((c) => c.ply === ply);
}

/**
 * chanceText says how an expert that sees only what the player saw would
 * fare from the analysis's positions ("with what you could see, an expert
 * wins 62% from here"), beside the solver's verdict, which knows the stock.
 */
export function chanceText(g, name) {
  const cs = g.chances || [];
  if (!cs.length) return "";
  const parts = cs.map((c) => `${c.percent}% ${where(c.ply)}${c.ply === g.lastWinnable && c.ply > 0 ? " (the last winnable position)" : c.ply === g.firstLost && c.ply > 0 ? " (the first lost one)" : ""}`);
  return `With what ${name} could see, an expert (the computer that does not peek; ${cs[0].draws} guesses at the unseen cards) wins ${parts.join(", ")}.`;
}

/**
 * marks are the chart's marks of an analysis: for each game, where it was
 * last winnable and where it was first lost, at the time of that move
 * (series is the chart's per-seat timeline: points after 0, 1, … moves).
 */
export function marks(analysis, series) {
  const out = [];
  (analysis.games || []).forEach((g, seat) => {
    const pts = series[seat] || [];
    const at = (k) => pts[Math.min(k, pts.length - 1)] || { atMs: 0, score: 0 };
    if (g.lastWinnable >= 0 && g.verdict !== "won") {
      out.push({ seat, kind: "winnable", ...at(g.lastWinnable), label: `last winnable: after move ${g.lastWinnable}` });
    }
    if (g.firstLost >= 0) {
      out.push({ seat, kind: "lost", ...at(g.firstLost), label: g.verdict === "lost-at" ? `lost by move ${g.firstLost}: ${moveText(g.losingMove)}` : `lost after move ${g.firstLost}` });
    }
  });
  return out;
}

/**
 * coachList is the analysis in words, one paragraph per game; lineLink,
 * when given, makes for each game with a winning line an element that
 * opens it (the replay's button, the result page's link).
 */
export function coachList(analysis, names, result, lineLink) {
  return h("div", { class: "coach-games" }, (analysis.games || []).map((g, seat) =>
    h("p", { class: `coach-game seat${seat}`, "data-testid": `coach-${seat}`, "data-verdict": g.verdict },
      h("span", { class: `dot seat${seat}`, "aria-hidden": "true" }), " ",
      verdictText(g, names[seat], result),
      chanceText(g, names[seat]) ? [" ", h("span", { class: "coach-chance", "data-testid": `coach-chance-${seat}` }, chanceText(g, names[seat]))] : null,
      g.line && g.line.length && lineLink ? [" ", lineLink(seat, g)] : null)));
}

/** unknownNote explains "unknown" once, under the list. */
export function unknownNote() {
  return h("p", { class: "muted" }, "The solver knows the order of the stock and plays perfectly. Each position it may search a bounded number of positions; where it stops before it is sure, the page says unknown, never lost.");
}

/**
 * practiceLink opens "find the better move" at a game's last winnable
 * position, for a game lost by a known move (null otherwise).
 */
export function practiceLink(race, seat, g) {
  if (g.verdict !== "lost-at") return null;
  return h("a", { href: `/?practice=${encodeURIComponent(race)}&seat=${seat}`, "data-action": "practice", "data-seat": seat, class: "practice-link" },
    "Find the better move");
}
