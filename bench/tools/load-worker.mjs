/**
 * The load generator of the benchmarks (bench/support.ts autocannonLoad), run as a process of its
 * own so that the client's HTTP work is billed neither to the server measured nor to the benchmark's
 * process. autocannon with the options given as JSON in argv[2] ({url, connections, seconds, method,
 * headers, body, paths, pick, bodies, amount}: with amount, that many requests
 * rather than `seconds` of them; with paths, each connection keeps one of them, handed out in
 * turn, or with pick "request" every request takes the next one; with bodies, every request takes
 * the next body, so that no two requests in flight are alike); every
 * response's latency is kept, because autocannon's own summary has no 95th percentile. Prints one
 * JSON line: requests, seconds, requests/s, latency median/p95/p99 (ms), non-2xx, errors, timeouts;
 * with `completions: true` also the moment each response came (milliseconds since the epoch, to the
 * microsecond), so that several loads running at once can be counted over the same windows of time.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const { url, connections, seconds, amount, method = 'GET', headers = {}, body, paths, pick = 'connection', bodies, completions = false } = JSON.parse(
  // "@file": options too long for one argument (many bodies) are in a file.
  process.argv[2].startsWith('@') ? readFileSync(process.argv[2].slice(1), 'utf8') : process.argv[2],
);
let handedOut = 0;
const next = () => paths[handedOut++ % paths.length];
// autocannon gives each connection a context of its own: there a connection keeps its path.
const choosePath = pick === 'request' ? () => next() : (context) => (context.path ??= next());
let bodiesHandedOut = 0;
const perConnection = paths
  ? { requests: [{ setupRequest: (request, context) => ({ ...request, path: choosePath(context) }) }] }
  : bodies
    ? { requests: [{ setupRequest: (request) => ({ ...request, body: bodies[bodiesHandedOut++ % bodies.length] }) }] }
    : {};
const latencies = [];
const completedAt = [];
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;

const instance = autocannon({ url, connections, ...(amount ? { amount } : { duration: seconds }), method, headers, ...(body === undefined ? {} : { body }), ...perConnection }, (error, result) => {
  if (error) {
    process.stdout.write(JSON.stringify({ error: String(error) }));
    return;
  }
  latencies.sort((a, b) => a - b);
  process.stdout.write(
    JSON.stringify({
      requests: result.requests.total,
      seconds: result.duration,
      perSecond: result.requests.total / result.duration,
      latency: { median: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), p99: quantile(latencies, 0.99) },
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      ...(completions ? { completions: completedAt } : {}),
    }),
  );
});
instance.on('response', (_client, _status, _bytes, responseTime) => {
  latencies.push(responseTime);
  // performance.timeOrigin + now(): the epoch's clock, which every process on the machine shares, finer than Date.now().
  if (completions) completedAt.push(Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000);
});
