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
