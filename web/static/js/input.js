// Moves on your own board by click (select a card, then a pile), drag and
// drop (pointer events, so touch works too) and keyboard. Keys:
//   T          select the turned card (again: the next one, if several);
//              in four-at-a-time with the four placed: turn the next four
//   1-4        with a turned card selected: put it on waste pile 1-4;
//              otherwise: select the top card of waste pile 1-4
//   Shift+1-4  put the selected card on foundation 1-4
//   F          put the selected (or the only turned) card on a foundation it fits
//   R          redeal (variants that have one)
//   Esc        clear the selection
//   Tab, Enter move between piles and act on the focused one, like a click

import { canTurn, fitsFoundation, markSelected } from "./board.js";
import { cardName, pileName } from "./cards.js";

const DRAG_SLOP = 6; // px a pointer must travel before a press becomes a drag

/** KEYS is the help text, one [keys, what] pair a line. */
export const KEYS = [
  ["T", "select the turned card (press again for the next, with four turned); with all four placed, turn the next four (or click the stock)"],
  ["1 – 4", "put the selected turned card on waste pile 1–4; otherwise select the top of waste pile 1–4"],
  ["Shift + 1 – 4", "put the selected card on foundation 1–4"],
  ["F", "put the selected card (or the turned card) on a foundation it fits"],
  ["R", "redeal (only in variants with redeals)"],
  ["Esc", "clear the selection"],
  ["Tab / Enter", "move between piles and cards; Enter or Space acts like a click"],
  ["?", "show or hide this help"],
];

/**
 * MoveInput turns clicks, drags and keys on boardEl into moves.
 * deps: view() the current View, send(move) sends "CARD>PILE", "R" or "T",
 * say(text) announces a hint, help() toggles the key help.
 */
export class MoveInput {
  constructor(boardEl, deps) {
    this.el = boardEl;
    this.deps = deps;
    this.selected = null; // card, e.g. "4H"
    this.drag = null;
    this.suppressClick = false;
    boardEl.addEventListener("click", (e) => this.onClick(e));
    boardEl.addEventListener("dblclick", (e) => this.onDblClick(e));
    boardEl.addEventListener("pointerdown", (e) => this.onPointerDown(e));
    boardEl.addEventListener("keydown", (e) => {
      if ((e.key === "Enter" || e.key === " ") && e.target.matches("[role=button]")) {
        e.preventDefault();
        e.target.click();
      }
    });
    this.onKey = (e) => this.key(e);
    document.addEventListener("keydown", this.onKey);
  }

  /** stop removes the document-wide key listener. */
  stop() { document.removeEventListener("keydown", this.onKey); }

  get live() { const v = this.deps.view(); return v && v.status === "playing" && this.el.classList.contains("interactive"); }

  select(card) {
    this.selected = card;
    markSelected(this.el, card);
    this.markTargets();
    if (card) this.deps.say(`${cardName(card)} selected`);
  }

  /** markTargets outlines the piles the selected card may go to. */
  markTargets() {
    for (const p of this.el.querySelectorAll(".pile.target")) p.classList.remove("target");
    const v = this.deps.view();
    if (!this.selected || !v) return;
    const rank = this.selected[0];
    v.foundations.forEach((f, i) => {
      if (f.wants && f.wants.toUpperCase() === rank) this.el.querySelector(`[data-pile=F${i + 1}]`).classList.add("target");
    });
    if (this.wasteToWaste()) {
      const turned = v.turned.includes(this.selected);
      for (const p of this.el.querySelectorAll(".pile.waste")) {
        const cards = p.querySelectorAll(".card").length;
        // A turned card goes anywhere; a waste card (strategy) onto another non-empty pile.
        if (turned || (cards > 0 && !p.querySelector(`[data-card="${this.selected}"]`))) p.classList.add("target");
      }
    }
  }

  /** sources are the cards that may move now: turned cards and waste tops. */
  sources() {
    const v = this.deps.view();
    if (!v) return [];
    const out = [...(v.turned || [])];
    for (const w of v.waste) if (w.cards && w.cards.length) out.push(w.cards[w.cards.length - 1]);
    return out;
  }

  /**
   * wasteToWaste reports whether the selected card may go to a waste pile:
   * a turned card always may; a waste card only in the strategy variant.
   */
  wasteToWaste() {
    const v = this.deps.view();
    return !!this.selected && (v.turned.includes(this.selected) || v.variant === "strategy");
  }

  /** moveTo sends the selected card to a pile. */
  moveTo(pile, how = {}) {
    const c = this.selected;
    if (!c) return;
    this.select(null);
    this.deps.send(`${c}>${pile}`, how);
  }

  toFoundation(card) {
    const v = this.deps.view();
    const f = fitsFoundation(v, card);
    if (!f) {
      this.deps.say(`${cardName(card)} fits on no foundation now`);
      return;
    }
    this.selected = card;
    this.moveTo(f);
  }

  onClick(e) {
    if (this.suppressClick) { this.suppressClick = false; return; }
    if (!this.live) return;
    const card = e.target.closest("[data-src]");
    const pile = e.target.closest("[data-pile]");
    const name = pile && pile.dataset.pile;
    if (name === "stock" && canTurn(this.deps.view())) {
      this.select(null);
      this.deps.send("T");
      return;
    }
    if (this.selected) {
      if (card && card.dataset.card === this.selected) { this.toFoundation(this.selected); return; }
      if (name && name[0] === "W" && !this.wasteToWaste()) {
        // A waste card cannot go to another waste pile here: pick the new one.
        const top = pile.querySelector("[data-src]");
        if (top) this.select(top.dataset.card); else this.select(null);
        return;
      }
      if (name && /^[FW][1-4]$/.test(name)) { this.moveTo(name); return; }
      if (card) { this.select(card.dataset.card); return; }
      this.select(null);
      return;
    }
    if (card) { this.select(card.dataset.card); return; }
    if (name && name[0] === "W") {
      const top = pile.querySelector("[data-src]");
      if (top) this.select(top.dataset.card); else this.deps.say(`${pileName(name)} is empty: select a turned card first`);
      return;
    }
    if (name && name[0] === "F") this.deps.say("Select a card first, then the foundation");
  }

  onDblClick(e) {
    if (!this.live) return;
    const card = e.target.closest("[data-src]");
    if (card) this.toFoundation(card.dataset.card);
  }

  onPointerDown(e) {
    if (!this.live || e.button > 0) return;
    const card = e.target.closest("[data-src]");
    if (!card) return;
    const d = { card: card.dataset.card, x: e.clientX, y: e.clientY, el: card, ghost: null, id: e.pointerId };
    this.drag = d;
    const move = (ev) => {
      if (ev.pointerId !== d.id) return;
      if (!d.ghost) {
        if (Math.hypot(ev.clientX - d.x, ev.clientY - d.y) < DRAG_SLOP) return;
        const r = card.getBoundingClientRect();
        d.ghost = card.cloneNode(true);
        d.ghost.classList.add("ghost");
        d.ghost.removeAttribute("role");
        d.ghost.setAttribute("aria-hidden", "true");
        d.ghost.style.width = r.width + "px";
        d.ghost.style.height = r.height + "px";
        d.dx = d.x - r.left; d.dy = d.y - r.top;
        document.body.append(d.ghost);
        card.classList.add("lifted");
      }
      d.ghost.style.transform = `translate(${ev.clientX - d.dx}px, ${ev.clientY - d.dy}px)`;
      ev.preventDefault();
    };
    const up = (ev) => {
      if (ev.pointerId !== d.id) return;
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      window.removeEventListener("pointercancel", up);
      this.drag = null;
      if (!d.ghost) return;
      d.ghost.remove();
      card.classList.remove("lifted");
      this.suppressClick = true;
      setTimeout(() => { this.suppressClick = false; }, 0);
      const under = document.elementFromPoint(ev.clientX, ev.clientY);
      const pile = under && under.closest(".board.interactive [data-pile]");
      const name = pile && pile.dataset.pile;
      if (ev.type === "pointerup" && name && /^[FW][1-4]$/.test(name) && this.el.contains(pile)) {
        this.selected = d.card;
        this.moveTo(name, { dragged: true });
      }
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
    window.addEventListener("pointercancel", up);
  }

  key(e) {
    if (e.target.closest && e.target.closest("input, textarea, select")) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "?") { this.deps.help(); e.preventDefault(); return; }
    if (!this.live) return;
    const v = this.deps.view();
    const digit = /^Digit[1-4]$/.test(e.code) ? Number(e.code.slice(5)) : null;
    if (digit) {
      e.preventDefault();
      if (e.shiftKey) {
        if (this.selected) this.moveTo("F" + digit); else this.deps.say("Select a card first (T for the turned card)");
      } else if (this.selected && this.wasteToWaste()) {
        this.moveTo("W" + digit);
      } else {
        const w = v.waste[digit - 1];
        if (w.cards && w.cards.length) this.select(w.cards[w.cards.length - 1]);
        else this.deps.say(`${pileName("W" + digit)} is empty`);
      }
      return;
    }
    switch (e.key.toLowerCase()) {
      case "t": {
        e.preventDefault();
        const t = v.turned || [];
        if (!t.length && canTurn(v)) { this.select(null); this.deps.send("T"); return; }
        if (!t.length) { this.deps.say("No turned card"); return; }
        const i = t.indexOf(this.selected);
        this.select(t[(i + 1) % t.length]);
        return;
      }
      case "f": {
        e.preventDefault();
        const c = this.selected || ((v.turned || []).length === 1 ? v.turned[0] : null);
        if (c) this.toFoundation(c); else this.deps.say("Select a card first");
        return;
      }
      case "r":
        e.preventDefault();
        this.select(null);
        this.deps.send("R");
        return;
      case "escape":
        this.select(null);
        return;
    }
  }
}
