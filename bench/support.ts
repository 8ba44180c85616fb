/**
 * What every benchmark needs, in one place: a platform on its own embedded PostgreSQL in a temporary
 * folder with free ports and a bench token, torn down afterwards; percentiles; timing; the machine
 * report; and the markdown table written to docs/benchmarks/<service>.md (with the key figures beside
 * it in <service>.json, which bench/index.ts gathers into docs/BENCHMARKS.md).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, sign as nodeSign, type KeyObject } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../test/support/free-port.js';
import { BENCH_TOOLS, ensureBenchTools } from '../test/support/bench-tools.js';
import { cpus, loadavg, release, tmpdir, totalmem, type as osType } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { startStack, type RunningStack } from '../bin/stack.js';
import { AccessTokens, hashToken, type ConfiguredRole } from '../lib/auth/tokens.js';
import { loadRuntimeConfig } from '../lib/config/runtime.js';
import { startEmbeddedPostgres } from '../lib/db/embedded-postgres.js';
import { KeyEncryptionKeys } from '../lib/keys/kek.js';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export { BENCH_TOOLS, ensureBenchTools };
export const SERVICES = ['trust', 'registry', 'issuer', 'archive'] as const;
export type BenchService = (typeof SERVICES)[number];
/** Every benchmark: one per service, and the platform's (gateways, REST facade, memory of `npm start`). */
export const BENCHMARKS = [...SERVICES, 'trust-scale', 'verify-page', 'platform', 'ops-cost', 'passport-batches', 'graphql-cost', 'onboarding', 'live'] as const;
/** Benchmarks run only when named (`npm run bench:national`: half an hour of the whole machine); docs/BENCHMARKS.md still shows their last figures. */
export const ON_DEMAND_BENCHMARKS = ['national-scale'] as const;
export type BenchName = (typeof BENCHMARKS)[number] | (typeof ON_DEMAND_BENCHMARKS)[number];

// ---------------------------------------------------------------------------------------------
// The platform under test

export { freePort } from '../test/support/free-port.js';

/** A fresh bearer token of `role` and the token table that knows it. */
export function benchToken(role: ConfiguredRole): { token: string; tokens: AccessTokens } {
  const token = `bench-${role}-${randomBytes(12).toString('hex')}`;
  return { token, tokens: new AccessTokens([{ name: `bench-${role}`, role, sha256: hashToken(token) }]) };
}

/** A JSON POST with `token` as bearer: its parsed answer, or an error naming the URL, status and body for any status from 300 on. */
export function postWith(token: string) {
  return async (url: string, body: unknown) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${url}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
}

export interface Bench {
  /** The temporary folder; the cluster lives in its postgres/ folder (a kept platform's in that platform's). */
  dataDir: string;
  /** The services' database, without a schema. */
  databaseUrl: string;
  /** The embedded cluster's folder (its postmaster holds the lock in it). */
  clusterDir: string;
  /** `SHOW server_version` of the embedded cluster. */
  postgresVersion: string;
  /** Registers a clean-up step; close() runs them last registered first. */
  defer(stop: () => unknown): void;
  /** The key-encryption key the bench's stacks seal their signing keys under. */
  kek: KeyEncryptionKeys;
  /** The whole platform (subgraphs, gateway, REST facade) on this database, every port free; stopped by close(). */
  startStack(tokens: AccessTokens): Promise<RunningStack>;
  /** Runs the clean-up steps (errors are printed, not thrown), stops PostgreSQL and removes the folder. */
  close(): Promise<void>;
}

/**
 * Data a bench opens instead of a new cluster: the data folder of a platform that `npm start` ran
 * (its embedded cluster, started again and stopped at the end, never removed) and its key-encryption
 * key, so the bench's servers open the keys that platform sealed.
 */
export interface KeptPlatform {
  platformDataDir: string;
  kek: KeyEncryptionKeys;
}

/** An embedded PostgreSQL on a free port in a new temporary folder named after the benchmark, or the cluster of a kept platform. */
export async function openBench(name: string, kept?: KeptPlatform): Promise<Bench> {
  const dataDir = mkdtempSync(join(tmpdir(), `${name}-bench-`));
  const stoppers: (() => unknown)[] = [];
  const kek = kept?.kek ?? KeyEncryptionKeys.generate('the bench key-encryption key (in memory)');
  // Interrupted (Ctrl-C, or bench/index.ts's time limit or its own stop passed on), it still stops
  // its servers and PostgreSQL and removes the folder. A signal while that runs (a terminal's Ctrl-C
  // reaches bench/index.ts too, which passes it on) asks for the same stop and does not cut it short.
  // The run itself goes on until the process exits: what it starts meanwhile is stopped at once
  // (`late`, awaited before the exit), and what fails because the stop cut its connections is not reported.
  let closing: Promise<void> | undefined;
  const late: Promise<unknown>[] = [];
  const interrupted = (signal: NodeJS.Signals) => {
    if (closing) return;
    console.error(`${signal}: stopping the benchmark's servers and PostgreSQL`);
    const abandoned = () => {};
    process.on('uncaughtException', abandoned);
    process.on('unhandledRejection', abandoned);
    void close().finally(() => process.exit(130));
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  const defer = (stop: () => unknown) => {
    if (!closing) return void stoppers.push(stop);
    late.push(
      (async () => {
        await stop();
      })().catch(() => {}),
    );
  };
  const startingPostgres = freePort().then((port) => startEmbeddedPostgres({ dataDir: kept?.platformDataDir ?? dataDir, port }));
  const close = () =>
    (closing ??= (async () => {
      for (const stop of stoppers.splice(0).reverse()) {
        try {
          await stop();
        } catch (error) {
          console.error('while stopping:', error);
        }
      }
      // A PostgreSQL still starting is stopped once it has started (its stop then comes late).
      await startingPostgres.catch(() => {});
      await Promise.all(late);
      rmSync(dataDir, { recursive: true, force: true });
      process.off('SIGINT', interrupted);
      process.off('SIGTERM', interrupted);
    })());
  try {
    const postgres = await startingPostgres;
    defer(() => postgres.stop());
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    const version = await client.query<{ server_version: string }>('SHOW server_version').finally(() => client.end());
    return {
      dataDir,
      databaseUrl: postgres.url,
      clusterDir: postgres.clusterDir,
      postgresVersion: version.rows[0]!.server_version,
      defer,
      close,
      kek,
      async startStack(tokens) {
        const ports = { FACADE_PORT: '0', GATEWAY_PORT: '0', TRUST_SUBGRAPH_PORT: '0', REGISTRY_SUBGRAPH_PORT: '0', ISSUER_SUBGRAPH_PORT: '0', ARCHIVE_SUBGRAPH_PORT: '0', METRICS_PORT: '0' };
        // METRICS=off|on passes through, so that a benchmark can compare the two (bench/per-request-cpu.ts).
        const metricsSwitch = process.env.METRICS ? { METRICS: process.env.METRICS } : {};
        const config = { ...loadRuntimeConfig({ HOST: '127.0.0.1', PASSPORT_DATA_DIR: dataDir, ...ports, ...metricsSwitch }), databaseUrl: postgres.url };
        const stack = await startStack({ config, tokens, kek });
        defer(() => stack.stop());
        return stack;
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

export { ed25519KeyPair } from '../test/support/ed25519.js';

/** A delegation credential as a compact JWS (EdDSA over the claims' JSON), as POST /trust/edges takes it. */
export function compactDelegation(claims: Record<string, unknown>, signer: { kid: string; privateKey: KeyObject }): string {
  const header = Buffer.from(JSON.stringify({ alg: 'Ed25519', kid: signer.kid })).toString('base64url');
  const signingInput = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${signingInput}.${nodeSign(null, Buffer.from(signingInput), signer.privateKey).toString('base64url')}`;
}

// ---------------------------------------------------------------------------------------------
// Load

/** What a load measured (autocannon, bench/tools/load-worker.mjs, or the open load, bench/tools/open-load-worker.mjs). */
export interface Load {
  requests: number;
  seconds: number;
  perSecond: number;
  latency: { median: number; p95: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  /** With `completions: true`: when each response came, in milliseconds since the epoch (performance.timeOrigin + now()). */
  completions?: number[];
}

export interface LoadOptions {
  url: string;
  connections: number;
  seconds: number;
  /** That many requests instead of `seconds` of them (seconds is then only what an error message says). */
  amount?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Paths on the url's origin, handed out in turn: one per connection, which keeps it, or one per request. */
  paths?: readonly string[];
  pick?: 'connection' | 'request';
  /** Request bodies, one per request in turn (instead of `body`). */
  bodies?: readonly string[];
  /** Keep the moment of every response (Load.completions), to count loads that run at once over the same windows. */
  completions?: boolean;
}

/** What an open load asks (bench/tools/open-load-worker.mjs): POSTs arriving as a Poisson process. */
export interface OpenLoadOptions {
  url: string;
  /** Arrivals a second, on average; the gaps between them are drawn from an exponential distribution. */
  perSecond: number;
  seconds: number;
  /** Most requests in flight at once; later arrivals wait for a socket. */
  connections?: number;
  method?: string;
  headers?: Record<string, string>;
  /** Request bodies, one per request in turn. */
  bodies: readonly string[];
  /** Seeds the arrival times, so that runs ask alike. */
  seed?: number;
  /** When the arrivals begin, in milliseconds since the epoch (performance.timeOrigin + now()): loads given one ask at the same instants. */
  startAt?: number;
}

/**
 * autocannon in a process of its own (bench/tools/load-worker.mjs), so that the clients' HTTP work is
 * billed neither to the server measured nor to the benchmark's process.
 */
export const autocannonLoad = (options: LoadOptions): Promise<Load> => loadWorker('load-worker.mjs', options, options.url, options.seconds);

/**
 * An open load: requests arriving at random (a Poisson process) at a fixed rate, whatever the answers
 * do, in a process of its own (bench/tools/open-load-worker.mjs says why), with every response's moment.
 */
export const openLoad = (options: OpenLoadOptions): Promise<Load> => loadWorker('open-load-worker.mjs', options, options.url, options.seconds);

async function loadWorker(worker: string, options: LoadOptions | OpenLoadOptions, url: string, seconds: number): Promise<Load> {
  await ensureBenchTools();
  // One argument holds at most 128 KiB on Linux: many bodies go in a file.
  let argument = JSON.stringify(options);
  const folder = argument.length > 100_000 ? mkdtempSync(join(tmpdir(), 'load-')) : undefined;
  if (folder) {
    writeFileSync(join(folder, 'options.json'), argument);
    argument = `@${join(folder, 'options.json')}`;
  }
  const child = spawn(process.execPath, [join(BENCH_TOOLS, worker), argument], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => resolve());
  });
  if (folder) rmSync(folder, { recursive: true, force: true });
  const result = JSON.parse(output) as Load & { error?: string };
  if (result.error) throw new Error(`${worker}: ${result.error}`);
  // With none answered there are no latencies (null), which every figure after would trip over.
  if (result.requests === 0) throw new Error(`${worker}: not one request to ${url} was answered in ${seconds} s (non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts})`);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Statistics

/** Deterministic draws (a 32-bit LCG), so that every run of a benchmark asks the same ids and mix. */
export function seededDraws(seed: number) {
  let state = seed >>> 0;
  const next = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  return { index: (length: number) => Math.floor(next() * length), between: (low: number, high: number) => low + next() * (high - low) };
}

/** Nearest-rank quantile: the smallest sample with at least a fraction q of the samples at or below it. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new Error('quantile of no samples');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
export const median = (values: readonly number[]) => quantile(values, 0.5);

export interface Summary {
  n: number;
  median: number;
  p95: number;
  p99: number;
  min: number;
  max: number;
}
export function summarize(values: readonly number[]): Summary {
  return { n: values.length, median: median(values), p95: quantile(values, 0.95), p99: quantile(values, 0.99), min: Math.min(...values), max: Math.max(...values) };
}

// ---------------------------------------------------------------------------------------------
// Timing

/** Starts a clock; the function returned gives the milliseconds since. */
export function stopwatch(): () => number {
  const start = performance.now();
  return () => performance.now() - start;
}

/**
 * Calls `run` `warmups` times, then `runs` times, one after another; returns the duration (ms) and
 * the result of each counted call, and the last result.
 */
export async function timed<T>(runs: number, run: (index: number) => Promise<T> | T, options: { warmups?: number } = {}): Promise<{ times: number[]; results: T[]; last: T }> {
  const warmups = options.warmups ?? 1;
  const times: number[] = [];
  const results: T[] = [];
  let last!: T;
  for (let index = 0; index < warmups + runs; index += 1) {
    const elapsed = stopwatch();
    last = await run(index);
    const took = elapsed();
    if (index >= warmups) {
      times.push(took);
      results.push(last);
    }
  }
  return { times, results, last };
}

/**
 * Times several ways of asking the same thing, in turns round after round, so that a change in the
 * machine's load weighs on all of them alike. `warmups` rounds are not counted; with `rotate`, the
 * order turns by one each round. Each way is given the round's index (warm-ups included).
 */
export async function timedInTurns(rounds: number, ways: readonly ((round: number) => Promise<unknown>)[], options: { warmups?: number; rotate?: boolean } = {}): Promise<number[][]> {
  const warmups = options.warmups ?? 1;
  const times = ways.map((): number[] => []);
  for (let round = 0; round < warmups + rounds; round += 1) {
    for (let turn = 0; turn < ways.length; turn += 1) {
      const way = options.rotate ? (round + turn) % ways.length : turn;
      const elapsed = stopwatch();
      await ways[way]!(round);
      const took = elapsed();
      if (round >= warmups) times[way]!.push(took);
    }
  }
  return times;
}

let gc: (() => void) | undefined;
/** A full garbage collection (the flag is set at run time, so the command stays plain). */
export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

// ---------------------------------------------------------------------------------------------
// The machine

export interface Machine {
  cpuCount: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  openssl: string;
}
export function machine(): Machine {
  const cpu = cpus();
  return {
    cpuCount: cpu.length,
    cpuModel: cpu[0]?.model.trim() ?? 'unknown CPU',
    memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
    os: `${osType()} ${release()}`,
    node: process.version,
    openssl: process.versions.openssl ?? 'unknown',
  };
}
/** HEAD's short hash, and whether tracked files outside docs/ differ from it; 'unknown' outside git. */
export function codeVersion(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = git('status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)docs');
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' with uncommitted changes' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** CPU seconds (user and system) a process and its whole tree, exited children included, have used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  let ticks = 0;
  for (const id of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${id}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime, stime, cutime, cstime: fields 14–17 of stat, counted from the state (field 3) here. The
      // children's times hold those of exited children (PostgreSQL's backends come and go), so the
      // tree's sum never falls between two readings.
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // Gone meanwhile.
    }
  }
  // USER_HZ is 100 on Linux.
  return ticks / 100;
}

/** Nanoseconds on a CPU of one thread, from /proc/<pid>/task/<tid>/schedstat; 0 once it is gone. */
function threadCpuNs(pid: number, tid: number | string): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return 0;
  }
}

/** Nanoseconds on a CPU of every thread of a process. */
export function threadsCpuNs(pid: number): number {
  return readdirSync(`/proc/${pid}/task`).reduce((total, tid) => total + threadCpuNs(pid, tid), 0);
}

/** Nanoseconds on a CPU of a process's main thread (for node: its JavaScript, apart from GC helpers and libuv's pool). */
export const mainThreadCpuNs = (pid: number): number => threadCpuNs(pid, pid);

/** `pid` and its descendants, from the parent ids in /proc/<pid>/stat. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i += 1) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

/** The 1-minute load average (other programs included). */
export const loadAverage = (): number => loadavg()[0]!;

/**
 * The run of one benchmark: when, on what, under what load. Made at the start; `report()` at the end
 * gives the markdown lines every docs/benchmarks/<service>.md opens with.
 */
export class BenchRun {
  readonly startedAt = new Date();
  readonly loadAtStart = loadAverage();
  readonly machine = machine();
  readonly code = codeVersion();
  private readonly elapsed = stopwatch();
  constructor(
    readonly service: BenchName,
    /** How it was run, e.g. `node --import tsx bench/trust.ts`. */
    readonly command: string,
  ) {}

  seconds(): number {
    return this.elapsed() / 1000;
  }

  report(bench?: Pick<Bench, 'postgresVersion'>): string {
    const m = this.machine;
    return [
      `- Run ${this.startedAt.toISOString()} with \`${this.command}\` on commit ${this.code}; it took ${this.seconds().toFixed(0)} s`,
      `- Machine: ${m.cpuCount} × ${m.cpuModel}, ${m.memoryGiB.toFixed(1)} GiB memory, ${m.os}`,
      `- Node ${m.node} (OpenSSL ${m.openssl})${bench ? `; embedded PostgreSQL ${bench.postgresVersion}` : ''}`,
      `- 1-minute load average ${this.loadAtStart.toFixed(2)} at the start, ${loadAverage().toFixed(2)} at the end (other work on the machine slows every figure alike)`,
    ].join('\n');
  }
}

// ---------------------------------------------------------------------------------------------
// Writing the figures

/** A markdown table; `|` in a cell is escaped. Columns are left-aligned unless marked 'right'. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[], align: readonly ('left' | 'right')[] = []): string {
  const line = (cells: readonly string[]) => `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
  const rule = `|${header.map((_, i) => (align[i] === 'right' ? '---:' : '---')).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** One headline figure of a service, for docs/BENCHMARKS.md. */
export interface KeyFigure {
  measure: string;
  value: string;
  target?: string;
}

/** What bench/index.ts reads back: docs/benchmarks/<service>.json. */
export interface BenchFigures {
  service: BenchName;
  command: string;
  /** The code measured: see codeVersion(). */
  commit: string;
  startedAt: string;
  seconds: number;
  machine: Machine;
  postgres?: string;
  load: { start: number; end: number };
  figures: KeyFigure[];
}

export const reportPath = (service: BenchName, ext: 'md' | 'json' = 'md') => join(REPO_ROOT, 'docs', 'benchmarks', `${service}.${ext}`);

/** Writes docs/benchmarks/<service>.md and, beside it, the key figures as <service>.json. */
export function writeReport(run: BenchRun, document: string, figures: KeyFigure[], bench?: Pick<Bench, 'postgresVersion'>): void {
  const file = reportPath(run.service);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, document.endsWith('\n') ? document : `${document}\n`);
  const summary: BenchFigures = {
    service: run.service,
    command: run.command,
    commit: run.code,
    startedAt: run.startedAt.toISOString(),
    seconds: Math.round(run.seconds()),
    machine: run.machine,
    ...(bench ? { postgres: bench.postgresVersion } : {}),
    load: { start: Number(run.loadAtStart.toFixed(2)), end: Number(loadAverage().toFixed(2)) },
    figures,
  };
  writeFileSync(reportPath(run.service, 'json'), `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`Written to ${relative(process.cwd(), file)}`);
}

export const formatMs = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
