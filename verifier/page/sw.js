// The verification page offline: the page's files and the pinned anchor bundle are kept in one
// cache. Network first, so an online visit refreshes them; the cached copy when the network fails.
const CACHE = 'passport-verify-v1';
const FILES = ['./', 'style.css', 'app.js', 'jsqr.js', 'anchors.json'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys().then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name)))).then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  // Only the page's own files and the bundle; the optional online check must never answer from a cache.
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
