// Drawing one player's board from a View (PROTOCOL.md section 3): stock,
// turned cards, four foundations and four waste piles fanned downwards.

import { h } from "./ui.js";
import { cardEl, backEl, cardName, rankName, pileName, isHidden } from "./cards.js";

const FOUNDATIONS = ["F1", "F2", "F3", "F4"];
const WASTES = ["W1", "W2", "W3", "W4"];

/**
 * renderBoard draws view into el. opts: interactive (own board: cards and
 * piles take focus), selected (the selected card), who ("Your", "ann's").
 */
export function renderBoard(el, view, opts = {}) {
  const had = !!document.activeElement && el.contains(document.activeElement);
  const focused = had ? focusKey(document.activeElement) : null;
  const live = !!opts.interactive && view.status === "playing";
  el.classList.add("board");
  el.classList.toggle("interactive", live);
  el.dataset.status = view.status;
  // Two columns: the stock with its turned card(s) below it on the left;
  // the foundations and, under them, the waste piles on the right. One row
  // of cards fewer than stacking them all saves the height a long waste
  // pile needs.
  el.replaceChildren(
    h("div", { class: "side" }, stockEl(view, live), turnedEl(view, opts, live)),
    h("div", { class: "main" },
      h("div", { class: "row piles foundations", role: "group", "aria-label": "Foundations" },
        FOUNDATIONS.map((p, i) => foundationEl(p, view.foundations[i], live))),
      h("div", { class: "row piles wastes", role: "group", "aria-label": "Waste piles" },
        WASTES.map((p, i) => wasteEl(p, view.waste[i], opts, live)))),
  );
  if (opts.fit) fitBoard(el, opts.fit());
  if (had) {
    // The focus stays on the board after a move: on what had it, or when
    // that card has left its place, on the next card to play (the turned
    // one), on the first pile that takes focus, or on the board itself.
    const takes = (n) => (n && n.matches("[tabindex]") ? n : null); // a pile may no longer take focus
    const again = takes(focused && el.querySelector(focused)) || el.querySelector(".turned [tabindex]") ||
      el.querySelector("[tabindex='0']") || el;
    if (again === el && !el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
    again.focus({ preventScroll: true });
  }
}

function focusKey(node) {
  const c = node.closest("[data-card][data-src]");
  if (c) return `[data-card="${c.dataset.card}"][data-src]`;
  const p = node.closest("[data-pile]");
  return p ? `[data-pile="${p.dataset.pile}"]` : null;
}

/**
 * canTurn reports whether the move "T" turns the next cards: in
 * four-at-a-time once every turned card is placed, while the stock is not
 * empty (one card at a time, the next is turned by itself).
 */
export function canTurn(view) {
  return !!view && view.status === "playing" && view.stock > 0 && !(view.turned || []).length;
}

function stockEl(view, live) {
  const turn = live && canTurn(view);
  const label = `Stock, ${view.stock} card${view.stock === 1 ? "" : "s"} face down` +
    (view.redealsLeft ? `, ${view.redealsLeft} redeal${view.redealsLeft === 1 ? "" : "s"} left` : "") +
    (turn ? ": turn the next four (T)" : "");
  const attrs = { class: "pile stock", "data-pile": "stock", role: "group", "aria-label": label };
  if (turn) Object.assign(attrs, { class: "pile stock can-turn", role: "button", tabindex: "0", title: "Turn the next four (T)" });
  return h("div", attrs,
    view.stock > 0 ? backEl("") : h("div", { class: "slot", "aria-hidden": "true" }),
    h("span", { class: "count", "aria-hidden": "true" }, String(view.stock)),
    turn ? h("span", { class: "turn-hint", "aria-hidden": "true" }, "turn the next four") : null,
  );
}

function turnedEl(view, opts, live) {
  const cards = view.turned || [];
  return h("div", {
    class: "turned", "data-pile": "turned", role: "group",
    "aria-label": cards.length ? `Turned card${cards.length > 1 ? "s" : ""}` : "No turned card",
  },
    cards.length ? cards.map((c) => {
      const el = cardEl(c, "turned from the stock", isHidden(c) ? {} : sourceAttrs(c, "turned", opts, live));
      if (opts.selected === c) el.classList.add("selected");
      return el;
    })
      : h("div", { class: "slot", "aria-hidden": "true" }),
  );
}

function sourceAttrs(c, from, opts, live) {
  const sel = opts.selected === c;
  const attrs = { "data-src": from };
  if (live) {
    attrs.tabindex = "0";
    attrs.role = "button";
    attrs["aria-pressed"] = sel ? "true" : "false";
  }
  return attrs;
}

function foundationEl(p, f, live) {
  // The label starts with the name drawn under the pile (F1), so that a
  // player using speech can say what they see.
  let label = `${p}, ${pileName(p)}: ` + (f.count ? `${cardName(f.top)}, ${f.count} card${f.count === 1 ? "" : "s"}` : "empty");
  label += f.wants ? `, takes ${rankName(f.wants)}` : ", complete";
  if (f.step && f.step !== 1) label += `, builds by ${f.step}`;
  return h("div", {
    class: "pile foundation", "data-pile": p, "aria-label": label,
    role: live ? "button" : "group", tabindex: live ? "0" : null,
  },
    f.count ? cardEl(f.top, "on " + pileName(p)) : h("div", { class: "slot", "aria-hidden": "true" }, f.wants ? (f.wants === "T" ? "10" : f.wants) : ""),
    h("span", { class: "pname", "aria-hidden": "true", "data-name": p }),
  );
}

function wasteEl(p, w, opts, live) {
  const cards = w.cards || [];
  const hidden = w.count - cards.length;
  const top = cards[cards.length - 1];
  let label = `${p}, ${pileName(p)}: ` + (w.count ? `${w.count} card${w.count === 1 ? "" : "s"}, top ${cardName(top)}` : "empty");
  if (hidden > 0) label += `, ${hidden} hidden below`;
  const pile = h("div", {
    class: "pile waste", "data-pile": p, "aria-label": label,
    role: live ? "button" : "group", tabindex: live ? "0" : null,
  },
    cards.length ? null : h("div", { class: "slot", "aria-hidden": "true" }),
    hidden > 0 ? h("span", { class: "hidden-count", "aria-hidden": "true" }, `+${hidden} hidden`) : null,
    cards.map((c, i) => {
      const isTop = i === cards.length - 1;
      const el = cardEl(c, "on " + pileName(p), isTop && !isHidden(c) ? { "data-src": p } : {});
      el.style.setProperty("--i", String(i));
      if (isTop && opts.selected === c) el.classList.add("selected");
      return el;
    }),
    h("span", { class: "pname", "aria-hidden": "true", "data-name": p }),
  );
  pile.style.setProperty("--n", String(Math.max(cards.length, 1)));
  return pile;
}

const GAP = 8; // px between piles (the stylesheet's --gap)
const LABEL = 14; // px under a row of piles for its names (F1, W1)
const MAX_CW = 104; // px: the widest card
const MIN_CW = 34; // px: the narrowest card

/**
 * fitBoard sizes el's cards so that the whole board fits its width and
 * availH pixels of height (Infinity: width alone): the largest card for
 * which the longest waste pile still fans with every card's rank in
 * sight. The fan closes up first (from a third of a card's width to a
 * fifth, never under 13 px); only then do the cards shrink.
 */
export function fitBoard(el, availH = Infinity) {
  const W = el.clientWidth;
  if (!W) return;
  const n = Math.max(1, ...[...el.querySelectorAll(".pile.waste")].map((p) => p.querySelectorAll(".card").length));
  const t = Math.max(1, el.querySelectorAll(".turned .card").length);
  const widest = Math.floor((W - 5 * GAP - 6) / 5);
  let cw = Math.max(MIN_CW, Math.min(MAX_CW, widest));
  let fan = cw * 0.34;
  for (; cw >= MIN_CW; cw -= 2) {
    const ch = cw * 1.4;
    const ideal = cw * 0.34, least = Math.max(13, cw * 0.2);
    const rest = availH - (2 * ch + 2 * LABEL + 4);
    fan = n > 1 ? Math.min(ideal, rest / (n - 1)) : ideal;
    const side = 2 * ch + GAP + (t - 1) * cw * 0.34;
    if (rest >= 0 && fan >= least && side <= availH) break;
  }
  if (cw < MIN_CW) { cw = MIN_CW; fan = 13; }
  el.style.setProperty("--cw", `${cw}px`);
  el.style.setProperty("--fan", `${Math.max(13, Math.floor(fan))}px`);
  el.dataset.fitW = String(W); // what it was sized for (tests wait on it)
}

/** hasHidden reports whether a view shows any face-down placeholder. */
export function hasHidden(view) {
  return !!view && ((view.turned || []).some(isHidden) ||
    view.waste.some((w) => (w.cards || []).some(isHidden)) ||
    view.foundations.some((f) => isHidden(f.top)));
}

/** markSelected highlights the selected card without redrawing. */
export function markSelected(el, card) {
  for (const c of el.querySelectorAll(".card.selected")) c.classList.remove("selected");
  for (const c of el.querySelectorAll("[data-src][aria-pressed]")) c.setAttribute("aria-pressed", "false");
  if (!card) return;
  const c = el.querySelector(`[data-src][data-card="${card}"]`);
  if (c) {
    c.classList.add("selected");
    if (c.hasAttribute("aria-pressed")) c.setAttribute("aria-pressed", "true");
  }
}

/** fitsFoundation finds a foundation that takes card c in view, or null. */
export function fitsFoundation(view, c) {
  const rank = c[0].toUpperCase();
  const i = view.foundations.findIndex((f) => f.wants && f.wants.toUpperCase() === rank);
  return i < 0 ? null : FOUNDATIONS[i];
}

/** statusText says a game's status in words. */
export function statusText(status) {
  return { playing: "playing", won: "won the deal", stuck: "stuck", resigned: "resigned" }[status] || status || "";
}

/** countsLine is one line about a board for the opponent and spectators. */
export function countsLine(c, target = 52) {
  return `${c.score}/${target} on foundations · ${c.stock} in stock · ${c.moves} move${c.moves === 1 ? "" : "s"} · ${statusText(c.status)}`;
}
