// A small re-implementation of one Sir Tommy game (the README's "Deals" and
// the engine's rules), enough to replay accepted moves: the API's race
// record lists moves but no per-move views. Moves are trusted (the server
// accepted them); nothing here checks legality.

import { RANKS, SUITS, rankOf, rankValue } from "./cards.js";

const MASK = (1n << 64n) - 1n;
const TWO64 = 1n << 64n;

/** SplitMix64 is the deal generator the README specifies. */
export class SplitMix64 {
  constructor(n) { this.state = BigInt.asUintN(64, BigInt(n)); }
  next() {
    this.state = (this.state + 0x9E3779B97F4A7C15n) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK;
    return z ^ (z >> 31n);
  }
  below(k) {
    const kk = BigInt(k);
    const limit = TWO64 - (TWO64 % kk);
    for (;;) {
      const x = this.next();
      if (x < limit) return Number(x % kk);
    }
  }
  shuffle(a) {
    for (let i = a.length - 1; i >= 1; i--) {
      const j = this.below(i + 1);
      [a[i], a[j]] = [a[j], a[i]];
    }
  }
}

/** deal returns the 52 cards of deal n, top of the stock first, and the generator. */
export function deal(n) {
  const cards = [];
  for (const s of SUITS) for (const r of RANKS) cards.push(r + s);
  const rng = new SplitMix64(n);
  rng.shuffle(cards);
  return { cards, rng };
}

const ACES = ["A", "A", "A", "A"];
const ONES = [1, 1, 1, 1];
/** RULES mirror the engine's variants (engine/rules.go). */
export const RULES = {
  "classic": { turn: 1, start: ACES, step: ONES, length: 13 },
  "aces-out": { turn: 1, start: ACES, step: ONES, length: 13, preset: true },
  "four-at-a-time": { turn: 4, start: ACES, step: ONES, length: 13 },
  "strict": { turn: 1, start: ACES, step: ONES, length: 13 },
  "in-suit": { turn: 1, start: ACES, step: ONES, length: 13, redeals: 2, shuffleRedeal: true },
  "redeal": { turn: 1, start: ACES, step: ONES, length: 13, redeals: 1 },
  "strategy": { turn: 1, start: ACES, step: ONES, length: 13 },
  "numerica": { turn: 1, start: ACES, step: ONES, length: 13 },
  "calculation": { turn: 1, start: ["A", "2", "3", "4"], step: [1, 2, 3, 4], length: 13, preset: true },
  "puss-in-the-corner": { turn: 1, start: ACES, step: ONES, length: 12, preset: true, removed: ["K"] },
};

const rankAfter = (r, step) => RANKS[(rankValue(r) - 1 + step) % 13];

/** Game is one player's game, replayed move by move. */
export class Game {
  constructor(variant, dealNumber) {
    const rules = RULES[variant];
    if (!rules) throw new Error(`replay does not know the variant ${variant}`);
    this.variant = variant;
    this.rules = rules;
    const { cards, rng } = deal(dealNumber);
    this.rng = rng;
    const taken = new Set();
    this.found = [0, 1, 2, 3].map(() => ({ top: null, count: 0 }));
    this.score = 0;
    if (rules.preset) {
      for (let f = 0; f < 4; f++) {
        const i = cards.findIndex((c, k) => !taken.has(k) && rankOf(c) === rules.start[f]);
        if (i >= 0) { taken.add(i); this.found[f] = { top: cards[i], count: 1 }; this.score++; }
      }
    }
    const removed = rules.removed || [];
    this.stock = cards.filter((c, k) => !taken.has(k) && !removed.includes(rankOf(c)));
    this.deck = 52 - 4 * removed.length;
    this.next = 0;
    this.hand = [];
    this.waste = [[], [], [], []];
    this.redeals = 0;
    this.moves = 0;
    this.status = "playing";
    this.turn();
  }

  turn() {
    if (this.hand.length || this.next >= this.stock.length) return;
    const k = Math.min(this.rules.turn, this.stock.length - this.next);
    this.hand = this.stock.slice(this.next, this.next + k);
    this.next += k;
  }

  /** canTurn: the move "T" turns the next cards (four-at-a-time, hand placed). */
  canTurn() {
    return this.rules.turn > 1 && !this.hand.length && this.next < this.stock.length && this.status === "playing";
  }

  /** apply plays an accepted move: "4H>W1", "R", "T" or "resign". */
  apply(move) {
    const m = move.toUpperCase();
    if (m === "RESIGN") { this.status = "resigned"; return; }
    if (m === "T") { this.moves++; this.turn(); return; }
    if (m !== "R" && this.canTurn() && !this.available(m.split(">")[0])) {
      // A record from before the move T, which turned the next four as the
      // last was placed: turn them where it places one (engine Replay).
      this.apply("T");
    }
    this.moves++;
    if (m === "R") {
      this.stock = this.waste.flat();
      this.waste = [[], [], [], []];
      this.next = 0;
      if (this.rules.shuffleRedeal) this.rng.shuffle(this.stock);
      this.redeals++;
      this.turn();
      return;
    }
    const [card, to] = m.split(">");
    const i = this.hand.indexOf(card);
    if (i >= 0) this.hand.splice(i, 1);
    else {
      const w = this.waste.find((p) => p.length && p[p.length - 1] === card);
      if (!w) throw new Error(`replay: ${card} is not available for ${m}`);
      w.pop();
    }
    const n = Number(to[1]) - 1;
    if (to[0] === "F") {
      this.found[n] = { top: card, count: this.found[n].count + 1 };
      this.score++;
    } else {
      this.waste[n].push(card);
    }
    if (this.rules.turn === 1) this.turn(); // several at a time: the move "T"
    if (this.score === this.deck) this.status = "won";
  }

  /** available: card is turned or on top of a waste pile. */
  available(card) {
    return this.hand.includes(card) || this.waste.some((p) => p.length && p[p.length - 1] === card);
  }

  /** view is the game as a View (PROTOCOL.md section 3), every card shown. */
  view() {
    const r = this.rules;
    return {
      variant: this.variant,
      stock: this.stock.length - this.next,
      turned: [...this.hand],
      foundations: this.found.map((f, i) => ({
        top: f.top || undefined,
        count: f.count,
        step: r.step[i],
        wants: f.count === 0 ? r.start[i] : f.count < r.length ? rankAfter(rankOf(f.top), r.step[i]) : undefined,
      })),
      waste: this.waste.map((p) => ({ cards: [...p], count: p.length })),
      redealsLeft: (r.redeals || 0) - this.redeals,
      wasteLocked: r.turn > 1 && this.hand.length > 0 ? true : undefined,
      status: this.status,
      score: this.score,
      target: this.deck,
      moves: this.moves,
    };
  }
}

/**
 * timeline replays a finished race's moves: for each seat, the score after
 * each move with its time, starting from the score at 0 ms.
 */
export function timeline(variant, dealNumber, moves, seats = 2) {
  const games = Array.from({ length: seats }, () => new Game(variant, dealNumber));
  const series = games.map((g) => [{ atMs: 0, score: g.score }]);
  for (const m of moves) {
    games[m.seat].apply(m.move);
    series[m.seat].push({ atMs: m.atMs, score: games[m.seat].score });
  }
  return series;
}
