// The client's entry: pick the page from the address.
//   /              lobby
//   /?race=ID      play (join with the invite link, or resume your seat)
//   /?watch=ID     spectate
//   /?replay=ID    replay a finished race
//   /?result=ID    a finished race's result
//   /?practice=ID&seat=S  "find the better move" in a finished race's game
//   /?player=ID    a player's ratings and recent races
//   /?room=CODE    a room: a group who race together
//   /?arena=ID     an arena: back-to-back races for a set time

import { h, fill } from "./ui.js";

// Each page's module is loaded when its page is opened, so the lobby's first
// screen does not wait for the race's code. The server preloads the same
// module for the same query (pageEntries in web/pages.go).
async function route() {
  const root = document.getElementById("app");
  const q = new URLSearchParams(location.search);
  if (q.get("race")) {
    document.title = "Race · Sir Tommy";
    const { racePage } = await import("./race.js");
    return racePage(root, q.get("race"), q);
  }
  if (q.get("watch")) {
    document.title = "Watching · Sir Tommy";
    const { spectatePage } = await import("./spectate.js");
    return spectatePage(root, q.get("watch"));
  }
  if (q.get("replay")) {
    document.title = "Replay · Sir Tommy";
    const { replayPage } = await import("./replay.js");
    return replayPage(root, q.get("replay"));
  }
  if (q.get("practice")) {
    document.title = "Find the better move · Sir Tommy";
    const { practicePage } = await import("./practice.js");
    return practicePage(root, q.get("practice"), Number(q.get("seat")) || 0);
  }
  if (q.get("result")) {
    document.title = "Result · Sir Tommy";
    const el = h("section", { class: "panel result" });
    fill(root, el);
    const { loadResult } = await import("./result.js");
    return loadResult(el, q.get("result")).catch((e) => fill(el, h("p", {}, e.message)));
  }
  if (q.get("player")) {
    document.title = "Player · Sir Tommy";
    const { playerPage } = await import("./profile.js");
    return playerPage(root, q.get("player"));
  }
  if (q.get("room")) {
    document.title = "Room · Sir Tommy";
    const { roomPage } = await import("./room.js");
    return roomPage(root, q.get("room"));
  }
  if (q.get("arena")) {
    document.title = "Arena · Sir Tommy";
    const { arenaPage } = await import("./arena.js");
    return arenaPage(root, q.get("arena"));
  }
  document.title = "Sir Tommy race";
  const { lobbyPage } = await import("./lobby.js");
  return lobbyPage(root);
}

route().catch((e) => fill(document.getElementById("app"), h("p", { role: "alert" }, `The page could not load: ${e.message}`)));
// The service worker caches the client's files and shows a page of its own
// when offline (sw.js); registered after the page has loaded, so that its
// downloads do not compete with the first screen's.
if ("serviceWorker" in navigator) {
  window.addEventListener("load", () => navigator.serviceWorker.register("/sw.js").catch(() => { /* no cache: the site still works */ }));
}
// pushState after a rematch keeps this page; the back button reloads the route.
window.addEventListener("popstate", () => location.reload());
