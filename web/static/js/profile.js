// A player's standings and lobby races: the lobby's own-profile panel
// and the player page (/?player=ID) draw them alike; the player page adds
// the rating chart, every race page by page and the download of every game.

import { h, fill } from "./ui.js";
import { getPlayer, getGames, getRatingChanges, gamesFileLink, identity } from "./proto.js";
import { ratingChart } from "./ratingchart.js";

/** PAGE is how many races the player page shows at first and loads at a time. */
const PAGE = 20;

/**
 * recordText is a standing's record, the same on the profile and the
 * leaderboard: "3 won · 1 lost · 1 drawn".
 */
export function recordText(s) {
  return `${s.wins} won · ${s.losses} lost · ${s.draws || 0} drawn`;
}

/**
 * renderProfile draws profile p (GET /api/players/{id}) into el. With
 * full (the player page): the rating chart, every race ("More games")
 * and the download; without (the lobby's panel), a link to that page.
 */
export function renderProfile(el, p, { full = false } = {}) {
  const rows = h("ul", { class: "list history", "data-testid": "history" }, p.history.map((r) => historyRow(p.player, r)));
  const standings = p.standings.length
    ? h("ul", { class: "list" }, p.standings.map((s) => h("li", { "data-variant": s.variant },
      h("strong", {}, s.variant), " ", h("span", { "data-rating": "" }, Math.round(s.rating.rating)),
      h("span", { class: "muted", "data-record": "" }, ` ±${Math.round(s.rating.deviation)} · ${s.games} ${s.games === 1 ? "race" : "races"}: ${recordText(s)} · streak ${s.streak}`))))
    : h("p", { class: "muted" }, "No rated races yet.");
  const chart = full ? ratingSection(p) : null;
  fill(el,
    // On a wide screen the chart stands beside the standings.
    chart ? h("div", { class: "profile-top" }, standings, chart) : standings,
    h("h3", {}, full ? "Races" : "Recent races"),
    rows,
    full ? gamesFooter(p, rows)
      : p.history.length ? h("p", {}, h("a", { href: playerLink(p.player), "data-action": "player-page" }, "Every race, the rating chart and a download"),
        (identity.get() || {}).player === p.player ? [" · ", h("a", { href: `${playerLink(p.player)}#mistakes`, "data-action": "my-mistakes" }, "My mistakes")] : null) : null,
    p.ghosts ? ghostSection(p.ghosts) : null);
}

/** historyRow is one lobby race from player's side, linked to its result and replay. */
function historyRow(player, r) {
  if (r.players.length > 2) return fieldRow(player, r);
  const me = r.players[0].player === player ? 0 : 1;
  const opp = r.players[1 - me];
  const delta = r.rated && r.before && r.after ? Math.round(r.after[me].rating - r.before[me].rating) : null;
  // The race's outcome from this player's side.
  const mine = r.outcome === "win" ? (r.winner === me ? "win" : "loss") : r.outcome;
  const words = { win: "won against", loss: "lost to", draw: "drew with", aborted: "aborted with" }[mine] || mine;
  const at = new Date(r.at);
  return h("li", { "data-race": r.race, "data-outcome": mine },
    h("span", {}, `${words} `),
    opp.player ? h("a", { href: playerLink(opp.player) }, opp.name) : h("span", {}, opp.name || "computer"),
    h("span", {}, ` · ${r.scores[me]}–${r.scores[1 - me]} · ${r.variant}`),
    delta === null ? null : h("span", { class: "muted" }, ` (${delta >= 0 ? "+" : ""}${delta})`),
    h("time", { class: "muted", datetime: r.at, title: at.toLocaleString() }, at.toLocaleDateString(undefined, { month: "short", day: "numeric" })),
    h("span", { class: "links" },
      h("a", { href: `/?result=${encodeURIComponent(r.race)}` }, "result"),
      r.outcome === "aborted" ? null : [" · ", h("a", { href: `/?replay=${encodeURIComponent(r.race)}` }, "replay")]));
}

/** ordinal is 1st, 2nd, 3rd, 4th… */
function ordinal(n) {
  const tail = n % 100 >= 11 && n % 100 <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
  return `${n}${tail}`;
}

/** fieldRow is a room's race (more than two racers) from player's side: their place in the field, and their cards. */
function fieldRow(player, r) {
  const me = Math.max(0, r.players.findIndex((p) => p.player === player));
  const mine = (r.ranking || []).find((p) => p.seat === me);
  const place = mine ? mine.place : 0;
  const shared = (r.ranking || []).some((p) => p.seat !== me && p.place === place);
  const at = new Date(r.at);
  return h("li", { "data-race": r.race, "data-place": String(place), "data-field": String(r.players.length) },
    h("span", {}, place ? `${ordinal(place)}${shared ? " (shared)" : ""} of ${r.players.length}` : `a race of ${r.players.length}`),
    h("span", {}, ` · ${r.scores[me]} cards · ${r.variant} · not rated`),
    h("time", { class: "muted", datetime: r.at, title: at.toLocaleString() }, at.toLocaleDateString(undefined, { month: "short", day: "numeric" })),
    h("span", { class: "links" },
      h("a", { href: `/?result=${encodeURIComponent(r.race)}` }, "result"),
      " · ", h("a", { href: `/?replay=${encodeURIComponent(r.race)}` }, "replay")));
}

/**
 * ratingSection is the rating chart of the variants the player is rated
 * in, the most played first, one at a time; its box keeps its size from
 * the start, so the page does not move when the points arrive.
 */
function ratingSection(p) {
  const played = p.standings.filter((s) => s.games > 0).sort((a, b) => b.games - a.games || a.variant.localeCompare(b.variant));
  if (!played.length) return null;
  const box = h("div", { class: "rating-chart", "data-testid": "rating-chart" }, h("p", { class: "muted" }, "Loading the chart…"));
  const note = h("p", { class: "muted chart-note", "aria-live": "polite" });
  let shown = "";
  const show = async (variant) => {
    shown = variant;
    for (const c of chips ? chips.children : []) c.setAttribute("aria-checked", String(c.dataset.chartVariant === variant));
    box.dataset.variant = variant;
    delete box.dataset.state;
    try {
      const ch = await getRatingChanges(p.player, variant);
      if (shown !== variant) return; // another variant was chosen meanwhile
      if (!ch.changes.length) {
        fill(box, h("p", { class: "muted" }, `No rated races in ${variant} yet.`));
        note.textContent = "";
      } else {
        // Drawn at the box's size (reserved by the stylesheet), in its pixels.
        fill(box, ratingChart(ch.variant, ch.changes, Math.round(box.clientWidth), Math.round(box.clientHeight)));
        const last = ch.changes[ch.changes.length - 1].after;
        const best = Math.max(...ch.changes.map((c) => c.after.rating));
        note.textContent = `Now ${Math.round(last.rating)} ±${Math.round(last.deviation)} · best ${Math.round(best)}`;
      }
      box.dataset.state = "done";
    } catch (ex) {
      if (shown !== variant) return;
      fill(box, h("p", { class: "muted" }, `The chart could not be had: ${ex.message}`));
      box.dataset.state = "failed";
    }
  };
  const chips = played.length > 1
    ? h("div", { class: "chips", role: "radiogroup", "aria-label": "Variant of the chart" }, played.map((s) => h("button", {
      type: "button", class: "chip", role: "radio", "aria-checked": "false", "data-chart-variant": s.variant,
      onclick: () => show(s.variant),
    }, s.variant)))
    : null;
  show(played[0].variant);
  return h("section", { class: "rating", "aria-labelledby": "rating-h" },
    h("h3", { id: "rating-h" }, played.length > 1 ? "Rating over time" : `Rating in ${played[0].variant} over time`),
    chips, box, note,
    h("p", { class: "muted chart-legend" }, "The line is the rating after each rated race; the band around it, the rating ± its deviation (how sure it is)."));
}

/**
 * gamesFooter is under the races: "More games", which loads the next page
 * after the last shown (the cursor the server gave), and the download.
 */
function gamesFooter(p, rows) {
  let next = p.next || "";
  const status = h("p", { class: "muted games-status", role: "status", "aria-live": "polite" });
  const more = h("button", { type: "button", "data-action": "more-games", hidden: !next }, "More games");
  more.addEventListener("click", async () => {
    more.disabled = true;
    status.textContent = "Loading more races…";
    try {
      const page = await getGames(p.player, next, PAGE);
      const added = page.games.map((r) => historyRow(p.player, r));
      rows.append(...added);
      next = page.next || "";
      more.hidden = !next;
      status.textContent = next ? "" : `All ${rows.children.length} races shown.`;
      if (!next && added.length) added[0].querySelector("a").focus(); // the button is gone: focus the first new race
    } catch (ex) {
      status.textContent = `More races could not be had: ${ex.message}`;
    }
    more.disabled = false;
  });
  const mine = (identity.get() || {}).player === p.player;
  return h("div", { class: "games-actions" },
    more,
    p.history.length ? h("a", { class: "button", href: gamesFileLink(p.player), download: "", "data-action": "download-games" },
      mine ? "Download my games" : "Download all games") : null,
    status);
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
  // The way back comes first: the profile below grows as it arrives, and
  // nothing under it would stay in place (layout shift).
  fill(root, h("div", { class: "player-page" },
    h("p", { class: "back" }, h("a", { href: "/" }, "Back to the lobby")), title,
    h("section", { class: "panel", "data-panel": "profile" }, body)));
  try {
    const p = await getPlayer(id, PAGE);
    const name = (p.standings[0] || {}).name || (p.history[0] ? p.history[0].players.find((x) => x.player === id).name : id);
    title.textContent = name;
    document.title = `${name} · Sir Tommy`;
    renderProfile(body, p, { full: true });
  } catch (ex) {
    fill(body, h("p", { class: "muted" }, ex.code === "no-such-player" ? "This player has no lobby races yet." : ex.message));
  }
  // Your own page: your mistakes too, which only your token lists.
  const me = identity.get();
  if (me && me.player === id && me.token) {
    const { mistakesSection } = await import("./mistakes.js");
    root.querySelector(".player-page").append(mistakesSection(me.token));
  }
}
