// The service worker: it keeps this version's files (all named under
// /assets/<version>/, so they never change) and the offline page, serves
// them from its cache, and shows the offline page when a page cannot be
// loaded. It never touches the API or the websocket: races are live.
// The server fills in the version and the file list (web/static.go).
const VERSION = {{.Version}};
const ASSETS = {{.Assets}};
const CACHE = `sirtommy-${VERSION}`;
const OFFLINE = "/offline.html";

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll([OFFLINE, ...ASSETS])).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k.startsWith("sirtommy-") && k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== "GET" || url.origin !== location.origin) return;
  if (url.pathname.startsWith("/assets/")) {
    event.respondWith(caches.match(req).then((hit) => hit || fetch(req)));
    return;
  }
  if (req.mode === "navigate") {
    event.respondWith(fetch(req).catch(() => caches.match(OFFLINE)));
  }
  // Everything else (the API, the websocket, plain names) goes to the network untouched.
});
