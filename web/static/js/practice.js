// "Find the better move" (/?practice=ID&seat=S): a finished race's game
// lost by one move, shown at its last winnable position; the player tries
// moves there with the game's own controls (input.js), each judged by the
// server's solver (POST /api/races/{id}/practice), up to MAX_TRIES; then,
// or once found, the solver's winning line is stepped through.

import { h, fill } from "./ui.js";
import { getRace, practise, addMistake, identity } from "./proto.js";
import { Game } from "./game.js";
import { renderBoard } from "./board.js";
import { MoveInput } from "./input.js";
import { progressEl, setProgress } from "./widgets.js";
import { moveText } from "./cards.js";
import { waitAnalysis } from "./coach.js";
import { lineStepper } from "./linestep.js";

const MAX_TRIES = 3; // wrong tries before the answer is shown

/** practicePage shows the practice of race id's seat inside root. */
export async function practicePage(root, id, seat) {
  fill(root, h("p", {}, "Loading the position…"));
  let info, a;
  try {
    info = await getRace(id);
    if (!info.result) throw new Error("the race is not over yet");
    a = await waitAnalysis(id, (pct) => fill(root, h("p", {}, `Finding where the game was lost: ${pct}%…`)));
  } catch (err) {
    fill(root, h("p", { class: "notice bad" }, `No practice: ${err.message}`), h("a", { href: "/" }, "Back to the lobby"));
    return;
  }
  const g = a.games && a.games[seat];
  const name = (info.players[seat] && info.players[seat].name) || `Player ${seat + 1}`;
  if (!g || g.verdict !== "lost-at") {
    fill(root, h("p", { class: "notice info", "data-testid": "practice-none" }, `${name}'s game was not lost by one known move: there is no better move to find.`),
      h("a", { href: `/?result=${encodeURIComponent(id)}` }, "The result"));
    return;
  }
  // Your own seat's game (a lobby race reserved it for you) goes to "My
  // mistakes"; anyone else practises without keeping it.
  const me = identity.get();
  const own = !!(me && me.token && info.players[seat] && info.players[seat].player === me.player);
  new Practice(root, info, seat, name, g, own ? me.token : "");
}

class Practice {
  constructor(root, info, seat, name, g, token) {
    this.info = info;
    this.token = token; // the player's, when it is their own game
    this.seat = seat;
    this.g = g;
    this.n = g.lastWinnable;
    this.wrong = 0;
    this.busy = false;
    this.done = false;
    // The seat's moves up to the position, in its game's order.
    this.prefix = (info.moves || []).filter((m) => m.seat === seat && m.move.toUpperCase() !== "RESIGN").slice(0, this.n).map((m) => m.move);
    this.game = this.at([]);
    this.els = {
      board: h("div", { class: "board", role: "region", "aria-label": `${name}'s board after move ${this.n}`, "data-testid": "practice-board" }),
      progress: progressEl(`${name}'s cards on the foundations`),
      feedback: h("p", { class: "practice-feedback", "data-testid": "practice-feedback", role: "status", "aria-live": "polite" }, "Your move: click a card, then where it goes (or drag it; keys below)."),
      tries: h("ol", { class: "practice-tries", "data-testid": "practice-tries" }),
      left: h("span", { "data-testid": "practice-left" }),
      answer: h("div", { class: "line-bar", role: "group", "aria-label": "The solver's winning line", hidden: true }),
      kept: h("p", { class: "muted", "data-testid": "practice-kept" }),
      giveUp: h("button", { "data-action": "show-answer", onclick: () => this.showAnswer("You asked for the answer.") }, "Show the answer"),
    };
    this.root = h("div", { class: "practice-page", "data-testid": "practice", "data-state": "trying" },
      h("header", { class: "race-head" },
        h("h1", {}, "Find the better move"),
        h("p", {}, `${name}'s game on deal ${info.result.deal} (${info.variant}), after move ${this.n}, the last position that could still be won. `,
          h("strong", {}, `The move played here, ${moveText(g.losingMove)}, lost the game: find one that keeps it winnable.`)),
        h("p", { class: "muted" }, "Each try is judged by the solver, which knows the order of the stock. ", this.els.left),
        this.els.kept),
      this.els.answer,
      h("section", { class: "seat seat" + seat }, h("div", { class: "who" }, h("h2", {}, name), this.els.progress), this.els.board),
      this.els.feedback,
      h("div", { class: "controls" }, this.els.giveUp),
      this.els.tries,
      h("p", { class: "muted" }, "Keys: T selects the turned card, 1–4 a waste pile (or puts the turned card there), Shift+1–4 a foundation, F the foundation it fits, Esc clears."),
      h("p", {}, h("a", { href: `/?result=${encodeURIComponent(info.race)}` }, "The result"), " · ",
        h("a", { href: `/?replay=${encodeURIComponent(info.race)}` }, "The replay"), " · ", h("a", { href: "/" }, "Back to the lobby")));
    fill(root, this.root);
    this.input = new MoveInput(this.els.board, {
      view: () => (this.done || this.busy ? null : this.game.view()),
      send: (m) => this.tryMove(m),
      say: (t) => { this.els.feedback.textContent = t; },
      help: () => {},
    });
    this.render();
    this.showLeft();
    this.keep();
    window.addEventListener("resize", () => { if (!this.stepper) this.render(); });
  }

  /** keep adds the position to the player's mistakes, if it is their game. */
  keep() {
    const el = this.els.kept;
    if (!this.token) { el.hidden = true; return; }
    addMistake(this.token, this.info.race, this.seat)
      .then((m) => {
        if (el.dataset.state === "solved") return; // found meanwhile: that says more
        el.dataset.state = m.solvedAt ? "solved" : "kept";
        el.replaceChildren("Kept in ", h("a", { href: `/?player=${encodeURIComponent(identity.get().player)}#mistakes` }, "your mistakes"),
          m.solvedAt ? ": you found the better move before." : ", to come back to.");
      })
      .catch((err) => { el.dataset.state = "failed"; el.textContent = `Not kept in your mistakes: ${err.message}`; });
  }

  /** at is the game at the position, then after moves. */
  at(moves) {
    const g = new Game(this.info.variant, this.info.result.deal);
    for (const m of [...this.prefix, ...moves]) g.apply(m);
    return g;
  }

  fit() { return Math.max(320, window.innerHeight - 200); }

  render() {
    const v = this.game.view();
    renderBoard(this.els.board, v, { interactive: !this.done, selected: this.input.selected, fit: () => this.fit() });
    setProgress(this.els.progress, v.score, v.target);
  }

  showLeft() {
    const left = MAX_TRIES - this.wrong;
    this.els.left.textContent = this.done ? "" : `${left} ${left === 1 ? "try" : "tries"} left before the answer.`;
    this.els.left.dataset.left = String(left);
  }

  /** tryMove sends move m to the server and says its verdict. */
  async tryMove(m) {
    if (this.busy || this.done) return;
    this.busy = true;
    const fb = this.els.feedback;
    fb.textContent = `${moveText(m)}: asking the solver…`;
    let r;
    try {
      r = await practise(this.info.race, { seat: this.seat, position: this.n, move: m, ...(this.token ? { token: this.token } : {}) });
    } catch (err) {
      fb.textContent = `${moveText(m)} could not be judged: ${err.message}`;
      fb.dataset.verdict = "error";
      this.busy = false;
      this.render();
      return;
    }
    this.busy = false;
    fb.dataset.verdict = r.verdict;
    const say = {
      winnable: `${moveText(r.move)}: well found! ${cap(r.message)}.`,
      lost: `${moveText(r.move)}: ${r.message}.`,
      illegal: `${moveText(r.move)} is not allowed: ${r.message}.`,
      unknown: `${moveText(r.move)}: the solver could not tell (${r.message}); try another.`,
    }[r.verdict] || r.message;
    fb.textContent = say;
    this.els.tries.append(h("li", { "data-verdict": r.verdict }, say));
    if (r.verdict === "winnable") {
      this.root.dataset.state = "found";
      if (r.solved) { this.els.kept.dataset.state = "solved"; this.els.kept.textContent = "Marked found in your mistakes."; }
      this.finish([r.move, ...(r.line || [])], `Found: ${moveText(r.move)} keeps it winnable. Step through the solver's win from there:`);
      return;
    }
    if (r.verdict !== "unknown") this.wrong++;
    this.showLeft();
    if (this.wrong >= MAX_TRIES) {
      this.root.dataset.state = "answer";
      this.showAnswer(`Three tries: the answer is ${moveText(this.g.winningMove)}.`);
      return;
    }
    this.render();
  }

  /** showAnswer gives up the tries and steps through the analysis's line. */
  showAnswer(why) {
    if (this.done) return;
    if (this.root.dataset.state === "trying") this.root.dataset.state = "answer";
    this.finish(this.g.line, `${why} The solver's winning line from here:`);
  }

  /** finish ends the tries and opens the stepper over line from position n. */
  finish(line, title) {
    this.done = true;
    this.input.select(null);
    this.input.stop();
    this.els.giveUp.hidden = true;
    this.showLeft();
    this.stepper = lineStepper(this.els.answer, line, title, (k) => {
      const v = this.at(line.slice(0, k)).view();
      renderBoard(this.els.board, v, { fit: () => this.fit() });
      setProgress(this.els.progress, v.score, v.target);
      return v;
    });
    // The focus leaves the board, which takes no more moves, for the line.
    this.els.answer.querySelector("[data-action=line-next]").focus();
  }
}

/** cap capitalises a sentence's first letter. */
function cap(s) { return s ? s[0].toUpperCase() + s.slice(1) : s; }
