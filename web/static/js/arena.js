// The arena page (/?arena=ID): an arena of back-to-back races (PROTOCOL.md
// section 7, "Arenas"; docs/arenas.md). Opening it says hello (a
// first-time visitor gives a name first) and watches the arena; the
// server sends "arena" again whenever it changes. The player joins and
// pauses here; when the arena pairs them ("matched", via "arena") the page
// goes to the race, whose result comes back here (arenaOfRace).

import { h, fill } from "./ui.js";
import { identity, arenaOfRace } from "./proto.js";
import { GroupPage } from "./grouppage.js";
import { ServerClock, whenText, whatText, statusWord, playersText, minutes, arenaErrorText } from "./arenas.js";

const points = (n) => (n === 1 ? "1 point" : `${n} points`);
const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);

/** arenaPage draws arena id into root and keeps it live. */
export function arenaPage(root, id) {
  const page = new ArenaPage(root, id);
  page.start();
  return page;
}

/**
 * poolSize is how many wait in the arena's pool as far as the view tells:
 * every player less those racing and those paused (exact when the
 * standings list everyone, as they do up to 20 players).
 */
export function poolSize(a) {
  const st = a.standings || [];
  if (st.length >= a.players) return st.filter((s) => s.state === "waiting").length;
  return Math.max(0, a.players - a.racing - st.filter((s) => s.state === "paused").length);
}

/**
 * sheetEl draws a standing's sheet: each race's points, the ones that
 * counted double (marked "!" by the server) emphasized.
 */
export function sheetEl(sheet) {
  const out = [];
  for (let i = 0; i < sheet.length; i++) {
    const d = sheet[i];
    if (d === "!") continue;
    if (sheet[i + 1] === "!") out.push(h("strong", { class: "x2" }, d, h("span", { class: "visually-hidden" }, " (double)")));
    else out.push(h("span", {}, d));
  }
  return h("span", { class: "sheet" }, out);
}

/**
 * raceItem is one counted race as player saw it: the opponent, the
 * outcome and its points (doubled on fire, berserk), and its replay.
 */
export function raceItem(r, player) {
  const s = r.players[0] === player ? 0 : 1;
  const mine = r.scores[s];
  const word = { win: "won", draw: "drew", loss: "lost" }[mine.outcome] || mine.outcome;
  const extras = [mine.fire ? "double 🔥" : "", mine.berserk ? "berserk" : ""].filter(Boolean).join(", ");
  return h("li", { "data-race": r.race },
    `${capital(word)} against `, h("strong", {}, r.names[1 - s] || "someone"), ` · ${points(mine.points)}`,
    extras ? ` (${extras})` : "", " · ", h("a", { href: `/?replay=${encodeURIComponent(r.race)}` }, "replay"));
}

class ArenaPage extends GroupPage {
  constructor(root, id) {
    super(root);
    this.id = id;
    this.arena = null; // the last arena message's view
    this.pauseAfter = false; // paused while racing: out of the pool after this race
    this.clock = new ServerClock();
    this.shown = null; // the player whose races are shown: { player, name, races } (races: those counted when fetched)
    this.build();
  }

  build() {
    const e = (this.els = {});
    e.title = h("h1", { id: "arena-title", "data-testid": "arena-name" }, "Arena");
    e.status = h("span", { class: "badge arena-status", "data-testid": "arena-status" });
    e.what = h("p", { class: "arena-what", "data-testid": "arena-what" });
    e.when = h("p", { class: "arena-when", "data-testid": "arena-when" });
    e.conn = h("p", { class: "muted", role: "status", "data-testid": "arena-conn" }, "Connecting…");
    e.error = h("p", { class: "error", role: "alert", "data-testid": "arena-error" });
    // Changes in substance (the start, your pairing, a pause) are spoken
    // politely; the countdown's each second is not.
    e.news = h("p", { class: "visually-hidden", "aria-live": "polite", "data-testid": "arena-news" });
    e.body = h("div", { class: "arena-body" });
    fill(this.root, e.page = h("section", { class: "panel arena-page", "data-testid": "arena" },
      h("div", { class: "arena-head" }, e.title, e.status),
      e.what, e.when,
      h("p", { class: "arena-rule", "data-testid": "arena-rule" }, "Only people race in an arena: no computer players. If nobody is free, you wait."),
      e.conn, e.error, e.news, e.body,
      h("p", {}, h("a", { href: "/", "data-action": "to-lobby" }, "Back to the lobby"))));
    this.timer = setInterval(() => this.renderClock(), 1000);
  }

  // GroupPage's hooks.
  get statusEl() { return this.els.conn; }
  get errorEl() { return this.els.error; }
  get bodyEl() { return this.els.body; }
  get noLobbyText() { return "This server has no lobby, so no arenas."; }
  get nameForm() {
    return {
      id: "arena-name-input", testid: "arena-name-form", action: "arena-name", button: "Go on",
      prompt: "Choose the name the others will see on the leaderboard:",
    };
  }
  listen(sock) {
    sock.on("arena", (m) => this.onArena(m.arena));
    sock.on("matched", (m) => this.onMatched(m));
    sock.on("error", (m) => { this.els.error.textContent = arenaErrorText(m); });
  }
  enter(sock) { return sock.arenaWatch(this.id); }
  errorText(err) { return arenaErrorText(err); }

  /** onMatched goes to the race the arena paired this player in. */
  onMatched(m) {
    if (m.via !== "arena" || m.arena !== this.id) return;
    identity.matched(m.race);
    arenaOfRace.set(m.race, this.id);
    this.leaving = true;
    this.els.news.textContent = "You are paired: to the race.";
    location.assign(`/?race=${encodeURIComponent(m.race)}&auto=1`);
  }

  onArena(a) {
    if (!a || a.id !== this.id) return; // another arena's news (the session watches one at a time)
    this.announce(this.arena, a);
    if (!a.you || a.you.state !== "racing") this.pauseAfter = false;
    this.arena = a;
    this.clock.note(a.now);
    this.render();
  }

  /** announce says what changed in substance since the last view. */
  announce(before, a) {
    if (!before) return;
    const said = [];
    if (before.status !== a.status) {
      said.push({ running: "The arena has started.", finishing: "Time is up: the last races are finishing.", over: "The arena is over: the podium is up." }[a.status] || "");
    }
    const was = before.you ? before.you.state : "", is = a.you ? a.you.state : "";
    if (was !== is) {
      said.push({ waiting: "You are in the pool.", paused: "You are paused.", racing: "You are racing." }[is] || "");
    }
    const text = said.filter(Boolean).join(" ");
    if (text) this.els.news.textContent = text;
  }

  /**
   * render shows the arena as it is now. Its parts are made once and then
   * changed in place, so that the Join and Pause buttons keep the
   * keyboard's focus, and the page its scroll, as updates come.
   */
  render() {
    if (!this.parts) this.buildParts();
    const a = this.arena;
    const p = this.parts;
    const e = this.els;
    document.title = `${a.name} · Arena · Sir Tommy`;
    e.title.textContent = a.name;
    e.status.textContent = statusWord(a.status);
    e.what.textContent = `${whatText(a)}, back to back for ${minutes(Date.parse(a.endAt) - Date.parse(a.startAt))}`;
    e.page.dataset.status = a.status;
    e.page.dataset.you = a.you ? a.you.state : "";
    this.renderClock();
    this.renderYou();
    p.top.hidden = !a.topRace;
    if (a.topRace) p.topLink.href = `/?watch=${encodeURIComponent(a.topRace)}`;
    this.renderPodium();
    this.keepRaces();
    p.count.textContent = `${playersText(a.players)} · ${a.racing} racing · ${a.played === 1 ? "1 race" : `${a.played} races`} played`;
    const rows = (a.standings || []).map((s) => this.row(s));
    // The player's own line under the top when they are further down.
    if (a.you && !(a.standings || []).some((s) => s.player === a.you.player)) {
      rows.push(h("tr", { class: "gap", "aria-hidden": "true" }, h("td", { colspan: 6 }, "…")), this.row(a.you));
    }
    if (!rows.length) rows.push(h("tr", {}, h("td", { colspan: 6, class: "muted" }, a.status === "soon" ? "Nobody has joined yet: be the first." : "Nobody joined this arena.")));
    fill(p.body, rows);
  }

  buildParts() {
    const p = (this.parts = {});
    p.youText = h("p", { class: "arena-you-text", "data-testid": "arena-you-text" });
    // How long the player has waited in the pool, counted each second.
    p.wait = h("p", { class: "muted arena-wait", "data-testid": "arena-wait", hidden: true });
    p.join = h("button", { type: "button", class: "primary", "data-action": "arena-join", onclick: () => this.join() }, "Join");
    p.pause = h("button", { type: "button", "data-action": "arena-pause", onclick: () => this.pause() }, "Pause");
    p.you = h("div", { class: "arena-you", "data-testid": "arena-you" }, p.youText, p.wait, h("div", { class: "actions" }, p.join, p.pause));
    p.topLink = h("a", { class: "button", href: "/", "data-action": "watch-top" }, "Watch the top race");
    p.top = h("p", { class: "arena-top", hidden: true }, p.topLink);
    p.podiumList = h("ol", { class: "podium", "data-testid": "arena-podium-list" });
    p.podium = h("section", { class: "arena-podium", "aria-labelledby": "arena-podium-h", "data-testid": "arena-podium", hidden: true },
      h("h2", { id: "arena-podium-h" }, "Podium"), p.podiumList);
    p.count = h("p", { class: "muted arena-count", "data-testid": "arena-count" });
    p.racesHead = h("h2", { id: "arena-races-h" }, "Races");
    p.racesList = h("ol", { class: "arena-races-list" });
    p.races = h("section", { class: "arena-races", "aria-labelledby": "arena-races-h", "data-testid": "arena-races", hidden: true },
      p.racesHead, p.racesList);
    p.body = h("tbody", {});
    // Short column heads are drawn, full ones read.
    const head = (shown, said, cls) => h("th", { scope: "col", class: cls }, h("span", { "aria-hidden": "true" }, shown), h("span", { class: "visually-hidden" }, said));
    p.table = h("table", { class: "arena-table", "data-testid": "arena-standings" },
      h("caption", { class: "visually-hidden" }, "The leaderboard, first place first"),
      h("thead", {}, h("tr", {},
        head("#", "Rank", "rank"), head("Player", "Player", "name"), head("Pts", "Points", "pts"),
        head("Races", "Races", "races"), head("Berserk", "Berserks", "bzk"), head("Sheet", "Points of each race", "sheet"))),
      p.body);
    fill(this.els.body, p.you, p.top, p.podium,
      h("h2", { class: "arena-board-h" }, "Leaderboard"), p.count,
      h("div", { class: "arena-table-wrap" }, p.table), p.races,
      h("p", { class: "muted arena-rules" },
        "A win is 2 points, a draw 1, a loss 0. After two wins in a row a player is on fire 🔥: wins and draws count double until a race is not won; those races are in bold on the sheet. ",
        "In a race's countdown you may go berserk: half your time, and a point more if you win."));
  }

  /** row is a standing's line on the leaderboard. */
  row(s) {
    const own = this.me && s.player === this.me.player;
    return h("tr", { "data-player": s.player, "data-state": s.state, class: own ? "own" : null },
      h("td", { class: "rank" }, String(s.rank)),
      h("th", { scope: "row", class: "name" },
        h("button", { type: "button", class: "link pname", "data-action": "arena-races", title: `${s.name}'s races`, onclick: () => this.showRaces(s) }, s.name),
        own ? h("span", { class: "visually-hidden" }, " (you)") : null,
        s.state === "paused" ? h("span", { class: "state" }, " paused") : null),
      h("td", { class: "pts", "data-points": s.player }, String(s.points), s.fire ? h("span", { class: "fire", title: "On fire: wins and draws count double" }, " 🔥") : null),
      h("td", { class: "races" }, String(s.races)),
      h("td", { class: "bzk" }, String(s.berserks)),
      h("td", { class: "sheet" }, sheetEl(s.sheet || "")));
  }

  /**
   * keepRaces keeps the races shown up to date: the viewer's own once
   * they have raced (unless they chose another player's), fetched again
   * when the player's count of races moves on.
   */
  keepRaces() {
    const a = this.arena;
    if (!this.shown && a.you && a.you.races > 0) this.shown = { player: a.you.player, name: a.you.name, races: -1 };
    if (!this.shown) return;
    const line = a.you && a.you.player === this.shown.player ? a.you : (a.standings || []).find((s) => s.player === this.shown.player);
    if (line && line.races !== this.shown.races) this.loadRaces(line);
  }

  /** showRaces shows standing s's player's races, and goes to them. */
  async showRaces(s) {
    this.shown = { player: s.player, name: s.name, races: -1 };
    await this.loadRaces(s);
    this.parts.racesHead.tabIndex = -1;
    this.parts.racesHead.focus();
  }

  /** loadRaces fetches and draws the races of standing s's player. */
  async loadRaces(s) {
    const shown = this.shown;
    shown.races = s.races;
    const p = this.parts;
    const own = this.me && s.player === this.me.player;
    p.racesHead.textContent = own ? "Your races" : `${s.name}'s races`;
    let results;
    try {
      const res = await fetch(`/api/arenas/${encodeURIComponent(this.id)}/results?player=${encodeURIComponent(s.player)}`);
      if (!res.ok) throw new Error(`status ${res.status}`);
      results = (await res.json()).results || [];
    } catch {
      shown.races = -1; // fetched again at the next update
      fill(p.racesList, h("li", { class: "muted" }, "The races could not be fetched; they come with the next update."));
      p.races.hidden = false;
      return;
    }
    if (this.shown !== shown) return; // another player's chosen meanwhile
    fill(p.racesList, results.length ? results.map((r) => raceItem(r, s.player)) : h("li", { class: "muted" }, "No race counted yet."));
    p.races.hidden = false;
  }

  /** renderYou shows the player's own line and the buttons that fit it. */
  renderYou() {
    const a = this.arena;
    const p = this.parts;
    const y = a.you;
    const open = a.status === "soon" || a.status === "running";
    // Paused while racing, Join keeps the player in the pool after all.
    p.join.hidden = !open || (y && y.state !== "paused" && !this.pauseAfter);
    p.join.textContent = y ? "Join again" : "Join";
    p.pause.hidden = !open || !y || y.state === "paused" || this.pauseAfter;
    p.you.dataset.state = y ? y.state : "";
    if (!y) {
      p.youText.textContent = open ? "You have not joined this arena." : "You did not race in this arena.";
      return;
    }
    fill(p.youText, h("strong", {}, `Rank ${y.rank}`), ` · ${points(y.points)}`, y.fire ? " 🔥" : "", ` · ${this.stateText(y)}`);
  }

  /** stateText is where the player stands in the arena, in words. */
  stateText(y) {
    const a = this.arena;
    if (a.status === "finishing" || a.status === "over") return y.state === "racing" ? "racing your last race" : "done";
    switch (y.state) {
      case "waiting": {
        if (a.status === "soon") return "joined: pairing begins at the start";
        const n = poolSize(a);
        return `waiting for an opponent (${n <= 1 ? "only you in the pool" : `${n} in the pool`})`;
      }
      case "racing": return this.pauseAfter ? "racing; paused after this race" : "racing";
      case "paused": return "paused: your points stay; join again to race";
    }
    return y.state;
  }

  renderPodium() {
    const a = this.arena;
    const p = this.parts;
    const podium = a.status === "over" ? a.podium || [] : [];
    p.podium.hidden = !podium.length;
    const medals = ["🥇", "🥈", "🥉"];
    fill(p.podiumList, podium.map((s, i) => h("li", { "data-player": s.player },
      h("span", { "aria-hidden": "true" }, medals[i] || ""), " ", h("strong", {}, s.name), ` · ${points(s.points)}`)));
  }

  /** renderClock counts down to the start or the end, each second. */
  renderClock() {
    const a = this.arena;
    if (!a) return;
    const text = capital(whenText(a, this.clock.now()));
    const said = a.status === "over" ? "The arena is over." : a.status === "finishing" ? `${text}.` : text;
    if (this.els.when.textContent !== said) this.els.when.textContent = said;
    this.renderWait();
  }

  /** renderWait counts the player's wait in the pool, while the arena runs. */
  renderWait() {
    const a = this.arena;
    const p = this.parts;
    if (!p) return;
    const since = a.status === "running" && a.you && a.you.state === "waiting" && a.you.waitingSince ? Date.parse(a.you.waitingSince) : NaN;
    p.wait.hidden = Number.isNaN(since);
    if (p.wait.hidden) return;
    const secs = Math.max(0, Math.floor((this.clock.now() - since) / 1000));
    const text = `Waiting for ${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, "0")}`;
    if (p.wait.textContent !== text) p.wait.textContent = text;
  }

  async join() {
    const e = this.els;
    e.error.textContent = "";
    try {
      this.pauseAfter = false;
      await this.sock.arenaJoin(this.id); // its reply, an "arena" message, draws the page
      e.news.textContent = "You joined the arena.";
      if (!this.parts.pause.hidden) this.parts.pause.focus();
    } catch (err) {
      e.error.textContent = arenaErrorText(err);
    }
  }

  async pause() {
    const e = this.els;
    e.error.textContent = "";
    const racing = this.arena && this.arena.you && this.arena.you.state === "racing";
    try {
      await this.sock.arenaPause(this.id);
      if (racing) {
        this.pauseAfter = true;
        this.render();
        e.news.textContent = "You are paused after this race.";
      }
      if (!this.parts.join.hidden) this.parts.join.focus();
    } catch (err) {
      e.error.textContent = arenaErrorText(err);
    }
  }
}
