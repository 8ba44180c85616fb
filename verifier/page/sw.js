// The verification page offline: the page's files, the pinned anchor bundle and the trust graph are
// kept in one cache. Network first, so an online visit refreshes them; the cached copy when the
// network fails.
const CACHE = 'passport-verify-v2';
const FILES = ['./', 'style.css', 'app.js', 'jsqr.js', 'anchors.json', 'graph.json'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys().then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name)))).then(() => self.clients.claim()),
  );
});

/** Stores a fresh answer, unless the cache already holds that version (the graph is large and mostly unchanged). */
async function keep(request, response) {
  const cache = await caches.open(CACHE);
  const tag = response.headers.get('etag');
  if (tag && (await cache.match(request))?.headers.get('etag') === tag) return;
  await cache.put(request, response);
}

self.addEventListener('fetch', (event) => {
  // Only the page's own files and the trust material; the optional online check must never answer from a cache.
  const cached = FILES.map((file) => new URL(file, self.location).href);
  if (event.request.method !== 'GET' || !cached.includes(event.request.url.split('?')[0])) return;
  event.respondWith(
    fetch(event.request)
      .then((response) => {
        if (response.ok) event.waitUntil(keep(event.request, response.clone()));
        return response;
      })
      .catch(() => caches.match(event.request).then((cached) => cached ?? Response.error())),
  );
});
