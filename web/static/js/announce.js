// Spoken updates for a player using a screen reader: each of one's own
// moves in words as the server accepts it, with the card it turns up, and
// the opponent's progress at a calm rate (a change of their status at
// once). Two live regions, drawn nowhere: the board says the rest.

import { h } from "./ui.js";
import { cardName, pileName, isHidden } from "./cards.js";

/** CALM_MS is the least time between two spoken updates of the opponent's progress. */
export const CALM_MS = 15000;

// OPPONENT says the opponent's status in words.
const OPPONENT = {
  playing: (n) => `${n} is playing again`,
  won: (n) => `${n} won the deal`,
  stuck: (n) => `${n} is stuck`,
  resigned: (n) => `${n} resigned`,
  away: (n) => `${n} is away`,
};

/** moveWords says an accepted move: "Jack of Spades to waste pile 2". */
export function moveWords(m) {
  const u = m.toUpperCase();
  if (u === "RESIGN") return "You resigned";
  if (u === "R") return "Redealt";
  if (u === "T") return "Turned the next four";
  const [card, to] = u.split(">");
  return to ? `${cardName(card)} to ${pileName(to)}` : m;
}

/** Announcer speaks through two polite live regions (els: own, opp). */
export class Announcer {
  constructor() {
    this.own = h("p", { class: "visually-hidden", role: "status", "aria-live": "polite", "data-testid": "announce" });
    this.opp = h("p", { class: "visually-hidden", role: "status", "aria-live": "polite", "data-testid": "announce-opp" });
    this.spoken = { progress: -1, status: "" }; // what was last said of the opponent
    this.lastCalm = 0;
    this.timer = null;
    this.due = ""; // the calm update waiting for its turn, and the count it says
    this.dueProgress = -1;
    this.racers = new Map(); // seat → what was last said of them, in a race of more than two
  }

  /** els are the live regions, to place in the page. */
  get els() { return [this.own, this.opp]; }

  /**
   * moved says one's own accepted move m, then what it leaves to play: the
   * card turned up, or the game's end.
   */
  moved(m, view) {
    let text = moveWords(m);
    const next = (view.turned || []).filter((c) => !isHidden(c));
    if (view.status === "won") text += ". You won the deal";
    else if (view.status === "stuck") text += `. You are stuck, with ${view.score} cards up`;
    else if (view.status === "playing" && next.length) text += `. Turned: ${next.map(cardName).join(", ")}`;
    else if (view.status === "playing" && view.stock === 0) text += ". The stock is empty";
    this.own.textContent = text + ".";
  }

  /**
   * opponent says where the opponent (name) stands: a change of status at
   * once, the count of their cards up at most every CALM_MS.
   */
  opponent(name, c, target) {
    const status = c.connected === false ? "away" : c.status;
    const first = this.spoken.status === "";
    if (status !== this.spoken.status) {
      this.spoken.status = status;
      if (!first || status !== "playing") { // a game just begun says nothing
        this.spoken.progress = c.score;
        this.say(`${(OPPONENT[status] || OPPONENT.playing)(name)}, ${c.score} of ${target} cards up.`);
        return;
      }
      this.spoken.progress = c.score;
    }
    if (c.score === this.spoken.progress) return;
    this.calm(`${name}: ${c.score} of ${target} cards up.`, c.score);
  }

  /**
   * racer says where one racer of many (a race of more than two, seat)
   * stands: each racer's change of status at once; progress calmly, at
   * most every CALM_MS for all of them together (the latest waiting
   * replaces the one before, so a busy race is not read out move by move).
   */
  racer(seat, name, c, target) {
    const status = c.connected === false ? "away" : c.status;
    const was = this.racers.get(seat) || { status: "playing", progress: 0 }; // a game just begun says nothing
    this.racers.set(seat, { status, progress: c.score });
    if (status !== was.status) {
      this.say(`${(OPPONENT[status] || OPPONENT.playing)(name)}, ${c.score} of ${target} cards up.`);
      return;
    }
    if (c.score !== was.progress) this.calm(`${name}: ${c.score} of ${target} cards up.`, c.score);
  }

  /** calm says text (about progress) when CALM_MS have passed since the last update. */
  calm(text, progress) {
    this.due = text;
    this.dueProgress = progress;
    const wait = this.lastCalm + CALM_MS - Date.now();
    if (wait <= 0) this.flush();
    else if (!this.timer) this.timer = setTimeout(() => this.flush(), wait);
  }

  flush() {
    this.timer = null;
    if (!this.due) return;
    this.spoken.progress = this.dueProgress;
    this.say(this.due);
  }

  say(text) {
    this.due = "";
    this.lastCalm = Date.now();
    this.opp.textContent = text;
  }

  /** stop ends a pending calm update (the page goes). */
  stop() { clearTimeout(this.timer); this.timer = null; }
}
