// The result of a finished race: who won and why, a chart of both players'
// foundation counts over time, the opened commitment, rematch and replay.

import { h, s, fill, fmtClock } from "./ui.js";
import { reasonText, getRace, getSolution, getPlayer, identity, roomOfRace, arenaOfRace } from "./proto.js";
import { timeline } from "./game.js";
import { verify } from "./fairplay.js";
import { playerLabel, raceTitle, isMany } from "./widgets.js";
import { cardName } from "./cards.js";
import { waitAnalysis, marks, coachList, unknownNote, practiceLink } from "./coach.js";
import { chanceChart } from "./chancechart.js";
import { keepForm, me, passkeysSupported } from "./account.js";

// The seats' colours, as style.css's --seat0 to --seat9.
const SEAT_COLOURS = ["#2f6fde", "#d9534f", "#43a047", "#f9a825", "#8e24aa", "#00897b", "#ef6c00", "#6d4c41", "#c2185b", "#78909c"];

/** headline says who won, from the point of view of seat (or a spectator). */
export function headline(result, names, seat) {
  if (result.outcome === "aborted") return "Race aborted";
  if (result.outcome === "draw") return result.scores && result.scores.length > 2 ? "First place shared" : "Draw";
  if (result.outcome === "solo") return `${cards((result.scores || [0, 0])[1])} on the foundations`;
  if (Number.isInteger(seat) && seat >= 0 && seat < names.length) return result.winner === seat ? "You won" : `${names[result.winner]} won`;
  return `${names[result.winner]} won`;
}

const cards = (n) => `${n} card${n === 1 ? "" : "s"}`;

/**
 * why says why the race ended as it did, to the player in seat (or a
 * spectator): "you finished the deal first", "both stuck with 30 cards".
 */
export function why(result, names, seat) {
  const r = result;
  if (r.scores && r.scores.length > 2) {
    const many = whyMany(r, names, seat);
    if (many) return many;
  }
  const me = seat === 0 || seat === 1;
  const w = r.winner, l = w === undefined ? undefined : 1 - w;
  const sc = r.scores || [0, 0];
  const who = (i) => (me && i === seat ? "you" : names[i]);
  const whose = (i) => (me && i === seat ? "your" : `${names[i]}'s`);
  const was = (i) => (me && i === seat ? "were" : "was");
  const out = (i) => (r.statuses && r.statuses[i] === "resigned" ? "resigned" : "stuck");
  switch (r.reason) {
    case "won-deal": return `${who(w)} finished the deal first`;
    case "passed": return `${who(l)} ${out(l) === "resigned" ? "resigned" : `${was(l)} stuck`} with ${cards(sc[l])}, and ${who(w)} went past that`;
    case "more-cards": return `${bothOut(r)}, ${cards(sc[w])} to ${sc[l]}`;
    case "equal-cards": return `${bothOut(r)} with ${cards(sc[0])}`;
    case "time": return w === undefined ? `time ran out at ${cards(sc[0])} each` : `time ran out with ${who(w)} ahead, ${sc[w]} to ${sc[l]}`;
    case "forfeit": return `${who(l)} left and did not come back in time`;
    case "no-first-move": return "a player made no move in the first 30 seconds";
    case "left": return "a player left before the start";
    case "expired": return "nobody came to play within the hour";
    case "out": return `${who(1)} ${was(1)} out of moves`;
    case "shutdown": return "the server shut down";
  }
  return reasonText(r.reason);
}

/**
 * whyMany says why a race of more than two ended as it did (PROTOCOL.md
 * section 4), or "" where the words for two fit (aborts).
 */
function whyMany(r, names, seat) {
  const w = r.winner;
  const who = (i) => (i === seat ? "you" : names[i]);
  const top = r.ranking && r.ranking.length ? r.ranking[0].cards : Math.max(...r.scores);
  switch (r.reason) {
    case "won-deal": return `${who(w)} finished the deal first`;
    case "passed": return `every other racer was out, and ${who(w)} went past them all with ${cards(r.scores[w])}`;
    case "more-cards": return `all out, ${who(w)} with the most cards: ${r.scores[w]}`;
    case "equal-cards": return `the most cards, ${top}, are shared`;
    case "time": return w === undefined ? `time ran out with first place shared at ${cards(top)}` : `time ran out with ${who(w)} ahead, at ${cards(r.scores[w])}`;
  }
  return "";
}

/** bothOut says how both games ended: "both stuck", "both resigned", "both out". */
function bothOut(r) {
  const all = (st) => r.statuses && r.statuses.every((s) => s === st);
  return all("resigned") ? "both resigned" : all("stuck") ? "both stuck" : "both out";
}

/** gameText is a game's real end, in words. */
function gameText(status, i, r) {
  switch (status) {
    case "won": return "finished the deal";
    case "stuck": return "stuck";
    case "resigned": return "resigned";
    case "playing": return r.outcome === "aborted" ? "not finished" : r.reason === "time" ? "still playing at the time limit" : "still playing when the race was decided";
  }
  return status || "";
}

/**
 * renderResult fills el with the result of race info (GET /api/races/{id}).
 * opts: seat (for players), onRematch (shows the button).
 */
export function renderResult(el, info, opts = {}) {
  const r = info.result;
  const names = info.players.map((p, i) => p.name || `Player ${i + 1}`);
  const labels = info.players.map((p, i) => playerLabel(p, i));
  const rematchBtn = opts.onRematch
    ? h("button", { class: "primary", "data-action": "rematch", onclick: (e) => { e.target.disabled = true; e.target.textContent = "Rematch asked…"; opts.onRematch(); } }, "Rematch")
    : null;
  // "Beat my game": the player's game becomes a ghost challenge, a link.
  const ghostNote = h("p", { class: "ghost-link", role: "status", "data-testid": "ghost-link" });
  const ghostBtn = opts.onGhost
    ? h("button", {
      "data-action": "make-ghost",
      onclick: async (e) => {
        e.target.disabled = true;
        try {
          const g = await opts.onGhost();
          fill(ghostNote, "Send this link to someone who has not played the deal: ",
            h("input", { readonly: true, class: "wide", value: g.link, "aria-label": "Ghost challenge link", "data-testid": "ghost-link-input" }));
        } catch (ex) {
          e.target.disabled = false;
          ghostNote.textContent = ex.message || String(ex);
        }
      },
    }, "Challenge others to beat your game")
    : null;
  const deltas = [0, 1].map((i) => h("span", { class: "delta", "data-delta": i }));
  const many = isMany(info.players);
  // Only lobby races change ratings (races made over the API rate nobody).
  const rated = r.rated && info.players.some((p) => p.player);
  fill(el,
    h("h2", { class: "headline" }, h("span", { "data-testid": "result-headline" }, headline(r, info.players.map((p, i) => (p.computer ? labels[i] : names[i])), opts.seat)),
      h("span", { class: "why", "data-testid": "result-why" }, `: ${why(r, names, opts.seat)}`)),
    h("p", { class: "reason", "data-reason": r.reason }, rated ? "A rated race." : r.outcome === "aborted" ? "An aborted race is not rated." : "Not rated."),
    r.match && r.match.bestOf > 1 ? h("p", { class: "match" }, matchText(r.match, names)) : null,
    many && r.ranking ? rankingTable(r, labels, opts.seat) : h("table", { class: "scores" },
      h("thead", {}, h("tr", {}, h("th", {}, "Player"), h("th", {}, "Cards up"), h("th", {}, "Game"), rated ? h("th", {}, "Rating") : null)),
      h("tbody", {}, r.scores.map((_, i) => h("tr", { class: r.winner === i ? "winner" : "" },
        h("th", { scope: "row" }, h("span", { class: `dot seat${i}`, "aria-hidden": "true" }), labels[i], opts.seat === i ? " (you)" : ""),
        h("td", { "data-score": i }, String(r.scores[i])),
        h("td", { "data-status": i }, gameText(r.statuses[i], i, r)),
        rated ? h("td", {}, deltas[i]) : null)))),
    h("div", { class: "actions" },
      rematchBtn,
      ghostBtn,
      h("a", { class: "button", href: `/?replay=${encodeURIComponent(info.race)}` }, "Watch the replay"),
      roomBackLink(info.race),
      arenaBackLink(info.race),
      h("a", { class: "button", href: "/" }, "Back to the lobby")),
    h("p", { class: "rematch-note", role: "status", "aria-live": "polite" }),
    ghostNote,
    fairness(info),
    solverSection(info.race),
    // The chart's coach grows when its analysis comes, and "Keep this
    // player" shows once the server says whether this is a guest: they
    // go last, so that nothing under them moves.
    chartSection(info, names, true),
    rated && typeof opts.seat === "number" ? keepSection() : null,
  );
  if (rated) showRatingChange(info, deltas);
}

/** roomBackLink leads back to the room this tab started the race from, if any. */
function roomBackLink(race) {
  const code = roomOfRace.get(race);
  return code ? h("a", { class: "button", href: `/?room=${encodeURIComponent(code)}`, "data-action": "back-to-room" }, "Back to the room") : null;
}

/** arenaBackLink leads back to the arena this tab's race was paired in, if any. */
function arenaBackLink(race) {
  const id = arenaOfRace.get(race);
  return id ? h("a", { class: "button primary-soft", href: `/?arena=${encodeURIComponent(id)}`, "data-action": "back-to-arena" }, "Back to the arena") : null;
}

/**
 * rankingTable is the result of a race of more than two: every racer's
 * place, first place first, with their cards, how their game ended and
 * when (m:ss after the start); the player's own row marked.
 */
function rankingTable(r, labels, seat) {
  return h("table", { class: "scores ranking", "data-testid": "ranking" },
    h("caption", { class: "visually-hidden" }, "The ranking, first place first"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Place"), h("th", { scope: "col" }, "Player"), h("th", { scope: "col" }, "Cards"),
      h("th", { scope: "col" }, "Game"), h("th", { scope: "col" }, "Finished"))),
    h("tbody", {}, r.ranking.map((p) => h("tr", { class: [p.place === 1 ? "winner" : "", p.seat === seat ? "me" : ""].join(" ").trim(), "data-seat": p.seat },
      h("td", { class: "place", "data-place": p.seat }, String(p.place)),
      h("th", { scope: "row" }, h("span", { class: `dot seat${p.seat}`, "aria-hidden": "true" }), labels[p.seat], p.seat === seat ? " (you)" : ""),
      h("td", { "data-cards": p.seat }, String(p.cards)),
      h("td", { "data-status": p.seat }, p.status === "playing" ? "still playing" : gameText(p.status, p.seat, r)),
      h("td", { "data-finished": p.seat }, p.finishedMs === undefined ? "–" : elapsed(p.finishedMs))))));
}

/** elapsed is a time since the start as m:ss, the seconds begun not counted (241830 ms: 4:01). */
function elapsed(ms) {
  const t = Math.floor(ms / 1000);
  return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, "0")}`;
}

/**
 * keepSection offers a guest, after a rated race, to keep their player
 * with a passkey (shown once the server says they are not an account).
 */
function keepSection() {
  const el = h("section", { class: "keep-result", "data-testid": "keep-result", hidden: true, "aria-labelledby": "keep-result-title" });
  if (!passkeysSupported()) return el;
  me().then((m) => {
    if (!m.enabled || m.account) return;
    fill(el, h("h3", { id: "keep-result-title" }, "Keep this player"), keepForm("result", () => {}));
    el.hidden = false;
  }).catch(() => {});
  return el;
}

const RATING_TRIES = 8; // reads of a player's history while the rating is saved
const RATING_RETRY_MS = 400;

/**
 * showRatingChange writes each lobby player's rating change (+12, −9) from
 * their history (GET /api/players/{id}), which holds the ratings before and
 * after each rated race. The lobby rates a race just after it ends: the
 * first reads may not find it yet.
 */
async function showRatingChange(info, els) {
  const seat = info.players.findIndex((p) => p.player);
  if (seat < 0) return;
  const id = info.players[seat].player;
  for (let i = 0; i < RATING_TRIES; i++) {
    try {
      const p = await getPlayer(id, 10);
      const g = p.history.find((x) => x.race === info.race);
      if (g && g.rated && g.before && g.after) {
        [0, 1].forEach((s) => {
          const mine = g.players[0].player === info.players[s].player ? 0 : 1;
          const d = Math.round(g.after[mine].rating - g.before[mine].rating);
          els[s].textContent = `${Math.round(g.after[mine].rating)} (${d >= 0 ? "+" : "−"}${Math.abs(d)})`;
          els[s].dataset.change = String(d);
        });
        return;
      }
    } catch { /* not recorded yet */ }
    await new Promise((res) => setTimeout(res, RATING_RETRY_MS));
  }
}

/**
 * solverSection asks the server's solver, on a click (a solve costs the
 * server up to a fraction of a second), whether the deal could be won.
 */
function solverSection(id) {
  const out = h("p", { class: "solver-verdict", "data-testid": "solver-verdict", role: "status", "aria-live": "polite" });
  const game = h("div", { class: "solver-game" });
  const btn = h("button", {
    "data-action": "solve",
    onclick: async () => {
      btn.disabled = true;
      out.textContent = "Asking the solver…";
      try {
        const sol = await getSolution(id);
        out.textContent = solutionText(sol);
        out.dataset.result = sol.result;
        btn.remove();
        if (sol.game) {
          fill(game, h("details", {},
            h("summary", {}, sol.result === "won" ? "The solver's winning game" : `The solver's game (${sol.bestScore} cards)`),
            h("pre", { class: "game-text" }, sol.game)));
        }
      } catch (err) {
        out.textContent = `The solver could not answer: ${err.message}`;
        btn.disabled = false;
      }
    },
  }, "Ask the solver");
  return h("section", { class: "solver", "aria-labelledby": "solver-h" },
    h("h3", { id: "solver-h" }, "Could the deal be won?"),
    h("p", { class: "muted" }, "The solver knows the order of the stock: it says whether a perfect player could have won."),
    btn, out, game);
}

/** solutionText says what the solver found, never calling "unknown" a loss. */
export function solutionText(sol) {
  switch (sol.result) {
    case "won":
      return "Winnable: yes (the solver found a win).";
    case "lost":
      return `No: the best possible was ${sol.scoreExact ? "" : "at least "}${sol.bestScore} cards.`;
    default:
      return `Unknown within the search budget (the best it found was ${sol.bestScore} cards).`;
  }
}

/** matchText sums up a best-of-N match after a round. */
function matchText(m, names) {
  const score = `${names[0]} ${m.wins[0]} – ${m.wins[1]} ${names[1]}`;
  if (!m.over) return `Round ${m.round} of ${m.bestOf}: ${score}. The next round starts by itself.`;
  return `Match over after ${m.round} rounds: ${score}` + (m.winner !== undefined ? `; ${names[m.winner]} wins the match.` : "; a drawn match.");
}

const capital = (t) => t.charAt(0).toUpperCase() + t.slice(1);

/**
 * chartSection is the foundation chart; with coach, it asks for the
 * analysis of every game ("Where you lost it") and, once it is there,
 * marks it on the chart and says it under it.
 */
export function chartSection(info, names, coach) {
  const r = info.result;
  const sec = h("section", { class: "chart", "aria-labelledby": "chart-h" }, h("h3", { id: "chart-h" }, "Cards on the foundations over time"));
  let series;
  try {
    series = timeline(info.variant, r.deal, info.moves || [], info.players.length);
  } catch (err) {
    sec.append(h("p", { class: "muted" }, `No chart: ${err.message}`));
    return sec;
  }
  const top = Math.max(...r.scores, 13);
  let fig = chart(series, names, top);
  sec.append(fig);
  if (!coach || !r.deal) return sec;
  const out = h("div", { class: "coach", "data-testid": "coach", role: "status", "aria-live": "polite" }, "Where was each game lost? Asking the solver…");
  sec.append(h("h3", { id: "coach-h" }, "Where you lost it"), out);
  waitAnalysis(info.race, (pct) => { out.textContent = `Where was each game lost? The solver is working: ${pct}%.`; })
    .then((a) => {
      const shown = chart(series, names, top, marks(a, series));
      fig.replaceWith(shown);
      fig = shown;
      out.replaceChildren(chanceChart(a, names) || "", coachList(a, names, r, (seat, g) => [
        practiceLink(info.race, seat, g), practiceLink(info.race, seat, g) ? " · " : null,
        h("a", { href: `/?replay=${encodeURIComponent(info.race)}&line=${seat}`, "data-action": "open-line", "data-seat": seat },
          `Play the winning line from there (${g.line.length} moves) in the replay`)]), unknownNote());
      out.dataset.state = "done";
    })
    .catch((err) => { out.textContent = `The analysis could not be had: ${err.message}`; out.dataset.state = "failed"; });
  return sec;
}

/**
 * chart draws both series as step lines in inline SVG, with marks
 * (coach.js: {seat, kind: "winnable"|"lost", atMs, score, label}).
 */
export function chart(series, names, top, marks = []) {
  const W = 440, H = 220, L = 34, R = 10, T = 12, B = 30;
  const end = Math.max(1000, ...series.flat().map((p) => p.atMs));
  const x = (ms) => L + (ms / end) * (W - L - R);
  const y = (v) => T + (1 - v / top) * (H - T - B);
  const grid = [];
  for (let v = 0; v <= top; v += top > 26 ? 13 : 4) {
    grid.push(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#8883", "stroke-width": 1 }));
    grid.push(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 13, fill: "currentColor" }, String(v)));
  }
  const secs = end / 1000;
  const tick = secs > 1200 ? 300 : secs > 300 ? 120 : secs > 60 ? 15 : secs > 20 ? 5 : 1;
  for (let t = 0; t <= secs; t += tick) {
    grid.push(s("text", { x: x(t * 1000), y: H - 12, "text-anchor": "middle", "font-size": 13, fill: "currentColor" }, secs > 60 ? fmtClock(t * 1000) : `${t}s`));
  }
  const lines = series.map((pts, i) => {
    let d = `M${x(0)} ${y(pts[0].score)}`;
    for (const p of pts.slice(1)) d += ` H${x(p.atMs).toFixed(1)} V${y(p.score).toFixed(1)}`;
    d += ` H${x(end)}`;
    return s("path", { d, fill: "none", stroke: SEAT_COLOURS[i], "stroke-width": 2.5, "stroke-dasharray": i ? "6 3" : null, "data-seat": i });
  });
  const dots = marks.map((m) => s("circle", {
    cx: x(m.atMs).toFixed(1), cy: y(m.score).toFixed(1), r: 6,
    fill: m.kind === "lost" ? SEAT_COLOURS[m.seat] : "none", stroke: m.kind === "lost" ? "#fff" : SEAT_COLOURS[m.seat], "stroke-width": 2.5,
    "data-mark": m.kind, "data-seat": m.seat,
  }, s("title", {}, m.label)));
  const last = series.map((p) => p[p.length - 1].score);
  const reached = last.map((n, i) => `${names[i]} reached ${n}${i ? "" : " cards"}`).join(", ");
  const label = `Chart: ${reached}, over ${Math.round(secs)} seconds`;
  return h("figure", {},
    s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "chart-svg" },
      s("title", {}, label), ...grid, ...lines, ...dots),
    h("figcaption", {}, series.map((_, i) => h("span", { class: "legend" }, h("span", { class: `dot seat${i}`, "aria-hidden": "true" }), `${names[i]} (${last[i]})`)),
      marks.length ? h("span", { class: "legend muted" }, "○ last winnable position, ● the move after which the game was lost") : null));
}

/**
 * fairness opens the sealed deal and checks it at once against what this
 * page kept when the race began (fairplay.js): the commitment, and the
 * order of every card it was shown.
 */
function fairness(info) {
  const r = info.result;
  const sec = h("section", { class: "fairness", "aria-labelledby": "fair-h" }, h("h3", { id: "fair-h" }, "Was the deal fair?"));
  const out = h("p", { class: "verdict", role: "status", "aria-live": "polite", "data-testid": "fair-verdict" }, "Checking…");
  const shown = h("p", { class: "verdict shown", "data-testid": "shown-verdict" });
  sec.append(
    h("dl", {},
      h("dt", {}, "Deal number"), h("dd", { "data-field": "deal" }, r.deal),
      r.grade ? [h("dt", {}, "Grade"), h("dd", { "data-field": "grade" }, r.grade, " ",
        h("span", { class: "muted" }, "(re-check: ", h("code", {}, `sirtommy grade --deal ${r.deal}`), ")"))] : null,
      r.commitment ? [h("dt", {}, "Salt"), h("dd", { "data-field": "salt" }, h("code", {}, r.salt)),
        h("dt", {}, "Commitment"), h("dd", { "data-field": "commitment" }, h("code", {}, r.commitment))] : null),
    out, shown);
  const say = (el, ok, text) => {
    el.textContent = text;
    el.className = "verdict " + (ok === true ? "ok" : ok === false ? "bad" : "unknown");
    el.dataset.ok = String(ok);
  };
  if (r.outcome === "aborted" && !r.deal) { say(out, null, "The race was aborted before its deal mattered."); return sec; }
  if (!r.deal) { say(out, null, "The day's deal is sealed until midnight UTC, when the deal and salt are published (GET /api/daily/{variant}/{day}/reveal): check them then against the commitment above."); return sec; }
  verify(info.race, info.variant, r).then((v) => {
    const kept = v.start && v.start.commitment;
    if (!v.kept) {
      say(out, null, r.commitment
        ? (v.recordAgrees ? "This browser did not see the race begin, so it can only check the record against itself: SHA-256(deal:salt) matches the record's commitment." : "✘ The record's own commitment does not match its deal and salt.")
        : `Deal ${r.deal} was named when the race was made.`);
    } else if (r.commitment) {
      if (v.commitmentOk) say(out, true, `✔ SHA-256(${r.deal}${r.grade ? ":" + r.grade : ""}:salt) is ${short(v.got)}, the commitment this page was sent ${v.start.seenAt ? `at ${new Date(v.start.seenAt).toLocaleTimeString()}, ` : ""}before the deal was revealed: the deal was fixed before anyone played.`);
      else say(out, false, `✘ Mismatch: the revealed deal and salt hash to ${short(v.got)}, but before the reveal this page was sent the commitment ${short(kept)}: this record does not show the deal that was raced.`);
    } else {
      say(out, v.commitmentOk, v.commitmentOk ? `✔ Deal ${r.deal}, as named when the race was made.` : `✘ The record names deal ${r.deal}, not the deal named at the start (${v.start.deal}).`);
    }
    if (v.kept && v.shownCount) {
      say(shown, v.shownOk, v.shownOk
        ? `✔ Dealt again from number ${r.deal}: all ${v.shownCount} cards this page was shown came in that deal's order.`
        : `✘ ${cardName(v.bad.card)} was shown where deal ${r.deal} has another card.`);
    }
  }).catch((err) => say(out, null, `The check could not run: ${err.message}`));
  return sec;
}

const short = (hex) => (hex ? `${hex.slice(0, 12)}…` : "nothing");

/**
 * loadResult fetches a finished race and renders it into el, from the
 * seat of this browser's player when the lobby seated them in it.
 */
export async function loadResult(el, id, opts = {}) {
  const info = await getRace(id);
  if (!info.result) {
    el.replaceChildren(h("p", {}, "This race is not over yet: ", h("a", { href: `/?watch=${encodeURIComponent(id)}` }, "watch it live"), "."));
    return info;
  }
  const me = identity.get();
  const seat = me ? info.players.findIndex((p) => p.player && p.player === me.player) : -1;
  document.title = `${raceTitle(info.players)}: result · Sir Tommy`;
  renderResult(el, info, seat >= 0 && opts.seat === undefined ? { ...opts, seat } : opts);
  return info;
}
