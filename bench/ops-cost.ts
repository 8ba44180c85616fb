/**
 * What the operator plumbing (lib/ops/) costs: the platform as `npm start` runs it, in configurations
 * side by side, each a process of its own (bench/platform-process.ts) on its own embedded PostgreSQL,
 * ALL LOADED AT THE SAME TIME with the same OPEN load: the platform benchmark's mixed workload
 * (bench/mixed-workload.ts: many distinct cross-service GraphQL queries at the gateway) arriving as a
 * Poisson process at a fixed rate (bench/tools/open-load-worker.mjs), the same arrival times for all:
 *
 * - off: METRICS=off and no OTLP endpoint (no metric hook, no metrics listener, no tracing SDK);
 * - control: the same as off, a second platform: the A/A control (what the method reads where there
 *   is nothing to read: its bias and spread);
 * - metrics: metrics on, tracing off (the default);
 * - tracing: metrics on, tracing on at 10 % (OTEL_TRACES_SAMPLER=parentbased_traceidratio,
 *   OTEL_TRACES_SAMPLER_ARG=0.1), exporting OTLP/HTTP (protobuf) to a receiver this benchmark runs on
 *   loopback (a node:http server that answers 200 and counts bytes);
 * - info (only when OPS_COST_ONLY names it): metrics on, tracing off, LOG_LEVEL=info (a JSON line per request);
 * - unsampled: tracing on as in "tracing" but OTEL_TRACES_SAMPLER=always_off, so that no request is
 *   sampled: what tracing costs every request, apart from the sampled tenth's spans (one platform);
 * - metrics-b and tracing-b: a second platform of metrics and of tracing (GROUPS below);
 * - limits-off, limits-counted (only when OPS_COST_ONLY names them): metrics on with RATE_LIMITS=off,
 *   and with every request counted (loopback counted, quotas no load reaches), so that "metrics"
 *   against limits-off is what the rate limits cost at their defaults, limits-counted what counting does;
 * - edge-off, edge-remote (only when OPS_COST_ONLY names them): metrics on with the gateway's and the
 *   facade's edge features (issue 45: rate limits, compression, supergraph polling) off where a setting
 *   turns them off, and metrics on with those features at their defaults as a remote client meets them
 *   (loopback counted by the rate limits, Accept-Encoding as a browser sends it), so that "metrics" and
 *   edge-remote against edge-off are what the edge features cost, to the benchmark and to a remote client.
 *
 * All log at LOG_LEVEL=warn unless said. Goals (issue "Operable in production", item 7): metrics cost
 * at most 3 % of throughput against off, tracing at 10 % at most 10 %; one scrape of /metrics after
 * the load under 20 ms (wall time, and the server's CPU for it).
 *
 * What is read is CPU per request, and the cost in throughput follows from it: saturated, the
 * platform's throughput is bound by its node main thread (88–93 % busy in every saturated run
 * measured), so a configuration whose main thread spends a fraction x more per request answers
 * 1 − 1/(1 + x) fewer requests. Saturated throughput itself is not compared: under a closed loop
 * (autocannon's connections, each asking again once answered) the gateway's batching of the fetches of
 * requests in flight together makes the connections fall into step or out of it, and the same process
 * answered from 126 to 276 requests a second from one 10-second stretch to the next (docs/OPS-COST.md).
 * An open load keeps no step: what a request costs depends on the rate, not on luck.
 *
 * Why at the same time: whatever else the machine does weighs on all platforms alike at every moment.
 * After seeding come OPS_COST_ROUNDS rounds. In each, every platform's process is new
 * (stopped and started again on its data after the first round: a process keeps its luck, a few per
 * cent dearer or cheaper than its twin, for its whole life, so only new processes average it out), and
 * the load runs through a warm-up and OPS_COST_WINDOWS windows of OPS_COST_WINDOW_SECONDS, the same
 * instants for all. At each window's edge the benchmark reads every platform's CPU at one moment
 * (node's main thread and all its threads, its PostgreSQL's processes) and counts the responses that
 * came in the window. A cost is the configuration's CPU per request over off's (summed over all
 * windows, each side the mean of its platforms) − 1, with a 95 % interval from a bootstrap over the
 * rounds, the windows in each (blocks of 3 consecutive windows) and each configuration's two platforms
 * in each (drawn with replacement). The control's reading against off is the method's bias and spread.
 *
 *   node --import tsx bench/ops-cost.ts                                                    # the report
 *   OPS_COST_ROUNDS=1 OPS_COST_WINDOWS=6 OPS_COST_WARMUP_SECONDS=10 node --import tsx bench/ops-cost.ts --print     # shorter, printed, no report
 *   OPS_COST_ONLY=metrics,tracing OPS_COST_PROFILE=/tmp/profiles node --import tsx bench/ops-cost.ts   # CPU profiles (node --cpu-prof) of each platform process, printed only
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { ServiceName } from '../lib/config/services.js';
import { mixedWorkload, MIX_QUERIES, mixKinds, seedPlatformData } from './mixed-workload.js';
import { lockingPostmaster } from '../lib/db/embedded-postgres.js';
import { PlatformProcess } from './platform-process.js';
import { BenchRun, mainThreadCpuNs, openLoad, threadsCpuNs, formatMs as ms, loadAverage, markdownTable, median, quantile, seededDraws, writeReport, type KeyFigure, type Load } from './support.js';

/**
 * Requests a second each platform is offered (Poisson arrivals): all platforms together should leave
 * the two cores room (six platforms at 15: about 0.8 of a core; at 22 they kept up, at 25 the machine fell behind), so that each answers at the rate
 * offered and none queues; a platform that cannot keep up is reported.
 */
const RATE = Number(process.env.OPS_COST_RATE ?? 15);
/** Most requests in flight at once from each load; later arrivals wait for a socket. */
const CONNECTIONS = 64;
/**
 * Before each round's load the platforms stand at rest for REST_STEPS steps of REST_STEP_SECONDS: each
 * one's main thread's CPU a second at rest is the median of its steps' (a one-off, such as the export
 * of the seeding's spans, does not count).
 */
const REST_STEPS = 5;
const REST_STEP_SECONDS = 2;
/** Windows of each round. */
const WINDOWS = Number(process.env.OPS_COST_WINDOWS ?? 8);
const WINDOW_SECONDS = Number(process.env.OPS_COST_WINDOW_SECONDS ?? 10);
/** Every platform loaded, nothing counted: JIT, caches and pools settle. */
const WARMUP_SECONDS = Number(process.env.OPS_COST_WARMUP_SECONDS ?? 30);
/** The loads go on this long after the last window, so that none ends inside it. */
const TAIL_SECONDS = 5;
/** Consecutive windows resampled together by the bootstrap, and how many resamplings. */
const BLOCK = 3;
const RESAMPLINGS = 4000;
const PASSPORTS = 48;
const MODELS = 8;
const MIX_BODIES = 3000;
/** Scrapes of /metrics after the load, one after another; wall time and CPU are the medians. */
const SCRAPES = 25;
const LOG_LEVEL = 'warn';
const SAMPLE_RATIO = 0.1;
const PROFILE_DIR = process.env.OPS_COST_PROFILE;
/**
 * OPS_COST_BASELINE=<another checkout> (e.g. `git worktree add /tmp/main main`, its node_modules
 * installed): off and control run that checkout's platform with metrics on, as metrics and metrics-b
 * run this one's, so that "metrics" reads what this checkout's changes cost at their defaults.
 */
const BASELINE = process.env.OPS_COST_BASELINE;
const printOnly = process.argv.includes('--print') || Boolean(PROFILE_DIR) || Boolean(process.env.OPS_COST_ONLY) || Boolean(BASELINE);

// ---------------------------------------------------------------------------------------------
// The OTLP/HTTP receiver: answers 200 to every export, counts requests and bytes. Loopback only.

const received = { requests: 0, bytes: 0 };
const receiver = createServer((request, response) => {
  let bytes = 0;
  request.on('data', (chunk: Buffer) => (bytes += chunk.length));
  request.on('end', () => {
    received.requests += 1;
    received.bytes += bytes;
    // An empty ExportTraceServiceResponse: success, nothing rejected.
    response.writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/x-protobuf' }).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

// ---------------------------------------------------------------------------------------------
// The configurations

/** Every configuration's environment starts here: no OTLP endpoint, warn-level logs, production. */
const BASE_ENV: NodeJS.ProcessEnv = { NODE_ENV: 'production', LOG_LEVEL, LOG_FORMAT: 'json', OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_SDK_DISABLED: '' };
const TRACING_ENV = { METRICS: 'on', OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(SAMPLE_RATIO) };
/** Rate limits that count every request, loopback's too, with quotas no load reaches: the counting path, PostgreSQL leases included. */
const EVERY_REQUEST_COUNTED = 'anonymous=1000000000/60,writer=1000000000/60,admin=1000000000/60,loopback=counted';
const CONFIGS = {
  off: { label: 'everything off (METRICS=off, no OTLP endpoint)', env: { METRICS: 'off' } },
  control: { label: 'everything off, a second platform (the A/A control)', env: { METRICS: 'off' } },
  metrics: { label: 'metrics on, tracing off', env: { METRICS: 'on' } },
  'metrics-b': { label: 'metrics on, tracing off, a second platform', env: { METRICS: 'on' } },
  tracing: { label: `metrics on, tracing on at ${SAMPLE_RATIO * 100} % (parentbased_traceidratio, OTLP/HTTP protobuf to loopback)`, env: TRACING_ENV },
  'tracing-b': { label: `metrics on, tracing on at ${SAMPLE_RATIO * 100} %, a second platform`, env: TRACING_ENV },
  info: { label: 'metrics on, tracing off, LOG_LEVEL=info (a line per request)', env: { METRICS: 'on', LOG_LEVEL: 'info' } },
  unsampled: { label: 'metrics on, tracing on with nothing sampled (always_off): what every request pays for tracing', env: { ...TRACING_ENV, OTEL_TRACES_SAMPLER: 'always_off' } },
  'limits-off': { label: 'metrics on, tracing off, RATE_LIMITS=off: what the rate limits at their defaults cost is "metrics" against it', env: { METRICS: 'on', RATE_LIMITS: 'off' } },
  'limits-counted': {
    label: 'metrics on, tracing off, every request counted (loopback counted, quotas no load reaches): the counting path, PostgreSQL leases included',
    env: { METRICS: 'on', RATE_LIMITS: EVERY_REQUEST_COUNTED },
  },
  /**
   * What has no setting to turn it off stays on: the subgraph deadlines and circuit breakers (a timer
   * and a counter per fetch), the cost limit and its report (extensions.cost, the cost histogram);
   * CORS (no origins: not registered) and trusted documents are off by default.
   */
  'edge-off': {
    label: 'metrics on, tracing off, the edge features off where a setting turns them off: RATE_LIMITS=off, COMPRESSION_MIN_BYTES=off, SUPERGRAPH_POLL_INTERVAL_MS=0',
    env: { METRICS: 'on', RATE_LIMITS: 'off', COMPRESSION_MIN_BYTES: 'off', SUPERGRAPH_POLL_INTERVAL_MS: '0' },
  },
  'edge-remote': {
    label:
      'metrics on, tracing off, the edge features at their defaults as a remote browser meets them: every request counted by the rate limits (loopback counted, quotas no load reaches), its load sending Accept-Encoding: gzip, deflate, br',
    env: { METRICS: 'on', RATE_LIMITS: EVERY_REQUEST_COUNTED },
    headers: { 'accept-encoding': 'gzip, deflate, br' },
  },
} as const;
type ConfigName = keyof typeof CONFIGS;
/**
 * Each configuration runs as two platforms (processes of their own): two processes of the same code
 * and configuration, loaded alike, have differed by more than the costs to be shown (the control
 * read −17 % against "off" in a run at load 25–32), so a cost compares the mean of two with the mean
 * of two, and each pair's own difference is shown (its A/A reading). The difference lasts a process's
 * life (off against control, round by round in one run: +5.2, −3.3, −1.6, −1.1, −2.1, +1.2 %), so every
 * round starts new processes, and a run of R rounds compares 2R processes of each configuration.
 */
const GROUPS = {
  off: ['off', 'control'],
  metrics: ['metrics', 'metrics-b'],
  tracing: ['tracing', 'tracing-b'],
  info: ['info'],
  unsampled: ['unsampled'],
  'limits-off': ['limits-off'],
  'limits-counted': ['limits-counted'],
  'edge-off': ['edge-off'],
  'edge-remote': ['edge-remote'],
} as const satisfies Record<string, readonly ConfigName[]>;
type GroupName = keyof typeof GROUPS;
/** OPS_COST_ONLY=metrics,info: off and these only (printed, no report), e.g. for CPU profiles. */
const ONLY = process.env.OPS_COST_ONLY?.split(',').map((name) => name.trim());
/** Run only when named: info, and the rate limits' and edge features' configurations (issue 45, item 8). */
const NAMED_ONLY: readonly ConfigName[] = ['info', 'limits-off', 'limits-counted', 'edge-off', 'edge-remote'];
/** Request headers a configuration's load sends beyond the body's type (a remote client's). */
const loadHeadersOf = (name: ConfigName): Readonly<Record<string, string>> => (CONFIGS[name] as { headers?: Readonly<Record<string, string>> }).headers ?? {};
/** When it runs, every configuration is also read against edge-off: what the edge features cost it. */
const EDGE_OFF: ConfigName = 'edge-off';
const NAMES = (Object.keys(CONFIGS) as ConfigName[]).filter((name) => name === 'off' || (ONLY ? ONLY.includes(name) : !NAMED_ONLY.includes(name)));
/** Rounds, each with new processes of every platform: as many as platforms by default, so that each is started first once (inOrderOf). */
const ROUNDS = Number(process.env.OPS_COST_ROUNDS ?? NAMES.length);

interface Target {
  platform: PlatformProcess;
  /** The Prometheus endpoint the start output names; undefined when metrics are off. */
  metricsUrl?: string;
  /** The embedded cluster's folder, as the start output names it (as root it lies outside the data folder). */
  clusterDir?: string;
  /** Lines the process wrote to stdout and stderr (its logs), and their bytes. */
  lines: number;
  bytes: number;
}

const benchRun = new BenchRun('ops-cost', 'node --import tsx bench/ops-cost.ts');
const root = mkdtempSync(join(tmpdir(), 'ops-cost-'));
const targets = {} as Record<ConfigName, Target>;

/**
 * CPU seconds of each process tree rooted at `roots` (user and system, with those of exited children:
 * PostgreSQL's backends come and go), from one pass over /proc, so that all are read at one moment.
 */
function treesCpuSeconds(roots: readonly number[]): number[] {
  const parent = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(entry), Number(fields[1]));
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]));
    } catch {
      // Gone meanwhile.
    }
  }
  const rootOf = (pid: number): number | undefined => {
    for (let id: number | undefined = pid; id !== undefined && id > 1; id = parent.get(id)) if (roots.includes(id)) return id;
    return undefined;
  };
  const sums = new Map<number, number>(roots.map((pid) => [pid, 0]));
  for (const [pid, count] of ticks) {
    const owner = rootOf(pid);
    if (owner !== undefined) sums.set(owner, sums.get(owner)! + count);
  }
  // USER_HZ is 100 on Linux.
  return roots.map((pid) => sums.get(pid)! / 100);
}

/** What is read of every platform at a window's edge. */
interface Reading {
  /** Milliseconds since the epoch (the clock the loads' completion times use). */
  at: number;
  node: Record<string, number>;
  /** Nanoseconds on a CPU of each node process's main thread (its JavaScript). */
  main: Record<string, number>;
  postgres: Record<string, number>;
  lines: Record<string, number>;
  bytes: Record<string, number>;
  load: number;
}

/** A window: what each platform answered and spent in it, in which round (each round's processes are new). */
interface Window {
  round: number;
  seconds: number;
  load: number;
  answered: Record<string, number>;
  /** Node's CPU (all its threads, and its main thread), nanoseconds; PostgreSQL's, seconds. */
  nodeNs: Record<string, number>;
  mainNs: Record<string, number>;
  /** The main thread's CPU less what it spends at rest in as long (timers, observers): what the requests cost it. */
  loadMainNs: Record<string, number>;
  postgresS: Record<string, number>;
  lines: Record<string, number>;
  logBytes: Record<string, number>;
}

/** Which of a configuration's platforms a resampling takes (the same number, drawn with replacement). */
type Pick = (names: readonly ConfigName[]) => readonly ConfigName[];
/** A resampling is made of parts: windows of one round, and the platforms taken in that round. */
interface Part {
  windows: readonly number[];
  pick: Pick;
}
type Sample = readonly Part[];

/**
 * A 95 % interval of `statistic`, from RESAMPLINGS bootstrap draws on three levels: the rounds (with
 * replacement: each round's processes are new, so the luck of a process, which lasts its life, is
 * drawn anew), in each round its windows (moving blocks of BLOCK consecutive windows), and, for each
 * configuration, its platforms in that round (with replacement); a fixed seed, so that a run's figures repeat.
 */
function bootstrapInterval(rounds: readonly (readonly number[])[], statistic: (sample: Sample) => number): [number, number] {
  const draws = seededDraws(11);
  const pick: Pick = (names) => names.map(() => names[draws.index(names.length)]!);
  const values = Array.from({ length: RESAMPLINGS }, () =>
    statistic(
      rounds.map(() => {
        const windows = rounds[draws.index(rounds.length)]!;
        const block = Math.min(BLOCK, windows.length);
        const picked: number[] = [];
        while (picked.length < windows.length) {
          const first = draws.index(windows.length - block + 1);
          for (let i = 0; i < block && picked.length < windows.length; i += 1) picked.push(windows[first + i]!);
        }
        return { windows: picked, pick };
      }),
    ),
  );
  return [quantile(values, 0.025), quantile(values, 0.975)];
}

const percent = (value: number, digits = 1) => `${value >= 0 ? '+' : '−'}${Math.abs(value * 100).toFixed(digits)} %`;
const costText = (cost: number) => `${(cost * 100).toFixed(1)} %`;

/**
 * The platforms in the order they are started and their loads spawned in a round: rotated by one each
 * round, so that no configuration keeps a place. Unrotated, the platform started first (its load
 * spawned first, and so, before loads shared one start instant, asking a few milliseconds ahead of the
 * others every time) read 2–5 % dearer than its twin in three runs, and in 3 rounds of 4 of an A/A run
 * with rotation (2026-11-28 04:00 UTC). By default there are as many rounds as platforms, so that each
 * takes each place once.
 */
const inOrderOf = (round: number): ConfigName[] => NAMES.map((_, i) => NAMES[(i + round - 1) % NAMES.length]!);

/** Starts every platform (again, on its data, after the first round) and checks that metrics are served as configured. */
async function startAll(round: number): Promise<Record<ConfigName, number>> {
  for (const name of inOrderOf(round)) {
    const target = targets[name];
    target.metricsUrl = undefined;
    console.log(`Round ${round}: starting the platform "${name}" (${CONFIGS[name].label}) …`);
    const startMs = await target.platform.start();
    console.log(`  running after ${(startMs / 1000).toFixed(1)} s; metrics: ${target.metricsUrl ?? 'not served'}`);
    const metricsOff = CONFIGS[name].env.METRICS === 'off';
    if (metricsOff !== (target.metricsUrl === undefined)) throw new Error(`${name}: metrics should be ${metricsOff ? 'off' : 'served'}`);
    await serveOneWrite(name);
  }
  const postmasterOf = {} as Record<ConfigName, number>;
  for (const name of NAMES) {
    const pid = targets[name].clusterDir ? await lockingPostmaster(targets[name].clusterDir!) : undefined;
    if (pid === undefined) throw new Error(`${name}: no postmaster`);
    postmasterOf[name] = pid;
  }
  return postmasterOf;
}

/**
 * One refused write on a platform (a pack for a passport that does not exist: 404, nothing changed
 * but an admin log entry), after every start. A platform in service takes writes, and its first write
 * enables the admin log's AsyncLocalStorage (lib/audit/admin-log.ts), whose promise hook every promise
 * of the process pays from then on. Without it, the processes of "off" and "metrics" started again
 * for a round would run without that hook while "tracing" runs with it (OpenTelemetry's context
 * manager is one; the admin log then rides in it), and tracing would be charged for what every
 * platform in service pays: it read 5–9 points dearer in the rounds after the first than in the
 * first, whose platforms had all been seeded (docs/OPS-COST.md).
 */
async function serveOneWrite(name: ConfigName): Promise<void> {
  const { platform } = targets[name];
  const response = await fetch(`${platform.base('issuer')}/passports/00000000-0000-4000-8000-000000000000/pack`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${platform.tokens.admin}` },
  });
  await response.arrayBuffer();
  if (response.status !== 404) throw new Error(`${name}: a pack for a passport that does not exist answered ${response.status}, not 404`);
}

/** Seeds each platform alike, side by side, through its REST facade; answers each one's request bodies of the mixed workload. */
async function seedAll(): Promise<Record<ConfigName, string[]>> {
  const mixes = {} as Record<ConfigName, string[]>;
  const seedOne = async (name: ConfigName) => {
    const { platform } = targets[name];
    const rest = async (service: ServiceName, path: string, body?: unknown): Promise<any> => {
      const response = await fetch(`${platform.base(service)}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${platform.tokens.admin}` },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const answer = await response.json();
      if (!response.ok) throw new Error(`${name}: POST ${service}${path} answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
      return answer;
    };
    console.log(`Seeding "${name}": ${PASSPORTS} passports, ${MODELS} models, a trust root …`);
    const seeded = await seedPlatformData({ rest, issuerBase: platform.base('issuer') }, { passports: PASSPORTS, models: MODELS });
    const mix = mixedWorkload(seeded, MIX_BODIES);
    // Every kind answers without errors, and the passports' keys stand valid.
    for (const request of mix.slice(0, 25)) {
      const response = await fetch(platform.gatewayUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: request.body });
      const answer = (await response.json()) as { errors?: unknown[] };
      if (response.status !== 200 || answer.errors?.length) throw new Error(`${name}: ${request.kind} answered ${response.status}: ${JSON.stringify(answer).slice(0, 400)}`);
    }
    const sample = await fetch(platform.gatewayUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: MIX_QUERIES.passport, variables: { id: seeded.passportIds[0], kid: seeded.kids[0], at: new Date().toISOString() } }),
    }).then((response) => response.text());
    if (!sample.includes('"standing":"valid"')) throw new Error(`${name}: the passports' signing keys should stand valid: ${sample.slice(0, 400)}`);
    mixes[name] = mix.map((request) => request.body);
  };
  await Promise.all(NAMES.map(seedOne));
  return mixes;
}

/** What a platform spends a second at rest (timers, observers, pools): milliseconds of CPU a second. */
interface AtRest {
  main: number;
  node: number;
  postgres: number;
}

/** Every platform at rest, before a round's load: its CPU a second (its main thread's, the median of REST_STEPS steps). */
async function readAtRest(round: number, postmasterOf: Record<ConfigName, number>): Promise<Record<ConfigName, AtRest>> {
  console.log(`Round ${round}: all ${NAMES.length} platforms at rest for ${REST_STEPS * REST_STEP_SECONDS} s …`);
  const read = () => ({
    at: performance.now(),
    main: NAMES.map((name) => mainThreadCpuNs(targets[name].platform.pid!)),
    node: NAMES.map((name) => threadsCpuNs(targets[name].platform.pid!)),
    postgres: treesCpuSeconds(NAMES.map((name) => postmasterOf[name])),
  });
  const readings = [read()];
  for (let step = 0; step < REST_STEPS; step += 1) {
    await new Promise((resolve) => setTimeout(resolve, REST_STEP_SECONDS * 1000));
    readings.push(read());
  }
  const [first, last] = [readings[0]!, readings.at(-1)!];
  const seconds = (last.at - first.at) / 1000;
  const atRest = Object.fromEntries(
    NAMES.map((name, i) => [
      name,
      {
        main: median(readings.slice(1).map((reading, step) => (reading.main[i]! - readings[step]!.main[i]!) / 1e6 / ((reading.at - readings[step]!.at) / 1000))),
        node: (last.node[i]! - first.node[i]!) / 1e6 / seconds,
        postgres: ((last.postgres[i]! - first.postgres[i]!) * 1000) / seconds,
      },
    ]),
  ) as Record<ConfigName, AtRest>;
  console.log(
    `  at rest, ms of CPU a second: ${NAMES.map((name) => `${name} main thread ${atRest[name].main.toFixed(2)}, node ${atRest[name].node.toFixed(2)}, PostgreSQL ${atRest[name].postgres.toFixed(2)}`).join('; ')}`,
  );
  return atRest;
}

/** Every platform's CPU at one moment: node's threads first, in an order that rotates, all within a millisecond or so; then PostgreSQL in one pass over /proc. */
function readAll(postmasterOf: Record<ConfigName, number>, readingNumber: number): Reading {
  const order = [...NAMES.slice(readingNumber % NAMES.length), ...NAMES.slice(0, readingNumber % NAMES.length)];
  const node: Record<string, number> = {};
  const main: Record<string, number> = {};
  const before = performance.timeOrigin + performance.now();
  for (const name of order) {
    const pid = targets[name].platform.pid!;
    main[name] = mainThreadCpuNs(pid);
    node[name] = threadsCpuNs(pid);
  }
  const at = (before + performance.timeOrigin + performance.now()) / 2;
  const pg = treesCpuSeconds(NAMES.map((name) => postmasterOf[name]));
  return {
    at,
    node,
    main,
    postgres: Object.fromEntries(NAMES.map((name, i) => [name, pg[i]!])),
    lines: Object.fromEntries(NAMES.map((name) => [name, targets[name].lines])),
    bytes: Object.fromEntries(NAMES.map((name) => [name, targets[name].bytes])),
    load: loadAverage(),
  };
}

/** Responses of a load that came in [from, to): `times` ascending. */
function answeredBetween(times: readonly number[], from: number, to: number): number {
  const firstAtOrAfter = (moment: number) => {
    let [low, high] = [0, times.length];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (times[middle]! < moment) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  return firstAtOrAfter(to) - firstAtOrAfter(from);
}

/**
 * One round's load: every platform at once, the same arrival times for all, through a warm-up, the
 * windows and a tail; answers the windows and each platform's load.
 */
async function loadRound(round: number, postmasterOf: Record<ConfigName, number>, mixes: Record<ConfigName, string[]>, atRest: Record<ConfigName, AtRest>) {
  const loadSeconds = WARMUP_SECONDS + WINDOWS * WINDOW_SECONDS + TAIL_SECONDS;
  console.log(
    `Round ${round}: loading the ${NAMES.length} platforms at once for ${loadSeconds} s (${RATE} requests a second each, Poisson arrivals): ${WARMUP_SECONDS} s of warm-up, then ${WINDOWS} windows of ${WINDOW_SECONDS} s …`,
  );
  // One instant for every load's first arrival, after all are spawned: none gets a lead from being spawned first.
  const started = performance.now() + 2000;
  const loadOf = {} as Record<ConfigName, Promise<Load>>;
  for (const name of inOrderOf(round)) {
    loadOf[name] = openLoad({
      url: targets[name].platform.gatewayUrl,
      perSecond: RATE,
      seconds: loadSeconds,
      connections: CONNECTIONS,
      headers: { 'content-type': 'application/json', ...loadHeadersOf(name) },
      bodies: mixes[name],
      // The same seed for all platforms, another each round: every platform is asked at the same moments.
      seed: 5 + round,
      startAt: performance.timeOrigin + started,
    });
  }
  const loads = NAMES.map((name) => loadOf[name]);
  // A load that fails is reported when all are awaited below, not as an unhandled rejection meanwhile.
  for (const load of loads) load.catch(() => {});

  const readings: Reading[] = [];
  let receivedBefore = { ...received };
  for (let edge = 0; edge <= WINDOWS; edge += 1) {
    const due = started + (WARMUP_SECONDS + edge * WINDOW_SECONDS) * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
    readings.push(readAll(postmasterOf, edge));
    if (edge === 0) receivedBefore = { ...received };
    if (edge > 0) {
      const [a, b] = [readings[edge - 1]!, readings[edge]!];
      console.log(`  window ${round}.${edge}: ${NAMES.map((name) => `${name} ${((b.main[name]! - a.main[name]!) / 1e9).toFixed(2)} s`).join(', ')} of main-thread CPU; load ${b.load.toFixed(2)}`);
    }
  }
  const exported = { requests: received.requests - receivedBefore.requests, bytes: received.bytes - receivedBefore.bytes };
  const settled = await Promise.all(loads);
  const results = Object.fromEntries(NAMES.map((name, i) => [name, settled[i]!])) as Record<ConfigName, Load>;
  const windows: Window[] = readings.slice(1).map((end, i) => {
    const start = readings[i]!;
    const per = (f: (name: ConfigName) => number) => Object.fromEntries(NAMES.map((name) => [name, f(name)]));
    return {
      round,
      seconds: (end.at - start.at) / 1000,
      load: end.load,
      answered: per((name) => answeredBetween(results[name].completions!, start.at, end.at)),
      nodeNs: per((name) => end.node[name]! - start.node[name]!),
      mainNs: per((name) => end.main[name]! - start.main[name]!),
      loadMainNs: per((name) => end.main[name]! - start.main[name]! - atRest[name].main * 1e3 * (end.at - start.at)),
      postgresS: per((name) => end.postgres[name]! - start.postgres[name]!),
      lines: per((name) => end.lines[name]! - start.lines[name]!),
      logBytes: per((name) => end.bytes[name]! - start.bytes[name]!),
    };
  });
  const lastEdge = readings.at(-1)!.at;
  for (const name of NAMES) {
    if (results[name].completions!.at(-1)! < lastEdge) throw new Error(`${name}: its load ended before round ${round}'s last window did`);
  }
  return { windows, results, exported };
}

try {
  // -------------------------------------------------------------------------------------------
  // Each platform's folder, and its first start and seeding.
  for (const name of NAMES) {
    const target: Target = { lines: 0, bytes: 0 } as Target;
    const nodeFlags = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE_DIR, name)}`] : [];
    target.platform = await PlatformProcess.prepare({
      dataDir: join(root, name),
      env: { ...BASE_ENV, ...CONFIGS[name].env, ...(BASELINE && GROUPS.off.includes(name as never) ? { METRICS: 'on' } : {}) },
      ...(BASELINE && GROUPS.off.includes(name as never) ? { root: BASELINE } : {}),
      nodeFlags,
      log: (line) => {
        target.lines += 1;
        target.bytes += line.length + 1;
        const metrics = /^\s+Metrics\s+(http:\/\/\S+\/metrics)/.exec(line);
        if (metrics) target.metricsUrl = metrics[1];
        const cluster = /^\s+Database\s+embedded PostgreSQL in (\S+)/.exec(line);
        if (cluster) target.clusterDir = cluster[1];
      },
    });
    targets[name] = target;
  }
  let postmasterOf = await startAll(1);
  const mixes = await seedAll();

  // -------------------------------------------------------------------------------------------
  // The rounds: after the first, every platform is stopped and started again (new processes, the same data).
  const windows: Window[] = [];
  const loadsOf = Object.fromEntries(NAMES.map((name) => [name, [] as Load[]])) as Record<ConfigName, Load[]>;
  const atRestOf = Object.fromEntries(NAMES.map((name) => [name, [] as AtRest[]])) as Record<ConfigName, AtRest[]>;
  const exported = { requests: 0, bytes: 0 };
  for (let round = 1; round <= ROUNDS; round += 1) {
    if (round > 1) {
      for (const name of NAMES) await targets[name].platform.stop();
      postmasterOf = await startAll(round);
    }
    const atRest = await readAtRest(round, postmasterOf);
    for (const name of NAMES) atRestOf[name].push(atRest[name]);
    const done = await loadRound(round, postmasterOf, mixes, atRest);
    windows.push(...done.windows);
    for (const name of NAMES) loadsOf[name].push(done.results[name]);
    exported.requests += done.exported.requests;
    exported.bytes += done.exported.bytes;
  }
  const failedOf = (name: ConfigName) => loadsOf[name].reduce((sum, load) => sum + load.non2xx + load.errors + load.timeouts, 0);
  const failed = NAMES.reduce((sum, name) => sum + failedOf(name), 0);

  // -------------------------------------------------------------------------------------------
  // Figures over the windows, and over any resampling of them (a Sample: windows of rounds, platforms taken).
  const rounds = Array.from({ length: ROUNDS }, (_, r) => windows.flatMap((w, i) => (w.round === r + 1 ? [i] : [])));
  const asRun: Sample = rounds.map((indices) => ({ windows: indices, pick: (names) => names }));
  const total = (indices: readonly number[], f: (window: Window) => number) => indices.reduce((sum, i) => sum + f(windows[i]!), 0);
  type Spent = 'mainNs' | 'loadMainNs' | 'nodeNs' | 'postgresS';
  /** Milliseconds of CPU per request of the platforms named, summed over the sample's windows. */
  const msPerRequest = (sample: Sample, names: readonly ConfigName[], spent: Spent) => {
    let [cpu, requests] = [0, 0];
    for (const part of sample) {
      for (const name of part.pick(names)) {
        cpu += total(part.windows, (w) => w[spent][name]!);
        requests += total(part.windows, (w) => w.answered[name]!);
      }
    }
    return (cpu * (spent === 'postgresS' ? 1000 : 1e-6)) / requests;
  };
  const platformsOf = (group: GroupName) => GROUPS[group].filter((name) => NAMES.includes(name)) as ConfigName[];
  /** CPU added per request against the reference: the ratio of CPU per request (each summed over the windows) − 1. */
  const added = (names: readonly ConfigName[], reference: readonly ConfigName[], spent: Spent) => (sample: Sample) => msPerRequest(sample, names, spent) / msPerRequest(sample, reference, spent) - 1;
  /**
   * The share of saturated throughput lost, from the main thread's CPU added per request x: 1 − 1/(1 + x).
   * Saturated, what the main thread spends at rest (timers such as the event-loop delay monitor's, which
   * cost a wake-up each when the process would sleep) is nearly nothing, so it is taken out
   * (loadMainNs); `atRate` counts it, as it is at the rate offered.
   */
  const throughputCost =
    (names: readonly ConfigName[], reference: readonly ConfigName[], spent: 'loadMainNs' | 'mainNs' = 'loadMainNs') =>
    (sample: Sample) =>
      1 - 1 / (1 + added(names, reference, spent)(sample));
  const estimate = (statistic: (sample: Sample) => number) => {
    const [low, high] = bootstrapInterval(rounds, statistic);
    return { value: statistic(asRun), low, high };
  };
  type Estimate = ReturnType<typeof estimate>;
  const withInterval = (e: Estimate, format: (value: number) => string) => `${format(e.value)} (${format(e.low)} to ${format(e.high)})`;
  const alone = (indices: readonly number[]): Sample => [{ windows: indices, pick: (names) => names }];
  const reference = platformsOf('off');
  const comparedGroups = (Object.keys(GROUPS) as GroupName[]).filter((group) => group !== 'off' && platformsOf(group).length > 0);
  const costs = Object.fromEntries(
    comparedGroups.map((group) => [
      group,
      {
        throughput: estimate(throughputCost(platformsOf(group), reference)),
        atRate: estimate(throughputCost(platformsOf(group), reference, 'mainNs')),
        node: estimate(added(platformsOf(group), reference, 'nodeNs')),
        postgres: estimate(added(platformsOf(group), reference, 'postgresS')),
        windowRatios: windows.map((_, i) => msPerRequest(alone([i]), platformsOf(group), 'loadMainNs') / msPerRequest(alone([i]), reference, 'loadMainNs')),
      },
    ]),
  ) as Partial<Record<GroupName, { throughput: Estimate; atRate: Estimate; node: Estimate; postgres: Estimate; windowRatios: number[] }>>;
  /** The A/A readings: each configuration's second platform against its first. */
  const twins = (Object.keys(GROUPS) as GroupName[]).filter((group) => platformsOf(group).length === 2);
  const aa = Object.fromEntries(
    twins.map((group) => {
      const [first, second] = platformsOf(group) as [ConfigName, ConfigName];
      return [group, { first, second, throughput: estimate(throughputCost([second], [first])) }];
    }),
  ) as Partial<Record<GroupName, { first: ConfigName; second: ConfigName; throughput: Estimate }>>;
  const every = windows.map((_, i) => i);
  const seconds = total(every, (w) => w.seconds);
  const perSecond = (name: ConfigName) => total(every, (w) => w.answered[name]!) / seconds;
  /** Platforms that answered less than 95 % of the rate offered: the machine could not keep up, and queueing changes what a request costs. */
  const behind = NAMES.filter((name) => perSecond(name) < 0.95 * RATE);
  const loadsSeen = windows.map((w) => w.load);

  const verdict = (e: Estimate, limit: number) =>
    e.high <= limit
      ? `**met**: the whole 95 % interval lies at or under ${limit * 100} %`
      : e.low > limit
        ? `**missed**: the whole 95 % interval lies over ${limit * 100} %`
        : `**not decided**: the 95 % interval spans ${limit * 100} %`;
  const platformRows = NAMES.map((name) => [
    `**${name}**: ${CONFIGS[name].label}`,
    perSecond(name).toFixed(1),
    `**${ms(msPerRequest(asRun, [name], 'loadMainNs'))}** (${ms(msPerRequest(asRun, [name], 'mainNs'))})`,
    ms(msPerRequest(asRun, [name], 'nodeNs')),
    ms(msPerRequest(asRun, [name], 'postgresS')),
    (['main', 'node', 'postgres'] as const).map((part) => median(atRestOf[name].map((atRest) => atRest[part])).toFixed(2)).join(' / '),
    ms(median(loadsOf[name].map((load) => load.latency.p95))),
    `${(total(every, (w) => w.lines[name]!) / total(every, (w) => w.answered[name]!)).toFixed(2)}`,
    `${failedOf(name)} of ${loadsOf[name].reduce((sum, load) => sum + load.requests, 0)}`,
  ]);
  const platformTable = markdownTable(
    [
      'platform',
      `req/s answered over the windows (${RATE} offered)`,
      'node main thread CPU per request, less its CPU at rest (all of it)',
      'node CPU per request (all threads)',
      'PostgreSQL CPU per request',
      'at rest: node main thread / all node threads / PostgreSQL, ms of CPU a second (median of the rounds)',
      'p95 latency (whole load)',
      'log lines per request',
      'failed',
    ],
    platformRows,
  );
  const aaText = (group: GroupName) => {
    const reading = aa[group];
    return reading ? `${reading.second} against ${reading.first}: ${withInterval(reading.throughput, costText)}` : '—';
  };
  const costRows = comparedGroups.map((group) => {
    const cost = costs[group]!;
    return [
      `**${group}** (${platformsOf(group).join(', ')})`,
      `**${withInterval(cost.throughput, costText)}**`,
      withInterval(cost.atRate, costText),
      withInterval(cost.node, (value) => percent(value)),
      withInterval(cost.postgres, (value) => percent(value)),
      `${quantile(cost.windowRatios, 0.25).toFixed(3)} to ${quantile(cost.windowRatios, 0.75).toFixed(3)}`,
      aaText(group),
    ];
  });
  const table = markdownTable(
    [
      `configuration (its platforms) against everything off (${reference.join(', ')})`,
      "cost in throughput at saturation, from the main thread's CPU per request less its CPU at rest (95 % interval)",
      `the same with the CPU at rest counted, as at ${RATE} requests/s`,
      'node CPU added per request, all threads (95 % interval)',
      'PostgreSQL CPU added per request (95 % interval)',
      "windows' ratios of main-thread CPU less its CPU at rest (quartiles)",
      'A/A: its second platform against its first',
    ],
    [...costRows, [`everything off (${reference.join(', ')})`, '— (the reference)', '—', '—', '—', '—', aaText('off')]],
  );
  const windowRows = windows.map((w, i) => [
    `${w.round}.${rounds[w.round - 1]!.indexOf(i) + 1}`,
    ...NAMES.map((name) => `${(w.answered[name]! / w.seconds).toFixed(1)} · ${ms(w.mainNs[name]! / 1e6 / w.answered[name]!)}`),
    ...comparedGroups.map((group) => costs[group]!.windowRatios[i]!.toFixed(3)),
    w.load.toFixed(2),
  ]);
  const perWindow = markdownTable(
    ['window', ...NAMES.map((name) => `${name}: req/s · main thread per request`), ...comparedGroups.map((group) => `${group} / off, main thread less its CPU at rest`), 'load average'],
    windowRows,
  );
  /** Each process's life: a platform's main-thread CPU per request in each round (every round's processes are new). */
  const lifeTable = markdownTable(
    ['platform: node main thread CPU per request, less its CPU at rest', ...rounds.map((_, r) => `round ${r + 1}`)],
    NAMES.map((name) => [name, ...rounds.map((indices, r) => `${ms(msPerRequest(alone(indices), [name], 'loadMainNs'))} (started ${inOrderOf(r + 1).indexOf(name) + 1}.)`)]),
  );
  /** Against edge-off (when it runs): what the edge features at their defaults cost each configuration that has them. */
  const edgeRows = NAMES.includes(EDGE_OFF)
    ? comparedGroups
        .filter((group) => group !== EDGE_OFF)
        .map((group) => {
          const names = platformsOf(group);
          return [
            `**${group}** (${names.join(', ')}) against ${EDGE_OFF}`,
            `**${withInterval(estimate(throughputCost(names, [EDGE_OFF])), costText)}**`,
            withInterval(estimate(throughputCost(names, [EDGE_OFF], 'mainNs')), costText),
            withInterval(estimate(added(names, [EDGE_OFF], 'nodeNs')), (value) => percent(value)),
            withInterval(estimate(added(names, [EDGE_OFF], 'postgresS')), (value) => percent(value)),
          ];
        })
    : [];
  const edgeTable = edgeRows.length
    ? `\n${markdownTable(
        [
          `configuration against ${EDGE_OFF}`,
          "cost in throughput at saturation, from the main thread's CPU per request less its CPU at rest (95 % interval)",
          `the same with the CPU at rest counted, as at ${RATE} requests/s`,
          'node CPU added per request, all threads (95 % interval)',
          'PostgreSQL CPU added per request (95 % interval)',
        ],
        edgeRows,
      )}\n`
    : '';
  console.log(`\n${table}\n${edgeTable}\n${platformTable}\n\n${lifeTable}\n\n${perWindow}\n`);
  if (behind.length) console.log(`Behind the offered rate: ${behind.join(', ')}`);
  console.log(`Spans exported by "tracing" during the windows: ${exported.requests} OTLP requests, ${(exported.bytes / 1024).toFixed(0)} KiB`);
  if (failed) throw new Error(`${failed} requests failed`);

  // -------------------------------------------------------------------------------------------
  // One scrape of /metrics after the load: wall time at the client, CPU of the server's threads.
  const scrapes = {} as Record<ConfigName, { wall: number[]; cpu: number[]; bytes: number; series: number }>;
  for (const name of NAMES) {
    const url = targets[name].metricsUrl;
    if (!url) continue;
    const pid = targets[name].platform.pid!;
    const wall: number[] = [];
    const cpu: number[] = [];
    let text = '';
    // One scrape first, unmeasured (the first pays for lazily made things).
    await (await fetch(url)).text();
    for (let i = 0; i < SCRAPES; i += 1) {
      const cpuBefore = threadsCpuNs(pid);
      const started = performance.now();
      const response = await fetch(url);
      text = await response.text();
      wall.push(performance.now() - started);
      cpu.push((threadsCpuNs(pid) - cpuBefore) / 1e6);
      if (response.status !== 200) throw new Error(`${name}: /metrics answered ${response.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    scrapes[name] = { wall, cpu, bytes: Buffer.byteLength(text), series: text.split('\n').filter((line) => line && !line.startsWith('#')).length };
    console.log(`  /metrics of "${name}": median ${ms(median(wall))} wall, ${ms(median(cpu))} CPU, ${scrapes[name].bytes} bytes, ${scrapes[name].series} samples`);
  }

  const scrapeRows = Object.entries(scrapes).map(([name, scrape]) => [
    name,
    `**${ms(median(scrape.wall))}** (max ${ms(Math.max(...scrape.wall))})`,
    `**${ms(median(scrape.cpu))}** (max ${ms(Math.max(...scrape.cpu))})`,
    `${(scrape.bytes / 1024).toFixed(1)} KiB`,
    String(scrape.series),
  ]);
  const scrapeTable = markdownTable(['platform', 'wall time of one scrape (median)', 'server CPU of one scrape (median)', 'exposition', 'samples'], scrapeRows);
  console.log(`\n${scrapeTable}\n`);

  if (!printOnly) {
    const scrapeWall = median(scrapes.metrics!.wall);
    const scrapeCpu = median(scrapes.metrics!.cpu);
    const { metrics, tracing } = costs;
    const aaLine = (group: GroupName) => `${aa[group]!.second} against ${aa[group]!.first} ${withInterval(aa[group]!.throughput, costText)}`;
    const loadText = `load average ${Math.min(...loadsSeen).toFixed(2)} to ${Math.max(...loadsSeen).toFixed(2)}, median ${median(loadsSeen).toFixed(2)}`;
    const figures: KeyFigure[] = [
      {
        measure: `metrics on (tracing off) against everything off: cost in throughput (from the node main thread's CPU per request) on the mixed workload, two platforms of each configuration all loaded at once, ${RATE} requests/s each (Poisson arrivals), ${ROUNDS} rounds of new processes × ${WINDOWS} windows of ${WINDOW_SECONDS} s, 95 % interval`,
        value: `${withInterval(metrics!.throughput, costText)} at saturation, ${withInterval(metrics!.atRate, costText)} with the CPU at rest counted; node CPU per request, all threads ${withInterval(metrics!.node, (value) => percent(value))}`,
        target: 'cost ≤ 3 %',
      },
      {
        measure: `tracing on at ${SAMPLE_RATIO * 100} % (and metrics) against everything off, same`,
        value: `${withInterval(tracing!.throughput, costText)} at saturation, ${withInterval(tracing!.atRate, costText)} with the CPU at rest counted; node CPU per request, all threads ${withInterval(tracing!.node, (value) => percent(value))}`,
        target: 'cost ≤ 10 %',
      },
      {
        measure: 'tracing on with nothing sampled (always_off; one platform) against everything off, same: what every request pays for tracing',
        value: `${withInterval(costs.unsampled!.throughput, costText)} at saturation`,
      },
      {
        measure: "A/A: each configuration's second platform against its first (cost in throughput, 95 % interval): the spread between two processes alike",
        value: twins.map(aaLine).join('; '),
      },
      { measure: 'one scrape of /metrics after the load (npm start, all six servers): wall time / server CPU, medians', value: `${ms(scrapeWall)} / ${ms(scrapeCpu)}`, target: '< 20 ms' },
      {
        measure: `node main thread CPU per request less its CPU at rest, ${NAMES.join(' / ')} (${loadText})`,
        value: NAMES.map((name) => ms(msPerRequest(asRun, [name], 'loadMainNs'))).join(' / '),
      },
    ];
    const document = [
      '# What the operator plumbing costs',
      '',
      benchRun.report(),
      `- During the windows: ${loadText} (read at each window's end; the benchmark's own ${NAMES.length} platforms, their PostgreSQLs and loads, and whatever else ran)`,
      ...(behind.length
        ? [
            `- **Behind the offered rate** (under 95 % of ${RATE} requests/s answered, so the machine could not keep up and queueing changed what a request costs): ${behind.join(', ')}. Lower OPS_COST_RATE.`,
          ]
        : []),
      '',
      '## Results',
      '',
      `- Metrics on, tracing off: cost ${withInterval(metrics!.throughput, costText)} of throughput against everything off at saturation (${withInterval(metrics!.atRate, costText)} with the main thread's CPU at rest counted, as at ${RATE} requests/s) — goal ≤ 3 %: ${verdict(metrics!.throughput, 0.03)}.`,
      `- Tracing on at ${SAMPLE_RATIO * 100} % (with metrics): cost ${withInterval(tracing!.throughput, costText)} at saturation (${withInterval(tracing!.atRate, costText)} with the CPU at rest counted) — goal ≤ 10 %: ${verdict(tracing!.throughput, 0.1)}.`,
      `- A/A readings (two platforms alike, nothing to find): ${twins.map(aaLine).join('; ')}.`,
      `- One scrape of /metrics: ${ms(scrapeWall)} wall, ${ms(scrapeCpu)} server CPU (medians) — goal < 20 ms: ${scrapeWall < 20 && scrapeCpu < 20 ? '**met**' : '**missed**'}.`,
      '',
      table,
      '',
      platformTable,
      '',
      `A cost in throughput is 1 − 1/(1 + x), where x is the CPU the configuration's node main threads spent per request over what the two "off" platforms' spent, − 1, each main thread's CPU less what it spends at rest in as long (each side the mean of its platforms, summed over the ${ROUNDS} × ${WINDOWS} windows): saturated, the platform answers as many requests as its main thread can carry, and what it spends at rest (timers, such as the event-loop delay monitor's ten a second, each a wake-up of a process that would sleep) is then nearly nothing; the cost with it counted, as at ${RATE} requests/s, is given beside. The interval is the 2.5th to 97.5th percentile of the same figure over ${RESAMPLINGS} bootstrap resamplings on three levels: the rounds (drawn with replacement), the windows of each (blocks of ${BLOCK} consecutive windows) and each configuration's two platforms in each (drawn with replacement), so that the spread between processes alike, which the A/A readings show and which lasts a process's life, is in the interval. Node CPU: the main thread's and all threads' (/proc/<pid>/task/*/schedstat), over the requests answered in the windows; PostgreSQL: its postmaster and backends (/proc/<pid>/stat, with exited children). At rest: CPU a second with no request, before each round's load (${REST_STEPS} steps of ${REST_STEP_SECONDS} s; the main thread's is the median of the steps', so that a one-off does not count). p95 latency: over the whole load, warm-up included.`,
      '',
      "Each window (requests/s answered and main-thread CPU per request, each platform; the configurations' ratios to off):",
      '',
      perWindow,
      '',
      "Each process's life (every round starts new processes of every platform):",
      '',
      lifeTable,
      '',
      'One scrape of /metrics after the load:',
      '',
      scrapeTable,
      '',
      '## What is measured, and how',
      '',
      `The platform as \`npm start\` runs it (bin/start.ts: the six servers in one node process, its own embedded PostgreSQL), started ${NAMES.length} times as processes of their own (bench/platform-process.ts), each on its own data folder and ports, all with \`NODE_ENV=production\` and \`LOG_LEVEL=${LOG_LEVEL}\` unless said otherwise:`,
      '',
      ...NAMES.map(
        (name) =>
          `- **${name}**: ${CONFIGS[name].label}; environment ${Object.entries(CONFIGS[name].env)
            .map(([key, value]) => `\`${key}=${key === 'OTEL_EXPORTER_OTLP_ENDPOINT' ? 'http://127.0.0.1:<port>' : value}\``)
            .join(', ')}.`,
      ),
      '',
      `Tracing exports to an OTLP/HTTP receiver this benchmark runs on loopback (a node:http server that answers 200 to every export and counts the bytes; nothing leaves the machine); during the windows "tracing" exported ${exported.requests} requests, ${(exported.bytes / 1024).toFixed(0)} KiB. Each platform's logs go to a pipe the benchmark reads, as a log collector would.`,
      '',
      `Data and load: each platform is seeded alike through its REST facade, and loaded with the platform benchmark's mixed workload (bench/mixed-workload.ts, docs/benchmarks/platform.md): ${MIX_BODIES} bodies of ${mixKinds.length} kinds of cross-service query (${mixKinds.join(', ')}), drawn with the same seed over each platform's own data, posted to its gateway by a load of its own (a process of its own, bench/tools/open-load-worker.mjs): **an open load**, ${RATE} requests a second arriving as a Poisson process, the same arrival times for every platform, whatever the answers do (at most ${CONNECTIONS} in flight).`,
      '',
      `**All platforms are loaded at the same time**, in ${ROUNDS} rounds: in each, every platform's process is new (stopped and started again on its data after the first), and the load runs for ${WARMUP_SECONDS + WINDOWS * WINDOW_SECONDS + TAIL_SECONDS} s: ${WARMUP_SECONDS} s of warm-up, then ${WINDOWS} windows of ${WINDOW_SECONDS} s, then ${TAIL_SECONDS} s more; a window counts the responses that came between its two edges, the same instants for every platform, and at each edge the benchmark reads every platform's CPU at one moment, so whatever else the machine does weighs on all alike. Why CPU per request at a rate rather than requests answered at saturation: under a closed loop (autocannon's connections each asking again once answered) the gateway's batching of the subgraph fetches of requests in flight together makes the connections fall into step or out of it and stay there, so one process answered from 126 to 276 requests a second from one 10-second stretch to the next, its main thread 88–93 % busy throughout and its CPU per request moving with its luck (docs/OPS-COST.md). Arrivals at random times keep no step. Each configuration runs as two platforms (off and control, metrics and metrics-b, tracing and tracing-b); the two are drawn with replacement in the bootstrap, and each pair's own reading (A/A) is what the method finds where there is nothing to find.`,
      '',
      `/metrics: after the load, ${SCRAPES} scrapes of each platform's endpoint one after another (50 ms apart, after one unmeasured), at rest: the wall time at the client (fetch and reading the body) and the CPU of the server's threads for each (/proc/<pid>/task/*/schedstat, in nanoseconds), medians. With metrics off no listener is served.`,
      '',
    ].join('\n');
    writeReport(benchRun, document, figures);
  }
} finally {
  for (const name of NAMES) await targets[name]?.platform.stop().catch((error: unknown) => console.error(`stopping ${name}: ${String(error)}`));
  receiver.close();
  rmSync(root, { recursive: true, force: true });
  // As root the clusters lie in a folder of their own per data folder (lib/db/embedded-postgres.ts, rootPostgresHome).
  for (const name of NAMES) {
    const cluster = targets[name]?.clusterDir;
    if (!cluster || cluster.startsWith(root) || !basename(dirname(cluster)).startsWith('cluster-')) continue;
    // Only a folder this run's data folder made (it names its data folder in the file `data-folder`).
    const owner = existsSync(join(dirname(cluster), 'data-folder')) ? readFileSync(join(dirname(cluster), 'data-folder'), 'utf8').trim() : '';
    if (owner.startsWith(root)) rmSync(dirname(cluster), { recursive: true, force: true });
  }
}
