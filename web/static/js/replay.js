// The replay page (/?replay=ID): a finished race move by move, both boards
// in step. The API gives the moves and the revealed deal; the boards come
// from replaying them with game.js (the API has no per-move views).

import { h, fill, fmtClock } from "./ui.js";
import { getRace } from "./proto.js";
import { Game } from "./game.js";
import { renderBoard } from "./board.js";
import { headline, why } from "./result.js";
import { progressEl, setProgress, raceTitle, playerLabel } from "./widgets.js";
import { moveText } from "./cards.js";

const SPEEDS = [1, 2, 5, 10, 30]; // playback speeds, times real time
const FRAME_MS = 50; // playback timer period

/** replayPage shows the replay of race id inside root. */
export async function replayPage(root, id) {
  fill(root, h("p", {}, "Loading the replay…"));
  let info;
  try {
    info = await getRace(id);
  } catch (err) {
    fill(root, h("p", { class: "notice bad" }, `No replay: ${err.message}`), h("a", { href: "/" }, "Back to the lobby"));
    return;
  }
  if (!info.result) {
    fill(root, h("p", { class: "notice info" }, "This race is not over yet: ", h("a", { href: `/?watch=${encodeURIComponent(id)}` }, "watch it live"), "."));
    return;
  }
  new Replay(root, info);
}

class Replay {
  constructor(root, info) {
    this.info = info;
    this.moves = [...(info.moves || [])].sort((a, b) => a.atMs - b.atMs);
    this.end = this.moves.length ? this.moves[this.moves.length - 1].atMs : 0;
    this.names = info.players.map((p, i) => p.name || `Player ${i + 1}`);
    this.k = 0; // moves applied
    this.t = 0; // playback time, ms
    this.playing = false;
    const r = info.result;
    this.seats = [0, 1].map((i) => ({
      name: h("h2", {}, this.names[i]),
      progress: progressEl(`${this.names[i]}'s cards on the foundations`),
      board: h("div", { class: "board", role: "region", "aria-label": `${this.names[i]}'s board` }),
    }));
    this.els = {
      slider: h("input", { type: "range", min: 0, max: this.moves.length, value: 0, "aria-label": "Move", oninput: (e) => this.seek(Number(e.target.value)) }),
      pos: h("span", { class: "pos", "data-testid": "replay-pos", role: "status" }),
      last: h("p", { class: "last-move", "aria-live": "polite" }),
      play: h("button", { class: "primary", "data-action": "play", onclick: () => this.toggle() }, "Play"),
      speed: h("select", { "aria-label": "Speed" }, SPEEDS.map((s) => h("option", { value: s, selected: s === 5 }, `${s}×`))),
    };
    fill(root, h("div", { class: "replay-page" },
      h("header", { class: "race-head" }, h("h1", {}, `Replay: ${raceTitle(info.players)}`),
        h("p", { class: "muted" }, `${headline(r, info.players.map((p, i) => (p.computer ? playerLabel(p, i) : this.names[i])))}: ${why(r, this.names)}. Deal ${r.deal}, ${info.variant}. Keys: ← → step, space plays.`)),
      h("div", { class: "replay-controls", role: "group", "aria-label": "Replay controls" },
        h("button", { onclick: () => this.seek(0), "aria-label": "To the start" }, "|◀"),
        h("button", { "data-action": "prev", onclick: () => this.seek(this.k - 1), "aria-label": "Previous move" }, "◀"),
        this.els.play,
        h("button", { "data-action": "next", onclick: () => this.seek(this.k + 1), "aria-label": "Next move" }, "▶"),
        h("button", { onclick: () => this.seek(this.moves.length), "aria-label": "To the end" }, "▶|"),
        this.els.speed, this.els.slider, this.els.pos),
      this.els.last,
      h("div", { class: "duel" }, this.seats.map((s, i) =>
        h("section", { class: `seat seat${i}` }, h("div", { class: "who" }, s.name, s.progress), s.board))),
      h("p", {}, h("a", { href: `/?result=${encodeURIComponent(info.race)}` }, "The result"), " · ", h("a", { href: "/" }, "Back to the lobby"))));
    this.seek(0);
    // ← and → step, Home and End jump, space plays and pauses (the
    // slider and the speed select keep their own keys).
    document.addEventListener("keydown", (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target;
      if (t.closest && t.closest("input, select, textarea")) return;
      const act = { ArrowLeft: () => this.seek(this.k - 1), ArrowRight: () => this.seek(this.k + 1), Home: () => this.seek(0), End: () => this.seek(this.moves.length), " ": () => this.toggle() }[e.key];
      if (!act) return;
      if (e.key === " " && t.closest && t.closest("button")) return; // the focused button acts itself
      e.preventDefault();
      act();
    });
  }

  /** seek shows the boards after the first k moves. */
  seek(k) {
    this.k = Math.max(0, Math.min(this.moves.length, k));
    const games = [0, 1].map(() => new Game(this.info.variant, this.info.result.deal));
    for (const m of this.moves.slice(0, this.k)) games[m.seat].apply(m.move);
    const statuses = this.info.result.statuses;
    games.forEach((g, i) => {
      const v = g.view();
      if (this.k === this.moves.length) v.status = statuses[i];
      renderBoard(this.seats[i].board, v, { fit: () => Math.max(320, window.innerHeight - 150) });
      setProgress(this.seats[i].progress, v.score, v.target);
    });
    const m = this.moves[this.k - 1];
    this.t = m ? m.atMs : 0;
    this.els.slider.value = String(this.k);
    this.els.pos.textContent = `Move ${this.k} of ${this.moves.length} · ${fmtClock(this.t)} of ${fmtClock(this.end)}`;
    this.els.last.textContent = m ? `${this.names[m.seat]}: ${moveText(m.move)}` : "The deal, before the first move.";
  }

  toggle() {
    this.playing = !this.playing;
    this.els.play.textContent = this.playing ? "Pause" : "Play";
    if (!this.playing) { clearInterval(this.timer); return; }
    if (this.k >= this.moves.length) this.seek(0);
    this.timer = setInterval(() => {
      this.t += FRAME_MS * Number(this.els.speed.value);
      let k = this.k;
      while (k < this.moves.length && this.moves[k].atMs <= this.t) k++;
      if (k !== this.k) { const t = this.t; this.seek(k); this.t = t; }
      if (this.k >= this.moves.length) this.toggle();
    }, FRAME_MS);
  }
}
