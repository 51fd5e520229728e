// The client's entry: pick the page from the address.
//   /              lobby
//   /?race=ID      play (join with the invite link, or resume your seat)
//   /?watch=ID     spectate
//   /?replay=ID    replay a finished race
//   /?result=ID    a finished race's result
//   /?player=ID    a player's ratings and recent races

import { lobbyPage } from "./lobby.js";
import { racePage } from "./race.js";
import { spectatePage } from "./spectate.js";
import { replayPage } from "./replay.js";
import { loadResult } from "./result.js";
import { playerPage } from "./profile.js";
import { h, fill } from "./ui.js";

function route() {
  const root = document.getElementById("app");
  const q = new URLSearchParams(location.search);
  if (q.get("race")) { document.title = "Race · Sir Tommy"; return racePage(root, q.get("race"), q); }
  if (q.get("watch")) { document.title = "Watching · Sir Tommy"; return spectatePage(root, q.get("watch")); }
  if (q.get("replay")) { document.title = "Replay · Sir Tommy"; return replayPage(root, q.get("replay")); }
  if (q.get("result")) {
    document.title = "Result · Sir Tommy";
    const el = h("section", { class: "panel result" });
    fill(root, el);
    return loadResult(el, q.get("result")).catch((e) => fill(el, h("p", {}, e.message)));
  }
  if (q.get("player")) { document.title = "Player · Sir Tommy"; return playerPage(root, q.get("player")); }
  document.title = "Sir Tommy race";
  return lobbyPage(root);
}

route();
// pushState after a rematch keeps this page; the back button reloads the route.
window.addEventListener("popstate", () => location.reload());
