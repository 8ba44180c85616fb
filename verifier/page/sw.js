// The verification page offline: the page's files and the pinned anchor bundle are kept in one
// cache. Network first, so an online visit refreshes them; the cached copy when the network fails.
// The trust path material of each key the page has checked is kept by the page itself, in a cache
// of its own (PATHS, app.ts), so that it is kept even before this worker controls the page.
const CACHE = 'passport-verify-v4';
const PATHS = 'passport-verify-paths';
const FILES = ['./', 'style.css', 'app.js', 'verifier.js', 'jsqr.js', 'anchors.json'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  // Earlier versions' caches go (v2 held the whole trust graph, v3 a page without verifier.js); the page's path material stays.
  const kept = [CACHE, PATHS];
  event.waitUntil(
    caches.keys().then((names) => Promise.all(names.filter((name) => !kept.includes(name)).map((name) => caches.delete(name)))).then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  // Only the page's own files and the anchor bundle; the optional online check must never answer from a cache.
  const cached = FILES.map((file) => new URL(file, self.location).href);
  if (event.request.method !== 'GET' || !cached.includes(event.request.url.split('?')[0])) return;
  event.respondWith(
    fetch(event.request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          event.waitUntil(caches.open(CACHE).then((cache) => cache.put(event.request, copy)));
        }
        return response;
      })
      .catch(() => caches.match(event.request).then((cached) => cached ?? Response.error())),
  );
});
