// A player's standings and recent lobby races: the lobby's own-profile
// panel and the player page (/?player=ID) draw them alike.

import { h, fill } from "./ui.js";
import { getPlayer } from "./proto.js";

/**
 * recordText is a standing's record, the same on the profile and the
 * leaderboard: "3 won · 1 lost · 1 drawn".
 */
export function recordText(s) {
  return `${s.wins} won · ${s.losses} lost · ${s.draws || 0} drawn`;
}

/** renderProfile draws profile p (GET /api/players/{id}) into el. */
export function renderProfile(el, p) {
  const seatOf = (r) => (r.players[0].player === p.player ? 0 : 1);
  fill(el,
    p.standings.length
      ? h("ul", { class: "list" }, p.standings.map((s) => h("li", { "data-variant": s.variant },
        h("strong", {}, s.variant), " ", h("span", { "data-rating": "" }, Math.round(s.rating.rating)),
        h("span", { class: "muted", "data-record": "" }, ` ±${Math.round(s.rating.deviation)} · ${s.games} ${s.games === 1 ? "race" : "races"}: ${recordText(s)} · streak ${s.streak}`))))
      : h("p", { class: "muted" }, "No rated races yet."),
    h("h3", {}, "Recent races"),
    h("ul", { class: "list history" }, p.history.map((r) => {
      const me = seatOf(r);
      const opp = r.players[1 - me];
      const delta = r.rated && r.before && r.after ? Math.round(r.after[me].rating - r.before[me].rating) : null;
      // The race's outcome from this player's side.
      const mine = r.outcome === "win" ? (r.winner === me ? "win" : "loss") : r.outcome;
      const words = { win: "won against", loss: "lost to", draw: "drew with", aborted: "aborted with" }[mine] || mine;
      return h("li", { "data-race": r.race, "data-outcome": mine },
        h("span", {}, `${words} `),
        opp.player ? h("a", { href: playerLink(opp.player) }, opp.name) : h("span", {}, opp.name || "computer"),
        h("span", {}, ` · ${r.scores[me]}–${r.scores[1 - me]} · ${r.variant}`),
        delta === null ? null : h("span", { class: "muted" }, ` (${delta >= 0 ? "+" : ""}${delta})`),
        " ", h("a", { href: `/?result=${encodeURIComponent(r.race)}` }, "result"));
    })),
    p.ghosts ? ghostSection(p.ghosts) : null);
}

/** ghostSection draws a profile's ghost races: open challenges, who raced them, the record. */
function ghostSection(g) {
  const t = g.record;
  const words = { won: "beat", lost: "lost to", draw: "drew with" };
  return h("div", { class: "ghosts", "data-testid": "ghosts" },
    h("h3", {}, "Ghost races"),
    h("p", { class: "muted", "data-ghost-record": "" }, `Against ghosts: ${t.races} ${t.races === 1 ? "race" : "races"}, ${t.wins} won · ${t.losses} lost · ${t.draws} drawn (not rated).`),
    g.open.length ? h("p", {}, "Open challenges:") : null,
    g.open.length ? h("ul", { class: "list" }, g.open.map((o) => h("li", { "data-ghost": o.id },
      h("a", { href: `/?ghost=${encodeURIComponent(o.id)}` }, `beat ${o.name}'s ${o.score} cards`),
      h("span", { class: "muted" }, ` · ${o.variant} · until ${new Date(o.expiresAt).toLocaleDateString()}`)))) : null,
    g.against.length ? h("p", {}, "Who raced them:") : null,
    g.against.length ? h("ul", { class: "list" }, g.against.map((r) => h("li", { "data-run": r.race, "data-outcome": r.outcome },
      `${r.name} ${words[r.outcome] || r.outcome} ${r.ghostName}'s ghost · ${r.scores[0]}–${r.scores[1]} `,
      h("a", { href: `/?result=${encodeURIComponent(r.race)}` }, "result")))) : null);
}

/** playerLink is the address of a player's page. */
export function playerLink(id) {
  return `/?player=${encodeURIComponent(id)}`;
}

/** playerPage shows player id's standings and races inside root. */
export async function playerPage(root, id) {
  const body = h("div", { "data-testid": "profile" }, h("p", { class: "muted" }, "Loading…"));
  const title = h("h1", {}, "Player");
  fill(root, h("div", { class: "player-page" }, title,
    h("section", { class: "panel", "data-panel": "profile" }, body),
    h("p", {}, h("a", { href: "/" }, "Back to the lobby"))));
  try {
    const p = await getPlayer(id, 20);
    const name = (p.standings[0] || {}).name || (p.history[0] ? p.history[0].players.find((x) => x.player === id).name : id);
    title.textContent = name;
    document.title = `${name} · Sir Tommy`;
    renderProfile(body, p);
  } catch (ex) {
    fill(body, h("p", { class: "muted" }, ex.code === "no-such-player" ? "This player has no lobby races yet." : ex.message));
  }
}
