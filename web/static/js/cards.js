// Cards: notation, spoken names, and drawing (CSS boxes with SVG suits, so
// they stay crisp at any size).

import { h, s } from "./ui.js";

export const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
export const SUITS = ["S", "H", "D", "C"];
const RANK_NAMES = { A: "Ace", T: "10", J: "Jack", Q: "Queen", K: "King" };
const RANK_SHOWN = { T: "10" };
const SUIT_NAMES = { S: "Spades", H: "Hearts", D: "Diamonds", C: "Clubs" };

/**
 * HIDDEN is how a spectator's view shows a card that not every racer still
 * playing has turned yet: a card back in its place (PROTOCOL.md section 6).
 */
export const HIDDEN = "??";

/** isHidden reports whether c is a face-down placeholder. */
export const isHidden = (c) => c === HIDDEN;

/** rankOf and suitOf split a card like "TD". */
export const rankOf = (c) => c[0].toUpperCase();
export const suitOf = (c) => c[1].toUpperCase();
/** rankValue is 1 for an Ace up to 13 for a King. */
export const rankValue = (r) => RANKS.indexOf(r.toUpperCase()) + 1;

/** cardName is what a screen reader says: "Queen of Hearts". */
export function cardName(c) {
  if (c === HIDDEN) return "a face-down card";
  const r = rankOf(c);
  return `${RANK_NAMES[r] || r} of ${SUIT_NAMES[suitOf(c)]}`;
}

/** rankName names a rank alone: "Queen", "10". */
export const rankName = (r) => RANK_NAMES[r] || r;

/** pileName is a pile's spoken name: "foundation 2", "waste pile 3". */
export function pileName(p) {
  return (p[0] === "F" ? "foundation " : "waste pile ") + p.slice(1);
}

/** suitIcon draws a suit symbol in SVG (no fonts needed). */
export function suitIcon(suit, cls = "suit") {
  const attrs = { class: cls, viewBox: "0 0 100 100", "aria-hidden": "true", focusable: "false" };
  switch (suit) {
    case "H":
      return s("svg", attrs, s("path", { d: "M50 92C22 68 2 50 2 29 2 13 14 3 28 3c10 0 18 6 22 14 4-8 12-14 22-14 14 0 26 10 26 26 0 21-20 39-48 63z" }));
    case "D":
      return s("svg", attrs, s("path", { d: "M50 2 88 50 50 98 12 50z" }));
    case "S":
      return s("svg", attrs, s("path", { d: "M50 3C22 30 4 46 4 64c0 14 11 24 24 24 9 0 15-4 19-10L41 98h18l-6-20c4 6 10 10 19 10 13 0 24-10 24-24C96 46 78 30 50 3z" }));
    default:
      return s("svg", attrs,
        s("circle", { cx: 50, cy: 27, r: 22 }), s("circle", { cx: 25, cy: 60, r: 22 }),
        s("circle", { cx: 75, cy: 60, r: 22 }), s("path", { d: "M45 50h10l6 48H39z" }));
  }
}

/**
 * cardEl draws a face-up card. where is the spoken place, e.g. "on waste
 * pile 2"; the card's accessible name is "Queen of Hearts on waste pile 2".
 */
export function cardEl(c, where = "", extra = {}) {
  // A card is a picture: its rank is drawn by the stylesheet (.rank::before)
  // like its suit, and said by its label; as text it would run into the
  // name of the pile that holds it.
  if (c === HIDDEN) return hiddenEl(where, extra);
  const r = rankOf(c), su = suitOf(c);
  const red = su === "H" || su === "D";
  const shown = RANK_SHOWN[r] || r;
  return h("div", {
    class: `card ${red ? "red" : "black"}`,
    "data-card": c.toUpperCase(),
    role: "img",
    "aria-label": where ? `${cardName(c)} ${where}` : cardName(c),
    ...extra,
  },
    h("span", { class: "corner", "aria-hidden": "true" }, h("span", { class: "rank", "data-rank": shown }), suitIcon(su, "suit small")),
    h("span", { class: "pip", "aria-hidden": "true" }, suitIcon(su, "suit big")),
  );
}

/** backEl draws a face-down card (the stock); without a label it is only
 * decoration, its pile's own label saying what it is. */
export function backEl(label = "") {
  return label ? h("div", { class: "card back", role: "img", "aria-label": label }) : h("div", { class: "card back", "aria-hidden": "true" });
}

/** hiddenEl is a spectator's face-down card, in the place of a card not yet shown. */
function hiddenEl(where, extra = {}) {
  return h("div", {
    class: "card back hidden-card", "data-card": HIDDEN, "data-hidden": "", role: "img",
    "aria-label": where ? `A face-down card ${where}` : "A face-down card", ...extra,
  });
}

const SUIT_SYMBOLS = { S: "♠", H: "♥", D: "♦", C: "♣" };

/** cardText writes a card for reading: "10♥", "J♣". */
export function cardText(c) {
  if (c === HIDDEN) return "a face-down card";
  const r = rankOf(c);
  return (RANK_SHOWN[r] || r) + SUIT_SYMBOLS[suitOf(c)];
}

/** pileText names a pile in words: "foundation 2", "waste pile 3". */
export const pileText = (p) => pileName(p);

/**
 * moveText writes an accepted move in words: "7♣ to waste pile 1",
 * "A♠ to foundation 2", "redeal", "resigned".
 */
export function moveText(m) {
  const u = m.toUpperCase();
  if (u === "RESIGN") return "resigned";
  if (u === "R") return "redeal";
  if (u === "T") return "turned the next four";
  const [card, to] = u.split(">");
  if (!to) return m;
  return `${cardText(card)} to ${pileName(to)}`;
}
