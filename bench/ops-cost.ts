/**
 * What the operator plumbing (lib/ops/) costs: the platform as `npm start` runs it, in configurations
 * side by side, each a process of its own (bench/platform-process.ts) on its own embedded PostgreSQL,
 * loaded in alternated rounds by autocannon with the platform benchmark's mixed workload
 * (bench/mixed-workload.ts: many distinct cross-service GraphQL queries at the gateway):
 *
 * - off: METRICS=off and no OTLP endpoint (no metric hook, no metrics listener, no tracing SDK);
 * - metrics: metrics on, tracing off (the default);
 * - tracing: metrics on, tracing on at 10 % (OTEL_TRACES_SAMPLER=parentbased_traceidratio,
 *   OTEL_TRACES_SAMPLER_ARG=0.1), exporting OTLP/HTTP (protobuf) to a receiver this benchmark runs on
 *   loopback (a node:http server that answers 200 and counts bytes);
 * - info: metrics on, tracing off, LOG_LEVEL=info (one JSON line per request).
 *
 * The first three log at LOG_LEVEL=warn. Goals (issue "Operable in production", item 7): metrics cost
 * at most 3 % of requests/s against off, tracing at 10 % at most 10 %; one scrape of /metrics after
 * the load under 20 ms (wall time, and the server's CPU for it).
 *
 *   node --import tsx bench/ops-cost.ts
 *   OPS_COST_ROUNDS=2 OPS_COST_LOAD_SECONDS=3 node --import tsx bench/ops-cost.ts --print   # shorter, printed, no report
 *   OPS_COST_PROFILE=/tmp/profiles node --import tsx bench/ops-cost.ts --print            # CPU profiles (node --cpu-prof) of each platform process
 *   node --import tsx bench/ops-cost.ts --cpu                                               # CPU per request instead of requests/s (below)
 *
 * `--cpu` measures what each configuration adds to a request rather than how many requests it
 * answers: distinct mix requests, 2 at a time from this process, to every configuration at the same
 * time and for the same OPS_COST_CPU_SECONDS (default 20 s) a round, so that what else runs on the
 * shared machine, which makes a CPU second do less, weighs on all alike (a fixed number of requests
 * a round let the slower configuration finish last, alone on the machine and so cheaper per
 * request); OPS_COST_ROUNDS rounds (default 16 in this mode). A round's figure is the CPU
 * (nanoseconds on a core, all the platform process's threads, from /proc/<pid>/task/<tid>/schedstat)
 * over the requests answered (those in flight at the end of the window are finished and counted). A cost is
 * the median of the rounds' ratios against "off" minus 1, given with the quartiles of the rounds and
 * a 95 % interval of that median (resampling the rounds). A fifth platform, "control", is a second
 * "off": what it measures against "off" is what the method reads where there is nothing to read
 * (its bias and spread); the other configurations are also given against the mean of the two. Before the rounds, each platform's CPU at rest (10 s, no requests) is read:
 * what a platform spends per second without requests is charged to its requests in a round.
 * Printed only, no report.
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
import { autocannonLoad, BenchRun, cpuSeconds, formatMs as ms, loadAverage, markdownTable, median, quantile, seededDraws, writeReport, type KeyFigure, type Load } from './support.js';

const CONNECTIONS = 50;
const cpuMode = process.argv.includes('--cpu');
const ROUNDS = Number(process.env.OPS_COST_ROUNDS ?? (cpuMode ? 16 : 10));
const LOAD_SECONDS = Number(process.env.OPS_COST_LOAD_SECONDS ?? 8);
const WARMUP_SECONDS = Number(process.env.OPS_COST_WARMUP_SECONDS ?? 6);
const PASSPORTS = 48;
const MODELS = 8;
const MIX_BODIES = 3000;
/** Scrapes of /metrics after the load, one after another; wall time and CPU are the medians. */
const SCRAPES = 25;
const LOG_LEVEL = 'warn';
const SAMPLE_RATIO = 0.1;
const PROFILE_DIR = process.env.OPS_COST_PROFILE;
const CPU_REQUESTS = Number(process.env.OPS_COST_CPU_REQUESTS ?? 500);
const CPU_SECONDS = Number(process.env.OPS_COST_CPU_SECONDS ?? 20);
const CPU_CONCURRENCY = 2;
const printOnly = cpuMode || process.argv.includes('--print') || Boolean(PROFILE_DIR) || Boolean(process.env.OPS_COST_ONLY);

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
const CONFIGS = {
  off: { label: 'everything off (METRICS=off, no OTLP endpoint)', env: { METRICS: 'off' } },
  metrics: { label: 'metrics on, tracing off', env: { METRICS: 'on' } },
  tracing: {
    label: `metrics on, tracing on at ${SAMPLE_RATIO * 100} % (parentbased_traceidratio, OTLP/HTTP protobuf to loopback)`,
    env: { METRICS: 'on', OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(SAMPLE_RATIO) },
  },
  info: { label: 'metrics on, tracing off, LOG_LEVEL=info (a line per request)', env: { METRICS: 'on', LOG_LEVEL: 'info' } },
  /** --cpu only: a second "off", the control (what the method reads between two identical platforms). */
  control: { label: 'everything off again (the control)', env: { METRICS: 'off' } },
} as const;
type ConfigName = keyof typeof CONFIGS;
/** OPS_COST_ONLY=off,metrics: some configurations only (printed, no report), e.g. for CPU profiles. */
const ONLY = process.env.OPS_COST_ONLY?.split(',').map((name) => name.trim());
const NAMES = (Object.keys(CONFIGS) as ConfigName[]).filter((name) => name === 'off' || (ONLY ? ONLY.includes(name) : name !== 'control' || cpuMode));

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

/** CPU seconds of the process itself (user and system, all its threads; not its children). */
function ownCpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const after = fields.slice(fields.lastIndexOf(')') + 2).split(' ');
  return (Number(after[11]) + Number(after[12])) / 100;
}
/** Nanoseconds on a CPU of every thread of a process, from /proc/<pid>/task/<tid>/schedstat: fine enough for one scrape. */
function threadsCpuNs(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread gone meanwhile.
    }
  }
  return total;
}

interface Run extends Load {
  round: number;
  load: number;
  /** CPU seconds of the platform's node process and of its PostgreSQL (postmaster and backends). */
  node: number;
  postgres: number;
  lines: number;
  logBytes: number;
}

/**
 * The mix's bodies from `first` on, posted to a platform's gateway CONCURRENCY at a time, `count` of
 * them or as many as are sent until `until` (performance.now()); every answer must be a 200 without
 * errors. Resolves with the number answered.
 */
async function postMix(name: ConfigName, bodies: readonly string[], first: number, count: number, until = Number.POSITIVE_INFINITY): Promise<number> {
  const url = targets[name].platform.gatewayUrl;
  let next = 0;
  const worker = async () => {
    while (next < count && performance.now() < until) {
      const body = bodies[(first + next++) % bodies.length]!;
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const text = await response.text();
      if (response.status !== 200 || text.includes('"errors"')) throw new Error(`${name}: answered ${response.status}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: CPU_CONCURRENCY }, worker));
  return next;
}

/** A 95 % interval of the median of `values`, from 2000 resamplings of them (with a fixed seed, so a run's figures repeat). */
function medianInterval(values: readonly number[]): [number, number] {
  const draws = seededDraws(7);
  const medians = Array.from({ length: 2000 }, () => median(values.map(() => values[draws.index(values.length)]!)));
  return [quantile(medians, 0.025), quantile(medians, 0.975)];
}

/** --cpu: the platform process's CPU per request of each configuration, all loaded at the same time (see the top of this file). */
async function cpuPerRequest(mixes: Record<ConfigName, string[]>): Promise<void> {
  console.log(`Warming up each with ${CPU_REQUESTS} requests …`);
  await Promise.all(NAMES.map((name) => postMix(name, mixes[name], 0, CPU_REQUESTS)));
  // What each spends at rest (timers, metrics' event-loop monitor, span batching): charged to a round's requests by its length.
  const restBefore = Object.fromEntries(NAMES.map((name) => [name, threadsCpuNs(targets[name].platform.pid!)]));
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const restUsPerSecond = Object.fromEntries(NAMES.map((name) => [name, (threadsCpuNs(targets[name].platform.pid!) - restBefore[name]!) / 1000 / 10])) as Record<ConfigName, number>;
  console.log(`At rest: ${NAMES.map((name) => `${name} ${restUsPerSecond[name].toFixed(0)} µs of CPU a second`).join(', ')}`);
  const perRequestUs = Object.fromEntries(NAMES.map((name) => [name, [] as number[]])) as Record<ConfigName, number[]>;
  const roundSeconds: number[] = [];
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const first = ((round + 1) * CPU_REQUESTS) % MIX_BODIES;
    const started = performance.now();
    const until = started + CPU_SECONDS * 1000;
    await Promise.all(
      NAMES.map(async (name) => {
        const pid = targets[name].platform.pid!;
        const before = threadsCpuNs(pid);
        const answered = await postMix(name, mixes[name], first, Number.POSITIVE_INFINITY, until);
        perRequestUs[name].push((threadsCpuNs(pid) - before) / 1000 / answered);
      }),
    );
    roundSeconds.push((performance.now() - started) / 1000);
    loads.push(loadAverage());
    console.log(
      `  round ${round + 1}: ${NAMES.map((name) => `${name} ${perRequestUs[name][round]!.toFixed(0)} µs`).join(', ')}; ${roundSeconds.at(-1)!.toFixed(1)} s; load ${loads.at(-1)!.toFixed(2)}`,
    );
  }
  const percent = (ratio: number) => `${((ratio - 1) * 100).toFixed(1)} %`;
  const rows = NAMES.map((name) => {
    const ratios = perRequestUs[name].map((us, i) => us / perRequestUs.off[i]!);
    const [low, high] = medianInterval(ratios);
    const total = perRequestUs[name].reduce((sum, us) => sum + us, 0);
    const offTotal = perRequestUs.off.reduce((sum, us) => sum + us, 0);
    return [
      name,
      `${median(perRequestUs[name]).toFixed(0)} µs`,
      name === 'off' ? '—' : `**${percent(median(ratios))}** (${percent(low)} to ${percent(high)})`,
      name === 'off' ? '—' : `${percent(quantile(ratios, 0.25))} to ${percent(quantile(ratios, 0.75))}`,
      name === 'off' ? '—' : `${percent(Math.min(...ratios))} to ${percent(Math.max(...ratios))}`,
      name === 'off' ? '—' : percent(total / offTotal),
      // With the control: each round against the mean of its two identical references, whose own difference is the method's.
      !NAMES.includes('control') || name === 'off' || name === 'control' ? '—' : percent(median(perRequestUs[name].map((us, i) => (2 * us) / (perRequestUs.off[i]! + perRequestUs.control[i]!)))),
      `${restUsPerSecond[name].toFixed(0)} µs/s`,
    ];
  });
  console.log(
    `\nNode CPU per request, every platform loaded at the same time for ${CPU_SECONDS} s a round, ${CPU_CONCURRENCY} requests at a time each, ${ROUNDS} rounds of ${median(roundSeconds).toFixed(1)} s (median); load ${Math.min(...loads).toFixed(2)} to ${Math.max(...loads).toFixed(2)}:\n`,
  );
  console.log(
    markdownTable(
      [
        'configuration',
        'node CPU per request (median)',
        "added: median of the rounds' ratios (95 % interval)",
        'quartiles of the rounds',
        'range of the rounds',
        'added: sum over sum',
        'added against the mean of off and control (median)',
        'CPU at rest',
      ],
      rows,
    ),
  );
}

const ratioText = (value: number) => `${value.toFixed(3)}`;
const costText = (ratio: number) => `${((1 - ratio) * 100).toFixed(1)} %`;

try {
  // -------------------------------------------------------------------------------------------
  // Start and seed each platform.
  for (const name of NAMES) {
    const target: Target = { lines: 0, bytes: 0 } as Target;
    const nodeFlags = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE_DIR, name)}`] : [];
    target.platform = await PlatformProcess.prepare({
      dataDir: join(root, name),
      env: { ...BASE_ENV, ...CONFIGS[name].env },
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
    console.log(`Starting the platform "${name}" (${CONFIGS[name].label}) …`);
    const startMs = await target.platform.start();
    console.log(`  running after ${(startMs / 1000).toFixed(1)} s; metrics: ${target.metricsUrl ?? 'not served'}`);
    const metricsOff = CONFIGS[name].env.METRICS === 'off';
    if (metricsOff !== (target.metricsUrl === undefined)) throw new Error(`${name}: metrics should be ${metricsOff ? 'off' : 'served'}`);
  }

  const mixes = {} as Record<ConfigName, string[]>;
  for (const name of NAMES) {
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
  }

  if (cpuMode) {
    await cpuPerRequest(mixes);
  } else {
    // -------------------------------------------------------------------------------------------
    // Load: warm-up of each, then ROUNDS rounds, the order rotating every round.
    const loadOf = (name: ConfigName, seconds: number) =>
      autocannonLoad({ url: targets[name].platform.gatewayUrl, connections: CONNECTIONS, seconds, method: 'POST', headers: { 'content-type': 'application/json' }, bodies: mixes[name] });
    console.log(`Warming up each for ${WARMUP_SECONDS} s …`);
    for (const name of NAMES) await loadOf(name, WARMUP_SECONDS);
    const postmasters = {} as Record<ConfigName, number>;
    for (const name of NAMES) {
      const pid = targets[name].clusterDir ? await lockingPostmaster(targets[name].clusterDir!) : undefined;
      if (pid === undefined) throw new Error(`${name}: no postmaster`);
      postmasters[name] = pid;
    }
    const receivedBefore = { ...received };
    const runs = Object.fromEntries(NAMES.map((name) => [name, [] as Run[]])) as Record<ConfigName, Run[]>;
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = [...NAMES.slice(round % NAMES.length), ...NAMES.slice(0, round % NAMES.length)];
      for (const name of order) {
        const target = targets[name];
        const pid = target.platform.pid!;
        const before = { node: ownCpuSeconds(pid), postgres: cpuSeconds(postmasters[name]), lines: target.lines, bytes: target.bytes };
        const result = await loadOf(name, LOAD_SECONDS);
        const run: Run = {
          ...result,
          round: round + 1,
          load: loadAverage(),
          node: ownCpuSeconds(pid) - before.node,
          postgres: cpuSeconds(postmasters[name]) - before.postgres,
          lines: target.lines - before.lines,
          logBytes: target.bytes - before.bytes,
        };
        runs[name].push(run);
        console.log(
          `  round ${round + 1}, ${name}: ${result.perSecond.toFixed(0)} req/s, p95 ${ms(result.latency.p95)}, non-2xx ${result.non2xx}, errors ${result.errors}; CPU per request: node ${((run.node / result.requests) * 1000).toFixed(2)} ms, PostgreSQL ${((run.postgres / result.requests) * 1000).toFixed(2)} ms; load ${run.load.toFixed(2)}`,
        );
      }
    }
    const exported = { requests: received.requests - receivedBefore.requests, bytes: received.bytes - receivedBefore.bytes };

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

    // -------------------------------------------------------------------------------------------
    // Figures
    const stats = (list: Run[]) => {
      const requests = list.reduce((sum, run) => sum + run.requests, 0);
      return {
        perSecond: median(list.map((run) => run.perSecond)),
        p95: median(list.map((run) => run.latency.p95)),
        latency: median(list.map((run) => run.latency.median)),
        failed: list.reduce((sum, run) => sum + run.non2xx + run.errors + run.timeouts, 0),
        requests,
        nodeMs: (list.reduce((sum, run) => sum + run.node, 0) / requests) * 1000,
        postgresMs: (list.reduce((sum, run) => sum + run.postgres, 0) / requests) * 1000,
        linesPerRequest: list.reduce((sum, run) => sum + run.lines, 0) / requests,
        logBytesPerRequest: list.reduce((sum, run) => sum + run.logBytes, 0) / requests,
      };
    };
    const all = Object.fromEntries(NAMES.map((name) => [name, stats(runs[name])])) as Record<ConfigName, ReturnType<typeof stats>>;
    /** Each round's requests/s of a configuration over off's in the same round. */
    const roundRatios = (name: ConfigName) => runs[name].map((run, i) => run.perSecond / runs.off[i]!.perSecond);
    const pairedRatio = (name: ConfigName) => median(roundRatios(name));
    const failed = NAMES.reduce((sum, name) => sum + all[name].failed, 0);
    const loads = NAMES.flatMap((name) => runs[name].map((run) => run.load));

    const roundRows = Array.from({ length: ROUNDS }, (_, round) => [
      String(round + 1),
      ...NAMES.map((name) => runs[name][round]!.perSecond.toFixed(0)),
      ...NAMES.filter((name) => name !== 'off').map((name) => ratioText(roundRatios(name)[round]!)),
      Math.max(...NAMES.map((name) => runs[name][round]!.load)).toFixed(2),
    ]);
    const summaryRows = NAMES.map((name) => [
      `**${name}**: ${CONFIGS[name].label}`,
      `**${all[name].perSecond.toFixed(0)}**`,
      name === 'off' ? '1 (the reference)' : `**${ratioText(pairedRatio(name))}** (cost ${costText(pairedRatio(name))}; ratio of the medians ${ratioText(all[name].perSecond / all.off.perSecond)})`,
      ms(all[name].latency),
      ms(all[name].p95),
      `${all[name].nodeMs.toFixed(2)} ms / ${all[name].postgresMs.toFixed(2)} ms`,
      `${all[name].linesPerRequest.toFixed(2)} (${all[name].logBytesPerRequest.toFixed(0)} B)`,
      `${all[name].failed} of ${all[name].requests}`,
    ]);
    const scrapeRows = Object.entries(scrapes).map(([name, scrape]) => [
      name,
      `**${ms(median(scrape.wall))}** (max ${ms(Math.max(...scrape.wall))})`,
      `**${ms(median(scrape.cpu))}** (max ${ms(Math.max(...scrape.cpu))})`,
      `${(scrape.bytes / 1024).toFixed(1)} KiB`,
      String(scrape.series),
    ]);

    const table = markdownTable(
      ['configuration', 'req/s (median)', "against off: median of the rounds' ratios", 'median latency', 'p95 latency', 'CPU per request: node / PostgreSQL', 'log lines per request', 'failed'],
      summaryRows,
    );
    const perRound = markdownTable(['round', ...NAMES.map((name) => `${name} req/s`), ...NAMES.filter((name) => name !== 'off').map((name) => `${name} / off`), 'load average (max)'], roundRows);
    const scrapeTable = markdownTable(['platform', 'wall time of one scrape (median)', 'server CPU of one scrape (median)', 'exposition', 'samples'], scrapeRows);
    console.log(`\n${table}\n\n${perRound}\n\n${scrapeTable}\n`);
    console.log(`Spans exported by "tracing" during the rounds: ${exported.requests} OTLP requests, ${(exported.bytes / 1024).toFixed(0)} KiB`);
    if (failed) throw new Error(`${failed} requests failed`);

    if (!printOnly) {
      const metricsCost = 1 - pairedRatio('metrics');
      const tracingCost = 1 - pairedRatio('tracing');
      const scrapeWall = median(scrapes.metrics!.wall);
      const scrapeCpu = median(scrapes.metrics!.cpu);
      const figures: KeyFigure[] = [
        {
          measure: `metrics on (tracing off) against everything off: requests/s on the mixed workload, ${CONNECTIONS} connections, median of the rounds' ratios`,
          value: `${ratioText(pairedRatio('metrics'))} (cost ${costText(pairedRatio('metrics'))}; ${all.metrics.perSecond.toFixed(0)} / ${all.off.perSecond.toFixed(0)} req/s)`,
          target: 'cost ≤ 3 %',
        },
        {
          measure: `tracing on at ${SAMPLE_RATIO * 100} % (and metrics) against everything off, same`,
          value: `${ratioText(pairedRatio('tracing'))} (cost ${costText(pairedRatio('tracing'))}; ${all.tracing.perSecond.toFixed(0)} req/s)`,
          target: 'cost ≤ 10 %',
        },
        { measure: 'LOG_LEVEL=info (a line per request, metrics on) against everything off, same', value: `${ratioText(pairedRatio('info'))} (cost ${costText(pairedRatio('info'))})` },
        { measure: 'one scrape of /metrics after the load (npm start, all six servers): wall time / server CPU, medians', value: `${ms(scrapeWall)} / ${ms(scrapeCpu)}`, target: '< 20 ms' },
        { measure: 'p95 latency, off / metrics / tracing / info', value: NAMES.map((name) => ms(all[name].p95)).join(' / ') },
      ];
      const verdict = (cost: number, limit: number) =>
        cost <= limit ? `met (${(cost * 100).toFixed(1)} % ≤ ${limit * 100} %)` : `**missed** by ${((cost - limit) * 100).toFixed(1)} points (${(cost * 100).toFixed(1)} % > ${limit * 100} %)`;
      const document = [
        '# What the operator plumbing costs',
        '',
        benchRun.report(),
        `- Load average during the rounds (1 minute, read after each run): ${Math.min(...loads).toFixed(2)} to ${Math.max(...loads).toFixed(2)}, median ${median(loads).toFixed(2)}`,
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
        `Tracing exports to an OTLP/HTTP receiver this benchmark runs on loopback (a node:http server that answers 200 to every export and counts the bytes; nothing leaves the machine); during the rounds "tracing" exported ${exported.requests} requests, ${(exported.bytes / 1024).toFixed(0)} KiB. Each platform's logs go to a pipe the benchmark reads, as a log collector would.`,
        '',
        `Data and load: each platform is seeded alike through its REST facade, and loaded with the platform benchmark's mixed workload (bench/mixed-workload.ts, docs/benchmarks/platform.md): ${MIX_BODIES} bodies of ${mixKinds.length} kinds of cross-service query (${mixKinds.join(', ')}), drawn with the same seed over each platform's own data, posted to its gateway by autocannon in another process, ${CONNECTIONS} connections. ${WARMUP_SECONDS} s of warm-up each, then ${ROUNDS} rounds of ${LOAD_SECONDS} s per platform, the order rotating every round (${NAMES.join(', ')}; ${[...NAMES.slice(1), NAMES[0]].join(', ')}; …), so no configuration always follows the same one. A ratio is the median of the rounds' ratios against "off" (each round's runs close together in time, so a slower stretch of the shared machine weighs on both); the ratio of the medians is beside it. CPU per request: the platform's node process (its own user and system time) and its PostgreSQL (postmaster and backends), from /proc before and after each run, over all rounds.`,
        '',
        `/metrics: after the rounds, ${SCRAPES} scrapes of each platform's endpoint one after another (50 ms apart, after one unmeasured), at rest: the wall time at the client (fetch and reading the body) and the CPU of the server's threads for each (/proc/<pid>/task/*/schedstat, in nanoseconds), medians. With "off" no listener is served.`,
        '',
        '## Results',
        '',
        `- Metrics on, tracing off: cost ${costText(pairedRatio('metrics'))} of requests/s — goal ≤ 3 %: ${verdict(metricsCost, 0.03)}.`,
        `- Tracing on at ${SAMPLE_RATIO * 100} % (with metrics): cost ${costText(pairedRatio('tracing'))} — goal ≤ 10 %: ${verdict(tracingCost, 0.1)}.`,
        `- LOG_LEVEL=info (with metrics): cost ${costText(pairedRatio('info'))} (no goal; the difference to "metrics" is the cost of a line per request).`,
        `- One scrape of /metrics: ${ms(scrapeWall)} wall, ${ms(scrapeCpu)} server CPU (medians) — goal < 20 ms: ${scrapeWall < 20 && scrapeCpu < 20 ? 'met' : '**missed**'}.`,
        '',
        table,
        '',
        'Each round (requests/s):',
        '',
        perRound,
        '',
        'One scrape of /metrics after the load:',
        '',
        scrapeTable,
        '',
      ].join('\n');
      writeReport(benchRun, document, figures);
    }
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
