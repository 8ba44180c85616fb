/**
 * An open load (bench/support.ts openLoad): requests arrive as a Poisson process at a fixed rate,
 * whatever the answers do, rather than autocannon's closed loop of connections that each ask again
 * once answered. Why: the gateway batches the subgraph fetches of requests in flight together, and a
 * closed loop's connections fall into step with one another or out of it and stay there, so the same
 * process at the same offered load spent from 3.5 to 6.5 ms of CPU a request from one 10-second stretch
 * to the next (docs/OPS-COST.md). Arrivals drawn at random times (seeded, so every run asks
 * alike) keep no step to fall into: what a request costs then depends on the rate, not on luck.
 *
 * Options as JSON in argv[2] (or "@file"): {url, perSecond, seconds, connections, method, headers,
 * bodies, seed, startAt}. `startAt` (milliseconds since the epoch) is when the first arrival may come:
 * loads started one after another but given one `startAt` ask their servers at the same instants,
 * rather than each a few milliseconds after the load spawned before it. Requests beyond `connections` in flight wait for a socket (node's http.Agent queue),
 * so a server that cannot keep up sees its backlog grow, as it would. Prints one JSON line: requests
 * (answered), seconds, perSecond, latency median/p95/p99 (ms), non2xx, errors, timeouts (0), and the
 * moment each response came (milliseconds since the epoch), as load-worker.mjs does.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

const options = JSON.parse(process.argv[2].startsWith('@') ? readFileSync(process.argv[2].slice(1), 'utf8') : process.argv[2]);
const { url, perSecond, seconds, connections = 64, method = 'POST', headers = {}, bodies, seed = 1, startAt } = options;
const target = new URL(url);
const agent = new Agent({ keepAlive: true, maxSockets: connections });

// A 32-bit LCG, as bench/support.ts seededDraws: the same arrival times every run.
let state = seed >>> 0;
const uniform = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
const now = () => performance.timeOrigin + performance.now();

const latencies = [];
const completions = [];
let sent = 0;
let non2xx = 0;
let errors = 0;
let inFlight = 0;

function send() {
  const body = bodies[sent % bodies.length];
  sent += 1;
  inFlight += 1;
  const started = now();
  // Each request is settled once: answered, or failed (before or during its answer).
  let settled = false;
  const fail = () => {
    if (settled) return;
    settled = true;
    errors += 1;
    inFlight -= 1;
  };
  const outgoing = request({ agent, host: target.hostname, port: target.port, path: target.pathname + target.search, method, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (response) => {
    response.on('data', () => {});
    response.on('error', fail);
    response.on('aborted', fail);
    response.on('end', () => {
      if (settled) return;
      settled = true;
      const at = now();
      latencies.push(at - started);
      completions.push(Math.round(at * 1000) / 1000);
      if (response.statusCode < 200 || response.statusCode >= 300) non2xx += 1;
      inFlight -= 1;
    });
  });
  outgoing.on('error', fail);
  outgoing.end(body);
}

const start = startAt ?? now();
const end = start + seconds * 1000;
let next = start;
// Every arrival due is sent when the timer fires (a timer is late by a millisecond or more at times);
// the schedule itself never drifts, as each arrival time is the last plus an exponential gap.
await new Promise((resolve) => {
  const tick = () => {
    const moment = now();
    while (next <= moment && next < end) {
      send();
      next += (-Math.log(1 - uniform()) / perSecond) * 1000;
    }
    if (next >= end) resolve();
    else setTimeout(tick, Math.max(0, next - now()));
  };
  tick();
});
while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
agent.destroy();
const elapsed = (now() - start) / 1000;
latencies.sort((a, b) => a - b);
const quantile = (q) => latencies[Math.min(latencies.length - 1, Math.max(0, Math.ceil(q * latencies.length) - 1))] ?? Number.NaN;
completions.sort((a, b) => a - b);
process.stdout.write(
  JSON.stringify({
    requests: latencies.length,
    seconds: elapsed,
    perSecond: latencies.length / elapsed,
    latency: { median: quantile(0.5), p95: quantile(0.95), p99: quantile(0.99) },
    non2xx,
    errors,
    timeouts: 0,
    completions,
  }),
);
