// Short card movements (off under prefers-reduced-motion): a card is
// measured where it was, drawn where it goes, and slid from there.

const MOVE_MS = 160; // long enough to follow, short enough not to wait for

const reduced = () => window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

/** rectOf is where card c is drawn inside el now, or null. */
export function rectOf(el, c) {
  const n = el.querySelector(`.card[data-card="${c}"]`);
  return n && !n.classList.contains("lifted") ? n.getBoundingClientRect() : null;
}

/** slideFrom moves card c in el from rect from to where it is now. */
export function slideFrom(el, c, from) {
  if (!from || reduced()) return;
  const n = el.querySelector(`.card[data-card="${c}"]`);
  if (!n || !n.animate) return;
  const to = n.getBoundingClientRect();
  const dx = from.left - to.left, dy = from.top - to.top;
  if (Math.abs(dx) < 1 && Math.abs(dy) < 1) return;
  n.animate([{ transform: `translate(${dx}px, ${dy}px)`, zIndex: 5 }, { transform: "none", zIndex: 5 }],
    { duration: MOVE_MS, easing: "cubic-bezier(.2,.7,.3,1)" });
}
