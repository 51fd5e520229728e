// Arenas (PROTOCOL.md section 7, "Arenas"; docs/arenas.md): the lobby's
// list of them, and the words and clocks the arena page shares with it.
// An arena is a set time of back-to-back races of two, people only; its
// page is /?arena=ID (arena.js).

import { h, fill, fmtClock } from "./ui.js";

/**
 * ServerClock follows the server's time from the "now" its messages
 * carry: the time at the last one plus the time elapsed here since
 * (performance.now, which no change of the local clock moves), as the
 * mass races' countdown does (mass.js).
 */
export class ServerClock {
  constructor() {
    this.serverAt = null;
    this.localAt = 0;
    this.lastNow = ""; // the last message's now, as sent
  }

  /** note takes a message's now (RFC 3339); one drawn again is not a new reading. */
  note(now) {
    if (!now || now === this.lastNow) return;
    const at = Date.parse(now);
    if (Number.isNaN(at)) return;
    this.lastNow = now;
    this.serverAt = at;
    this.localAt = performance.now();
  }

  /** now is the server's time (ms since the epoch); the local clock before any message. */
  now() {
    if (this.serverAt === null) return Date.now();
    return this.serverAt + (performance.now() - this.localAt);
  }
}

/** longClock shows milliseconds as m:ss, or h:mm:ss from an hour. */
export function longClock(ms) {
  const t = Math.max(0, Math.ceil(ms / 1000));
  if (t < 3600) return fmtClock(ms);
  const m = Math.floor((t % 3600) / 60);
  return `${Math.floor(t / 3600)}:${String(m).padStart(2, "0")}:${String(t % 60).padStart(2, "0")}`;
}

/** minutes is a duration in ms as "5 min" (or "90 s" below a minute's multiple). */
export function minutes(ms) {
  const s = Math.round(ms / 1000);
  return s % 60 === 0 ? `${s / 60} min` : `${s} s`;
}

/**
 * whenText says where an arena (an ArenaBrief or ArenaView) stands as of
 * now (the server's ms): "starts in 4:12", "ends in 37:05", "time is up:
 * the last races are finishing", "over".
 */
export function whenText(a, now) {
  switch (a.status) {
    case "soon": {
      const left = Date.parse(a.startAt) - now;
      return left > 0 ? `starts in ${longClock(left)}` : "starting…";
    }
    case "running": {
      const left = Date.parse(a.endAt) - now;
      return left > 0 ? `ends in ${longClock(left)}` : "time is up";
    }
    case "finishing": return "time is up: the last races are finishing";
    case "over": return "over";
  }
  return a.status || "";
}

/** statusWord names an arena's status for a badge. */
export function statusWord(status) {
  return { soon: "starting soon", running: "running", finishing: "finishing", over: "over" }[status] || status;
}

/** whatText is an arena's races: "classic · 5 min races" (with the deals' grade). */
export function whatText(a) {
  return `${a.variant}${a.grade ? ` (${a.grade} deals)` : ""} · ${minutes(a.timeLimitMs)} races`;
}

/** playersText counts an arena's players. */
export function playersText(n) {
  return n === 1 ? "1\u00a0player" : `${n}\u00a0players`; // the number and its noun on one line
}

/** arenaErrorText says a refusal of the arena's messages in words. */
export function arenaErrorText(err) {
  switch (err && err.code) {
    case "no-such-arena": return "There is no such arena: it may have ended more than half an hour ago, or the link was cut short.";
    case "arena-over": return "This arena's time is up: nobody can join it any more.";
    case "in-arena": return `You are in an arena already: pause that one first. (${err.message})`;
    case "not-in-arena": return "You are not in this arena: join it first.";
    case "in-race": return "You are still in a race that is not over: finish it first.";
    case "already-queued": return "You are waiting for a race (quick play or your own challenge): leave it first, in the lobby.";
    case "in-mass": return "You are in a mass race: leave it first, in the lobby.";
    default: return (err && err.message) || String(err);
  }
}

/**
 * ArenasPanel is the lobby's "Arenas" section: each arena listed with its
 * variant, race time, status, players and a live countdown to its start
 * or end, and a link to its page. It is hidden while there is none.
 */
export class ArenasPanel {
  constructor() {
    this.list = [];
    this.clock = new ServerClock();
    this.rows = new Map(); // arena id -> its row's elements, kept so focus survives updates
    this.ul = h("ul", { class: "list arenas", "data-testid": "arenas" });
    this.el = h("section", { class: "panel", "data-panel": "arenas", "aria-labelledby": "arenas-title", hidden: true },
      h("h2", { id: "arenas-title" }, "Arenas"),
      h("p", { class: "muted" }, "Race back to back for a set time, a new opponent each race: a win 2 points, a draw 1. Only people race, no computer."),
      this.ul);
    // The countdowns tick between the lobby's messages.
    this.timer = setInterval(() => this.render(), 1000);
  }

  /** update takes the lobby message's arenas and its now (the server's time). */
  update(arenas, now) {
    this.list = arenas || [];
    this.clock.note(now);
    this.render();
  }

  render() {
    const now = this.clock.now();
    for (const id of this.rows.keys()) if (!this.list.some((a) => a.id === id)) this.rows.delete(id);
    const lis = this.list.map((a) => this.row(a, now));
    // Refilled only when the lines change: a focused link keeps its focus.
    if (lis.length !== this.ul.children.length || lis.some((li, i) => this.ul.children[i] !== li)) fill(this.ul, lis);
    this.el.hidden = !this.list.length;
  }

  /** row updates (or makes) an arena's line, keeping its link. */
  row(a, now) {
    let r = this.rows.get(a.id);
    if (!r) {
      const name = h("strong", { class: "arena-name" });
      const what = h("span", { class: "what" });
      const status = h("span", { class: "badge arena-status" });
      const when = h("span", { class: "arena-when", "data-testid": "arena-when" });
      const open = h("a", { class: "button primary-soft", href: `/?arena=${encodeURIComponent(a.id)}`, "data-action": "open-arena" }, "Open");
      r = { li: h("li", { "data-arena": a.id }, h("span", { class: "arena-line" }, name, " ", status, h("br"), what, " · ", when), open), name, what, status, when, open };
      this.rows.set(a.id, r);
    }
    r.name.textContent = a.name;
    r.status.textContent = statusWord(a.status);
    r.what.textContent = `${whatText(a)} · ${playersText(a.players)}`;
    r.when.textContent = whenText(a, now);
    r.open.setAttribute("aria-label", `Open the arena ${a.name}`);
    r.li.dataset.status = a.status;
    r.li.dataset.players = String(a.players);
    return r.li;
  }
}
