// The one module that speaks the server's protocol (web/PROTOCOL.md,
// version 1): the HTTP API and the websocket. Pages never build messages
// themselves; when the lobby's endpoints land (quick play, challenges, live
// races, presence, leaderboard) their calls belong here too.

export const VERSION = 1;

/** The variants a race may use (README "Variants"); the API has no list yet. */
export const VARIANTS = [
  "classic", "aces-out", "calculation", "four-at-a-time", "in-suit",
  "numerica", "puss-in-the-corner", "redeal", "strategy", "strict",
];

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
    "passed": "the other player was out and this one got more cards",
    "more-cards": "both were stuck or out; more cards on the foundations",
    "equal-cards": "both finished with the same number of cards",
    "time": "time ran out; more cards on the foundations",
    "forfeit": "the other player left and did not come back in time",
    "no-first-move": "a player made no move in the first 30 seconds",
    "left": "a player left before the start",
    "shutdown": "the server shut down",
  }[reason] || reason;
}
