/**
 * What one scrape of /metrics costs, two versions of lib/ops/metrics.ts and lib/ops/metrics-listener.ts
 * side by side in one run: the working tree's, and those of a commit (SCRAPE_BEFORE, HEAD by
 * default). Each version's PlatformMetrics is filled as the mixed workload of the platform benchmark
 * fills `npm start`'s (bench/scrape-fill.ts, from a captured exposition), then:
 *
 * 1. collection: `exposition()` in this process, the two versions in turn, ROUNDS times each, a few
 *    observations between any two (traffic: no two scrapes read alike); CPU of this process and wall;
 * 2. HTTP: each version served by its own listener in a child process of its own (which keeps
 *    observing, 1,000 a second, as traffic would), scraped in turn over node:http without and with
 *    `Accept-Encoding: gzip` (what Prometheus sends); wall time at the client (reading and, for gzip,
 *    inflating the body) and the server's CPU (all its threads, /proc/<pid>/task/<tid>/schedstat).
 *
 * Medians, printed. bench/ops-cost.ts measures the scrape of a loaded platform; this one finds where
 * a scrape's time goes and compares changes without loading six platforms.
 *
 *   nice -n 15 npm run bench:scrape                                          # working tree against HEAD
 *   SCRAPE_BEFORE=d912f28 nice -n 15 node --import tsx bench/scrape-cost.ts
 *   node --import tsx bench/scrape-cost.ts --capture bench/data/mixed-workload.prom   # re-capture the exposition
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { ServiceName } from '../lib/config/services.js';
import type * as MetricsModule from '../lib/ops/metrics.js';
import type * as ListenerModule from '../lib/ops/metrics-listener.js';
import { mixedWorkload, seedPlatformData } from './mixed-workload.js';
import { PlatformProcess } from './platform-process.js';
import { fillAsCaptured, type MetricsVersion as Version, metricsVersionAt, readCapturedExposition } from './scrape-fill.js';
import { autocannonLoad, formatMs as ms, loadAverage, markdownTable, median, REPO_ROOT, threadsCpuNs } from './support.js';

const ROUNDS = Number(process.env.SCRAPE_ROUNDS ?? 200);
const HTTP_ROUNDS = Number(process.env.SCRAPE_HTTP_ROUNDS ?? 60);
/** Observations between two scrapes in this process; in a serving child, every 10 ms. */
const OBSERVATIONS_BETWEEN = 20;
const CAPTURE_SECONDS = Number(process.env.SCRAPE_CAPTURE_SECONDS ?? 40);

const importVersion = async (folder: string) => ({
  metrics: (await import(join(folder, 'metrics.ts'))) as typeof MetricsModule,
  listener: (await import(join(folder, 'metrics-listener.ts'))) as typeof ListenerModule,
});

const samplesOf = (text: string) => text.split('\n').filter((line) => line && !line.startsWith('#')).length;

async function capture(file: string): Promise<void> {
  // One `npm start` platform, seeded and loaded as bench/ops-cost.ts loads each of its platforms.
  const root = mkdtempSync(join(tmpdir(), 'scrape-capture-'));
  let metricsUrl = '';
  const platform = await PlatformProcess.prepare({
    dataDir: join(root, 'platform'),
    env: { NODE_ENV: 'production', LOG_LEVEL: 'warn', LOG_FORMAT: 'json', OTEL_EXPORTER_OTLP_ENDPOINT: '', METRICS: 'on' },
    log: (line) => {
      const metrics = /^\s+Metrics\s+(http:\/\/\S+\/metrics)/.exec(line);
      if (metrics) metricsUrl = metrics[1]!;
    },
  });
  try {
    await platform.start();
    const rest = async (service: ServiceName, path: string, body?: unknown): Promise<any> => {
      const response = await fetch(`${platform.base(service)}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${platform.tokens.admin}` },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!response.ok) throw new Error(`POST ${service}${path} answered ${response.status}`);
      return response.json();
    };
    const seeded = await seedPlatformData({ rest, issuerBase: platform.base('issuer') }, { passports: 48, models: 8 });
    const bodies = mixedWorkload(seeded, 3000).map((request) => request.body);
    const load = await autocannonLoad({ url: platform.gatewayUrl, connections: 8, seconds: CAPTURE_SECONDS, method: 'POST', headers: { 'content-type': 'application/json' }, bodies });
    const text = await (await fetch(metricsUrl, { headers: { 'accept-encoding': 'identity' } })).text();
    writeFileSync(file, text);
    console.log(`${load.requests} requests of the mixed workload; the exposition after them (${text.length} bytes, ${samplesOf(text)} samples) is in ${file}`);
  } finally {
    await platform.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

async function serve(folder: string): Promise<void> {
  const { metrics, listener } = await importVersion(folder);
  const platform = new metrics.PlatformMetrics();
  const traffic = fillAsCaptured(platform);
  const served = await listener.serveMetrics(platform, { host: '127.0.0.1', port: 0 });
  setInterval(() => traffic(10), 10);
  console.log(served.url);
}

/** GET url; the body read whole (inflated when gzipped). */
function scrape(url: string, gzip: boolean): Promise<{ status: number; text: string; wireBytes: number; encoding: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'accept-encoding': gzip ? 'gzip' : 'identity' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        const encoding = response.headers['content-encoding'] ?? 'identity';
        resolve({ status: response.statusCode!, text: (encoding === 'gzip' ? gunzipSync(body) : body).toString('utf8'), wireBytes: body.length, encoding });
      });
      response.on('error', reject);
    }).on('error', reject);
  });
}

async function compare(): Promise<void> {
  const scratch = mkdtempSync(join(REPO_ROOT, 'bench', '.scrape-'));
  const versions: Version[] = [metricsVersionAt(process.env.SCRAPE_BEFORE ?? 'HEAD', scratch), { name: 'working tree', folder: join(REPO_ROOT, 'lib', 'ops') }];
  const children: ReturnType<typeof spawn>[] = [];
  try {
    console.log(`Scrape cost, ${versions.map((version) => version.name).join(' against ')}; load average ${loadAverage().toFixed(1)}`);
    // 1. Collection in this process.
    const captured = readCapturedExposition();
    const filled = await Promise.all(
      versions.map(async (version) => {
        const { metrics } = await importVersion(version.folder);
        const platform = new metrics.PlatformMetrics();
        return { platform, traffic: fillAsCaptured(platform, captured), cpu: [] as number[], wall: [] as number[], text: '' };
      }),
    );
    for (let round = 0; round < ROUNDS + 5; round += 1) {
      for (const index of round % 2 ? [1, 0] : [0, 1]) {
        const version = filled[index]!;
        version.traffic(OBSERVATIONS_BETWEEN);
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        version.text = await version.platform.exposition();
        const wall = performance.now() - started;
        const cpu = process.cpuUsage(cpuBefore);
        // The first rounds warm the JIT up.
        if (round < 5) continue;
        version.wall.push(wall);
        version.cpu.push((cpu.user + cpu.system) / 1000);
      }
    }
    console.log(
      `\n1. exposition() in this process, ${ROUNDS} rounds each, in turn (medians)\n\n${markdownTable(
        ['version', 'CPU', 'wall', 'bytes', 'samples'],
        versions.map((version, index) => {
          const { cpu, wall, text } = filled[index]!;
          return [version.name, ms(median(cpu)), ms(median(wall)), String(Buffer.byteLength(text)), String(samplesOf(text))];
        }),
      )}`,
    );

    // 2. Over HTTP, each version served by a child process of its own.
    const servers = await Promise.all(
      versions.map(
        (version) =>
          new Promise<{ url: string; pid: number }>((resolve, reject) => {
            const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench', 'scrape-cost.ts'), '--serve', version.folder], { stdio: ['ignore', 'pipe', 'inherit'] });
            children.push(child);
            child.once('error', reject);
            child.once('exit', (code) => reject(new Error(`the server of ${version.name} exited (${code})`)));
            child.stdout!.once('data', (chunk: Buffer) => resolve({ url: chunk.toString('utf8').trim(), pid: child.pid! }));
          }),
      ),
    );
    const ways = [false, true] as const;
    const readings = servers.map(() => ways.map(() => ({ wall: [] as number[], cpu: [] as number[], wireBytes: 0, encoding: '' })));
    for (let round = 0; round < HTTP_ROUNDS + 3; round += 1) {
      for (const index of round % 2 ? [1, 0] : [0, 1]) {
        for (const [way, gzip] of ways.entries()) {
          const { url, pid } = servers[index]!;
          const cpuBefore = threadsCpuNs(pid);
          const started = performance.now();
          const answer = await scrape(url, gzip);
          const wall = performance.now() - started;
          const cpu = (threadsCpuNs(pid) - cpuBefore) / 1e6;
          if (answer.status !== 200 || !answer.text.includes('http_server_request_duration_seconds_bucket')) throw new Error(`${versions[index]!.name}: ${answer.status}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
          if (round < 3) continue;
          const reading = readings[index]![way]!;
          reading.wall.push(wall);
          reading.cpu.push(cpu);
          reading.wireBytes = answer.wireBytes;
          reading.encoding = answer.encoding;
        }
      }
    }
    console.log(
      `\n2. GET /metrics over loopback, ${HTTP_ROUNDS} rounds each, in turn (medians; the server keeps observing 1,000 values a second)\n\n${markdownTable(
        ['version', 'asked', 'answered', 'wall at the client', "server's CPU", 'bytes on the wire'],
        versions.flatMap((version, index) =>
          ways.map((gzip, way) => {
            const reading = readings[index]![way]!;
            return [version.name, gzip ? 'gzip' : 'identity', reading.encoding, ms(median(reading.wall)), ms(median(reading.cpu)), String(reading.wireBytes)];
          }),
        ),
      )}\n\nload average at the end ${loadAverage().toFixed(1)}`,
    );
  } finally {
    for (const child of children) child.kill();
    rmSync(scratch, { recursive: true, force: true });
  }
}

const [mode, argument] = process.argv.slice(2);
if (mode === '--capture') await capture(argument ?? join(REPO_ROOT, 'bench', 'data', 'mixed-workload.prom'));
else if (mode === '--serve') await serve(argument!);
else await compare();
