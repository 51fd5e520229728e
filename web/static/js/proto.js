// The one module that speaks the server's protocol (web/PROTOCOL.md,
// version 1): the HTTP API and the websocket, the lobby's (section 7)
// included. Pages never build messages themselves.

export const VERSION = 1;


/** ApiError is a failed API request: code from PROTOCOL.md section 5. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  let data = null;
  try { data = await res.json(); } catch { /* not JSON */ }
  if (!res.ok) {
    const e = (data && data.error) || {};
    throw new ApiError(res.status, e.code || "http-" + res.status, e.message || res.statusText);
  }
  return data;
}

/**
 * createRace makes a race (POST /api/races). opts: variant, deal (string),
 * public, timeLimitSeconds, bestOf, computer {level, paceMs, seed}.
 */
export function createRace(opts = {}) {
  return api("POST", "/api/races", opts);
}

/** getRace fetches a race's record (GET /api/races/{id}); moves once over. */
export function getRace(id) {
  return api("GET", "/api/races/" + encodeURIComponent(id));
}

/**
 * getSolution asks whether a finished race's deal was winnable
 * (GET /api/races/{id}/solution): {result: "won"|"lost"|"unknown",
 * bestScore, scoreExact, nodes, game}. Before the end: ApiError "not-over".
 */
export function getSolution(id) {
  return api("GET", "/api/races/" + encodeURIComponent(id) + "/solution");
}

/**
 * getAnalysis asks for "where you lost it" (GET /api/races/{id}/analysis):
 * {state: "done", games: [...]} or, while the server works on it,
 * {state: "in-progress", percent}. Before the end: ApiError "not-over".
 */
export function getAnalysis(id) {
  return api("GET", "/api/races/" + encodeURIComponent(id) + "/analysis");
}

/**
 * practise judges a try of "find the better move" (POST
 * /api/races/{id}/practice): try {seat, position, move} gives {verdict:
 * "winnable"|"lost"|"illegal"|"unknown", reason, message, line}.
 */
export function practise(id, try_) {
  return api("POST", "/api/races/" + encodeURIComponent(id) + "/practice", try_);
}

/**
 * addMistake keeps your own seat's game of a finished race in "My
 * mistakes" (POST /api/players/me/mistakes): the mistake kept.
 */
export function addMistake(token, race, seat) {
  return api("POST", "/api/players/me/mistakes", { token, race, seat });
}

/**
 * getMistakes lists "My mistakes" of the player holding token (GET
 * /api/players/me/mistakes): {player, mistakes: [{race, seat, position,
 * variant, move, racedAt, addedAt, solvedAt}]}, the latest first.
 */
export async function getMistakes(token, n = 50) {
  const res = await fetch(`/api/players/me/mistakes?n=${n}`, { headers: { Authorization: `Bearer ${token}` } });
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const e = (data && data.error) || {};
    throw new ApiError(res.status, e.code || "http-" + res.status, e.message || res.statusText);
  }
  return data;
}

/** inviteLink is the link that seats the second player. */
export function inviteLink(id) {
  return `${location.origin}/?race=${encodeURIComponent(id)}`;
}

/** A seat's resume token lives in sessionStorage: one per tab and race. */
export const seats = {
  get(race) {
    try { return JSON.parse(sessionStorage.getItem("sirtommy.seat." + race)); } catch { return null; }
  },
  set(race, seat) { sessionStorage.setItem("sirtommy.seat." + race, JSON.stringify(seat)); },
  forget(race) { sessionStorage.removeItem("sirtommy.seat." + race); },
};

/** The player's name is remembered across visits. */
export const playerName = {
  get() { return localStorage.getItem("sirtommy.name") || ""; },
  set(n) { localStorage.setItem("sirtommy.name", n); },
};

/**
 * roomOfRace remembers, per tab, the room a race was started from, so that
 * its result can lead back to the room.
 */
export const roomOfRace = {
  get(race) { return sessionStorage.getItem("sirtommy.room-of." + race) || ""; },
  set(race, code) { sessionStorage.setItem("sirtommy.room-of." + race, code); },
};

/**
 * arenaOfRace remembers, per tab, the arena a race was paired in, so that
 * the race page offers berserk in its countdown and its result leads back
 * to the arena.
 */
export const arenaOfRace = {
  get(race) { return sessionStorage.getItem("sirtommy.arena-of." + race) || ""; },
  set(race, arena) { sessionStorage.setItem("sirtommy.arena-of." + race, arena); },
};

/**
 * identity is the player the server knows this browser as (section 7): id,
 * display name and the signed player token, kept in localStorage (one per
 * browser, shared by its tabs). lobbyRace is the last race the lobby
 * matched the player in; raced marks a player who has finished one, so
 * that their profile exists (the server says 404 before).
 */
export const identity = {
  get() {
    try { return JSON.parse(localStorage.getItem("sirtommy.player")); } catch { return null; }
  },
  /** set keeps a welcome's identity. */
  set(w) {
    const old = this.get() || {};
    const same = old.player === w.player;
    localStorage.setItem("sirtommy.player", JSON.stringify({
      player: w.player, name: w.name, token: w.token, expiresAt: w.expiresAt,
      raced: same && !!old.raced, lobbyRace: same ? old.lobbyRace : undefined,
    }));
    playerName.set(w.name);
  },
  update(fields) {
    const id = this.get();
    if (id) localStorage.setItem("sirtommy.player", JSON.stringify({ ...id, ...fields }));
  },
  /** matched notes a race the lobby made for the player. */
  matched(race) { this.update({ lobbyRace: race }); },
  /** finished notes that a race ended; a lobby race makes the profile. */
  finished(race) {
    const id = this.get();
    if (id && !id.raced && id.lobbyRace === race) this.update({ raced: true });
  },
  forget() { localStorage.removeItem("sirtommy.player"); },
};

/**
 * getVariants lists the variants a race may use (GET /api/variants), the
 * default first: [{name, summary, cards}].
 */
export function getVariants() { return api("GET", "/api/variants"); }

/** getLobby reads the lobby as it is now (GET /api/lobby). */
export function getLobby() { return api("GET", "/api/lobby"); }

/** getLeaderboard reads a variant's best n players. */
export function getLeaderboard(variant, n = 10) {
  return api("GET", `/api/leaderboard/${encodeURIComponent(variant)}?n=${n}`);
}

/** getPlayer reads a player's standings and last n lobby races. */
export function getPlayer(id, n = 10) {
  return api("GET", `/api/players/${encodeURIComponent(id)}?n=${n}`);
}

/**
 * getGames reads a page of a player's lobby races, newest first
 * (GET /api/players/{id}/games): {games, next}; cursor is the next of the
 * profile or of the page before ("" for the newest), next is absent on
 * the last page.
 */
export function getGames(id, cursor = "", n = 20) {
  return api("GET", `/api/players/${encodeURIComponent(id)}/games?n=${n}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
}

/**
 * getRatingChanges reads every change of a player's rating in a variant,
 * oldest first (GET /api/players/{id}/ratings/{variant}): {player, variant,
 * changes: [{race, at, before, after}]}.
 */
export function getRatingChanges(id, variant) {
  return api("GET", `/api/players/${encodeURIComponent(id)}/ratings/${encodeURIComponent(variant)}`);
}

/** gamesFileLink is where a player's every game downloads as one text file. */
export function gamesFileLink(id) {
  return `/api/players/${encodeURIComponent(id)}/games.txt`;
}

/** getGhost reads a ghost challenge (GET /api/ghosts/{id}): counts only. */
export function getGhost(id) {
  return api("GET", `/api/ghosts/${encodeURIComponent(id)}`);
}

/** getDaily reads today's deal in variant, with player's entry (GET /api/daily). */
export function getDaily(variant, player = "") {
  return api("GET", `/api/daily?variant=${encodeURIComponent(variant)}${player ? `&player=${encodeURIComponent(player)}` : ""}`);
}

/** inviteCodeLink is the link that accepts a lobby invite code. */
export function inviteCodeLink(code) {
  return `${location.origin}/?invite=${encodeURIComponent(code)}`;
}

/**
 * Socket is one websocket to the server. Handlers registered with on(type)
 * get every server message of that type ("*" gets all); request() sends a
 * message with an id and resolves with its reply, or rejects with the
 * error message ({code, reason, message}).
 */
export class Socket {
  constructor(url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws") {
    this.url = url;
    this.handlers = new Map();
    this.pending = new Map();
    this.nextId = 1;
    this.ws = null;
    this.closedByUs = false;
  }

  /** on registers a handler; it returns a function that removes it. */
  on(type, fn) {
    if (!this.handlers.has(type)) this.handlers.set(type, new Set());
    this.handlers.get(type).add(fn);
    return () => this.handlers.get(type).delete(fn);
  }

  emit(type, msg) {
    for (const key of [type, "*"]) {
      for (const fn of this.handlers.get(key) || []) fn(msg);
    }
  }

  /** open connects; it resolves once the socket is open. */
  open() {
    this.closedByUs = false;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url);
      this.ws = ws;
      let opened = false;
      ws.onopen = () => { opened = true; resolve(); this.emit("open", {}); };
      ws.onmessage = (ev) => this.receive(ev.data);
      ws.onclose = (ev) => {
        for (const p of this.pending.values()) p.reject({ code: "closed", message: "the connection closed" });
        this.pending.clear();
        if (!opened) reject(new Error("websocket refused"));
        this.emit("close", { code: ev.code, reason: ev.reason, byUs: this.closedByUs, wasOpen: opened });
      };
    });
  }

  /** close ends the connection on purpose (no reconnect). */
  close() {
    this.closedByUs = true;
    if (this.ws) this.ws.close(1000);
  }

  get isOpen() { return this.ws && this.ws.readyState === WebSocket.OPEN; }

  receive(text) {
    let msg;
    try { msg = JSON.parse(text); } catch { return; }
    if (msg.id && this.pending.has(msg.id)) {
      const p = this.pending.get(msg.id);
      // joined and watching answer join/resume/watch; the state after them
      // arrives as its own message.
      this.pending.delete(msg.id);
      if (msg.type === "error") { p.reject(msg); return; } // the caller handles it
      p.resolve(msg);
    }
    // Errors reach "error" handlers only when no request awaits them (a
    // refused rematch, rate limits).
    this.emit(msg.type, msg);
  }

  /** send sends a message and returns its id. */
  send(type, fields = {}) {
    const id = String(this.nextId++);
    if (this.isOpen) this.ws.send(JSON.stringify({ v: VERSION, type, id, ...fields }));
    return id;
  }

  /** request sends and waits for the reply with the same id. */
  request(type, fields = {}) {
    if (!this.isOpen) return Promise.reject({ code: "closed", message: "not connected to the server" });
    return new Promise((resolve, reject) => {
      const id = this.send(type, fields);
      this.pending.set(id, { resolve, reject });
    });
  }

  /**
   * hello says who this browser's player is (section 7), with the stored
   * token (a new player without one), renaming them when name is given
   * and differs. It resolves with the welcome, or null on a server without
   * a lobby. A token the server no longer takes is forgotten and the
   * player starts afresh.
   */
  async hello(name) {
    const id = identity.get();
    const fields = {};
    if (id && id.token) fields.token = id.token;
    if (name && (!id || id.name !== name)) fields.name = name;
    try {
      const w = await this.request("hello", fields);
      identity.set(w);
      return w;
    } catch (err) {
      if (err && err.code === "no-lobby") return null;
      // A token the server no longer takes, or an account's token without
      // its session (signed out): this browser starts as a new guest.
      if (err && (err.code === "invalid-token" || err.code === "expired-token" || err.code === "sign-in-required") && fields.token) {
        identity.forget();
        return this.hello(name);
      }
      throw err;
    }
  }

  /** rename changes the display name; the server's refusal is thrown. */
  async rename(name) {
    const w = await this.request("rename", { name });
    identity.set(w);
    return w;
  }

  queue(variant, grade = "") { return this.request("queue", grade ? { variant, grade } : { variant }); }
  unqueue() { return this.request("unqueue"); }
  /**
   * requestMatched sends a request whose success is a "matched" message
   * (which carries no id): it resolves with that, or rejects with the
   * request's error.
   */
  requestMatched(type, fields = {}) {
    if (!this.isOpen) return Promise.reject({ code: "closed", message: "not connected to the server" });
    return new Promise((resolve, reject) => {
      let off = null;
      const id = this.send(type, fields);
      this.pending.set(id, { resolve, reject: (e) => { off(); reject(e); } });
      off = this.on("matched", (m) => {
        off();
        if (this.pending.delete(id)) resolve(m);
      });
    });
  }

  playComputer() { return this.requestMatched("play-computer"); }
  invite(opts = {}) { return this.request("invite", opts); }
  acceptInvite(code) { return this.requestMatched("accept-invite", { code }); }
  challenge(opts = {}) { return this.request("challenge", opts); }
  cancelChallenge() { return this.request("cancel-challenge"); }
  acceptChallenge(challenge) { return this.requestMatched("accept-challenge", { challenge }); }
  /** makeRoom, joinRoom and leaveRoom answer the room ({room, link}); startRoom, the race it starts (matched). */
  makeRoom(opts = {}) { return this.request("room", opts); }
  joinRoom(code) { return this.request("join-room", { code }); }
  leaveRoom(code) { return this.request("leave-room", { code }); }
  /** joinMass joins a variant's mass race (section 7); leaveMass leaves it. */
  joinMass(variant) { return this.request("join-mass", { variant }); }
  leaveMass() { return this.request("leave-mass"); }
  startRoom(code) { return this.requestMatched("start-room", { code }); }
  /**
   * arenaJoin, arenaPause and arenaWatch answer the arena as it is now
   * ({arena: ArenaView}); the same message comes again, without an id,
   * whenever it changes. arenaUnwatch stops those.
   */
  arenaJoin(arena) { return this.request("arena-join", { arena }); }
  arenaPause(arena) { return this.request("arena-pause", { arena }); }
  arenaWatch(arena) { return this.request("arena-watch", { arena }); }
  arenaUnwatch() { return this.request("arena-unwatch"); }
  /** berserk halves the player's own time, in an arena race's countdown (answered "berserked"). */
  berserk() { return this.request("berserk"); }
  /** makeGhost turns seat's game of finished race into a ghost challenge: {ghost, link}. */
  makeGhost(race, seat) { return this.request("ghost", { race, seat }); }
  raceGhost(ghost) { return this.requestMatched("race-ghost", { ghost }); }
  playDaily(variant) { return this.requestMatched("play-daily", { variant }); }
  raceDailyLeader(variant) { return this.requestMatched("race-daily-leader", { variant }); }
  /** lobby asks for a fresh "lobby" message (it has no reply id). */
  lobby() { this.send("lobby"); }

  join(race, name) { return this.request("join", { race, name }); }
  resume(race, token) { return this.request("resume", { race, token }); }
  watch(race) { return this.request("watch", { race }); }
  move(move) { return this.request("move", { move }); }
  resign() { return this.request("resign"); }
  rematch() { return this.request("rematch"); }
  ping() { return this.request("ping"); }
}

/** The result's reasons in words. */
export function reasonText(reason) {
  return {
    "won-deal": "won the deal",
    "passed": "one player was out and the other passed their count",
    "more-cards": "both were stuck or out; more cards on the foundations",
    "equal-cards": "both finished with the same number of cards",
    "time": "time ran out; more cards on the foundations",
    "forfeit": "the other player left and did not come back in time",
    "no-first-move": "a player made no move in the first 30 seconds",
    "left": "a player left before the start",
    "expired": "nobody came to play within the hour",
    "shutdown": "the server shut down",
  }[reason] || reason;
}
