// The race page (/?race=ID): join or resume a seat, play your board, follow
// the opponent's progress, the countdown and the clock, and see the result.
// The whole game fits the screen: the board's cards are sized to the
// height left under the header (board.js fitBoard), notices float over
// the page instead of pushing it, and the key help opens as a dialog.

import { h, fill, fmtClock, copyText } from "./ui.js";
import { Socket, seats, playerName, identity, inviteLink, getRace, roomOfRace, arenaOfRace } from "./proto.js";
import { renderBoard, statusText } from "./board.js";
import { MoveInput, KEYS } from "./input.js";
import { renderResult } from "./result.js";
import { progressEl, setProgress, Notices, showWatchers, raceTitle, commitmentEl, isMany, joinedText } from "./widgets.js";
import { applyLocal } from "./optimistic.js";
import { rectOf, slideFrom } from "./motion.js";
import { noteStart, noteShown } from "./fairplay.js";
import { Announcer } from "./announce.js";

const RECONNECT_MAX_MS = 5000; // back-off ceiling between reconnect attempts
const RESIGN_CONFIRM_MS = 3000; // how long "Really resign?" waits for the second click
const ARENA_RETURN_S = 8; // after an arena's race, the seconds before the page goes back to the arena

/** racePage runs the race page for race id inside root. */
export function racePage(root, id, params) {
  const page = new RacePage(root, id, params);
  page.start();
  return page;
}

class RacePage {
  constructor(root, id, params) {
    this.root = root;
    this.id = id;
    this.params = params;
    this.sock = null;
    this.state = null; // last state message
    this.confirmed = null; // own View as the server last sent it
    this.pending = []; // own moves sent and shown, not yet confirmed
    this.opp = null; // opponent Counts
    this.others = new Map(); // seat → Counts of every other racer, in a race of more than two
    this.seat = null;
    this.seated = false; // this connection holds the seat (so it may ask for a rematch)
    this.offset = 0; // server clock minus ours, ms
    this.presence = null; // {name, graceUntil}
    this.reconnecting = false;
    this.attempt = 0;
    this.over = false;
    this.announcer = new Announcer();
    this.berserkAsked = false; // berserk sent, not yet answered
    this.berserked = false; // berserk answered ("berserked")
    this.arenaReturn = null; // the timer back to the arena, after the result
    this.build();
  }

  /** many reports whether this is a race of more than two: standings instead of one opponent. */
  get many() { return !!this.state && isMany(this.state.players); }

  /** view is the own board as shown: the server's, with the moves on their way. */
  get view() {
    let v = this.confirmed;
    for (const m of this.pending) v = applyLocal(v, m) || v;
    return v;
  }

  set view(v) {
    this.confirmed = v;
    this.pending = [];
  }

  build() {
    this.els = {
      title: h("h1", { class: "title", "data-testid": "race-title" }, "Race"),
      clock: h("div", { class: "clock", "aria-label": "Time left", role: "timer", "data-testid": "clock" }, "–:––"),
      phase: h("p", { class: "phase", "data-testid": "phase" }),
      commitment: commitmentEl(),
      watchers: h("span", { class: "muted watchers", "data-testid": "watchers", "aria-live": "polite" }, ""),
      notices: h("div", { class: "notices" }),
      join: h("section", { class: "panel join", hidden: true }),
      invite: h("section", { class: "panel invite", hidden: true }),
      result: h("section", { class: "panel result", hidden: true, "aria-live": "polite" }),
      myName: h("h2", {}, "Your board"),
      myProgress: progressEl("Your cards on the foundations"),
      board: h("div", { class: "board", "aria-label": "Your board", role: "region" }),
      moveError: h("p", { class: "move-error", role: "alert", "data-testid": "move-error" }),
      hint: h("p", { class: "hint", role: "status", "aria-live": "polite" }),
      oppName: h("h2", {}, "Opponent"),
      oppProgress: progressEl("Opponent's cards on the foundations"),
      oppState: h("span", { class: "opp-state", "data-testid": "opp-state" }),
      oppStats: h("dl", { class: "stats" }),
      standingsBody: h("tbody", {}),
      countdown: h("div", { class: "countdown", hidden: true, "aria-live": "assertive" }),
      resign: h("button", { class: "danger", "data-action": "resign", disabled: true, onclick: () => this.resignClick() }, "Resign"),
      // An arena's race: berserk in the countdown (a box floating over
      // the foot of the page, so the board does not move), then a mark
      // beside the clock.
      berserk: h("div", { class: "berserk-box", hidden: true, "data-testid": "berserk-box" },
        h("button", { type: "button", class: "berserk", "data-action": "berserk", "aria-describedby": "berserk-why", onclick: () => this.berserkClick() }, "Berserk"),
        h("span", { id: "berserk-why", class: "berserk-why" }, "Half your time, +1 point if you win.")),
      berserkMark: h("span", { class: "badge berserk-mark", hidden: true, "data-testid": "berserk-mark", title: "You went berserk: half your time" }, "berserk"),
      helpBtn: h("button", { "data-action": "help", "aria-expanded": "false", onclick: () => this.toggleHelp() }, "Keys (?)"),
      leave: h("a", { class: "button primary", href: "/", "data-action": "leave", hidden: true }, "Back to the lobby"),
      leaveNote: h("p", { class: "leave-note", hidden: true, "data-testid": "leave-note" }),
      help: h("section", { class: "help", hidden: true, role: "dialog", "aria-label": "Keyboard help", "aria-modal": "false" },
        h("div", { class: "help-head" }, h("h3", {}, "Keys"), h("button", { "data-action": "close-help", "aria-label": "Close the help", onclick: () => this.toggleHelp(false) }, "✕")),
        h("dl", { class: "keys" }, KEYS.map(([k, v]) => [h("dt", {}, h("kbd", {}, k)), h("dd", {}, v)])),
        h("p", {}, "With a mouse or touch: tap a card, then the pile it goes to; or drag it there. Double-click a card to send it to a foundation.")),
    };
    const e = this.els;
    this.notices = new Notices(e.notices);
    fill(this.root,
      h("div", { class: "race-page" },
        h("header", { class: "race-head" },
          // The spectators' count stands on the first line: coming and
          // going, it never wraps the second onto a third.
          h("div", { class: "line1" }, e.title, e.watchers, e.berserkMark, e.clock),
          h("div", { class: "line2" }, e.phase, e.commitment),
          e.berserk),
        e.result,
        // Joining and the invite float over the board, which waits behind
        // them: nothing moves when they come and go.
        h("div", { class: "stage" }, e.join, e.invite,
        h("div", { class: "race-layout" },
          h("section", { class: "me", "aria-label": "You" },
            h("div", { class: "who" }, e.myName, e.myProgress),
            e.board,
            h("div", { class: "feedback" }, e.moveError, e.hint),
            e.leaveNote,
            h("div", { class: "controls" }, e.resign, e.helpBtn, e.leave)),
          h("aside", { class: "opponent", "aria-label": "Opponent" },
            h("div", { class: "who" }, e.oppName, e.oppProgress, e.oppState), e.oppStats),
          standingsEl(e.standingsBody))),
        e.countdown, e.help, this.announcer.els),
      e.notices);
    document.body.classList.add("playing");
    this.input = new MoveInput(e.board, {
      view: () => (this.state && this.state.state === "running" ? this.view : null),
      send: (m, how) => this.move(m, how),
      say: (t) => { e.hint.textContent = t; },
      help: () => this.toggleHelp(),
    });
    this.timer = setInterval(() => this.tick(), 200);
    // The board follows the screen: a turned phone or a resized window
    // sizes the cards again.
    window.addEventListener("resize", () => this.render());
    // A width change the window does not announce (a device's viewport
    // set anew, the panel beside growing) sizes the cards again too.
    if (window.ResizeObserver) {
      let w = 0;
      new ResizeObserver(([en]) => {
        const nw = Math.round(en.contentRect.width);
        if (nw !== w) { w = nw; requestAnimationFrame(() => this.render()); }
      }).observe(this.root);
    }
    document.addEventListener("keydown", (ev) => { if (ev.key === "Escape" && !e.help.hidden) this.toggleHelp(false); });
    // Leaving the page says goodbye at once, so the opponent's grace clock
    // starts now; a page restored from the back-forward cache starts afresh.
    window.addEventListener("pagehide", () => { if (this.sock) this.sock.close(); });
    window.addEventListener("pageshow", (ev) => { if (ev.persisted) location.reload(); });
  }

  /**
   * boardHeight is the height the board may take so that the page needs
   * no scrolling: the screen less what is above the board and what is
   * under it (the feedback line and the buttons). Before the start and
   * after the end the board is not what the player looks at: it may push
   * the page longer.
   */
  boardHeight() {
    const b = this.els.board;
    const top = b.getBoundingClientRect().top + window.scrollY;
    const me = b.closest(".me");
    const below = me.getBoundingClientRect().bottom - b.getBoundingClientRect().bottom;
    const pad = 10;
    const h = window.innerHeight - top - below - pad;
    const st = this.state && this.state.state;
    return st === "running" || st === "countdown" ? Math.max(200, h) : Math.max(360, h);
  }

  async start() {
    this.els.title.textContent = "Race";
    const seat = seats.get(this.id);
    if (seat) {
      await this.connect();
      return;
    }
    // From the lobby (auto=1) the player already has a name: take the seat.
    const auto = this.params.get("auto") === "1" && (identity.get() || playerName.get());
    if (auto) {
      history.replaceState(null, "", `/?race=${encodeURIComponent(this.id)}`);
      this.join(playerName.get() || identity.get().name);
      return;
    }
    await this.showJoin();
  }

  /**
   * showJoin asks for a name to take a seat, once the race's record says
   * there is one to take: a race that does not exist, is over or is full
   * gets its own sentence instead.
   */
  async showJoin(error = "") {
    let info = null;
    try {
      info = await getRace(this.id);
    } catch (err) {
      if (err && err.code === "no-such-race") {
        this.els.join.hidden = false;
        fill(this.els.join, h("h2", {}, "No such race"),
          h("p", {}, "No race has the code ", h("code", {}, this.id), ". It may have expired, or the link was cut short."),
          h("p", {}, h("a", { class: "button primary", href: "/" }, "Go to the lobby")));
        return;
      }
    }
    if (info) {
      const title = raceTitle(info.players);
      if (info.result) {
        this.els.join.hidden = false;
        fill(this.els.join, h("h2", {}, `${title}: this race is over`),
          h("p", {}, h("a", { class: "button primary", href: `/?result=${encodeURIComponent(this.id)}` }, "See the result"), " ",
            h("a", { class: "button", href: "/" }, "Go to the lobby")));
        return;
      }
      const me = identity.get();
      if (me && info.players.some((p) => p.player && p.player === me.player)) {
        // The lobby kept a seat here for this player (another tab, or a
        // lost token): take it, as the lobby's link would.
        this.join(playerName.get() || me.name);
        return;
      }
      if (info.players.every((p) => p.taken)) {
        this.els.join.hidden = false;
        fill(this.els.join, h("h2", {}, `${title}: under way`),
          h("p", {}, isMany(info.players) ? "Every seat is taken. " : "Both seats are taken. "),
          h("p", {}, h("a", { class: "button primary", href: `/?watch=${encodeURIComponent(this.id)}` }, "Watch it"), " ",
            h("a", { class: "button", href: "/" }, "Go to the lobby")));
        return;
      }
    }
    this.renderJoin(error, info);
  }

  renderJoin(error = "", info = null) {
    const name = h("input", { id: "join-name", name: "name", autocomplete: "nickname", maxlength: 24, required: true, value: playerName.get() || (identity.get() || {}).name || "" });
    const form = h("form", {
      class: "row-form",
      onsubmit: (ev) => {
        ev.preventDefault();
        const n = name.value.trim();
        if (!n) return;
        playerName.set(n);
        this.join(n);
      },
    }, h("label", { for: "join-name" }, "Your name"), name, h("button", { class: "primary", type: "submit", "data-action": "join" }, "Join the race"));
    const err = h("p", { class: "error", role: "alert", "data-testid": "join-error" }, error);
    if (error) name.setAttribute("aria-invalid", "true");
    const host = info && info.players.find((p) => p.taken);
    const what = info ? `${info.variant}, ${Math.round(info.timeLimitMs / 60000)} min` : "";
    fill(this.els.join, h("h2", {}, host ? `${host.name || "A player"} invites you to a race` : "Take a seat in this race"),
      what ? h("p", { class: "muted" }, `Sir Tommy, ${what}. The same deck for ${isMany(info.players) ? `all ${info.players.length}` : "both"} of you; the first to finish the deal wins.`) : null,
      form, err,
      h("p", {}, h("a", { href: `/?watch=${encodeURIComponent(this.id)}` }, "Watch instead")));
    this.els.join.hidden = false;
    name.focus();
  }

  async join(name) {
    this.els.join.hidden = true;
    try {
      await this.openSocket();
      // A server with a lobby seats players it knows: hello first (it
      // renames the player when the name differs).
      await this.sock.hello(name);
      const j = await this.sock.join(this.id, name);
      seats.set(this.id, { token: j.token, seat: j.seat, name });
      this.seat = j.seat;
      this.seated = true;
    } catch (err) {
      // A name the server refuses: say why, and ask again.
      if (err && err.code === "bad-name") { this.renderJoin(err.message); return; }
      this.fail(err);
    }
  }

  /** connect opens a socket and resumes the stored seat. */
  async connect() {
    const seat = seats.get(this.id);
    try {
      await this.openSocket();
      await this.sock.hello();
      const j = await this.sock.resume(this.id, seat.token);
      if (j.token) seats.set(this.id, { ...seat, token: j.token, seat: j.seat });
      this.seat = j.seat;
      this.seated = true;
      if (this.reconnecting) this.notices.show("conn", "Reconnected: your game resumed.", "ok", 4000);
      this.reconnecting = false;
      this.attempt = 0;
    } catch (err) {
      if (err && err.code === "race-over") {
        // A finished race cannot be resumed (so no rematch from here), but
        // its result is still shown from this player's seat.
        this.seat = seat.seat;
        this.seated = false;
        this.showFinished();
        return;
      }
      if (err && (err.code === "bad-token" || err.code === "no-such-race")) {
        seats.forget(this.id);
        this.fail(err);
        return;
      }
      if (err && err.code && err.code !== "closed") { this.fail(err); return; }
      // A refused connection or one lost mid-resume: try again (a socket
      // that opened reports its close to onClose, which retries instead).
      if (!(err && err.code === "closed")) this.scheduleReconnect();
    }
  }

  async openSocket() {
    if (this.sock && this.sock.isOpen) return;
    const sock = new Socket();
    this.sock = sock;
    sock.on("joined", (m) => this.onJoined(m));
    sock.on("state", (m) => this.onState(m));
    sock.on("moved", (m) => this.onMoved(m));
    sock.on("opponent", (m) => this.onOpponent(m));
    sock.on("presence", (m) => this.onPresence(m));
    sock.on("spectators", (m) => { if (m.race === this.id) showWatchers(this.els.watchers, m.count); });
    sock.on("rematch", (m) => this.onRematch(m));
    sock.on("next", (m) => this.onNext(m));
    sock.on("matched", (m) => this.onRoomRace(m));
    sock.on("error", (m) => { this.els.moveError.textContent = m.message; });
    sock.on("replaced", () => {
      this.notices.show("conn", "This seat was taken over by another window. This one has stopped.", "bad");
      this.over = true;
    });
    sock.on("close", (ev) => this.onClose(ev));
    await sock.open();
  }

  onClose(ev) {
    if (!ev.wasOpen || ev.byUs || this.over || ev.code === 4001) return;
    if (ev.code === 1001) this.notices.show("conn", "The server is restarting; trying to reconnect…", "warn");
    else this.notices.show("conn", "Connection lost: reconnecting…", "warn");
    this.reconnecting = true;
    this.scheduleReconnect();
  }

  scheduleReconnect() {
    if (this.over || !seats.get(this.id)) return;
    const wait = Math.min(RECONNECT_MAX_MS, 250 * 2 ** this.attempt++);
    setTimeout(() => this.connect(), wait);
  }

  fail(err) {
    const msg = err && err.message ? err.message : String(err);
    this.notices.show("fail", `Could not take a seat: ${msg}`, "bad");
    if (err && (err.code === "race-full" || err.code === "race-over" || err.code === "not-your-seat")) {
      this.els.join.hidden = false;
      fill(this.els.join, h("p", {}, err.code === "race-over" ? "This race is over. " : err.code === "race-full" ? "Both seats are taken. " : "The seats of this race are kept for other players. ",
        h("a", { href: `/?watch=${encodeURIComponent(this.id)}` }, "Watch it"), " or ", h("a", { href: "/" }, "go to the lobby"), "."));
    }
  }

  onState(m) {
    if (m.race !== this.id) return;
    this.state = m;
    this.offset = Date.parse(m.now) - Date.now();
    if (m.seat !== undefined) this.seat = m.seat;
    if (m.you) this.view = m.you;
    if (m.opponent) this.opp = m.opponent;
    const names = m.players.map((p, i) => p.name || (p.taken ? `Player ${i + 1}` : "(free seat)"));
    this.names = names;
    this.speakOpponent(); // from the start: progress is said as it changes
    showWatchers(this.els.watchers, m.spectators);
    this.els.myName.textContent = `${names[this.seat] || "You"} (you)`;
    this.root.querySelector(".opponent").hidden = this.many;
    this.root.querySelector(".standings").hidden = !this.many;
    if (this.many && m.opponents) this.fillCounts(m.opponents);
    else this.nameOpponent(m.players[1 - this.seat], names[1 - this.seat]);
    const waits = this.many ? `Race of ${m.players.length}: ${joinedText(m.players)}` : `${names[this.seat] || "You"} waits for an opponent`;
    const title = m.players.every((p) => p.taken) ? raceTitle(m.players) : waits;
    this.els.title.textContent = title;
    document.title = `${title} · Sir Tommy`;
    // The seal as it was at the start is what the end is checked against.
    const kept = noteStart(this.id, { commitment: m.commitment, deal: m.deal, variant: m.variant });
    this.els.commitment.set(kept.commitment || m.commitment, m.deal);
    if (m.state === "running" && this.confirmed) noteShown(this.id, String(this.seat), this.confirmed);
    this.root.querySelector(".race-page").dataset.state = m.state;
    this.renderInvite();
    this.render();
    this.renderBerserk();
    this.tick(); // the countdown and clock follow the state at once, not at the next tick
    if ((m.state === "finished" || m.state === "aborted") && m.result) this.showFinished(m);
  }

  /** nameOpponent heads the opponent's panel (a race of two) with who they are. */
  nameOpponent(opp, name) {
    this.els.oppName.textContent = opp.taken ? name + (opp.computer && opp.level ? ` (${opp.level})` : "") + (opp.ghost ? " (recording)" : "") : "Waiting for an opponent";
    if (opp.solo) this.els.oppName.textContent = "nobody: a solo race";
    if (opp.ghost) this.els.oppName.dataset.ghost = "";
    // An arena's racer who went berserk plays on half their time.
    if (opp.berserk) this.els.oppName.append(" ", h("span", { class: "badge berserk-mark", "data-testid": "opp-berserk", title: "Went berserk: half their time" }, "berserk"));
  }

  /** arena is the arena this race was paired in ("" for none), as this tab remembers. */
  get arena() { return arenaOfRace.get(this.id); }

  /** isBerserk reports whether this player went berserk (answered, or as the state says). */
  get isBerserk() {
    const me = this.state && this.seat !== null ? this.state.players[this.seat] : null;
    return this.berserked || !!(me && me.berserk);
  }

  /**
   * renderBerserk offers berserk in an arena race's countdown: pressed
   * (or once the state says so) it reads "Berserk!" and is disabled;
   * after the countdown it is gone, and a mark by the clock remains.
   */
  renderBerserk() {
    const st = this.state;
    const box = this.els.berserk;
    const btn = box.querySelector("button");
    const on = this.isBerserk;
    const show = !!this.arena && !!st && st.state === "countdown" && this.seat !== null;
    if (!show && box.contains(document.activeElement)) this.els.board.focus({ preventScroll: true });
    box.hidden = !show;
    if (!show) this.notices.clear("berserk"); // the race is on: its board is what matters
    box.dataset.berserk = on ? "on" : "";
    btn.disabled = on || this.berserkAsked;
    btn.textContent = on ? "Berserk!" : "Berserk";
    this.els.berserkMark.hidden = !(on && st && (st.state === "countdown" || st.state === "running"));
  }

  async berserkClick() {
    if (this.berserkAsked || this.isBerserk) return;
    this.berserkAsked = true;
    this.renderBerserk();
    let said;
    try {
      await this.sock.berserk();
      this.berserked = true;
      said = ["Berserk! Half your time: a win is worth a point more.", "info"];
    } catch (err) {
      said = [err && err.code === "berserk-late" ? "Too late: berserk is chosen in the countdown." : `Berserk refused: ${(err && err.message) || err}`, "warn"];
    }
    this.berserkAsked = false;
    this.renderBerserk();
    this.notices.show("berserk", said[0], said[1], 4000);
    this.tick();
  }

  renderInvite() {
    // A rematch or the next round waits too, with both seats kept: no invite then.
    const waiting = this.state.state === "waiting" && !this.state.players.every((p) => p.taken);
    this.els.invite.hidden = !waiting;
    if (!waiting) return;
    const head = this.many ? `Waiting for racers: ${joinedText(this.state.players)}` : "Waiting for your opponent";
    if (this.els.invite.childElementCount) {
      this.els.invite.querySelector("h2").textContent = head; // a larger race counts its arrivals
      return;
    }
    if ((identity.get() || {}).lobbyRace === this.id) {
      // The lobby paired us: the other seat is kept for the opponent, who
      // is on the way (no link to send).
      fill(this.els.invite, h("h2", {}, "Waiting for your opponent"),
        h("p", {}, `${this.arena ? "The arena" : "The lobby"} paired you; the race starts three seconds after they arrive.`));
      return;
    }
    const link = inviteLink(this.id);
    const input = h("input", { id: "invite-link", readonly: true, value: link, "aria-label": "Invite link" });
    const status = h("span", { role: "status" });
    fill(this.els.invite,
      h("h2", { "data-testid": "invite-head" }, head),
      h("p", {}, this.many ? "Send this link to each racer. The race starts three seconds after every seat is taken." : "Send them this link. The race starts three seconds after they join."),
      h("div", { class: "row-form" }, input,
        h("button", { "data-action": "copy-invite", onclick: async () => { status.textContent = (await copyText(link, input)) ? "Copied." : "Select and copy the link."; } }, "Copy link")),
      h("p", {}, "Race code: ", h("code", { "data-testid": "race-code" }, this.id), " ", status));
  }

  render() {
    const st = this.state;
    if (!st) return;
    const fit = () => this.boardHeight();
    const v = this.view;
    if (v && st.state === "waiting") {
      // The server already sends the first turned card; showing it before
      // the opponent is here would let the first player study it alone.
      renderBoard(this.els.board, { ...v, turned: [] }, { fit });
      setProgress(this.els.myProgress, v.score, v.target);
    } else if (v) {
      this.input.selected = v.turned.includes(this.input.selected) || v.waste.some((w) => w.cards.at(-1) === this.input.selected) ? this.input.selected : null;
      renderBoard(this.els.board, v, { interactive: st.state === "running", selected: this.input.selected, fit });
      if (v.pendingCard) {
        const c = this.els.board.querySelector(`.card[data-card="${v.pendingCard}"]`);
        if (c) c.classList.add("pending");
      }
      if (this.pending.length && !v.turned.length && v.stock > 0) {
        const slot = this.els.board.querySelector(".turned .slot");
        if (slot) slot.classList.add("coming");
      }
      this.input.markTargets();
      this.els.board.classList.toggle("interactive", st.state === "running" && v.status === "playing");
      setProgress(this.els.myProgress, v.score, v.target);
    }
    this.renderOpponent();
    const out = st.state === "running" && v && v.status !== "playing";
    this.els.resign.disabled = !(st.state === "running" && v && v.status === "playing");
    this.els.resign.hidden = st.state === "finished" || st.state === "aborted";
    // Out of moves while the other plays on: the result follows from the
    // cards, and leaving forfeits nothing (PROTOCOL.md section 4).
    this.els.leave.hidden = !(out || st.state === "finished" || st.state === "aborted");
    this.els.leaveNote.hidden = !out;
    // An arena's race leads back to the arena, not to the lobby.
    const arena = this.arena;
    const back = arena ? "the arena" : "the lobby";
    this.els.leave.textContent = `Back to ${back}`;
    this.els.leave.href = arena ? `/?arena=${encodeURIComponent(arena)}` : "/";
    if (out) {
      const other = this.many ? "The others play" : `${(this.names && this.names[1 - this.seat]) || "your opponent"} plays`;
      this.els.leaveNote.textContent = `Your game is over with ${v.score} card${v.score === 1 ? "" : "s"} up. ${other} on; you may wait for the result or go back to ${back}: leaving now forfeits nothing.`;
    }
    const phase = {
      waiting: this.many ? `Waiting for racers: ${joinedText(st.players)}.` : "Waiting for the second player.",
      countdown: "Get ready…",
      running: out ? `You are ${statusText(v.status)}: waiting for the race to end.` : "Race on!",
      finished: "The race is over.",
      aborted: "The race was aborted.",
    }[st.state];
    const m = st.match;
    const round = m && m.bestOf > 1 ? ` Round ${m.round} of ${m.bestOf}; wins ${m.wins[0]}–${m.wins[1]}.` : "";
    this.els.phase.textContent = (phase || st.state) + round;
  }

  renderOpponent() {
    if (this.many) { this.renderStandings(); return; }
    const c = this.opp;
    const taken = this.state && this.seat !== null && this.state.players[1 - this.seat].taken;
    this.els.oppStats.hidden = !taken;
    this.els.oppProgress.hidden = !taken;
    this.els.oppState.hidden = !taken;
    this.els.oppName.closest(".opponent").classList.toggle("vacant", !taken);
    if (!c || !taken) return;
    const target = this.view ? this.view.target : 52;
    setProgress(this.els.oppProgress, c.score, target);
    this.els.oppState.textContent = c.connected === false ? "away" : statusText(c.status);
    this.els.oppState.dataset.status = c.connected === false ? "away" : c.status;
    fill(this.els.oppStats,
      h("dt", {}, "Foundations"), h("dd", { "data-testid": "opp-score" }, `${c.score} / ${target}`),
      h("dt", {}, "Cards left in stock"), h("dd", {}, String(c.stock)),
      h("dt", {}, "Moves"), h("dd", {}, String(c.moves)),
      h("dt", {}, "Status"), h("dd", { "data-testid": "opp-status" }, c.status + (c.connected ? "" : " (disconnected)")));
  }

  onOpponent(m) {
    if (this.many) {
      this.noteCounts(m.seat, m.counts);
      this.renderStandings();
      this.speakRacer(m.seat);
      return;
    }
    this.opp = m.counts;
    this.renderOpponent();
    this.speakOpponent();
  }

  /**
   * noteCounts keeps a racer's counts unless newer ones are kept already:
   * moves only grow, and a state may tell less than a message before it.
   */
  noteCounts(seat, c) {
    const had = this.others.get(seat);
    if (!had || c.moves >= had.moves) this.others.set(seat, c);
  }

  /**
   * fillCounts keeps every racer's counts from a state's "opponents" (one
   * per seat, races of more than two): after a join, a resume or a
   * reload, the standings are whole before anyone moves again.
   */
  fillCounts(opponents) {
    opponents.forEach((c, seat) => { if (seat !== this.seat && c) this.noteCounts(seat, c); });
    this.renderStandings();
  }

  /**
   * renderStandings lists every other racer of a race of more than two,
   * most cards up first: name, cards up, cards left in the stock, status.
   */
  renderStandings() {
    const st = this.state;
    if (!st || this.seat === null) return;
    const names = this.names || [];
    const rows = st.players.map((p, seat) => ({ seat, p, c: this.others.get(seat) }))
      .filter((r) => r.seat !== this.seat)
      .sort((a, b) => (b.c ? b.c.score : 0) - (a.c ? a.c.score : 0) || a.seat - b.seat);
    fill(this.els.standingsBody, rows.map((r) => standingRow(r, names[r.seat])));
    // Many racers on a phone scroll within the panel: the keyboard may
    // then reach it to scroll it too.
    const panel = this.els.standingsBody.closest(".standings");
    if (panel.scrollHeight > panel.clientHeight) panel.setAttribute("tabindex", "0");
    else panel.removeAttribute("tabindex");
  }

  /** speakRacer tells a screen reader how one racer of many goes. */
  speakRacer(seat) {
    const c = this.others.get(seat);
    if (!c || !this.state || this.state.state !== "running") return;
    this.announcer.racer(seat, (this.names && this.names[seat]) || `Player ${seat + 1}`, c, this.view ? this.view.target : 52);
  }

  /** speakOpponent tells a screen reader how the opponent's race goes. */
  speakOpponent() {
    if (this.many || !this.opp || !this.state || this.state.state !== "running" || this.seat === null) return;
    const name = (this.names && this.names[1 - this.seat]) || "Your opponent";
    this.announcer.opponent(name, this.opp, this.view ? this.view.target : 52);
  }

  /**
   * move shows m at once when the client can tell its outcome, sends it,
   * and takes it back with the server's reason if refused.
   */
  async move(m, how = {}) {
    this.els.moveError.textContent = "";
    const card = m.split(">")[0];
    const from = how.dragged ? null : rectOf(this.els.board, card);
    const shown = applyLocal(this.view, m);
    if (shown) {
      this.pending.push(m);
      this.render();
      slideFrom(this.els.board, card, from);
    }
    try {
      await this.sock.move(m);
    } catch (err) {
      const i = this.pending.indexOf(m);
      if (i >= 0) {
        const back = rectOf(this.els.board, card);
        this.pending.splice(i, 1);
        this.render();
        slideFrom(this.els.board, card, back);
      }
      this.els.moveError.textContent = err.message || "That move was refused.";
    }
  }

  onMoved(m) {
    if (m.seat !== this.seat || m.race !== this.id) return;
    const rest = this.pending.slice();
    const i = rest.indexOf(m.move);
    if (i >= 0) rest.splice(0, i + 1);
    this.confirmed = m.view;
    this.pending = rest;
    noteShown(this.id, String(this.seat), m.view);
    this.announcer.moved(m.move, m.view);
    this.els.hint.textContent = "";
    if (m.move !== "resign") this.els.moveError.textContent = "";
    this.render();
  }

  resignClick() {
    const b = this.els.resign;
    if (b.dataset.confirm) {
      delete b.dataset.confirm;
      b.textContent = "Resign";
      this.sock.resign().catch((err) => { this.els.moveError.textContent = err.message; });
      return;
    }
    b.dataset.confirm = "1";
    b.textContent = "Really resign?";
    setTimeout(() => { if (b.dataset.confirm) { delete b.dataset.confirm; b.textContent = "Resign"; } }, RESIGN_CONFIRM_MS);
  }

  onPresence(m) {
    // Presence belongs to one race: after a rematch the connection may
    // still hear the previous race's (a player leaving a finished race,
    // with no grace time), which says nothing about this one.
    if (m.race !== this.id || m.seat === this.seat) return;
    const name = (this.names && this.names[m.seat]) || "Your opponent";
    if (this.many) this.noteConnected(m.seat, m.connected);
    else if (this.opp) this.opp.connected = m.connected;
    this.renderOpponent();
    this.speakOpponent();
    if (m.connected) {
      // "Back" only after "disconnected": a kept seat's first resume (a
      // rematch, the next round) is an arrival, not a return.
      if (this.presence) this.notices.show("presence", `${name} is back.`, "ok", 4000);
      this.presence = null;
      return;
    }
    const until = Date.parse(m.graceUntil);
    if (Number.isNaN(until)) return; // a player whose game is over left: nothing to forfeit
    this.presence = { name, until };
    this.tick();
  }

  /** noteConnected marks a racer of many connected or away, in the standings and to a screen reader. */
  noteConnected(seat, connected) {
    const p = this.state && this.state.players[seat];
    if (p) p.connected = connected;
    const c = this.others.get(seat);
    if (c) {
      c.connected = connected;
      this.speakRacer(seat);
    }
  }

  /**
   * onJoined keeps the seat's token: every resume spends the token it was
   * given, and "joined" (the answer to join and resume, and what a server
   * that took the race over sends) carries the one that works now, for the
   * next reload or reconnect.
   */
  onJoined(m) {
    const seat = seats.get(m.race) || { name: playerName.get() };
    seats.set(m.race, { ...seat, token: m.token, seat: m.seat });
  }

  onRematch(m) {
    if (m.race !== this.id || m.seat === this.seat) return;
    this.notices.show("rematch", `${this.names[m.seat]} asks for a rematch: press Rematch to accept.`, "info");
  }

  /**
   * onRoomRace follows the room's next race, started by its host while
   * this page shows the last one: the seat there is kept for this player,
   * and a racer who does not come would abort it for everyone.
   */
  onRoomRace(m) {
    const arena = this.arena;
    if (m.via === "arena" && arena && m.arena === arena && m.race !== this.id) {
      // Back in the arena's pool after this race, the player was paired
      // again while on its result: to the next race at once.
      clearInterval(this.arenaReturn);
      identity.matched(m.race);
      arenaOfRace.set(m.race, arena);
      location.assign(`/?race=${encodeURIComponent(m.race)}&auto=1`);
      return;
    }
    const room = roomOfRace.get(this.id);
    if (m.via !== "room" || !room || m.room !== room || m.race === this.id) return;
    identity.matched(m.race);
    roomOfRace.set(m.race, room);
    location.assign(`/?race=${encodeURIComponent(m.race)}&auto=1`);
  }

  onNext(m) {
    if (m.race !== this.id) return; // a later race's news, already followed
    const seat = seats.get(this.id);
    if (!seat) return;
    seats.set(m.next, seat);
    history.pushState(null, "", `/?race=${encodeURIComponent(m.next)}`);
    const round = m.match && m.match.bestOf > 1 ? `Round ${m.match.round} of ${m.match.bestOf}` : "Rematch";
    this.notices.show("next", `${round}: a new deal. Get ready.`, "info", 5000);
    this.id = m.next;
    this.over = false;
    this.view = null;
    this.state = null;
    this.presence = null;
    this.notices.clear("rematch");
    this.notices.clear("presence");
    this.els.result.hidden = true;
    this.els.invite.replaceChildren();
    this.sock.resume(m.next, seat.token).then((j) => {
      if (j && j.token) seats.set(m.next, { ...seat, token: j.token, seat: j.seat });
    }).catch((err) => this.fail(err));
  }

  async showFinished(m) {
    this.over = true;
    this.els.countdown.hidden = true;
    const el = this.els.result;
    el.hidden = false;
    try {
      const info = await getRace(this.id);
      if (info.result && info.result.outcome !== "aborted") identity.finished(this.id);
      const ghostRace = info.players.some((p) => p.ghost);
      // A rematch and a ghost challenge are races of two.
      const duel = !isMany(info.players);
      // An arena pairs its races itself: no rematch from one.
      const canRematch = duel && info.result && info.result.outcome !== "aborted" && !(info.result.match && !info.result.match.over) && this.seated && !ghostRace && !this.arena;
      const canGhost = duel && info.result && info.result.outcome !== "aborted" && this.seated && identity.get();
      renderResult(el, info, {
        seat: this.seat,
        onRematch: canRematch ? () => this.sock.send("rematch") : null,
        onGhost: canGhost ? () => this.sock.makeGhost(this.id, this.seat) : null,
      });
      if (this.arena && this.seat !== null) this.backToArena(el);
    } catch (err) {
      fill(el, h("p", {}, `The race is over, but its record could not be read: ${err.message}`));
    }
    this.notices.clear("presence");
  }

  /**
   * backToArena counts down, under the result's buttons, to the page going
   * back to the arena by itself (the result's "Back to the arena" goes at
   * once); "Stay here" stops it. The result drawn again keeps the count.
   */
  backToArena(el) {
    const href = `/?arena=${encodeURIComponent(this.arena)}`;
    const bar = h("p", { class: "arena-return", "data-testid": "arena-return" });
    const actions = el.querySelector(".actions");
    if (actions) actions.after(bar);
    else el.prepend(bar);
    if (this.arenaStay) {
      fill(bar, "You stay here; go back to the arena when you like.");
      return;
    }
    this.arenaReturnAt = this.arenaReturnAt || performance.now() + ARENA_RETURN_S * 1000;
    const left = h("span", { role: "timer", "data-testid": "arena-return-left" });
    const stay = h("button", {
      type: "button", "data-action": "arena-stay",
      onclick: () => {
        clearInterval(this.arenaReturn);
        this.arenaStay = true;
        fill(bar, "You stay here; go back to the arena when you like.");
        const link = el.querySelector("[data-action=back-to-arena]");
        if (link) link.focus();
      },
    }, "Stay here");
    fill(bar, left, " ", stay);
    const count = () => {
      const s = Math.max(0, Math.ceil((this.arenaReturnAt - performance.now()) / 1000));
      left.textContent = `Back to the arena in ${s} s.`;
      if (s > 0) return;
      clearInterval(this.arenaReturn);
      location.assign(href);
    };
    clearInterval(this.arenaReturn);
    this.arenaReturn = setInterval(count, 250);
    count();
  }

  tick() {
    const st = this.state;
    if (!st) return;
    const now = Date.now() + this.offset;
    const cd = this.els.countdown;
    if (st.state === "countdown" && st.startAt) {
      const left = Date.parse(st.startAt) - now;
      cd.hidden = false;
      const text = left > 0 ? String(Math.ceil(left / 1000)) : "Go!";
      if (cd.textContent !== text) cd.textContent = text; // announce each number once
    } else {
      cd.hidden = true;
    }
    if (st.endsAt && (st.state === "running" || st.state === "countdown")) {
      // A berserk racer's own time is half the race's.
      const half = this.isBerserk && st.startAt;
      const limit = half ? st.timeLimitMs / 2 : st.timeLimitMs;
      const end = half ? Math.min(Date.parse(st.endsAt), Date.parse(st.startAt) + limit) : Date.parse(st.endsAt);
      const left = end - now;
      const text = fmtClock(Math.min(left, limit));
      if (this.els.clock.textContent !== text) this.els.clock.textContent = text;
      this.els.clock.classList.toggle("low", left < 30000);
    } else if (st.state === "waiting") {
      this.els.clock.textContent = fmtClock(st.timeLimitMs);
    } else {
      this.els.clock.textContent = "";
    }
    if (this.presence && !this.over) {
      const left = this.presence.until - now;
      this.notices.show("presence", `${this.presence.name} disconnected: they forfeit in ${Math.max(0, Math.ceil(left / 1000))} s unless they come back.`, "warn");
    }
  }

  toggleHelp(show) {
    const open = show === undefined ? this.els.help.hidden : show;
    this.els.help.hidden = !open;
    this.els.helpBtn.setAttribute("aria-expanded", String(open));
    if (open) this.els.help.querySelector("[data-action=close-help]").focus({ preventScroll: true });
  }
}

/**
 * standingsEl is the panel that stands for the opponent's in a race of
 * more than two: a table of the other racers (body, filled by
 * renderStandings). Short column heads are drawn, full ones read.
 */
function standingsEl(body) {
  const head = (shown, said) => h("th", { scope: "col" }, h("span", { "aria-hidden": "true" }, shown), h("span", { class: "visually-hidden" }, said));
  return h("aside", { class: "standings", "aria-labelledby": "standings-h", hidden: true },
    h("h2", { id: "standings-h" }, "The other racers"),
    h("table", { class: "standings-table", "data-testid": "standings" },
      h("thead", {}, h("tr", {}, head("Racer", "Racer"), head("Up", "Cards up"), head("Left", "Cards left in stock"), head("Status", "Status"))),
      body));
}

// STANDING_STATUS words a racer's status in a narrow column.
const STANDING_STATUS = { free: "not joined", away: "away", playing: "playing", won: "won", stuck: "stuck", resigned: "resigned" };

/** standingRow is one racer's row in the standings: r is {seat, p (PlayerInfo), c (Counts, if known)}. */
function standingRow(r, name) {
  const { seat, p, c } = r;
  const game = c ? c.status : "playing";
  // Away matters while a racer plays (they forfeit if they do not come
  // back); a racer whose game is over may leave freely.
  const away = p.taken && game === "playing" && (c ? c.connected === false : p.connected === false);
  const status = !p.taken ? "free" : away ? "away" : game;
  return h("tr", { "data-seat": seat, "data-status": status },
    h("th", { scope: "row" }, h("span", { class: `dot seat${seat}`, "aria-hidden": "true" }), p.taken ? name || `Player ${seat + 1}` : "free seat"),
    h("td", { "data-score": seat }, !p.taken ? "–" : c ? String(c.score) : "0"),
    h("td", {}, p.taken && c ? String(c.stock) : "–"),
    h("td", { class: "status" }, STANDING_STATUS[status] || status));
}
