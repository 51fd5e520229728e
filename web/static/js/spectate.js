// The spectate page (/?watch=ID): both full boards side by side, live (or
// as far behind live as the race's spectator delay says, counted down).
// Cards not yet reached by both players arrive as "??" and are drawn face
// down in their place.

import { h, fill, fmtClock } from "./ui.js";
import { Socket, getRace } from "./proto.js";
import { renderBoard, countsLine, hasHidden } from "./board.js";
import { renderResult } from "./result.js";
import { progressEl, setProgress, Notices, showWatchers, raceTitle, playerLabel, commitmentEl, isMany, joinedText } from "./widgets.js";
import { noteStart, noteShown } from "./fairplay.js";

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
    this.away = [false, false]; // seats told disconnected (so "back" means back)
    this.offset = 0;
    this.over = false;
    // The spectators' feed (PROTOCOL.md, "The spectators' feed"): the
    // version last applied, and whether the state after "watching" is
    // still to come (until then older messages are dropped).
    this.ver = 0;
    this.syncing = true;
    this.seats = [0, 1].map(seatEls);
    this.els = {
      title: h("h1", { class: "title", "data-testid": "race-title" }, "Watching a race"),
      clock: h("div", { class: "clock", role: "timer", "aria-label": "Time left", "data-testid": "clock" }, "–:––"),
      phase: h("p", { class: "phase", "data-testid": "phase" }),
      delay: h("span", { class: "delay", "data-testid": "delay", hidden: true }),
      commitment: commitmentEl(),
      watchers: h("span", { class: "muted watchers", "data-testid": "watchers", "aria-live": "polite" }, ""),
      legendText: h("span", {}, "Cards not yet reached by both players stay face down."),
      duel: h("div", { class: "duel" }),
      notices: h("div", { class: "notices" }),
      result: h("section", { class: "panel result", hidden: true }),
    };
    this.els.legend = h("p", { class: "legend-hidden muted", "data-testid": "hidden-legend", hidden: true },
      h("span", { class: "mini-back", "aria-hidden": "true" }), this.els.legendText);
    this.placeSeats();
    this.notices = new Notices(this.els.notices);
    fill(root, h("div", { class: "spectate-page" },
      h("header", { class: "race-head" },
        h("div", { class: "line1" }, this.els.title, this.els.watchers, this.els.clock),
        h("div", { class: "line2" }, this.els.phase, this.els.delay, this.els.commitment)),
      this.els.result,
      this.els.duel,
      this.els.legend),
      this.els.notices);
    this.timer = setInterval(() => this.tick(), 250);
    window.addEventListener("resize", () => this.render());
    if (window.ResizeObserver) {
      let w = 0;
      new ResizeObserver(([en]) => {
        const nw = Math.round(en.contentRect.width);
        if (nw !== w) { w = nw; requestAnimationFrame(() => this.render()); }
      }).observe(root);
    }
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
      noteShown(this.id, String(m.seat), m.view);
      this.render();
    });
    sock.on("spectators", (m) => {
      if (this.accept(m)) showWatchers(this.els.watchers, m.count);
    });
    sock.on("presence", (m) => {
      if (this.accept(m)) this.onPresence(m);
    });
    sock.on("error", (m) => this.notices.show("err", m.message, "bad", 8000));
    sock.on("next", (m) => {
      if (!this.accept(m)) return;
      this.id = m.next;
      this.syncing = true;
      history.pushState(null, "", `/?watch=${encodeURIComponent(m.next)}`);
      this.over = false;
      this.state = null;
      this.els.result.hidden = true;
      this.boards = this.seats.map(() => null);
      this.counts = this.seats.map(() => null);
      this.away = this.seats.map(() => false);
      this.seats.forEach((_, i) => this.notices.clear("p" + i));
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

  /** onPresence says who left and who came back, in this race, while it runs. */
  onPresence(m) {
    if (m.race !== this.id || this.over) return;
    const name = this.names ? this.names[m.seat] : `Player ${m.seat + 1}`;
    if (m.connected) {
      // A seat's first arrival (each start of a lobby race) is no return.
      if (this.away[m.seat]) this.notices.show("p" + m.seat, `${name} is back.`, "ok", 4000);
      this.away[m.seat] = false;
      return;
    }
    const until = Date.parse(m.graceUntil);
    if (Number.isNaN(until)) return; // their game was over: nothing to forfeit
    this.away[m.seat] = true;
    this.notices.show("p" + m.seat, `${name} disconnected; they forfeit at ${new Date(until).toLocaleTimeString()} unless they return.`, "warn");
  }

  /**
   * placeSeats draws a section for each seat: two side by side (a duel),
   * more in a grid of small boards (a race of more than two).
   */
  placeSeats() {
    const many = this.seats.length > 2;
    this.els.duel.className = many ? "field" : "duel";
    this.els.legendText.textContent = many ? "Cards not yet reached by every racer still playing stay face down." : "Cards not yet reached by both players stay face down.";
    fill(this.els.duel, this.seats.map((s, i) =>
      h("section", { class: `seat seat${i}`, "aria-label": `Seat ${i + 1}` }, h("div", { class: "who" }, s.name, s.progress), s.line, s.board)));
  }

  /** fitSeats makes a section for each of n seats, when the race has another number than drawn. */
  fitSeats(n) {
    if (n === this.seats.length) return;
    this.seats = Array.from({ length: n }, (_, i) => seatEls(i));
    this.boards = this.seats.map((_, i) => this.boards[i] || null);
    this.counts = this.seats.map((_, i) => this.counts[i] || null);
    this.away = this.seats.map((_, i) => this.away[i] || false);
    this.placeSeats();
  }

  onState(m) {
    if (m.race !== this.id) return;
    this.fitSeats(m.players.length);
    this.state = m;
    this.offset = Date.parse(m.now) - Date.now();
    if (m.boards) this.boards = m.boards;
    if (m.counts) this.counts = m.counts;
    this.names = m.players.map((p, i) => p.name || (p.taken ? `Player ${i + 1}` : "(free seat)"));
    showWatchers(this.els.watchers, m.spectators);
    const waiting = isMany(m.players) ? `Waiting for players: ${joinedText(m.players)}` : "Waiting for players";
    const title = m.players.every((p) => p.taken) ? raceTitle(m.players) : waiting;
    this.els.title.textContent = title;
    document.title = `Watching ${title} · Sir Tommy`;
    const kept = noteStart(this.id, { commitment: m.commitment, deal: m.deal, variant: m.variant });
    this.els.commitment.set(kept.commitment || m.commitment, m.deal);
    this.boards.forEach((v, i) => noteShown(this.id, String(i), v));
    this.render();
    this.tick();
    if (m.state === "finished" || m.state === "aborted") this.finish();
  }

  /** delayMs is how far behind live the boards run (0: live). */
  get delayMs() { return (this.state && this.state.spectatorDelayMs) || 0; }

  render() {
    const st = this.state;
    if (!st) return;
    this.seats.forEach((s, i) => {
      const p = st.players[i];
      s.name.textContent = playerLabel(p, i) + (p.computer && !p.level ? " (computer)" : "") + (p.taken && !p.connected && !this.over ? " (away)" : "");
      if (p.rating) s.name.dataset.rating = String(Math.round(p.rating));
      else delete s.name.dataset.rating;
      s.board.setAttribute("aria-label", `${this.names[i]}'s board`);
      const v = this.boards[i];
      if (v) {
        renderBoard(s.board, v, { fit: () => this.boardHeight(s.board) });
        setProgress(s.progress, v.score, v.target);
      } else if (st.state !== "waiting") {
        fill(s.board, h("p", { class: "waiting-board" }, this.delayMs ? `The board follows ${Math.round(this.delayMs / 100) / 10} s behind live.` : "The board shows when the race starts."));
      }
      const c = this.counts[i];
      if (c) s.line.textContent = countsLine(c, v ? v.target : 52);
    });
    this.els.legend.hidden = !this.boards.some(hasHidden);
    this.renderPhase();
  }

  boardHeight(board) {
    // Small boards in a grid: each sized by its width, rows under rows.
    if (this.seats.length > 2) return Math.max(260, window.innerHeight / 2 - 80);
    const top = board.getBoundingClientRect().top + window.scrollY;
    const two = window.innerWidth >= 900; // side by side: both fit one screen
    return Math.max(320, window.innerHeight - (two ? top : 120) - 40);
  }

  /** renderPhase says where the race is, and how far behind live the boards are. */
  renderPhase() {
    const st = this.state;
    if (!st) return;
    const now = Date.now() + this.offset;
    const start = st.startAt ? Date.parse(st.startAt) : NaN;
    const d = this.delayMs;
    let phase = { waiting: "Waiting for players.", countdown: "Starting…", running: "Race on.", finished: "Finished.", aborted: "Aborted." }[st.state] || st.state;
    // The delayed feed's "running" comes after the start: the race is on
    // from startAt whatever this page has been told so far.
    const live = (st.state === "countdown" || st.state === "running") && !Number.isNaN(start) && now >= start;
    if (live) {
      const first = start + d - now;
      phase = first > 0 ? `Race on: the first moves show in ${Math.ceil(first / 1000)} s.` : "Race on.";
    }
    if (this.els.phase.textContent !== phase) this.els.phase.textContent = phase;
    const showDelay = d > 0 && !this.over && st.state !== "waiting";
    this.els.delay.hidden = !showDelay;
    if (showDelay) this.els.delay.textContent = `Boards ${d < 1000 ? (d / 1000).toFixed(1) : Math.round(d / 1000)} s behind live`;
  }

  async finish() {
    if (this.over) return;
    this.over = true;
    this.seats.forEach((_, i) => this.notices.clear("p" + i));
    this.els.delay.hidden = true;
    this.els.result.hidden = false;
    try {
      renderResult(this.els.result, await getRace(this.id), {});
    } catch (err) {
      fill(this.els.result, h("p", {}, `Over, but the record could not be read: ${err.message}`));
    }
  }

  tick() {
    const st = this.state;
    if (!st) return;
    this.renderPhase();
    if (st.state === "finished" || st.state === "aborted") { this.els.clock.textContent = ""; return; }
    if (!st.endsAt) { this.els.clock.textContent = fmtClock(st.timeLimitMs); return; }
    const now = Date.now() + this.offset;
    const left = Date.parse(st.endsAt) - now;
    this.els.clock.textContent = fmtClock(Math.min(left, st.timeLimitMs));
  }
}

/** seatEls are the parts of seat i's section: name, progress, counts, board. */
function seatEls(i) {
  return {
    name: h("h2", {}, `Player ${i + 1}`),
    progress: progressEl(`Player ${i + 1}'s cards on the foundations`),
    line: h("p", { class: "counts", "data-testid": `counts-${i}` }),
    board: h("div", { class: "board", role: "region", "aria-label": `Player ${i + 1}'s board` }),
  };
}
