// The lobby page (/): make a private race and share its link, join one by
// link or code, watch or replay one, and race the computer where the server
// offers it. Panels are a list: the lobby's quick play, open challenges,
// live races, presence and leaderboard plug in as more entries of PANELS,
// with their protocol calls in proto.js.

import { h, fill } from "./ui.js";
import { createRace, playerName, VARIANTS } from "./proto.js";

/** raceIdFrom accepts an invite link or a bare race code. */
export function raceIdFrom(text) {
  const t = text.trim();
  try {
    const u = new URL(t);
    return u.searchParams.get("race") || u.searchParams.get("watch") || u.searchParams.get("replay") || "";
  } catch {
    return /^[0-9a-zA-Z_-]{4,64}$/.test(t) ? t : "";
  }
}

function nameField() {
  const input = h("input", { id: "lobby-name", autocomplete: "nickname", maxlength: 24, value: playerName.get(), placeholder: "e.g. Ann" });
  input.addEventListener("change", () => playerName.set(input.value.trim()));
  return h("section", { class: "panel", "data-panel": "name" },
    h("h2", {}, "Your name"),
    h("div", { class: "row-form" }, h("label", { for: "lobby-name" }, "Name"), input));
}

function needName() {
  const input = document.getElementById("lobby-name");
  const n = input.value.trim();
  if (!n) { input.focus(); input.setAttribute("aria-invalid", "true"); return ""; }
  input.removeAttribute("aria-invalid");
  playerName.set(n);
  return n;
}

function createPanel() {
  const variant = h("select", { id: "new-variant" }, VARIANTS.map((v) => h("option", { value: v }, v)));
  const minutes = h("select", { id: "new-minutes" }, [3, 5, 10, 20].map((m) => h("option", { value: m, selected: m === 10 }, `${m} minutes`)));
  const bestOf = h("select", { id: "new-bestof" }, [1, 3, 5].map((n) => h("option", { value: n }, n === 1 ? "one race" : `best of ${n}`)));
  const deal = h("input", { id: "new-deal", inputmode: "numeric", pattern: "[0-9]*", placeholder: "secret (random)" });
  const err = h("p", { class: "error", role: "alert" });
  return h("section", { class: "panel", "data-panel": "create" },
    h("h2", {}, "Race a friend"),
    h("form", {
      class: "grid-form",
      onsubmit: async (e) => {
        e.preventDefault();
        err.textContent = "";
        if (!needName()) { err.textContent = "Enter your name first."; return; }
        const opts = { variant: variant.value, timeLimitSeconds: Number(minutes.value) * 60, bestOf: Number(bestOf.value) };
        if (deal.value.trim()) opts.deal = deal.value.trim();
        try {
          const r = await createRace(opts);
          location.assign(`/?race=${encodeURIComponent(r.race)}&auto=1`);
        } catch (ex) { err.textContent = ex.message; }
      },
    },
      h("label", { for: "new-variant" }, "Variant"), variant,
      h("label", { for: "new-minutes" }, "Time limit"), minutes,
      h("label", { for: "new-bestof" }, "Match"), bestOf,
      h("label", { for: "new-deal" }, "Deal number"), deal,
      h("button", { class: "primary", type: "submit", "data-action": "create" }, "Create a private race")),
    h("p", { class: "muted" }, "You get a link to send; the race starts when your friend opens it."),
    err);
}

function joinPanel() {
  const code = h("input", { id: "join-code", class: "wide", placeholder: "invite link or race code" });
  const err = h("p", { class: "error", role: "alert" });
  const go = (param) => (e) => {
    e.preventDefault();
    const id = raceIdFrom(code.value);
    if (!id) { err.textContent = "That is neither an invite link nor a race code."; return; }
    location.assign(`/?${param}=${encodeURIComponent(id)}`);
  };
  return h("section", { class: "panel", "data-panel": "join" },
    h("h2", {}, "Join, watch or replay"),
    h("form", { class: "row-form", onsubmit: go("race") },
      h("label", { for: "join-code" }, "Link or code"), code,
      h("button", { class: "primary", type: "submit", "data-action": "join-code" }, "Join"),
      h("button", { type: "button", onclick: go("watch") }, "Watch"),
      h("button", { type: "button", onclick: go("replay") }, "Replay")),
    err);
}

function computerPanel() {
  const level = h("select", { id: "cpu-level" }, ["easy", "medium", "hard"].map((l) => h("option", { value: l }, l)));
  const err = h("p", { class: "error", role: "alert" });
  return h("section", { class: "panel", "data-panel": "computer" },
    h("h2", {}, "Race the computer"),
    h("form", {
      class: "row-form",
      onsubmit: async (e) => {
        e.preventDefault();
        err.textContent = "";
        if (!needName()) { err.textContent = "Enter your name first."; return; }
        try {
          const r = await createRace({ computer: { level: level.value } });
          location.assign(`/?race=${encodeURIComponent(r.race)}&auto=1`);
        } catch (ex) {
          err.textContent = ex.code === "no-computer" ? "This server has no computer players yet." : ex.message;
        }
      },
    }, h("label", { for: "cpu-level" }, "Level"), level, h("button", { class: "primary", type: "submit", "data-action": "computer" }, "Start")),
    err);
}

/** comingPanel marks a place the lobby branch will fill. */
function comingPanel(key, title, what) {
  return () => h("section", { class: "panel coming", "data-panel": key, "aria-disabled": "true" },
    h("h2", {}, title), h("p", { class: "muted" }, `${what} Arrives with the lobby; not on this server yet.`));
}

/** PANELS are the lobby's sections, in order. */
export const PANELS = [
  nameField,
  createPanel,
  joinPanel,
  computerPanel,
  comingPanel("quickplay", "Quick play", "Get paired with the next player who is waiting."),
  comingPanel("challenges", "Open challenges", "Post a race anyone may accept."),
  comingPanel("live", "Live races", "Watch the races being played now."),
  comingPanel("presence", "Who is online", "Players here now."),
  comingPanel("leaderboard", "Leaderboard", "Ratings of the best players."),
];

/** lobbyPage draws the lobby into root. */
export function lobbyPage(root) {
  fill(root, h("div", { class: "lobby-page" },
    h("header", {}, h("h1", {}, "Sir Tommy race"),
      h("p", { class: "lead" }, "Two players, the same shuffled deck, one pass through the stock. First to build all four foundations from Ace to King wins; if both get stuck, more cards wins.")),
    h("div", { class: "panels" }, PANELS.map((p) => p()))));
}
