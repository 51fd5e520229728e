// The lobby page (/): the player's identity and name, quick play (with the
// computer offered after a wait), open challenges, the live races to watch,
// the mass races and the arenas (arenas.js),
// who is online, the leaderboard and the player's own rating and races;
// besides, a private race by link or invite code, joining, watching or
// replaying one by its code, and a race against the computer. The page
// keeps one websocket: it says hello with the stored player token and then
// gets a "lobby" message whenever the lobby changes. Every protocol call
// is in proto.js. /?invite=CODE is the same page with the invite on top.

import { h, fill, copyText, fmtClock } from "./ui.js";
import { renderProfile, playerLink, recordText } from "./profile.js";
import { AccountPanel } from "./account.js";
import { MassPanel } from "./mass.js";
import { ArenasPanel } from "./arenas.js";
import {
  Socket, createRace, identity, playerName, getVariants, getLeaderboard, getPlayer, inviteCodeLink, getGhost, getDaily, arenaOfRace,
} from "./proto.js";

const RECONNECT_MAX_MS = 5000;
const LEADERBOARD_REFRESH_MS = 15000;

/** raceIdFrom accepts an invite link or a bare race code. */
export function raceIdFrom(text) {
  const t = text.trim();
  try {
    const u = new URL(t);
    return u.searchParams.get("race") || u.searchParams.get("watch") || u.searchParams.get("replay") || "";
  } catch {
    return /^[0-9a-zA-Z_-]{4,64}$/.test(t) ? t : "";
  }
}

/** inviteCodeFrom finds a lobby invite code in a link or as typed ("" if none). */
export function inviteCodeFrom(text) {
  const t = text.trim();
  try {
    return new URL(t).searchParams.get("invite") || "";
  } catch {
    const c = t.replace(/[\s-]/g, "").toUpperCase();
    // Codes are 10 of 0-9 A-Z without I L O U; race ids are 32 hex digits.
    return /^[0-9A-HJKMNP-TV-Z]{10}$/.test(c) ? c : "";
  }
}

/** roomCodeFrom finds a room's code in a room link ("" if none); a bare code is an invite's. */
export function roomCodeFrom(text) {
  try {
    return new URL(text.trim()).searchParams.get("room") || "";
  } catch {
    return "";
  }
}

// QUICK_MINUTES is the quick-play races' time limit: the lobby makes them
// with the race package's default (race.DefaultTimeLimit, 10 minutes).
const QUICK_MINUTES = 10;
// CHIPS is how many variants quick play offers as one-tap chips (the
// server lists the default first); the others are in the select.
const CHIPS = 4;

const minutesText = (s) => (s % 60 === 0 ? `${s / 60} min` : `${s} s`);

// The variants, as the server lists them; until then only the default.
let variants = [{ name: "classic", summary: "" }];
const variantSelects = [];

/**
 * variantSelect is a select of the variants; with a hint element, the
 * chosen variant's one-sentence rule shows in it.
 */
function variantSelect(id, hint = null) {
  const sel = h("select", { id });
  variantSelects.push({ sel, hint });
  if (hint) sel.addEventListener("change", () => showSummary(sel, hint));
  fillVariants(sel, hint);
  return sel;
}

function fillVariants(sel, hint) {
  const cur = sel.value || "classic";
  fill(sel, variants.map((v) => h("option", { value: v.name, title: v.summary, selected: v.name === cur }, v.name)));
  if (hint) showSummary(sel, hint);
}

function showSummary(sel, hint) {
  hint.textContent = (variants.find((v) => v.name === sel.value) || {}).summary || "";
}

/** loadVariants reads the server's variants into every variant select. */
async function loadVariants() {
  try {
    variants = await getVariants();
  } catch {
    return; // the default alone still plays
  }
  for (const { sel, hint } of variantSelects) fillVariants(sel, hint);
  for (const fn of variantsLoaded) fn();
}

const variantsLoaded = [];

/** lobbyPage draws the lobby into root and keeps it live. */
export function lobbyPage(root, params = new URLSearchParams(location.search)) {
  const page = new LobbyPage(root, params);
  page.start();
  return page;
}

class LobbyPage {
  constructor(root, params) {
    this.root = root;
    this.invite = params.get("invite") || "";
    this.ghost = params.get("ghost") || "";
    this.sock = null;
    this.me = null; // welcome
    this.lobby = null; // last lobby message
    this.queued = ""; // variant queued in
    this.myChallenge = null;
    this.attempt = 0;
    this.leaving = false;
    this.build();
  }

  build() {
    const e = (this.els = {});
    this.account = new AccountPanel(() => this.reconnect());
    this.arenas = new ArenasPanel();
    this.mass = new MassPanel(() => this.sock, () => (this.els.quickVariant || {}).value || "classic", () => (this.me ? this.me.player : ""));
    e.status = h("p", { class: "muted lobby-status", role: "status", "data-testid": "lobby-status" }, "Connecting…");
    // One main action on top (play now), the live races beside it; racing
    // a friend or the computer next; the rest below.
    fill(this.root, h("div", { class: "lobby-page" },
      h("header", { class: "lobby-head" },
        h("h1", { class: "visually-hidden" }, "Sir Tommy race: the lobby"),
        h("p", { class: "lead" }, "Race another player at Sir Tommy patience: the same shuffled deck for both, first to finish the deal wins."),
        e.status),
      this.invitePanel(),
      this.ghostPanel(),
      h("div", { class: "lobby-top" }, this.quickPanel(), this.livePanel()),
      h("div", { class: "lobby-second" }, this.mass.el, this.arenas.el, this.createPanel(), this.computerPanel(), this.dailyPanel()),
      h("div", { class: "panels lobby-more" },
        this.challengePanel(), this.leaderboardPanel(), this.profilePanel(), this.account.el, this.namePanel(), this.joinPanel())));
    this.mass.render();
    this.queueTimer = setInterval(() => { if (this.queued) this.renderQueue(); }, 1000);
    window.addEventListener("pagehide", () => { this.leaving = true; if (this.sock) this.sock.close(); });
    window.addEventListener("pageshow", (ev) => { if (ev.persisted) location.reload(); });
  }

  async start() {
    await loadVariants();
    this.account.load();
    this.loadLeaderboard();
    setInterval(() => this.loadLeaderboard(), LEADERBOARD_REFRESH_MS);
    await this.connect();
  }

  /**
   * reconnect says hello again on a new websocket, after signing in or
   * out: the new connection carries the new session cookie.
   */
  reconnect() {
    if (this.sock) this.sock.close();
    this.connect();
  }

  async connect() {
    const sock = new Socket();
    this.sock = sock;
    sock.on("lobby", (m) => this.onLobby(m));
    sock.on("matched", (m) => this.onMatched(m));
    sock.on("computer-offer", (m) => this.onOffer(m));
    sock.on("ghost-raced", (m) => this.onGhostRaced(m));
    sock.on("error", (m) => this.showError(this.els.status, m));
    sock.on("close", (ev) => {
      if (this.leaving || ev.byUs) return;
      if (ev.wasOpen) this.els.status.textContent = "Connection lost: reconnecting…";
      this.queued = "";
      this.renderQueue();
      this.mass.disconnected();
      setTimeout(() => this.connect(), Math.min(RECONNECT_MAX_MS, 250 * 2 ** this.attempt++));
    });
    try {
      await sock.open();
      const w = await sock.hello();
      this.attempt = 0;
      if (!w) {
        this.els.status.textContent = "This server has no lobby: make a private race below.";
        this.root.querySelector(".lobby-page").dataset.lobby = "none";
        return;
      }
      this.onWelcome(w);
      this.els.status.textContent = "";
      this.root.querySelector(".lobby-page").dataset.lobby = "ready";
    } catch (err) {
      if (err && err.code !== "closed" && err.message) this.els.status.textContent = err.message;
    }
  }

  showError(el, err) {
    el.textContent = (err && err.message) || String(err);
    el.classList.add("error");
  }

  onWelcome(w) {
    this.me = w;
    this.els.nameInput.value = w.name;
    this.els.nameShown.textContent = w.name;
    this.els.heroName.textContent = w.name;
    this.els.playerId.textContent = w.player;
    this.loadProfile();
    this.dailyDay = null; // read again, with this player's entry
    if (this.lobby) this.onLobby(this.lobby);
  }

  onMatched(m) {
    identity.matched(m.race);
    // An arena's race (joined on its page, followed here): its result leads back there.
    if (m.via === "arena" && m.arena) arenaOfRace.set(m.race, m.arena);
    this.leaving = true;
    location.assign(`/?race=${encodeURIComponent(m.race)}&auto=1`);
  }

  onLobby(m) {
    this.lobby = m;
    this.renderPresence(m.presence || {});
    this.renderChallenges(m.challenges || []);
    this.renderLive(m.races || []);
    this.mass.update(m.mass, m.now);
    this.arenas.update(m.arenas, m.now);
    // The day's deal, when the server has one: read again when the day changes.
    const daily = (m.daily || []).find((d) => d.variant === "classic");
    this.els.dailyPanel.hidden = !daily;
    if (daily && daily.day !== this.dailyDay && this.me) {
      this.dailyDay = daily.day;
      this.loadDaily();
    }
  }

  // ----- invite (/?invite=CODE) -----

  invitePanel() {
    if (!this.invite) return null;
    const err = h("p", { class: "error", role: "alert" });
    return h("section", { class: "panel invited", "data-panel": "invite" },
      h("h2", {}, "You are invited to a race"),
      h("p", {}, "Invite code ", h("code", {}, this.invite), ". Check your name below, then:"),
      h("button", {
        class: "primary", "data-action": "accept-invite",
        onclick: async () => {
          err.textContent = "";
          try { await this.sock.acceptInvite(this.invite); } catch (ex) { err.textContent = ex.message || String(ex); }
        },
      }, "Accept and race"),
      err);
  }

  // ----- ghost races (/?ghost=ID) -----

  ghostPanel() {
    if (!this.ghost) return null;
    const err = h("p", { class: "error", role: "alert", "data-testid": "ghost-error" });
    const about = h("p", { "data-testid": "ghost-about" }, "Loading the recorded game…");
    getGhost(this.ghost).then((g) => {
      const minutes = Math.round(g.timeLimitMs / 60000);
      fill(about, `${g.authorName} challenges you to beat ${g.name === g.authorName ? "their" : `${g.name}'s`} game: `,
        h("strong", {}, `${g.score} cards on the foundations`), ` (${g.status}), ${g.variant}, ${minutes} minutes. `,
        "You race the recording on the same deal, kept secret until the end; it is not rated.");
    }).catch((ex) => { about.textContent = ""; err.textContent = ex.message || String(ex); });
    return h("section", { class: "panel invited", "data-panel": "ghost" },
      h("h2", {}, "Beat this game"),
      about,
      h("button", {
        class: "primary", "data-action": "race-ghost",
        onclick: async () => {
          err.textContent = "";
          try { await this.sock.raceGhost(this.ghost); } catch (ex) { err.textContent = ex.message || String(ex); }
        },
      }, "Race the ghost"),
      err);
  }

  // ----- the day's deal -----

  dailyPanel() {
    const e = this.els;
    e.dailyAbout = h("p", { "data-testid": "daily-about" }, "Everyone gets the same deal today: one attempt each.");
    e.dailyYou = h("p", { "data-testid": "daily-you", class: "muted" });
    e.dailyErr = h("p", { class: "error", role: "alert" });
    e.dailyPlay = h("button", {
      class: "primary", "data-action": "play-daily",
      onclick: async () => {
        e.dailyErr.textContent = "";
        try { await this.sock.playDaily("classic"); } catch (ex) { e.dailyErr.textContent = ex.message || String(ex); }
      },
    }, "Play today's deal");
    e.dailyGhost = h("button", {
      "data-action": "race-daily-leader", hidden: true,
      onclick: async () => {
        e.dailyErr.textContent = "";
        try { await this.sock.raceDailyLeader("classic"); } catch (ex) { e.dailyErr.textContent = ex.message || String(ex); }
      },
    }, "Race the day's leader's ghost");
    e.dailyCommit = h("code", { class: "commitment", "data-testid": "daily-commitment" });
    return e.dailyPanel = h("section", { class: "panel", "data-panel": "daily", hidden: true },
      h("h2", {}, "Today's deal"), e.dailyAbout, e.dailyYou,
      h("div", { class: "actions" }, e.dailyPlay, e.dailyGhost), e.dailyErr,
      h("p", { class: "muted" }, "Its commitment, opened at midnight UTC: ", e.dailyCommit));
  }

  async loadDaily() {
    const e = this.els;
    try {
      const d = await getDaily("classic", this.me ? this.me.player : "");
      e.dailyCommit.textContent = d.commitment.slice(0, 16) + "…";
      e.dailyCommit.title = d.commitment;
      const others = `${d.players} ${d.players === 1 ? "player has" : "players have"} played it`;
      if (d.you) {
        e.dailyYou.textContent = `You played it: ${d.you.won ? `won in ${Math.round(d.you.timeMs / 1000)} s` : `${d.you.score} cards`}, rank ${d.you.rank} of ${d.players}. The next opens at midnight UTC.`;
      } else if (d.played) {
        e.dailyYou.textContent = "You are playing it now.";
      } else {
        e.dailyYou.textContent = `${others}; you have not yet.`;
      }
      e.dailyPlay.hidden = d.played;
      e.dailyGhost.hidden = !d.you || !d.board.length || d.board[0].player === this.me.player;
    } catch (ex) {
      e.dailyAbout.textContent = ex.code === "no-daily" ? "This server has no day's deal." : ex.message;
      e.dailyPlay.hidden = true;
    }
  }

  onGhostRaced(m) {
    const r = m.run;
    const words = { won: "beat", lost: "lost to", draw: "drew with" }[r.outcome] || r.outcome;
    this.els.status.textContent = `${r.name} ${words} your ghost of ${r.ghostName}'s game, ${r.scores[0]}–${r.scores[1]}.`;
    this.els.status.classList.remove("error");
    this.loadProfile();
  }

  // ----- name -----

  namePanel() {
    const e = this.els;
    e.nameInput = h("input", { id: "lobby-name", autocomplete: "nickname", maxlength: 24, value: playerName.get() });
    e.nameShown = h("strong", { "data-testid": "my-name" }, playerName.get() || "…");
    e.playerId = h("code", { "data-testid": "my-id" });
    e.nameError = h("p", { class: "error", role: "alert", "data-testid": "name-error" });
    e.nameOk = h("span", { role: "status" });
    return h("section", { class: "panel", "data-panel": "name" },
      h("h2", {}, "You"),
      h("p", {}, "Playing as ", e.nameShown, " ", h("small", { class: "muted" }, "player ", e.playerId)),
      h("form", {
        class: "row-form",
        onsubmit: async (ev) => {
          ev.preventDefault();
          e.nameError.textContent = "";
          e.nameOk.textContent = "";
          e.nameInput.removeAttribute("aria-invalid");
          try {
            const w = await this.sock.rename(e.nameInput.value);
            this.onWelcome(w);
            e.nameOk.textContent = "Saved.";
          } catch (ex) {
            e.nameInput.setAttribute("aria-invalid", "true");
            e.nameError.textContent = ex.message || String(ex);
          }
        },
      }, h("label", { for: "lobby-name" }, "Name"), e.nameInput,
      h("button", { type: "submit", "data-action": "rename" }, "Change"), e.nameOk),
      e.nameError);
  }

  // ----- quick play -----

  quickPanel() {
    const e = this.els;
    e.quickHint = h("p", { class: "muted variant-summary", "data-testid": "quick-variant-summary" });
    e.quickVariant = variantSelect("quick-variant", e.quickHint);
    e.chips = h("div", { class: "chips", role: "radiogroup", "aria-label": "Variant" });
    e.quickVariant.addEventListener("change", () => { this.renderChips(); this.mass.render(); });
    e.quickErr = h("p", { class: "error", role: "alert" });
    e.quickGrade = this.gradeSelect("quick-grade");
    e.quickWait = h("p", { class: "queue-status", role: "status", "data-testid": "queue-status" });
    e.queueBtn = h("button", {
      class: "primary big", "data-action": "queue",
      onclick: async () => {
        e.quickErr.textContent = "";
        try {
          const q = await this.sock.queue(e.quickVariant.value, e.quickGrade.value);
          this.queued = q.variant;
          this.queuedAt = Date.now();
          this.renderQueue();
        } catch (ex) { e.quickErr.textContent = ex.message; }
      },
    }, "Play now");
    e.unqueueBtn = h("button", {
      "data-action": "unqueue", hidden: true,
      onclick: async () => {
        try { await this.sock.unqueue(); } catch (ex) { e.quickErr.textContent = ex.message; }
        this.queued = "";
        this.renderQueue();
      },
    }, "Leave the queue");
    e.offer = h("div", { class: "offer", hidden: true, "data-testid": "computer-offer" });
    e.heroName = h("span", { "data-testid": "hero-name" }, playerName.get() || "…");
    const panel = h("section", { class: "panel hero", "data-panel": "quickplay" },
      h("h2", {}, "Play now"),
      h("p", { class: "terms" }, h("strong", {}, `${QUICK_MINUTES} min`), " · rated · paired with a player near your rating"),
      e.chips,
      h("div", { class: "row-form more-variants" }, h("label", { for: "quick-variant" }, "All variants"), e.quickVariant),
      h("div", { class: "row-form more-variants" }, h("label", { for: "quick-grade" }, "Deal"), e.quickGrade),
      e.quickHint,
      h("div", { class: "row-form go" }, e.queueBtn, e.unqueueBtn),
      e.quickWait, e.offer,
      h("p", { class: "muted as" }, "Playing as ", e.heroName, " · ", h("a", { href: "#lobby-name" }, "change your name")),
      e.quickErr);
    this.renderChips();
    variantsLoaded.push(() => this.renderChips());
    return panel;
  }

  /** renderChips shows the most played variants as one-tap choices. */
  renderChips() {
    const e = this.els;
    const cur = e.quickVariant.value || "classic";
    const shown = variants.slice(0, CHIPS).map((v) => v.name);
    if (!shown.includes(cur)) shown.push(cur);
    fill(e.chips, shown.map((name) => h("button", {
      type: "button", class: "chip", role: "radio", "aria-checked": String(name === cur), "data-variant": name,
      disabled: !!this.queued,
      onclick: () => {
        e.quickVariant.value = name;
        e.quickVariant.dispatchEvent(new Event("change"));
      },
    }, name)));
  }

  renderQueue() {
    const e = this.els;
    e.queueBtn.hidden = !!this.queued;
    e.unqueueBtn.hidden = !this.queued;
    e.quickVariant.disabled = !!this.queued;
    this.renderChips();
    if (!this.queued) e.offer.hidden = true;
    // The lobby's count lags the queue by a heartbeat: this player is in it.
    const n = this.lobby && this.lobby.presence && this.lobby.presence.queues ? this.lobby.presence.queues[this.queued] || 0 : 0;
    const waited = fmtClock(Date.now() - (this.queuedAt || Date.now()) + 999);
    const others = Math.max(n, 1) - 1;
    e.quickWait.textContent = this.queued
      ? `Waiting for an opponent in ${this.queued} · ${waited} · ${others === 0 ? "nobody else waiting yet" : `${others} other${others === 1 ? "" : "s"} waiting`}`
      : "";
    this.root.querySelector("[data-panel=quickplay]").dataset.queued = this.queued;
  }

  onOffer(m) {
    const e = this.els;
    if (!this.queued) return;
    const err = h("p", { class: "error", role: "alert" });
    fill(e.offer,
      h("p", {}, `Nobody else has come for ${Math.round(m.waitedMs / 1000)} s. Race the computer instead? (unrated)`),
      h("button", {
        class: "primary", "data-action": "play-computer",
        onclick: async () => {
          try { await this.sock.playComputer(); } catch (ex) { err.textContent = ex.message; }
        },
      }, "Race the computer"),
      err);
    e.offer.hidden = false;
  }

  // ----- challenges -----

  /** gradeSelect chooses how hard the secret deal is (graded variants only). */
  gradeSelect(id) {
    return h("select", { id }, [["", "any deal"], ["easy", "easy"], ["medium", "medium"], ["hard", "hard"]].map(([v, t]) => h("option", { value: v }, t)));
  }

  challengePanel() {
    const e = this.els;
    e.chVariant = variantSelect("ch-variant");
    e.chMinutes = h("select", { id: "ch-minutes" }, [3, 5, 10].map((m) => h("option", { value: m, selected: m === 5 }, `${m} minutes`)));
    e.chBestOf = h("select", { id: "ch-bestof" }, [1, 3, 5].map((n) => h("option", { value: n }, n === 1 ? "one race" : `best of ${n}`)));
    e.chRated = h("input", { id: "ch-rated", type: "checkbox", checked: true });
    e.chGrade = this.gradeSelect("ch-grade");
    e.chErr = h("p", { class: "error", role: "alert" });
    e.chMine = h("div", { "data-testid": "my-challenge" });
    e.chList = h("ul", { class: "list", "data-testid": "challenges" });
    return h("section", { class: "panel", "data-panel": "challenges" },
      h("h2", {}, "Open challenges"),
      e.chList,
      h("form", {
        class: "grid-form",
        onsubmit: async (ev) => {
          ev.preventDefault();
          e.chErr.textContent = "";
          try {
            const r = await this.sock.challenge({ variant: e.chVariant.value, timeLimitSeconds: Number(e.chMinutes.value) * 60, bestOf: Number(e.chBestOf.value), rated: e.chRated.checked, ...(e.chGrade.value ? { grade: e.chGrade.value } : {}) });
            this.myChallenge = r.challenge;
            if (this.lobby) this.renderChallenges(this.lobby.challenges || []);
          } catch (ex) { e.chErr.textContent = ex.message; }
        },
      },
        h("label", { for: "ch-variant" }, "Variant"), e.chVariant,
        h("label", { for: "ch-minutes" }, "Time limit"), e.chMinutes,
        h("label", { for: "ch-bestof" }, "Match"), e.chBestOf,
        h("label", { for: "ch-grade" }, "Deal"), e.chGrade,
        h("label", { for: "ch-rated" }, "Rated"), e.chRated,
        h("button", { type: "submit", "data-action": "challenge" }, "Post a challenge")),
      e.chMine, e.chErr);
  }

  renderChallenges(list) {
    const e = this.els;
    const me = this.me && this.me.player;
    const mine = list.find((c) => c.player === me);
    if (!mine) this.myChallenge = null;
    fill(e.chMine, mine ? h("p", {}, "Your challenge is listed; the race starts when someone accepts. ",
      h("button", {
        "data-action": "cancel-challenge",
        onclick: async () => {
          try { await this.sock.cancelChallenge(); } catch (ex) { e.chErr.textContent = ex.message; }
        },
      }, "Withdraw")) : null);
    if (!list.length) { fill(e.chList, h("li", { class: "muted" }, "No open challenges: post one.")); return; }
    fill(e.chList, list.map((c) => {
      const own = c.player === me;
      return h("li", { "data-challenge": c.id, class: own ? "own" : null },
        h("span", { class: "names" }, h("strong", {}, c.name), ` (${Math.round(c.rating)})`),
        h("span", { class: "what" }, `${c.variant} · ${minutesText(c.timeLimitSeconds)}${c.bestOf > 1 ? ` · best of ${c.bestOf}` : ""} · ${c.rated ? "rated" : "unrated"}`),
        own ? h("span", { class: "muted" }, "yours") : h("button", {
          "data-action": "accept-challenge",
          onclick: async () => {
            e.chErr.textContent = "";
            try { await this.sock.acceptChallenge(c.id); } catch (ex) { e.chErr.textContent = ex.message; }
          },
        }, "Accept"));
    }));
  }

  // ----- live races -----

  livePanel() {
    this.els.live = h("ul", { class: "list", "data-testid": "live-races" });
    return h("section", { class: "panel", "data-panel": "live" }, h("h2", {}, "Live races"), this.els.live, this.presencePanel());
  }

  renderLive(races) {
    if (!races.length) { fill(this.els.live, h("li", { class: "muted" }, "No races being played right now: press Play now and yours will be the first.")); return; }
    fill(this.els.live, races.map((r) => {
      const target = (variants.find((v) => v.name === r.variant) || {}).cards || 52;
      const side = (i) => {
        const fillEl = h("span");
        fillEl.style.width = `${(100 * r.scores[i]) / target}%`; // the CSSOM, which the CSP allows
        return h("div", { class: "side" },
          h("strong", { class: "pname" }, r.players[i].name || "?"),
          h("span", { class: "bar", "aria-hidden": "true" }, fillEl),
          h("span", { class: "score", "data-score": i }, r.scores[i]));
      };
      const label = r.players.map((p, i) => `${p.name} ${r.scores[i]}`).join(", ") + ` of ${target}`;
      return h("li", { class: "race-card", "data-race": r.race, "data-state": r.state },
        h("div", { class: "names", "aria-label": label }, r.players.map((_, i) => side(i))),
        h("div", { class: "foot" },
          h("span", { class: "what" }, `${r.variant} · ${r.state === "countdown" ? "starting" : "running"} · `,
            h("span", { "data-testid": "spectators", "data-count": r.spectators }, `${r.spectators} watching`)),
          h("a", { class: "button", href: `/?watch=${encodeURIComponent(r.race)}`, "data-action": "watch" }, "Watch")));
    }));
  }

  // ----- presence -----

  presencePanel() {
    this.els.presence = h("dl", { class: "stats presence" });
    return h("div", { class: "presence-line", "data-panel": "presence" }, h("h3", {}, "Who is here"), this.els.presence);
  }

  renderPresence(p) {
    const item = (key, label) => [h("dt", {}, label), h("dd", { "data-count": key }, String(p[key] || 0))];
    fill(this.els.presence, item("online", "Online"), item("queued", "Waiting to play"), item("racing", "Racing"));
    if (this.queued) this.renderQueue();
  }

  // ----- leaderboard and profile -----

  leaderboardPanel() {
    const e = this.els;
    e.lbVariant = variantSelect("lb-variant");
    e.lbVariant.addEventListener("change", () => this.loadLeaderboard());
    e.lb = h("ol", { class: "list leaderboard", "data-testid": "leaderboard" });
    return h("section", { class: "panel", "data-panel": "leaderboard" },
      h("h2", {}, "Leaderboard"),
      h("div", { class: "row-form" }, h("label", { for: "lb-variant" }, "Variant"), e.lbVariant),
      e.lb);
  }

  async loadLeaderboard() {
    const e = this.els;
    try {
      const b = await getLeaderboard(e.lbVariant.value, 10);
      if (b.variant !== e.lbVariant.value) return;
      if (!b.standings.length) { fill(e.lb, h("li", { class: "muted" }, "No rated races in this variant yet.")); return; }
      fill(e.lb, b.standings.map((s) => h("li", { "data-player": s.player, class: this.me && s.player === this.me.player ? "own" : null },
        h("a", { href: playerLink(s.player) }, h("strong", {}, s.name)), " ",
        s.account ? h("span", { class: "badge", "data-account": "", title: "an account, kept with a passkey" }, "account") : h("span", { class: "badge muted", "data-guest": "", title: "a guest of one browser" }, "guest"), " ",
        h("span", { "data-rating": "" }, Math.round(s.rating.rating)),
        h("span", { class: "muted", "data-record": "" }, ` · ${recordText(s)} · ${Math.round(s.winPercent)}%`))));
    } catch (ex) {
      fill(e.lb, h("li", { class: "muted" }, ex.code === "no-lobby" ? "This server keeps no ratings." : ex.message));
    }
  }

  profilePanel() {
    this.els.profile = h("div", { "data-testid": "profile" }, h("p", { class: "muted" }, "Your rating and races appear here after your first lobby race."));
    return h("section", { class: "panel", "data-panel": "profile" }, h("h2", {}, "Your rating and races"), this.els.profile);
  }

  async loadProfile() {
    const id = identity.get();
    // A player who was never matched has no profile (the server says 404).
    if (!id || !id.raced || !this.me) return;
    try {
      renderProfile(this.els.profile, await getPlayer(this.me.player, 10));
    } catch (ex) {
      fill(this.els.profile, h("p", { class: "muted" }, ex.message));
    }
  }

  // ----- private races, joining, the computer -----

  createPanel() {
    const variant = variantSelect("new-variant");
    const minutes = h("select", { id: "new-minutes" }, [3, 5, 10, 20].map((m) => h("option", { value: m, selected: m === 10 }, `${m} minutes`)));
    const bestOf = h("select", { id: "new-bestof" }, [1, 3, 5].map((n) => h("option", { value: n }, n === 1 ? "one race" : `best of ${n}`)));
    const deal = h("input", { id: "new-deal", inputmode: "numeric", pattern: "[0-9]*", placeholder: "secret (random)" });
    const grade = this.gradeSelect("new-grade");
    const err = h("p", { class: "error", role: "alert" });
    const code = h("div", { "data-testid": "invite-code" });
    const opts = () => {
      const o = { variant: variant.value, timeLimitSeconds: Number(minutes.value) * 60, bestOf: Number(bestOf.value) };
      if (deal.value.trim()) o.deal = deal.value.trim();
      else if (grade.value) o.grade = grade.value;
      return o;
    };
    return h("section", { class: "panel", "data-panel": "create" },
      h("h2", {}, "Race a friend"),
      h("form", {
        class: "grid-form",
        onsubmit: async (ev) => {
          ev.preventDefault();
          err.textContent = "";
          try {
            const r = await createRace(opts());
            this.leaving = true;
            location.assign(`/?race=${encodeURIComponent(r.race)}&auto=1`);
          } catch (ex) { err.textContent = ex.message; }
        },
      },
        h("label", { for: "new-variant" }, "Variant"), variant,
        h("details", { class: "options" }, h("summary", {}, "Time, match and deal"),
          h("div", { class: "grid-form" },
            h("label", { for: "new-minutes" }, "Time limit"), minutes,
            h("label", { for: "new-bestof" }, "Match"), bestOf,
            h("label", { for: "new-deal" }, "Deal number"), deal,
            h("label", { for: "new-grade" }, "Secret deal's grade"), grade)),
        h("button", { class: "primary-soft", type: "submit", "data-action": "create" }, "Create a private race"),
        h("button", {
          type: "button", "data-action": "invite",
          onclick: async () => {
            err.textContent = "";
            try {
              const r = await this.sock.invite(opts());
              const link = inviteCodeLink(r.code);
              const input = h("input", { id: "invite-code-link", readonly: true, value: link, "aria-label": "Invite link" });
              const status = h("span", { role: "status" });
              fill(code, h("p", {}, "Invite code ", h("code", { "data-code": r.code }, r.code), ": send the link; stay here and the race opens when your friend accepts."),
                h("div", { class: "row-form" }, input,
                  h("button", { type: "button", onclick: async () => { status.textContent = (await copyText(link, input)) ? "Copied." : "Select and copy the link."; } }, "Copy"), status));
            } catch (ex) { err.textContent = ex.message; }
          },
        }, "Get an invite code"),
        h("button", {
          type: "button", "data-action": "make-room",
          onclick: async () => {
            err.textContent = "";
            try {
              // A room's race is one unrated race on a secret deal: no match, no deal number.
              const r = await this.sock.makeRoom({ variant: variant.value, timeLimitSeconds: Number(minutes.value) * 60, ...(grade.value ? { grade: grade.value } : {}) });
              this.leaving = true;
              location.assign(`/?room=${encodeURIComponent(r.room.code)}`);
            } catch (ex) { err.textContent = ex.message; }
          },
        }, "Race a group")),
      h("p", { class: "muted" }, "You get a link to send; the race starts when your friend opens it. An invite code works once, for 30 minutes. A group of 2 to 10 races from a room, as often as its host starts a race."),
      code, err);
  }

  joinPanel() {
    const code = h("input", { id: "join-code", class: "wide", placeholder: "room or invite link, invite code or race code" });
    const err = h("p", { class: "error", role: "alert" });
    const go = (param) => (e) => {
      e.preventDefault();
      const room = param === "race" ? roomCodeFrom(code.value) : "";
      if (room) { location.assign(`/?room=${encodeURIComponent(room)}`); return; }
      const inv = param === "race" ? inviteCodeFrom(code.value) : "";
      if (inv) { location.assign(`/?invite=${encodeURIComponent(inv)}`); return; }
      const id = raceIdFrom(code.value);
      if (!id) { err.textContent = "That is neither a room or invite link nor a race code."; return; }
      location.assign(`/?${param}=${encodeURIComponent(id)}`);
    };
    return h("section", { class: "panel", "data-panel": "join" },
      h("h2", {}, "Join, watch or replay"),
      h("form", { class: "row-form", onsubmit: go("race") },
        h("label", { for: "join-code" }, "Link or code"), code,
        h("button", { type: "submit", "data-action": "join-code" }, "Join"),
        h("button", { type: "button", onclick: go("watch") }, "Watch"),
        h("button", { type: "button", onclick: go("replay") }, "Replay")),
      err);
  }

  computerPanel() {
    const level = h("select", { id: "cpu-level" }, ["easy", "medium", "hard", "expert"].map((l) => h("option", { value: l }, l)));
    const variant = variantSelect("cpu-variant");
    const err = h("p", { class: "error", role: "alert" });
    return h("section", { class: "panel", "data-panel": "computer" },
      h("h2", {}, "Race the computer"),
      h("form", {
        class: "grid-form",
        onsubmit: async (e) => {
          e.preventDefault();
          err.textContent = "";
          try {
            const r = await createRace({ variant: variant.value, computer: { level: level.value } });
            this.leaving = true;
            location.assign(`/?race=${encodeURIComponent(r.race)}&auto=1`);
          } catch (ex) {
            err.textContent = ex.code === "no-computer" ? "This server has no computer players yet." : ex.message;
          }
        },
      },
        h("label", { for: "cpu-variant" }, "Variant"), variant,
        h("label", { for: "cpu-level" }, "Level"), level,
        h("button", { class: "primary-soft", type: "submit", "data-action": "computer" }, "Race the computer")),
      h("p", { class: "muted" }, "Unrated, any time: the computer plays at a person's pace. Easy places what fits; hard plans ahead; expert, the strongest, weighs each move against many possible stocks."),
      err);
  }
}
