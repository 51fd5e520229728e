// The spectate page (/?watch=ID): both full boards side by side, live.

import { h, fill, fmtClock } from "./ui.js";
import { Socket, getRace } from "./proto.js";
import { renderBoard, countsLine } from "./board.js";
import { renderResult } from "./result.js";
import { progressEl, setProgress, Notices, showWatchers } from "./widgets.js";

const RECONNECT_MS = 2000; // wait before watching again after a drop

/** spectatePage watches race id inside root. */
export function spectatePage(root, id) {
  const p = new SpectatePage(root, id);
  p.start();
  return p;
}

class SpectatePage {
  constructor(root, id) {
    this.id = id;
    this.state = null;
    this.boards = [null, null];
    this.counts = [null, null];
    this.offset = 0;
    this.over = false;
    // The spectators' feed (PROTOCOL.md, "The spectators' feed"): the
    // version last applied, and whether the state after "watching" is
    // still to come (until then older messages are dropped).
    this.ver = 0;
    this.syncing = true;
    this.seats = [0, 1].map((i) => ({
      name: h("h2", {}, `Player ${i + 1}`),
      progress: progressEl(`Player ${i + 1}'s cards on the foundations`),
      line: h("p", { class: "counts", "data-testid": `counts-${i}` }),
      board: h("div", { class: "board", role: "region", "aria-label": `Player ${i + 1}'s board` }),
    }));
    this.els = {
      title: h("h1", {}, `Watching race ${id.slice(0, 8)}`),
      clock: h("div", { class: "clock", role: "timer", "aria-label": "Time left" }, "–:––"),
      phase: h("p", { class: "phase", "data-testid": "phase" }),
      watchers: h("p", { class: "muted watchers", "data-testid": "watchers", "aria-live": "polite" }, ""),
      notices: h("div", { class: "notices" }),
      result: h("section", { class: "panel result", hidden: true }),
    };
    this.notices = new Notices(this.els.notices);
    fill(root, h("div", { class: "spectate-page" },
      h("header", { class: "race-head" }, this.els.title, this.els.clock, this.els.phase, this.els.watchers),
      this.els.notices, this.els.result,
      h("div", { class: "duel" }, this.seats.map((s, i) =>
        h("section", { class: `seat seat${i}`, "aria-label": `Seat ${i + 1}` }, h("div", { class: "who" }, s.name, s.progress), s.line, s.board)))));
    this.timer = setInterval(() => this.tick(), 250);
  }

  async start() {
    const sock = new Socket();
    this.sock = sock;
    this.syncing = true;
    sock.on("watching", (m) => {
      if (m.race === this.id) this.syncing = true;
    });
    sock.on("state", (m) => {
      if (this.accept(m)) this.onState(m);
    });
    sock.on("board", (m) => {
      if (!this.accept(m)) return;
      // A reveal ("reveal": true) is the same seat's board again, with
      // cards that were face down ("??") shown.
      this.boards[m.seat] = m.view;
      this.counts[m.seat] = m.counts;
      this.render();
    });
    sock.on("spectators", (m) => {
      if (this.accept(m)) showWatchers(this.els.watchers, m.count);
    });
    sock.on("presence", (m) => {
      if (!this.accept(m)) return;
      const name = this.names ? this.names[m.seat] : `Player ${m.seat + 1}`;
      if (m.connected) this.notices.show("p" + m.seat, `${name} is back.`, "ok", 4000);
      else this.notices.show("p" + m.seat, `${name} disconnected; they forfeit at ${new Date(m.graceUntil).toLocaleTimeString()} unless they return.`, "warn");
    });
    sock.on("error", (m) => this.notices.show("err", m.message, "bad", 8000));
    sock.on("next", (m) => {
      if (!this.accept(m)) return;
      this.id = m.next;
      this.syncing = true;
      history.pushState(null, "", `/?watch=${encodeURIComponent(m.next)}`);
      this.over = false;
      this.els.result.hidden = true;
      this.boards = [null, null];
      this.notices.show("next", "A new race between the same players: watching it.", "info", 5000);
      sock.watch(m.next).catch((e) => this.notices.show("err", e.message, "bad"));
    });
    sock.on("close", (ev) => {
      if (ev.byUs || this.over) return;
      this.notices.show("conn", "Connection lost: reconnecting…", "warn");
      setTimeout(() => this.start(), RECONNECT_MS);
    });
    try {
      await sock.open();
      await sock.watch(this.id);
      this.notices.clear("conn");
    } catch (err) {
      this.notices.show("conn", `Cannot watch: ${err.message || err}`, "bad");
    }
  }

  /**
   * accept reports whether message m moves this race's feed forward: the
   * state after "watching" sets the version; then older versions are
   * dropped, a state (a full picture) with a newer one is applied and
   * fills any gap, other messages only at the next version, and a gap
   * asks for a fresh state (watch again).
   */
  accept(m) {
    if (m.race !== this.id) return false;
    if (typeof m.ver !== "number") return true; // a server without versions
    if (this.syncing) {
      if (m.type !== "state") return false; // older than the state on its way
      this.syncing = false;
      this.ver = m.ver;
      return true;
    }
    if (m.ver <= this.ver) return false;
    if (m.type === "state") {
      this.ver = m.ver;
      return true;
    }
    if (m.ver !== this.ver + 1) {
      this.resync();
      return false;
    }
    this.ver = m.ver;
    return true;
  }

  resync() {
    this.syncing = true;
    this.sock.watch(this.id).catch((e) => this.notices.show("err", e.message, "bad"));
  }

  onState(m) {
    if (m.race !== this.id) return;
    this.state = m;
    this.offset = Date.parse(m.now) - Date.now();
    if (m.boards) this.boards = m.boards;
    if (m.counts) this.counts = m.counts;
    this.names = m.players.map((p, i) => p.name || (p.taken ? `Player ${i + 1}` : "(free seat)"));
    showWatchers(this.els.watchers, m.spectators);
    this.render();
    this.tick();
    if (m.state === "finished" || m.state === "aborted") this.finish();
  }

  render() {
    const st = this.state;
    if (!st) return;
    this.els.phase.textContent = { waiting: "Waiting for players.", countdown: "Starting…", running: "Race on.", finished: "Finished.", aborted: "Aborted." }[st.state] || st.state;
    this.seats.forEach((s, i) => {
      const p = st.players[i];
      // A lobby player's rating in this variant as the race was made.
      const rating = p.rating ? Math.round(p.rating) : null;
      s.name.textContent = this.names[i] + (rating != null ? ` (${rating})` : "") + (p.computer ? " (computer)" : "") + (p.taken && !p.connected ? " (disconnected)" : "");
      if (rating != null) s.name.dataset.rating = String(rating);
      else delete s.name.dataset.rating;
      s.board.setAttribute("aria-label", `${this.names[i]}'s board`);
      const v = this.boards[i];
      if (v) {
        renderBoard(s.board, v, {});
        setProgress(s.progress, v.score, v.target);
      }
      const c = this.counts[i];
      if (c) s.line.textContent = countsLine(c, v ? v.target : 52);
    });
    if (!this.boards[0] && st.state === "running") this.els.phase.textContent += " (a public race: the boards follow with a delay)";
  }

  async finish() {
    if (this.over) return;
    this.over = true;
    this.els.result.hidden = false;
    try {
      renderResult(this.els.result, await getRace(this.id), {});
    } catch (err) {
      fill(this.els.result, h("p", {}, `Over, but the record could not be read: ${err.message}`));
    }
  }

  tick() {
    const st = this.state;
    if (st && (st.state === "finished" || st.state === "aborted")) this.els.clock.textContent = "";
    if (!st || !st.endsAt || st.state !== "running") return;
    this.els.clock.textContent = fmtClock(Date.parse(st.endsAt) - (Date.now() + this.offset));
  }
}
