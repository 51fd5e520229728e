// Widgets shared by the race and spectate pages: progress bars, notices
// and the spectator count.

import { h } from "./ui.js";

/** progressEl is an accessible bar of cards on the foundations. */
export function progressEl(label) {
  return h("div", { class: "progress", role: "progressbar", "aria-label": label, "aria-valuemin": "0", "aria-valuemax": "52", "aria-valuenow": "0" },
    h("div", { class: "bar" }), h("span", { class: "num", "aria-hidden": "true" }, "0"));
}

/** setProgress shows score of target. */
export function setProgress(el, score, target) {
  el.setAttribute("aria-valuenow", String(score));
  el.setAttribute("aria-valuemax", String(target));
  el.querySelector(".bar").style.width = `${(100 * score) / Math.max(1, target)}%`;
  el.querySelector(".num").textContent = `${score}/${target}`;
}

/** Notices are keyed messages above the boards; a key's new text replaces its old one. */
export class Notices {
  constructor(el) {
    this.el = el;
    this.el.setAttribute("role", "status");
    this.el.setAttribute("aria-live", "polite");
    this.timers = new Map();
  }

  show(key, text, kind = "info", ttlMs = 0) {
    let n = this.el.querySelector(`[data-key="${key}"]`);
    if (!n) {
      n = h("p", { class: "notice", "data-key": key });
      this.el.append(n);
    }
    n.className = `notice ${kind}`;
    if (n.textContent !== text) n.textContent = text;
    clearTimeout(this.timers.get(key));
    if (ttlMs) this.timers.set(key, setTimeout(() => this.clear(key), ttlMs));
  }

  clear(key) {
    const n = this.el.querySelector(`[data-key="${key}"]`);
    if (n) n.remove();
  }
}

/** showWatchers shows how many spectators watch (nothing when none do). */
export function showWatchers(el, n) {
  n = n || 0;
  el.dataset.count = String(n);
  el.textContent = n === 0 ? "" : n === 1 ? "1 watching" : `${n} watching`;
}

/**
 * playerLabel names a seat's player for a title: "ann (1512)",
 * "computer (hard)", "Player 2".
 */
export function playerLabel(p, i) {
  if (!p) return `Player ${i + 1}`;
  const name = p.name || (p.taken ? `Player ${i + 1}` : "…");
  if (p.computer) return p.level ? `${name} (${p.level})` : name;
  if (p.ghost) return `${name} (recording)`;
  return p.rating ? `${name} (${Math.round(p.rating)})` : name;
}

/**
 * raceTitle is "ann (1512) vs bob (1498)" for a state's players; a race of
 * more than two is no duel: "Race of 4: ann, bob, carol, dan".
 */
export function raceTitle(players) {
  if (isMany(players)) return `Race of ${players.length}: ${players.map((p, i) => playerLabel(p, i)).join(", ")}`;
  return `${playerLabel(players[0], 0)} vs ${playerLabel(players[1], 1)}`;
}

/** isMany reports whether a race has more than two seats (PROTOCOL.md section 4). */
export function isMany(players) {
  return !!players && players.length > 2;
}

/** joinedText says how many seats of a race are taken: "3 of 4 joined". */
export function joinedText(players) {
  return `${players.filter((p) => p.taken).length} of ${players.length} joined`;
}

/**
 * commitmentEl shows a race's sealed deal: the commitment's first digits,
 * the whole on a click (or the deal itself when it was named).
 */
export function commitmentEl() {
  const full = h("code", { class: "full", hidden: true });
  const short = h("code", { class: "short" });
  const btn = h("button", {
    type: "button", class: "commit", "data-testid": "commitment", "aria-expanded": "false",
    title: "SHA-256 of the deal number and a secret salt, fixed before the race began; both are revealed at the end",
    onclick: () => {
      const open = full.hidden;
      full.hidden = !open;
      short.hidden = open;
      btn.setAttribute("aria-expanded", String(open));
    },
  }, h("span", { class: "what" }, "Deal sealed "), short, full);
  const el = h("span", { class: "commitment", hidden: true }, btn);
  el.set = (commitment, deal) => {
    if (commitment) {
      el.hidden = false;
      btn.dataset.value = commitment;
      short.textContent = `${commitment.slice(0, 8)}…`;
      full.textContent = commitment;
      btn.querySelector(".what").textContent = "Deal sealed ";
      btn.disabled = false;
    } else if (deal) {
      el.hidden = false;
      btn.dataset.value = "";
      short.textContent = deal;
      full.textContent = deal;
      btn.querySelector(".what").textContent = "Deal ";
    }
  };
  return el;
}
