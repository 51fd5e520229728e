// The room page (/?room=CODE): a group who race together (PROTOCOL.md
// section 7, "Rooms: race a group"). Opening it says hello (a first-time
// visitor gives a name first) and joins the room; it lists the members as
// the server's "room" messages tell, and the host starts each race. When a
// race starts every member's page goes to it; the race's result leads back
// here (roomOfRace), where the host races again (a member still on the
// result is taken to the next race by the race page).

import { h, fill, copyText } from "./ui.js";
import { identity, roomOfRace } from "./proto.js";
import { GroupPage } from "./grouppage.js";

// MAX_MEMBERS is how many a room holds (race.MaxSeats).
const MAX_MEMBERS = 10;

/** roomCode is a code as the server keeps it: case, spaces and dashes do not matter. */
export const roomCode = (text) => text.replace(/[\s-]/g, "").toUpperCase();

/** roomErrorText says a refusal of the room's messages in words. */
export function roomErrorText(err, code) {
  switch (err && err.code) {
    case "no-such-room": return `No room has the code ${code}: it may have ended (a room lasts two hours after its last change), or the link was cut short.`;
    case "race-full": return `This room is full: it holds ${MAX_MEMBERS} racers.`;
    case "not-host": return "Only the host can start the race.";
    case "too-few": return "A race needs at least two: send the link to someone first.";
    case "in-race": return `Not yet: someone's last race is not over. (${err.message})`;
    case "not-in-room": return "You are not in this room any more: reload the page to join it again.";
    default: return (err && err.message) || String(err);
  }
}

/** roomPage draws the room of code into root and keeps it live. */
export function roomPage(root, code) {
  const page = new RoomPage(root, code);
  page.start();
  return page;
}

class RoomPage extends GroupPage {
  constructor(root, code) {
    super(root);
    this.code = code;
    this.room = null; // the last room message's room
    this.build();
  }

  build() {
    const e = (this.els = {});
    e.status = h("p", { class: "muted", role: "status", "data-testid": "room-status" }, "Connecting…");
    e.error = h("p", { class: "error", role: "alert", "data-testid": "room-error" });
    // Arrivals and departures are spoken politely, without moving focus.
    e.news = h("p", { class: "visually-hidden", "aria-live": "polite", "data-testid": "room-news" });
    e.body = h("div", { class: "room-body" });
    fill(this.root, e.page = h("section", { class: "panel room-page", "data-testid": "room" },
      h("h1", {}, "Race a group"),
      e.status, e.error, e.news, e.body,
      h("p", {}, h("a", { href: "/", "data-action": "to-lobby" }, "Back to the lobby"))));
  }

  // GroupPage's hooks.
  get statusEl() { return this.els.status; }
  get errorEl() { return this.els.error; }
  get bodyEl() { return this.els.body; }
  get noLobbyText() { return "This server has no lobby, so no rooms."; }
  get nameForm() {
    return {
      id: "room-name", testid: "room-name-form", action: "join-room", button: "Join the room",
      prompt: "You are asked to race a group at Sir Tommy patience, everyone on the same deal. Choose the name the others will see:",
    };
  }
  listen(sock) {
    sock.on("room", (m) => this.onRoom(m));
    sock.on("matched", (m) => this.onMatched(m));
  }
  enter(sock) { return sock.joinRoom(this.code); }
  errorText(err) { return roomErrorText(err, this.code); }

  onMatched(m) {
    if (m.via !== "room" || roomCode(m.room || "") !== roomCode(this.code)) return;
    identity.matched(m.race);
    roomOfRace.set(m.race, m.room);
    this.leaving = true;
    location.assign(`/?race=${encodeURIComponent(m.race)}&auto=1`);
  }

  onRoom(m) {
    // The player may be in other rooms too: their news is not this page's.
    if (roomCode(m.room.code) !== roomCode(this.code)) return;
    if (m.left) { this.leaving = true; location.assign("/"); return; }
    this.announceChanges(this.room, m.room);
    this.room = m.room;
    if (m.link) this.link = m.link;
    this.render();
  }

  /** announceChanges says who came and who left since the last message. */
  announceChanges(before, now) {
    if (!before) return;
    const ids = (r) => new Set(r.members.map((p) => p.player));
    const was = ids(before), is = ids(now);
    const came = now.members.filter((p) => !was.has(p.player)).map((p) => `${p.name} joined.`);
    const went = before.members.filter((p) => !is.has(p.player)).map((p) => `${p.name} left.`);
    if (came.length || went.length) this.els.news.textContent = [...came, ...went].join(" ");
  }

  get isHost() { return !!this.me && this.room.host === this.me.player; }

  /**
   * render shows the room as it is now. Its parts are made once and then
   * changed in place, so that an arrival does not take the keyboard's
   * focus away from the start button.
   */
  render() {
    if (!this.parts) this.buildParts();
    const r = this.room;
    const p = this.parts;
    this.els.page.dataset.members = r.members.length;
    this.els.page.dataset.host = this.isHost ? "me" : "other";
    const o = r.options || {};
    p.what.textContent = `${o.variant || "classic"} · ${Math.round((o.timeLimitSeconds || 600) / 60)} minutes · unrated` +
      (r.races ? ` · ${r.races} race${r.races === 1 ? "" : "s"} so far` : "");
    p.count.textContent = `${r.members.length} of ${MAX_MEMBERS}`;
    fill(p.members, r.members.map((m) => this.memberItem(m)));
    p.start.hidden = !this.isHost;
    p.wait.hidden = this.isHost;
    if (this.isHost) this.renderStart();
    else p.wait.textContent = this.waitText();
  }

  buildParts() {
    const p = (this.parts = {});
    p.what = h("p", { class: "room-what" });
    p.count = h("span", { class: "muted", "data-testid": "room-count" });
    p.members = h("ul", { class: "list room-members", "aria-labelledby": "room-members-head", "data-testid": "room-members" });
    p.startBtn = h("button", { class: "primary big", "data-action": "start-room", "aria-describedby": "room-start-why", onclick: () => this.startRace() });
    p.why = h("p", { id: "room-start-why", class: "muted", "data-testid": "room-start-why" });
    p.start = h("div", { class: "room-start" }, p.startBtn, p.why);
    p.wait = h("p", { class: "room-wait", "data-testid": "room-wait" });
    fill(this.els.body, p.what, this.linkSection(),
      h("h2", { id: "room-members-head" }, "Racers ", p.count), p.members, p.start, p.wait,
      h("p", {}, h("button", { type: "button", "data-action": "leave-room", onclick: () => this.leave() }, "Leave the room")));
  }

  linkSection() {
    const link = this.link || `${location.origin}/?room=${encodeURIComponent(this.room.code)}`;
    const input = h("input", { id: "room-link", readonly: true, value: link, "aria-label": "The room's link" });
    const said = h("span", { role: "status" });
    return h("div", { class: "room-link" },
      h("p", {}, "Code ", h("code", { "data-testid": "room-code" }, this.room.code), ": send the link to everyone who races with you."),
      h("div", { class: "row-form" }, input,
        h("button", {
          type: "button", "data-action": "copy-room-link",
          onclick: async () => { said.textContent = (await copyText(link, input)) ? "Copied." : "Select and copy the link."; },
        }, "Copy"), said));
  }

  memberItem(p) {
    const you = this.me && p.player === this.me.player;
    return h("li", { "data-player": p.player, class: you ? "own" : null },
      h("strong", {}, p.name),
      p.player === this.room.host ? [" ", h("span", { class: "badge", "data-host": "" }, "host")] : null,
      you ? h("span", { class: "muted" }, " (you)") : null);
  }

  renderStart() {
    const p = this.parts;
    const few = this.room.members.length < 2;
    if (!this.starting) p.startBtn.disabled = few;
    p.startBtn.textContent = this.room.races ? "Race again" : "Start the race";
    p.why.textContent = few
      ? "A race needs at least two: send the link, then start when they are here."
      : "Everyone here races, on one new secret deal.";
  }

  async startRace() {
    this.els.error.textContent = "";
    this.starting = true;
    this.parts.startBtn.disabled = true;
    try {
      await this.sock.startRoom(this.room.code); // onMatched goes to the race
    } catch (err) {
      this.els.error.textContent = roomErrorText(err, this.code);
      this.starting = false;
      this.renderStart();
    }
  }

  waitText() {
    const host = this.room.members.find((p) => p.player === this.room.host);
    return `Waiting for ${host ? host.name : "the host"} (the host) to start ${this.room.races ? "the next race" : "the race"}.`;
  }

  async leave() {
    this.els.error.textContent = "";
    try {
      await this.sock.leaveRoom(this.room.code); // its "left" reply goes to the lobby
    } catch (err) {
      this.els.error.textContent = roomErrorText(err, this.code);
    }
  }
}
