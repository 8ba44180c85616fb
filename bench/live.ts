/**
 * Subscriptions at scale (issue 46, item 6): `npm start` in a process of its own; idle subscribers
 * (graphql-ws connections with one `passportEvents` subscription each, on a passport nothing is
 * appended to) and active ones (on the passports appended to), while events are appended through
 * REST at a steady rate. Measured: the lag from an event's `recordedAt` (the issuer's clock under the
 * passport's lock, before the commit) to its delivery at the client, whether every active subscriber
 * got every event once and in order, the platform process's resident memory per idle subscriber (its
 * VmRSS, and the V8 heap its /metrics tells, each read after a minute idle before and after they
 * opened), the gateway's reads and the platform's CPU per append, and the database connections
 * before and after the subscribers opened.
 *
 *   npm run bench:live
 *   LIVE_IDLE=500 LIVE_SECONDS=10 npm run bench:live   # shorter, while developing (printed, not written)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { PlatformProcess } from './platform-process.js';
import { residentMemory } from './processes.js';
import { BenchRun, cpuSeconds, loadAverage, markdownTable, quantile, writeReport, type KeyFigure } from './support.js';

const IDLE = Number(process.env.LIVE_IDLE ?? 2_000);
/** Active subscribers: two on each passport appended to. */
const ACTIVE_PASSPORTS = Number(process.env.LIVE_PASSPORTS ?? 50);
const PER_PASSPORT = 2;
const RATE = Number(process.env.LIVE_RATE ?? 50);
const SECONDS = Number(process.env.LIVE_SECONDS ?? 30);
const written = !process.env.LIVE_IDLE && !process.env.LIVE_SECONDS && !process.env.LIVE_RATE && !process.env.LIVE_PASSPORTS;
const MODEL = 'live-bench-battery';
const EVENTS = 'subscription($id: ID!) { passportEvents(passportId: $id) { seq recordedAt } }';

const benchRun = new BenchRun('live', 'npm run bench:live');
const dataDir = mkdtempSync(join(tmpdir(), 'live-bench-'));
/** The platform's Prometheus endpoint, as its start prints it. */
let metricsUrl: string | undefined;
const platform = await PlatformProcess.prepare({
  dataDir,
  env: { NODE_ENV: 'production', LOG_LEVEL: 'warn', GRAPHQL_MAX_SUBSCRIPTIONS_PER_CLIENT: String(IDLE + 1_000) },
  log: (line) => void (metricsUrl ??= /^\s*Metrics\s+(http:\S+)/.exec(line)?.[1]),
});
const clients: Client[] = [];

async function post(service: 'registry' | 'issuer', path: string, body: unknown): Promise<any> {
  const response = await fetch(`${platform.base(service)}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${platform.tokens.writer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`POST ${service}${path}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

const newPassport = async (serial: number): Promise<string> =>
  (await post('issuer', '/passports', { identity: `https://id.gs1.org/01/09520123456788/21/LIVE-${serial}`, type_ref: { id: MODEL, version: 1 }, config_vector: { chemistry: 'LFP' } })).passport_id;

/** One subscriber: its own connection, one subscription; `onEvent` with each event as it comes. */
async function subscriber(passportId: string, onEvent: (event: { seq: number; recordedAt: string }) => void): Promise<void> {
  const client = createClient({ url: platform.gatewayUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
  clients.push(client);
  await new Promise<void>((resolve, reject) => {
    client.on('connected', () => resolve());
    client.on('closed', () => reject(new Error('a subscriber connection closed')));
  });
  client.subscribe<{ passportEvents: { seq: number; recordedAt: string } }>(
    { query: EVENTS, variables: { id: passportId } },
    { next: ({ data }) => data && onEvent(data.passportEvents), error: (error) => console.error('subscription error', error), complete: () => {} },
  );
}

async function databaseConnections(): Promise<number> {
  const client = new pg.Client({ connectionString: platform.databaseUrl() });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string }>('SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return Number(rows[0]!.count);
  } finally {
    await client.end();
  }
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The sum of the platform's `/metrics` samples named `name` that carry each of `labels`. */
async function metric(name: string, ...labels: string[]): Promise<number> {
  const text = await (await fetch(metricsUrl!)).text();
  let sum = 0;
  for (const [, sampleLabels = '', value] of text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm'))) if (labels.every((label) => sampleLabels.includes(label))) sum += Number(value);
  return sum;
}

/** The V8 heap in use, live objects and garbage not yet collected. */
const heapUsed = () => metric('nodejs_heap_size_used_bytes');
/**
 * The gateway's reads of the live feeds (its queries: each subscriber's, unless shared; the appends
 * reach it as mutations from the REST facade), and its requests to the issuer's subgraph (the
 * appends' included).
 */
const gatewayWork = async () => ({
  reads: await metric('graphql_server_operation_duration_seconds_count', 'server="gateway"', 'graphql_operation_type="query"'),
  issuerFetches: await metric('graphql_gateway_subgraph_fetch_duration_seconds_count', 'subgraph="issuer"'),
});

/**
 * How long the process is left idle before its memory is read, before the idle subscribers open and
 * after: V8 gives back the heap it grew (garbage included) once the process has been idle a while.
 */
const IDLE_SETTLE_MS = 60_000;

try {
  console.log('Starting the platform (npm start) …');
  await platform.start();
  const pid = platform.pid!;
  await post('registry', '/', {
    kind: 'model',
    id: MODEL,
    body: { title: MODEL, schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { chemistry: { enum: ['LFP', 'NMC'] } }, required: ['chemistry'] } },
  });
  const idlePassport = await newPassport(0);
  const active: string[] = [];
  for (let index = 1; index <= ACTIVE_PASSPORTS; index += 1) active.push(await newPassport(index));

  // Settled as the idle subscribers will be: the start's garbage is not counted as given back by them.
  await settle(IDLE_SETTLE_MS);
  const before = { rss: residentMemory(pid).rss, heap: await heapUsed(), connections: await databaseConnections() };
  console.log(`Opening ${IDLE} idle subscribers …`);
  for (let index = 0; index < IDLE; index += 1) await subscriber(idlePassport, () => {});
  await settle(5_000);
  const opened = { rss: residentMemory(pid).rss, heap: await heapUsed() };
  await settle(IDLE_SETTLE_MS - 5_000);
  const idle = { rss: residentMemory(pid).rss, heap: await heapUsed(), connections: await databaseConnections() };

  // Each active subscriber's sequence numbers as delivered, and each delivery's lag.
  const delivered = new Map<string, number[][]>(active.map((id) => [id, []]));
  const lags: number[] = [];
  for (const id of active) {
    for (let index = 0; index < PER_PASSPORT; index += 1) {
      const seqs: number[] = [];
      delivered.get(id)!.push(seqs);
      await subscriber(id, (event) => {
        seqs.push(event.seq);
        lags.push(Date.now() - Date.parse(event.recordedAt));
      });
    }
  }
  const withActive = await databaseConnections();
  const workBefore = await gatewayWork();
  const postmaster = (await platform.postmasterPid())!;
  /** CPU seconds of the platform's Node process and of its PostgreSQL (a child of it). */
  const cpu = () => {
    const postgres = cpuSeconds(postmaster);
    return { node: cpuSeconds(pid) - postgres, postgres };
  };
  const cpuBefore = cpu();

  console.log(`Appending ${RATE} events/s for ${SECONDS} s …`);
  const appended = new Map<string, number>(active.map((id) => [id, 0]));
  const appends: Promise<void>[] = [];
  /** Appends that failed, by what answered them. */
  const failures = new Map<string, number>();
  const started = performance.now();
  for (let index = 0; index < RATE * SECONDS; index += 1) {
    // An open load: each append at its time, whether the ones before have answered or not.
    const due = started + (index * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await settle(wait);
    const id = active[index % active.length]!;
    appends.push(
      post('issuer', `/passports/${id}/events`, {
        type: 'ObjectEvent',
        payload: { eventTime: new Date().toISOString(), eventTimeZoneOffset: '+00:00', action: 'OBSERVE', bizStep: 'inspecting', epcList: [`https://id.gs1.org/01/09520123456788/21/LIVE-${index}`] },
      }).then(
        () => void appended.set(id, appended.get(id)! + 1),
        (error: unknown) => {
          // The status and the problem's code, or why no answer came (the fetch's cause).
          const answered = /: (\d{3}) .*?"code":"(\w+)"/.exec(String(error));
          const cause = (error as { cause?: { code?: string } }).cause?.code;
          const reason = answered ? `${answered[1]} ${answered[2]}` : `no answer${cause ? ` (${cause})` : ''}`;
          failures.set(reason, (failures.get(reason) ?? 0) + 1);
        },
      ),
    );
  }
  await Promise.all(appends);
  const appendSeconds = (performance.now() - started) / 1000;
  await settle(5_000);
  const workAfter = await gatewayWork();
  const cpuAfter = cpu();
  const after = { rss: residentMemory(pid).rss, connections: await databaseConnections() };

  // Every active subscriber got its passport's events 0 … n-1, once and in order.
  let complete = 0;
  let subscribers = 0;
  for (const [id, lists] of delivered) {
    const expected = Array.from({ length: appended.get(id)! }, (_, seq) => seq);
    for (const seqs of lists) {
      subscribers += 1;
      if (JSON.stringify(seqs) === JSON.stringify(expected)) complete += 1;
    }
  }
  const events = [...appended.values()].reduce((sum, count) => sum + count, 0);
  const failed = [...failures].map(([reason, count]) => `${count} ${reason}`).join(', ') || 'none';
  const perAppend = (count: number) => (events ? count / events : 0).toFixed(2);
  const readsPerAppend = perAppend(workAfter.reads - workBefore.reads);
  const fetchesPerAppend = perAppend(workAfter.issuerFetches - workBefore.issuerFetches);
  const cpuPerAppend = (part: 'node' | 'postgres') => `${events ? (((cpuAfter[part] - cpuBefore[part]) * 1000) / events).toFixed(1) : '—'} ms`;
  /** The cores the platform needs to keep up with RATE appends a second, at what each cost. */
  const coresNeeded = events ? (((cpuAfter.node - cpuBefore.node + cpuAfter.postgres - cpuBefore.postgres) / events) * RATE).toFixed(2) : '—';
  const perIdle = (idle.rss - before.rss) / IDLE;
  const perIdleOpened = (opened.rss - before.rss) / IDLE;
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  const p50 = quantile(lags, 0.5);
  const p95 = quantile(lags, 0.95);
  const figures: KeyFigure[] = [
    { measure: `commit → delivery, ${IDLE.toLocaleString('en')} idle + ${subscribers} active subscribers, ${RATE} appends/s (p50 / p95)`, value: `${ms(p50)} / ${ms(p95)}`, target: 'p95 ≤ 250 ms' },
    { measure: 'active subscribers that got every event once, in order', value: `${complete} of ${subscribers}`, target: 'all' },
    { measure: `platform memory per idle subscriber (VmRSS, ${IDLE_SETTLE_MS / 1000} s after they opened; 5 s after)`, value: `${kb(perIdle)} (${kb(perIdleOpened)})`, target: '≤ 20 KB' },
    {
      measure: `database connections: none / ${IDLE.toLocaleString('en')} idle / with ${subscribers} active / after the appends`,
      value: `${before.connections} / ${idle.connections} / ${withActive} / ${after.connections}`,
      target: 'not growing with subscribers',
    },
  ];
  for (const figure of figures) console.log(`${figure.measure}: ${figure.value}${figure.target ? ` (target ${figure.target})` : ''}`);
  console.log(`${events} events appended in ${appendSeconds.toFixed(1)} s (asked: ${RATE * SECONDS} in ${SECONDS} s); appends failed: ${failed}; ${lags.length} deliveries`);
  console.log(
    `per append: ${readsPerAppend} gateway reads, ${fetchesPerAppend} requests to the issuer's subgraph, CPU ${cpuPerAppend('node')} Node + ${cpuPerAppend('postgres')} PostgreSQL; heap in use per idle subscriber ${kb((idle.heap - before.heap) / IDLE)}`,
  );
  if (written) {
    const document = `# Live subscriptions at scale

${benchRun.report()}

\`npm start\` in a process of its own (bench/platform-process.ts, \`NODE_ENV=production\`, \`LOG_LEVEL=warn\`), on a fresh
embedded PostgreSQL. ${IDLE.toLocaleString('en')} idle subscribers, each a graphql-ws connection of its own with one
\`passportEvents\` subscription on a passport nothing is appended to; ${subscribers} active ones, ${PER_PASSPORT} on each of
${ACTIVE_PASSPORTS} passports; then ${RATE} \`ObjectEvent\` appends a second through the REST facade for ${SECONDS} s, an open
load spread round-robin over the active passports. The subscribers and the appends are the benchmark's own process, on the same machine.

${markdownTable(
  ['measure', 'figure', 'target'],
  figures.map((figure) => [figure.measure, figure.value, figure.target ?? '—']),
)}

- **Lag**: from the event's \`recordedAt\` (the issuer's clock, read under the passport's lock before it signs and commits)
  to the client's receipt: commit, NOTIFY, the issuer's change stream to the gateway, the gateway's read of the
  event through its query planner, the WebSocket. ${lags.length.toLocaleString('en')} deliveries. Per append the gateway ran ${readsPerAppend} reads
  (its GraphQL queries; ${PER_PASSPORT} subscribers follow each passport) and sent ${fetchesPerAppend} requests to the issuer's subgraph (the
  append's own mutation, which the REST facade sends through the gateway, included); the
  platform spent ${cpuPerAppend('node')} of CPU in Node and ${cpuPerAppend('postgres')} in PostgreSQL per append, the append and its deliveries:
  ${coresNeeded} of the machine's cores at ${RATE} a second. With other work on the machine (the load above) the platform gets
  less than that, the appends queue, and the lag grows with the queue.
- **Every event**: ${events.toLocaleString('en')} events appended in ${appendSeconds.toFixed(1)} s of the ${(RATE * SECONDS).toLocaleString('en')} asked in ${SECONDS} s
  (appends that failed, by status: ${failed}); a subscriber counts when the
  sequence numbers it received are exactly 0 … n−1 of its passport.
- **Memory**: VmRSS of the platform process (the six servers; PostgreSQL apart) ${IDLE_SETTLE_MS / 1000} s after the idle subscribers
  opened, less before them (also read after ${IDLE_SETTLE_MS / 1000} s idle), divided by their number: ${mib(before.rss)} → ${mib(idle.rss)} (5 s after they opened ${mib(opened.rss)}: V8 keeps the heap it
  grew while they opened, garbage included, until a later collection gives it back); after the appends ${mib(after.rss)}. One reading:
  V8 collects when it decides (each connection's ping every 12 s keeps the process allocating), so the figure moves between runs. The V8
  heap in use (\`nodejs_heap_size_used_bytes\` of the platform's \`/metrics\`, garbage not yet collected included):
  ${mib(before.heap)} → ${mib(opened.heap)} 5 s after → ${mib(idle.heap)} ${IDLE_SETTLE_MS / 1000} s after, ${kb((idle.heap - before.heap) / IDLE)} per idle subscriber.
- **Database connections**: \`pg_stat_activity\` of the platform's database (the pools and each service's one LISTEN
  connection), before any subscriber, with the idle ones, with the active ones too, after the appends.
`;
    writeReport(benchRun, document, figures);
  }
} finally {
  await Promise.all(clients.map((client) => client.dispose()));
  await platform.stop();
  rmSync(dataDir, { recursive: true, force: true });
  // The key-encryption key the start made beside the data folder.
  rmSync(`${dataDir}.kek`, { force: true });
  console.log(`load ${loadAverage().toFixed(2)}`);
}
