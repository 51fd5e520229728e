// The lobby's mass races (PROTOCOL.md section 7, "Mass races"): in each
// variant one public race of up to 10 that anyone may join. The panel
// lists the open ones (and the lobby's chosen variant, empty or not) with
// a live countdown, and joins or leaves one. When it starts the server
// sends "matched" (via "mass"), which the lobby handles as for any match.

import { h, fill, fmtClock } from "./ui.js";

// The server's rule: the countdown starts once MASS_QUORUM have joined.
const MASS_QUORUM = 3;
const MASS_SEATS = 10;

/** massErrorText says a refusal of join-mass or leave-mass in words. */
export function massErrorText(err) {
  switch (err && err.code) {
    case "race-full": return "This mass race is full and starting now: the next one opens in a moment.";
    case "in-race": return "You are still in a race that is not over: finish it first.";
    case "already-queued": return "You are already waiting for a race (quick play or your own challenge): leave it first.";
    case "not-in-mass": return "You are not in a mass race any more.";
    case "bad-options": return "This server has no mass race in that variant.";
    default: return (err && err.message) || String(err);
  }
}

/**
 * startsText is when a mass race starts, as of now (ms since the epoch,
 * the server's clock: see MassPanel.serverNow).
 */
export function startsText(m, now) {
  if (!m.startAt) return `starts when ${MASS_QUORUM} have joined`;
  const left = Date.parse(m.startAt) - now;
  return left > 0 ? `starts in ${fmtClock(left)}` : "starting…";
}

const joinedText = (m) => `${m.joined} of ${m.seats || MASS_SEATS} joined`;

export class MassPanel {
  /**
   * sock() is the lobby's current socket; chosen() the variant the lobby
   * has chosen for quick play; me() this player's id ("" before hello).
   */
  constructor(sock, chosen, me) {
    this.sock = sock;
    this.chosen = chosen;
    this.me = me;
    this.list = []; // the lobby's mass races
    this.mine = null; // the mass race this player is in (as last known), from any of their tabs
    this.rows = new Map(); // variant -> its row's elements, kept so focus survives updates
    // The server's time at the last lobby message, and performance.now()
    // then: the countdown is the server's, whatever the local clock says.
    this.serverAt = null;
    this.localAt = 0;
    this.lastNow = ""; // the last message's now, as sent
    this.build();
    // The countdown ticks between the lobby's messages.
    this.timer = setInterval(() => this.render(), 1000);
  }

  build() {
    this.ul = h("ul", { class: "list mass", "data-testid": "mass-races" });
    this.you = h("div", { class: "mass-you", "data-testid": "mass-you", hidden: true });
    this.youText = h("p", { "data-testid": "mass-you-text" });
    this.leaveBtn = h("button", { type: "button", "data-action": "leave-mass", onclick: () => this.leave() }, "Leave");
    fill(this.you, this.youText, this.leaveBtn);
    // Only what changes in substance is announced, not each second's tick.
    this.news = h("p", { class: "visually-hidden", role: "status", "data-testid": "mass-news" });
    this.err = h("p", { class: "error", role: "alert", "data-testid": "mass-error" });
    this.el = h("section", { class: "panel", "data-panel": "mass", "aria-labelledby": "mass-title" },
      h("h2", { id: "mass-title" }, "Mass race"),
      h("p", { class: "muted" }, `Up to ${MASS_SEATS} race on one deal, unrated. The countdown (15 s) starts once ${MASS_QUORUM} have joined; at ${MASS_SEATS} it starts at once.`),
      this.ul, this.you, this.news, this.err);
  }

  /**
   * update takes the lobby's list of open mass races. Whether this player
   * is in one is read from its members: they may have joined or left from
   * another tab. now is the message's server time (RFC 3339), which the
   * countdown is drawn from.
   */
  update(mass, now) {
    this.list = mass || [];
    // A message drawn again (after the welcome) is not a new reading.
    const at = now && now !== this.lastNow ? Date.parse(now) : NaN;
    if (!Number.isNaN(at)) {
      this.lastNow = now;
      this.serverAt = at;
      this.localAt = performance.now();
    }
    const me = this.me();
    const fresh = me
      ? this.list.find((m) => (m.members || []).some((p) => p.player === me))
      : this.mine && this.list.find((m) => m.variant === this.mine.variant);
    if (fresh && this.mine && fresh.variant === this.mine.variant) this.noteChange(fresh);
    else if (me) this.mine = fresh || null;
    this.render();
  }

  /**
   * serverNow is the server's time (ms since the epoch): its time at the
   * last lobby message plus the time elapsed here since (performance.now,
   * which no change of the local clock moves); the local clock before any.
   */
  serverNow() {
    if (this.serverAt === null) return Date.now();
    return this.serverAt + (performance.now() - this.localAt);
  }

  /** disconnected forgets the joined race: closing the connection left it. */
  disconnected() {
    this.mine = null;
    this.render();
  }

  shown() {
    const byVariant = new Map(this.list.map((m) => [m.variant, m]));
    const chosen = this.chosen();
    if (this.mine && !byVariant.has(this.mine.variant)) byVariant.set(this.mine.variant, this.mine);
    if (!byVariant.has(chosen)) byVariant.set(chosen, { variant: chosen, joined: 0, seats: MASS_SEATS });
    // The chosen variant first, then the others as the server lists them.
    return [byVariant.get(chosen), ...[...byVariant.values()].filter((m) => m.variant !== chosen)];
  }

  render() {
    const now = this.serverNow();
    const shown = this.shown();
    for (const v of this.rows.keys()) if (!shown.some((m) => m.variant === v)) this.rows.delete(v);
    const lis = shown.map((m) => this.row(m, now));
    // Refilled only when the lines change: a focused Join button keeps its focus.
    if (lis.length !== this.ul.children.length || lis.some((li, i) => this.ul.children[i] !== li)) fill(this.ul, lis);
    if (this.mine) {
      const m = shown.find((x) => x.variant === this.mine.variant) || this.mine;
      this.youText.textContent = `You're in: ${startsText(m, now)} (${joinedText(m)}).`;
    }
    this.you.hidden = !this.mine;
    this.el.dataset.joined = this.mine ? this.mine.variant : "";
  }

  /** row updates (or makes) a variant's line, keeping its button. */
  row(m, now) {
    let r = this.rows.get(m.variant);
    if (!r) {
      const text = h("span", { class: "what-mass" });
      const join = h("button", {
        type: "button", class: "primary-soft", "data-action": "join-mass", "data-variant": m.variant,
        "aria-label": `Join the ${m.variant} mass race`, onclick: () => this.join(m.variant),
      }, "Join");
      r = { li: h("li", { "data-mass": m.variant }, text, join), text, join };
      this.rows.set(m.variant, r);
    }
    const starts = m.joined === 0 ? `starts when ${MASS_QUORUM} have joined` : startsText(m, now);
    r.text.textContent = `Mass race · ${m.variant} · ${joinedText(m)} · ${starts}`;
    r.li.dataset.joined = String(m.joined);
    r.li.classList.toggle("own", !!this.mine && this.mine.variant === m.variant);
    r.join.hidden = !!this.mine;
    return r.li;
  }

  async join(variant) {
    this.err.textContent = "";
    try {
      const r = await this.sock().joinMass(variant);
      this.mine = r.mass;
      this.news.textContent = `You joined the ${variant} mass race: ${joinedText(r.mass)}, ${startsText(r.mass, this.serverNow())}.`;
      this.render();
      this.leaveBtn.focus();
    } catch (ex) {
      this.err.textContent = massErrorText(ex);
    }
  }

  async leave() {
    this.err.textContent = "";
    const variant = this.mine && this.mine.variant;
    try {
      await this.sock().leaveMass();
    } catch (ex) {
      if (!ex || ex.code !== "not-in-mass") { this.err.textContent = massErrorText(ex); return; }
    }
    this.mine = null;
    this.news.textContent = "You left the mass race.";
    this.render();
    const r = variant && this.rows.get(variant);
    if (r) r.join.focus();
  }

  /** noteChange announces the joined race's countdown starting or stopping. */
  noteChange(fresh) {
    if (!!fresh.startAt !== !!this.mine.startAt) {
      this.news.textContent = fresh.startAt
        ? `${fresh.joined} have joined: the race ${startsText(fresh, this.serverNow())}.`
        : `Someone left: the race waits for ${MASS_QUORUM} again.`;
    }
    this.mine = fresh;
  }
}
