// Your own move shows at once: applyLocal plays a move on a copy of the
// View as far as the client can know its outcome (the next card turned is
// the server's to tell). It returns null for a move it cannot vouch for;
// the page then waits for the server, which has the last word either way.

import { RANKS, rankOf } from "./cards.js";

const rankAfter = (r, step) => RANKS[(RANKS.indexOf(r) + step) % 13];

/** applyLocal is view after move ("4H>W1"), or null. */
export function applyLocal(view, move) {
  if (!view || view.status !== "playing") return null;
  const [card, to] = move.toUpperCase().split(">");
  if (!to || !/^[FW][1-4]$/.test(to)) return null;
  const v = structuredClone(view);
  const n = Number(to[1]) - 1;
  const fromTurned = v.turned.indexOf(card);
  const fromWaste = v.waste.findIndex((w) => w.cards.length && w.cards[w.cards.length - 1] === card && w.count === w.cards.length);
  if (fromTurned < 0 && fromWaste < 0) return null;
  // With several cards turned at once, waste cards wait until the turn is
  // placed (the engine's wasteLocked): the server's to judge.
  if (fromTurned < 0 && v.variant === "four-at-a-time") return null;
  if (to[0] === "W") {
    // A turned card goes on any waste pile; waste to waste is the
    // strategy variant's alone, and the server's to judge.
    if (fromTurned < 0) return null;
    if (v.variant === "strict" && v.waste[n].count !== v.waste[n].cards.length) return null;
  } else {
    const f = v.foundations[n];
    if (!f.wants || f.wants.toUpperCase() !== rankOf(card)) return null;
  }
  if (fromTurned >= 0) v.turned.splice(fromTurned, 1);
  else { v.waste[fromWaste].cards.pop(); v.waste[fromWaste].count--; }
  if (to[0] === "W") {
    v.waste[n].cards.push(card);
    v.waste[n].count++;
  } else {
    const f = v.foundations[n];
    const length = (v.target || 52) / 4;
    f.top = card;
    f.count++;
    f.wants = f.count < length ? rankAfter(rankOf(card), f.step || 1) : undefined;
    v.score++;
  }
  v.moves++;
  v.pendingCard = card;
  return v;
}
