// Fair play the player can see (PROTOCOL.md section 6): the commitment a
// page received when the race began is kept (sessionStorage, by race id),
// and so is where each card it was shown sat in the stock; at the end the
// revealed deal and salt are checked against that commitment, not against
// the copy in the after-race record, and the revealed deal is dealt again
// to check that every card shown came in its order.

import { sha256Hex } from "./sha256.js";
import { Game, RULES } from "./game.js";
import { isHidden } from "./cards.js";

const KEY = "sirtommy.fair.";

function load(race) {
  try { return JSON.parse(sessionStorage.getItem(KEY + race)) || null; } catch { return null; }
}

function save(race, rec) {
  try { sessionStorage.setItem(KEY + race, JSON.stringify(rec)); } catch { /* storage full or off: no check */ }
}

/**
 * noteStart keeps the commitment (or the named deal) of a race the first
 * time a page sees it; later copies never replace it.
 */
export function noteStart(race, { commitment, deal, variant }) {
  const rec = load(race);
  if (rec && (rec.commitment || rec.deal)) return rec;
  const fresh = { commitment: commitment || "", deal: deal || "", variant, seenAt: new Date().toISOString(), shown: {} };
  save(race, fresh);
  return fresh;
}

/** startRecord is what a page kept of race's start, or null. */
export function startRecord(race) { return load(race); }

/**
 * noteShown records the turned cards of a view (seat key: "0", "1"):
 * which cards lay directly above the last `stock` cards of the stock.
 * Only the first pass through the stock is kept (a redeal's order
 * depends on the play).
 */
export function noteShown(race, seat, view) {
  if (!view || !view.turned || !view.turned.length) return;
  const rules = RULES[view.variant];
  if (!rules || (rules.redeals || 0) !== (view.redealsLeft || 0)) return;
  const rec = load(race);
  if (!rec) return;
  const cards = view.turned.filter((c) => !isHidden(c));
  if (!cards.length) return;
  const list = (rec.shown[seat] = rec.shown[seat] || []);
  const last = list[list.length - 1];
  if (last && last.stock === view.stock && cards.every((c) => last.cards.includes(c))) return;
  list.push({ stock: view.stock, cards });
  save(race, rec);
}

/**
 * verify checks a finished race's revealed deal against what the page kept:
 * {kept, commitmentOk, recordAgrees, got, shownOk, shownCount, bad}. kept
 * is false when this browser did not see the race begin.
 */
export async function verify(raceId, variant, result) {
  const rec = load(raceId);
  const out = { kept: !!rec && !!(rec.commitment || rec.deal), start: rec, shownCount: 0, shownOk: true, bad: null };
  if (result.commitment) {
    // A graded race's commitment covers its grade too (PROTOCOL.md section 6).
    out.got = await sha256Hex(result.grade ? `${result.deal}:${result.grade}:${result.salt}` : `${result.deal}:${result.salt}`);
    out.recordAgrees = out.got === result.commitment;
    out.commitmentOk = out.kept ? out.got === rec.commitment : null;
  } else {
    out.commitmentOk = out.kept ? rec.deal === result.deal : null;
  }
  if (rec && rec.shown) {
    let stock;
    try {
      stock = new Game(variant, result.deal).stock;
    } catch {
      return out;
    }
    const total = stock.length;
    const turn = (RULES[variant] || {}).turn || 1;
    for (const [seat, list] of Object.entries(rec.shown)) {
      for (const b of list) {
        // One at a time, the turned card is the one just above what is left
        // of the stock. With several turned at once, what is still in hand
        // may come from earlier turns: each must at least be one dealt
        // already, never one still in the stock.
        const from = turn === 1 ? total - b.stock - b.cards.length : 0;
        const hand = stock.slice(Math.max(0, from), total - b.stock);
        for (const c of b.cards) {
          out.shownCount++;
          if (!hand.includes(c) && out.shownOk) {
            out.shownOk = false;
            out.bad = { seat: Number(seat), card: c, stock: b.stock };
          }
        }
      }
    }
  }
  return out;
}
