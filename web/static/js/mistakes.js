// "My mistakes" (GET /api/players/me/mistakes): the positions where your
// own move lost a game, each linked back to its practice ("find the
// better move"), on your own player page.

import { h, fill } from "./ui.js";
import { getMistakes } from "./proto.js";
import { moveText } from "./cards.js";

/**
 * mistakesSection is the section listing the mistakes of the player
 * holding token; it fills itself once they come.
 */
export function mistakesSection(token) {
  const body = h("div", { "data-testid": "mistakes", role: "status" }, h("p", { class: "muted" }, "Loading your mistakes…"));
  const sec = h("section", { class: "panel mistakes", "aria-labelledby": "mistakes-h", id: "mistakes" },
    h("h2", { id: "mistakes-h" }, "My mistakes"), body);
  getMistakes(token)
    .then((r) => {
      body.dataset.state = "done";
      if (!r.mistakes.length) {
        fill(body, h("p", { class: "muted" }, "None yet. After a race lost by one move, open \"Find the better move\" on its result: the position is kept here."));
        return;
      }
      const solved = r.mistakes.filter((m) => m.solvedAt).length;
      fill(body,
        h("p", { class: "muted" }, `${r.mistakes.length} ${r.mistakes.length === 1 ? "position" : "positions"} where your move lost the game; you found the better move in ${solved}.`),
        h("ul", { class: "list mistake-list" }, r.mistakes.map(row)));
    })
    .catch((err) => { body.dataset.state = "failed"; fill(body, h("p", { class: "muted" }, `Your mistakes could not be had: ${err.message}`)); });
  return sec;
}

/** row is one mistake, linked to its practice. */
function row(m) {
  const at = new Date(m.racedAt);
  return h("li", { "data-race": m.race, "data-seat": m.seat, "data-solved": m.solvedAt ? "yes" : "no" },
    h("span", {}, `${m.variant}, after move ${m.position}: ${moveText(m.move)} lost it.`),
    m.solvedAt ? h("strong", { class: "solved" }, "Found.") : h("span", { class: "muted" }, "Not found yet."),
    h("time", { class: "muted", datetime: m.racedAt, title: at.toLocaleString() }, at.toLocaleDateString(undefined, { month: "short", day: "numeric" })),
    h("a", { href: `/?practice=${encodeURIComponent(m.race)}&seat=${m.seat}`, "data-action": "practice" }, "Find the better move"));
}
