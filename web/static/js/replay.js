// The replay page (/?replay=ID): a finished race move by move, both boards
// in step. The API gives the moves and the revealed deal; the boards come
// from replaying them with game.js (the API has no per-move views).

import { h, fill, fmtClock } from "./ui.js";
import { getRace } from "./proto.js";
import { Game } from "./game.js";
import { renderBoard } from "./board.js";
import { headline, why, chart } from "./result.js";
import { progressEl, setProgress, raceTitle, playerLabel } from "./widgets.js";
import { moveText } from "./cards.js";
import { timeline } from "./game.js";
import { waitAnalysis, marks, coachList, unknownNote, chanceAt, practiceLink } from "./coach.js";
import { chanceChart, curveAt } from "./chancechart.js";

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
    this.line = null; // the solver's winning line being stepped: {seat, base, moves, i}
    // Each seat's moves in its game text's order (positions count them).
    this.seatMoves = info.players.map((_, i) => this.moves.filter((m) => m.seat === i && m.move.toUpperCase() !== "RESIGN"));
    const r = info.result;
    this.seats = info.players.map((_, i) => ({
      name: h("h2", {}, this.names[i]),
      progress: progressEl(`${this.names[i]}'s cards on the foundations`),
      board: h("div", { class: "board", role: "region", "aria-label": `${this.names[i]}'s board` }),
    }));
    this.els = {
      slider: h("input", { type: "range", min: 0, max: this.moves.length, value: 0, "aria-label": "Move", oninput: (e) => this.go(Number(e.target.value)) }),
      pos: h("span", { class: "pos", "data-testid": "replay-pos", role: "status" }),
      chance: h("span", { class: "pos replay-chance", "data-testid": "replay-chance", hidden: true }),
      last: h("p", { class: "last-move", "aria-live": "polite" }),
      play: h("button", { class: "primary", "data-action": "play", onclick: () => this.toggle() }, "Play"),
      speed: h("select", { "aria-label": "Speed" }, SPEEDS.map((s) => h("option", { value: s, selected: s === 5 }, `${s}×`))),
      coach: h("div", { class: "coach", "data-testid": "coach", role: "status", "aria-live": "polite" }, "Where was each game lost? Asking the solver…"),
      lineBar: h("div", { class: "line-bar", role: "group", "aria-label": "The solver's winning line", hidden: true }),
    };
    fill(root, h("div", { class: "replay-page" },
      h("header", { class: "race-head" }, h("h1", {}, `Replay: ${raceTitle(info.players)}`),
        h("p", { class: "muted" }, `${headline(r, info.players.map((p, i) => (p.computer ? playerLabel(p, i) : this.names[i])))}: ${why(r, this.names)}. Deal ${r.deal}, ${info.variant}. Keys: ← → step, space plays.`)),
      h("div", { class: "replay-controls", role: "group", "aria-label": "Replay controls" },
        h("button", { onclick: () => this.go(0), "aria-label": "To the start" }, "|◀"),
        h("button", { "data-action": "prev", onclick: () => this.go(this.k - 1), "aria-label": "Previous move" }, "◀"),
        this.els.play,
        h("button", { "data-action": "next", onclick: () => this.go(this.k + 1), "aria-label": "Next move" }, "▶"),
        h("button", { onclick: () => this.go(this.moves.length), "aria-label": "To the end" }, "▶|"),
        this.els.speed, this.els.slider, this.els.pos, this.els.chance),
      this.els.last,
      this.els.lineBar,
      h("div", { class: this.seats.length > 2 ? "field" : "duel" }, this.seats.map((s, i) =>
        h("section", { class: `seat seat${i}` }, h("div", { class: "who" }, s.name, s.progress), s.board))),
      h("section", { class: "chart", "aria-labelledby": "coach-h" }, h("h3", { id: "coach-h" }, "Where you lost it"), this.els.coach),
      h("p", {}, h("a", { href: `/?result=${encodeURIComponent(info.race)}` }, "The result"), " · ", h("a", { href: "/" }, "Back to the lobby"))));
    this.seek(0);
    this.loadCoach();
    // ← and → step, Home and End jump, space plays and pauses (the
    // slider and the speed select keep their own keys).
    document.addEventListener("keydown", (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target;
      if (t.closest && t.closest("input, select, textarea")) return;
      const act = this.line
        ? { ArrowLeft: () => this.stepLine(-1), ArrowRight: () => this.stepLine(1), Escape: () => this.closeLine() }[e.key]
        : { ArrowLeft: () => this.seek(this.k - 1), ArrowRight: () => this.seek(this.k + 1), Home: () => this.seek(0), End: () => this.seek(this.moves.length), " ": () => this.toggle() }[e.key];
      if (!act) return;
      if (e.key === " " && t.closest && t.closest("button")) return; // the focused button acts itself
      e.preventDefault();
      act();
    });
  }

  /**
   * loadCoach asks for the analysis of both games, shows it under the
   * boards with the foundation chart marked, and offers each winning line
   * (opened at once when the page's address names one: &line=SEAT).
   */
  async loadCoach() {
    const out = this.els.coach;
    let a;
    try {
      a = await waitAnalysis(this.info.race, (pct) => { out.textContent = `Where was each game lost? The solver is working: ${pct}%.`; });
    } catch (err) {
      out.textContent = `The analysis could not be had: ${err.message}`;
      out.dataset.state = "failed";
      return;
    }
    this.analysis = a;
    const r = this.info.result;
    let fig = null;
    try {
      const series = timeline(this.info.variant, r.deal, this.info.moves || []);
      fig = chart(series, this.names, Math.max(...r.scores, 13), marks(a, series));
    } catch { /* no chart: the words say it all */ }
    out.replaceChildren(fig || "", chanceChart(a, this.names) || "", coachList(a, this.names, r, (seat, g) => [
      practiceLink(this.info.race, seat, g), practiceLink(this.info.race, seat, g) ? " " : null,
      h("button", { "data-action": "line", "data-seat": seat, onclick: () => this.openLine(seat) }, `Play the winning line from there (${g.line.length} moves)`)]), unknownNote());
    out.dataset.state = "done";
    this.showChance();
    const want = new URLSearchParams(location.search).get("line");
    if (want !== null && /^\d$/.test(want) && Number(want) < this.seats.length) this.openLine(Number(want));
  }

  /** openLine shows seat's game at its last winnable position, to step the solver's line from it. */
  openLine(seat) {
    const g = this.analysis && this.analysis.games[seat];
    if (!g || !g.line || !g.line.length) return;
    if (this.playing) this.toggle();
    this.line = { seat, base: g.lastWinnable, moves: g.line, i: 0 };
    const bar = this.els.lineBar;
    bar.hidden = false;
    this.els.linePos = h("span", { class: "pos", "data-testid": "line-pos" });
    fill(bar,
      h("strong", {}, `${this.names[seat]}: the solver's winning line from after move ${g.lastWinnable}`), " ",
      h("button", { "data-action": "line-prev", "aria-label": "Previous move of the line", onclick: () => this.stepLine(-1) }, "◀"),
      h("button", { "data-action": "line-next", "aria-label": "Next move of the line", onclick: () => this.stepLine(1) }, "▶"),
      h("button", { "data-action": "line-exit", onclick: () => this.closeLine() }, "Back to the game"), " ",
      this.els.linePos);
    this.stepLine(0);
  }

  /** stepLine moves d moves along the line and shows that seat's board there. */
  stepLine(d) {
    const L = this.line;
    if (!L) return;
    L.i = Math.max(0, Math.min(L.moves.length, L.i + d));
    // The other board as it was when this seat reached the line's start.
    const before = this.seatMoves[L.seat][L.base - 1];
    this.seek(before ? this.moves.indexOf(before) + 1 : 0);
    const g = new Game(this.info.variant, this.info.result.deal);
    for (const m of this.seatMoves[L.seat].slice(0, L.base)) g.apply(m.move);
    for (const m of L.moves.slice(0, L.i)) g.apply(m);
    const v = g.view();
    const seat = this.seats[L.seat];
    renderBoard(seat.board, v, { fit: () => Math.max(320, window.innerHeight - 150) });
    setProgress(seat.progress, v.score, v.target);
    seat.board.dataset.line = String(L.i);
    seat.board.dataset.score = String(v.score);
    const m = L.moves[L.i - 1];
    this.els.linePos.textContent = `Line move ${L.i} of ${L.moves.length}${m ? `: ${moveText(m)}` : ""} · ${v.score} of ${v.target} cards up${v.status === "won" ? " · won" : ""}`;
    this.els.linePos.dataset.step = String(L.i);
    this.els.linePos.dataset.score = String(v.score);
    const c = chanceAt(this.analysis.games[L.seat], L.base);
    const chance = c ? ` With what ${this.names[L.seat]} could see, an expert wins ${c.percent}% from here.` : "";
    this.els.last.textContent = m ? `${this.names[L.seat]} (the solver's line): ${moveText(m)}` : `${this.names[L.seat]}'s game after move ${L.base}, the last winnable position.${chance}`;
  }

  /** closeLine goes back to the game as played. */
  closeLine() {
    if (!this.line) return;
    const seat = this.seats[this.line.seat];
    delete seat.board.dataset.line;
    delete seat.board.dataset.score;
    this.line = null;
    this.els.lineBar.hidden = true;
    this.seek(this.k);
  }

  /** go leaves the winning line, if one is open, and seeks to k. */
  go(k) {
    this.closeLine();
    this.seek(k);
  }

  /** seek shows the boards after the first k moves. */
  seek(k) {
    this.k = Math.max(0, Math.min(this.moves.length, k));
    const games = this.seats.map(() => new Game(this.info.variant, this.info.result.deal));
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
    this.showChance();
  }

  /**
   * showChance says, beside the step, each racer's chance with an expert
   * at the current move (the curve's point there, or the nearest before
   * it where the curve is sampled), and rings those points on the chart.
   */
  showChance() {
    const games = this.analysis && this.analysis.games;
    const el = this.els.chance;
    if (!games || !games.some((g) => g.curve && g.curve.length)) return;
    const done = this.moves.slice(0, this.k);
    const parts = [];
    games.forEach((g, i) => {
      const ply = done.filter((m) => m.seat === i && m.move.toUpperCase() !== "RESIGN").length;
      const c = curveAt(g, ply);
      for (const dot of document.querySelectorAll(`.chance-chart circle[data-seat="${i}"]`)) dot.setAttribute("r", c && Number(dot.dataset.ply) === c.ply ? 6 : 3);
      if (c) parts.push(`${this.names[i]} ${c.percent}%${c.ply !== ply ? ` (at move ${c.ply})` : ""}`);
    });
    el.hidden = false;
    el.textContent = `An expert with what each could see wins: ${parts.join(" · ")}`;
  }

  toggle() {
    this.closeLine();
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
