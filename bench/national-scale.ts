/**
 * National scale: the platform as `npm start` runs it (bench/platform-process.ts), grown in steps to
 * 1,000, 100,000 and 1,000,000 passports of ten signed events each, with 100,000 registry records,
 * 100,000 trust nodes and a snapshot of one passport in a hundred; at each size, the median and p95
 * of every read path and of an event append, one request at a time, every request distinct.
 *
 *   npm run bench:national
 *   NATIONAL_SIZES=1000,20000 NATIONAL_SAMPLES=300 NATIONAL_RECORDS=10000 node --import tsx bench/national-scale.ts --print
 *   NATIONAL_KEEP=/data/national npm run bench:national   # keeps the built platform (stopped) for
 *       PLATFORM_NATIONAL=/data/national node --import tsx bench/platform.ts --gateways
 *
 * How the data is built (test/support/national/): passports and events are made by the issuer's own
 * domain code (appendEvent, signLogHead, the RFC 8785 and RFC 6962 functions of lib/formats/) under
 * the issuer's own keys, opened from its store with its unsealing code, in worker threads, and
 * loaded with COPY; registry records and the trust graph in bulk SQL; snapshots through the
 * archive's API. A sample of 100 passports is then checked with the offline verifier (verifier/)
 * against the keyring the running platform publishes: the benchmark fails if one does not verify.
 *
 * Writes docs/benchmarks/national-scale.md and .json (unless --print).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import type { ServiceName } from '../lib/config/services.js';
import { clusterDirectory, rootPostgresHome } from '../lib/db/embedded-postgres.js';
import { kekFile, readKekFile } from '../lib/keys/kek.js';
import { NationalBuilder, nationalPassportId, templateFrom, EVENTS_PER_PASSPORT, SNAPSHOT_EVERY, type GrowthTimes } from '../test/support/national/build.js';
import { logExportFrom, verifyLogExport } from '../verifier/log.js';
import { pinsFrom } from '../verifier/pins.js';
import { MIX_QUERIES, NATIONAL_MANIFEST, vouchForIssuerKeys, type KeptNationalData } from './mixed-workload.js';
import { PlatformProcess } from './platform-process.js';
import { postgresMemory, residentMemory } from './processes.js';
import { BenchRun, formatMs as ms, seededDraws, loadAverage, markdownTable, quantile, writeReport, type KeyFigure } from './support.js';

const SIZES = (process.env.NATIONAL_SIZES ?? '1000,100000,1000000').split(',').map(Number);
const SAMPLES = Number(process.env.NATIONAL_SAMPLES ?? 2000);
/** Registry records and trust nodes, built in full with the first size (they do not grow with passports). */
const RECORDS = Number(process.env.NATIONAL_RECORDS ?? 100_000);
const VERIFY_SAMPLE = 100;
/**
 * Untimed requests of each path before the first size is timed: the platform's first requests after
 * its start compile and warm what every later one finds ready, which would flatter the ratios of the
 * larger sizes. Only the first size needs it, and its data fits in memory, so the repeats warm no cache.
 */
const WARMUP = Number(process.env.NATIONAL_WARMUP ?? 200);
const MODEL = 'national-battery';
const printOnly = process.argv.includes('--print');
/**
 * NATIONAL_KEEP=<folder>: build there (a new or empty folder) and keep it, the platform stopped, with
 * national.json saying what was built; bench/platform.ts then draws its mixed workload from it
 * (PLATFORM_NATIONAL). At a million passports it holds some 20 GB.
 */
const KEEP = process.env.NATIONAL_KEEP ? resolve(process.env.NATIONAL_KEEP) : undefined;
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const seconds = (msValue: number) => `${(msValue / 1000).toFixed(1)} s`;

const benchRun = new BenchRun('national-scale', 'npm run bench:national');
if (KEEP && existsSync(KEEP) && readdirSync(KEEP).length) throw new Error(`NATIONAL_KEEP=${KEEP} is not empty: name a new or empty folder`);
const dataDir = KEEP ?? mkdtempSync(join(tmpdir(), 'national-bench-'));
const platform = await PlatformProcess.prepare({ dataDir: join(dataDir, 'platform'), env: { NODE_ENV: 'production', LOG_LEVEL: 'warn' } });
const loads: number[] = [];
const loadTimer = setInterval(() => loads.push(loadAverage()), 5_000);
let builder: NationalBuilder | undefined;

/** `count` distinct numbers below `size`, none of `excluded`. */
function distinct(draw: (length: number) => number, size: number, count: number, excluded: ReadonlySet<number> = new Set()): number[] {
  const chosen = new Set<number>();
  const wanted = Math.min(count, size - excluded.size);
  while (chosen.size < wanted) {
    const n = draw(size);
    if (!excluded.has(n)) chosen.add(n);
  }
  return [...chosen];
}

try {
  await platform.start();
  const databaseUrl = platform.databaseUrl();
  const headers = (role: 'admin' | 'writer') => ({ 'content-type': 'application/json', authorization: `Bearer ${platform.tokens[role]}` });
  const rest = async (service: ServiceName, path: string, body?: unknown, role: 'admin' | 'writer' = 'admin'): Promise<any> => {
    const response = await fetch(`${platform.base(service)}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: headers(role),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${service} ${path}: ${response.status} ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : undefined;
  };

  // A model, one passport through the API (the template of every built one), the issuer's keys vouched for by a root.
  await rest('registry', '/', {
    kind: 'model',
    id: MODEL,
    body: { title: MODEL, schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { chemistry: { enum: ['LFP', 'NMC'] } }, required: ['chemistry'] } },
  });
  const template = await rest(
    'issuer',
    '/passports',
    { identity: 'https://id.gs1.org/01/09520123456788/21/NAT-TEMPLATE', type_ref: { id: MODEL, version: 1 }, config_vector: { chemistry: 'LFP' } },
    'writer',
  );
  await vouchForIssuerKeys({ rest: (service, path, body) => rest(service, path, body), issuerBase: platform.base('issuer') });
  const db = new pg.Client({ connectionString: databaseUrl });
  db.on('error', () => {});
  await db.connect();
  builder = await NationalBuilder.open({
    databaseUrl,
    kek: readKekFile(kekFile({ PASSPORT_DATA_DIR: platform.dataDir })),
    template: await templateFrom(db, template.passport_id),
    snapshot: (id) => rest('archive', '/snapshots', { passport_id: id }, 'writer'),
    log: (line) => console.log(line),
  });
  const keyring = await (await fetch(`${platform.base('issuer')}/keyring`)).json();
  const pins = pinsFrom({ keySets: [keyring] });

  const results: Step[] = [];
  const appended = new Set<number>();
  for (const size of SIZES) {
    console.log(`growing to ${size.toLocaleString('en')} passports`);
    const times = await builder.growTo(size);
    if (builder.records < RECORDS) {
      // Registry records and trust nodes are built once, in full, with the first size.
      const grown = await builder.growRecords(RECORDS);
      times.registryMs = grown.registryMs;
      times.trustMs = grown.trustMs;
      times.totalMs += grown.registryMs + grown.trustMs;
    }
    console.log(
      `  built in ${(times.totalMs / 1000).toFixed(1)} s (passports ${(times.passportsMs / 1000).toFixed(1)} s, indexes ${(times.indexesMs / 1000).toFixed(1)} s, snapshots ${(times.snapshotsMs / 1000).toFixed(1)} s)`,
    );
    const failures = await verifySample(size);
    if (failures.length) throw new Error(`built passports that do not verify offline:\n${failures.join('\n')}`);
    results.push(await measure(size, times, appended));
    printStep(results.at(-1)!);
    // Written at every size: a run stopped before the largest still leaves the sizes it reached.
    report(results);
  }
  await db.end();
  if (KEEP) {
    const kept: KeptNationalData = { passports: builder.size, model: MODEL, builtAt: new Date().toISOString(), commit: benchRun.code, platformDataDir: platform.dataDir };
    writeFileSync(join(KEEP, NATIONAL_MANIFEST), `${JSON.stringify(kept, null, 2)}\n`);
  }

  // -------------------------------------------------------------------------------------------

  /** VERIFY_SAMPLE random passports through the offline verifier, under the keyring the platform publishes. */
  async function verifySample(size: number): Promise<string[]> {
    const draw = seededDraws(size).index;
    const failures: string[] = [];
    for (const n of distinct(draw, size, VERIFY_SAMPLE)) {
      const id = nationalPassportId(n);
      const exported = await rest('issuer', `/passports/${id}?include_events=true`);
      const verdict = await verifyLogExport(logExportFrom(exported), pins);
      if (verdict.verdict !== 'valid' || exported.log.length < EVENTS_PER_PASSPORT) failures.push(`${id}: ${verdict.verdict} ${JSON.stringify(verdict.findings.filter((f) => f.status === 'failed'))}`);
    }
    return failures;
  }

  async function measure(size: number, times: GrowthTimes, appendedBefore: Set<number>): Promise<Step> {
    const draw = seededDraws(1000 + size).index;
    const count = Math.min(SAMPLES, size);
    const ids = (excluded?: ReadonlySet<number>) => distinct(draw, size, count, excluded).map(nationalPassportId);
    const createdAt = new Map<string, number>();
    const asOfIds = ids();
    const { rows } = await db.query<{ id: string; created_at: Date }>('SELECT id, created_at FROM issuer.passport WHERE id = ANY($1)', [asOfIds]);
    for (const row of rows) createdAt.set(row.id, row.created_at.getTime());
    const itemIds = builder!.recordIds('item');
    const itemDraw = distinct(draw, itemIds.length, count).map((i) => itemIds[i]!);
    const appendNumbers = distinct(draw, size, count);
    const gatewayBatches = Array.from({ length: count }, () => distinct(draw, size, 10).map(nationalPassportId));
    const paths: [string, (i: number) => Promise<Response>][] = [
      [
        'GET /issuer/passports/{id}',
        (
          (list) => (i) =>
            fetch(`${platform.base('issuer')}/passports/${list[i]}`)
        )(ids()),
      ],
      [
        'verdict of a 10-event passport',
        (
          (list) => (i) =>
            fetch(`${platform.base('issuer')}/passports/${list[i]}/verdict`)
        )(ids(appendedBefore)),
      ],
      [
        'verification page online check (GET /verify/latest/{id})',
        (
          (list) => (i) =>
            fetch(`${platform.facadeUrl}/verify/latest/${list[i]}`)
        )(ids()),
      ],
      [
        'GET /archive/snapshots?passport_id=',
        (
          (list) => (i) =>
            fetch(`${platform.base('archive')}/snapshots?passport_id=${list[i]}`)
        )(ids()),
      ],
      ['GET /registry/items/{id}', (i) => fetch(`${platform.base('registry')}/items/${itemDraw[i]}`)],
      [
        'GraphQL passports(ids:) of 10, across services (gateway)',
        (i) =>
          fetch(platform.gatewayUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: MIX_QUERIES.passports, variables: { ids: gatewayBatches[i] } }),
          }),
      ],
      [
        'GET /issuer/passports/{id}?at= (mid-log)',
        (i) => fetch(`${platform.base('issuer')}/passports/${asOfIds[i]}?at=${new Date(createdAt.get(asOfIds[i]!)! + EVENTS_PER_PASSPORT / 2).toISOString()}`),
      ],
      [
        'event append (POST /issuer/passports/{id}/events)',
        (i) => {
          appendedBefore.add(appendNumbers[i]!);
          return fetch(`${platform.base('issuer')}/passports/${nationalPassportId(appendNumbers[i]!)}/events`, {
            method: 'POST',
            headers: headers('writer'),
            body: JSON.stringify({
              type: 'ObjectEvent',
              payload: { action: 'OBSERVE', eventTime: new Date().toISOString(), eventTimeZoneOffset: '+01:00', epcList: [`https://id.gs1.org/01/09520123456788/21/NAT-${appendNumbers[i]}`] },
            }),
          });
        },
      ],
    ];
    const memory = { platform: 0, postgres: 0 };
    const sampleMemory = () => {
      memory.platform = Math.max(memory.platform, residentMemory(platform.pid!).rss);
      memory.postgres = Math.max(memory.postgres, postgresMemory(platform.pid!));
    };
    const memoryTimer = setInterval(sampleMemory, 500);
    const loadStart = loadAverage();
    const figures: PathFigure[] = [];
    try {
      for (const [name, request] of paths) {
        for (let i = 0; i < (results.length === 0 ? Math.min(WARMUP, count) : 0); i += 1) await (await request(count - 1 - i)).text();
        const latencies: number[] = [];
        for (let i = 0; i < count; i += 1) {
          const started = performance.now();
          const response = await request(i);
          const text = await response.text();
          latencies.push(performance.now() - started);
          // A verdict of a built passport that fails would time the failure path, and mean the data is not what the issuer makes.
          if (!response.ok || text.includes('"errors"') || text.includes('"outcome":"failed"')) throw new Error(`${name}: ${response.status} ${text.slice(0, 400)}`);
        }
        figures.push({ name, median: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), samples: count });
      }
    } finally {
      clearInterval(memoryTimer);
    }
    sampleMemory();
    const sizes = await db.query<{ passports: string; events: string; passport_bytes: string; event_bytes: string; database_bytes: string }>(
      `SELECT (SELECT count(*) FROM issuer.passport) AS passports, (SELECT count(*) FROM issuer.passport_event) AS events,
              pg_total_relation_size('issuer.passport') AS passport_bytes, pg_total_relation_size('issuer.passport_event') AS event_bytes,
              pg_database_size(current_database()) AS database_bytes`,
    );
    const s = sizes.rows[0]!;
    return {
      size,
      times,
      figures,
      passports: Number(s.passports),
      events: Number(s.events),
      passportBytes: Number(s.passport_bytes),
      eventBytes: Number(s.event_bytes),
      databaseBytes: Number(s.database_bytes),
      platformPeak: memory.platform,
      postgresPeak: memory.postgres,
      load: { start: loadStart, end: loadAverage() },
    };
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  clearInterval(loadTimer);
  await builder?.close().catch(() => {});
  // Run as root, the cluster is placed outside the data folder (lib/db/embedded-postgres.ts); at a million passports it is some 20 GB.
  const cluster = await clusterDirectory(platform.dataDir);
  await platform.stop();
  if (KEEP && !process.exitCode) {
    console.log(`Kept in ${KEEP} (the cluster in ${cluster}); the mix over it: PLATFORM_NATIONAL=${KEEP} node --import tsx bench/platform.ts --gateways`);
  } else {
    rmSync(dataDir, { recursive: true, force: true });
    if (cluster.startsWith(`${rootPostgresHome()}/`)) rmSync(dirname(cluster), { recursive: true, force: true });
  }
}

interface PathFigure {
  name: string;
  median: number;
  p95: number;
  samples: number;
}

interface Step {
  size: number;
  times: GrowthTimes;
  figures: PathFigure[];
  passports: number;
  events: number;
  passportBytes: number;
  eventBytes: number;
  databaseBytes: number;
  platformPeak: number;
  postgresPeak: number;
  load: { start: number; end: number };
}

function printStep(step: Step): void {
  console.log(
    markdownTable(
      ['path', 'median', 'p95'],
      step.figures.map((f) => [f.name, ms(f.median), ms(f.p95)]),
      ['left', 'right', 'right'],
    ),
  );
  console.log(
    `  ${step.passports.toLocaleString('en')} passports, ${step.events.toLocaleString('en')} events; ${(step.passportBytes / step.passports).toFixed(0)} B per passport row, ${(step.eventBytes / step.events).toFixed(0)} B per event; platform ${mb(step.platformPeak)}, PostgreSQL ${mb(step.postgresPeak)}; load ${step.load.start.toFixed(2)} → ${step.load.end.toFixed(2)}`,
  );
}

function report(steps: Step[]): void {
  const first = steps[0]!;
  const last = steps.at(-1)!;
  const sizes = steps.map((step) => step.size.toLocaleString('en'));
  const pathRows = first.figures.map((figure, index) => {
    const cells = steps.map((step) => `${ms(step.figures[index]!.median)} / ${ms(step.figures[index]!.p95)}`);
    const ratio = last.figures[index]!.median / figure.median;
    const isAppend = figure.name.startsWith('event append');
    const goal = isAppend ? `median < 10 ms: ${last.figures[index]!.median < 10 ? 'met' : 'NOT met'}` : `≤ 1.5×: ${ratio <= 1.5 ? 'met' : 'NOT met'}`;
    return [figure.name, ...cells, `${ratio.toFixed(2)}×`, goal];
  });
  const table = markdownTable(['path (median / p95)', ...sizes, `${sizes.at(-1)} / ${sizes[0]}`, 'goal'], pathRows, ['left', ...steps.map(() => 'right' as const), 'right', 'left']);
  const dataRows = steps.map((step) => [
    step.size.toLocaleString('en'),
    step.events.toLocaleString('en'),
    seconds(step.times.totalMs),
    seconds(step.times.passportsMs),
    seconds(step.times.indexesMs),
    seconds(step.times.registryMs + step.times.trustMs),
    seconds(step.times.snapshotsMs),
    `${((step.passportBytes + step.eventBytes) / step.passports).toFixed(0)} B`,
    `${(step.eventBytes / step.events).toFixed(0)} B`,
    mb(step.databaseBytes),
    mb(step.platformPeak),
    mb(step.postgresPeak),
    `${step.load.start.toFixed(1)} → ${step.load.end.toFixed(1)}`,
  ]);
  const dataTable = markdownTable(
    [
      'passports',
      'events',
      'build step',
      'passports signed + COPY',
      'indexes remade',
      'registry + trust',
      'snapshots (API)',
      'issuer tables per passport',
      'per event',
      'database',
      'platform peak RSS',
      'PostgreSQL peak (Pss)',
      'load during measurement',
    ],
    dataRows,
    ['right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'left'],
  );
  const buildTotal = steps.reduce((sum, step) => sum + step.times.totalMs, 0);
  const peakLoad = Math.max(...loads, 0);
  const document = `# National scale

${benchRun.report()}
- Load average over the whole run (sampled every 5 s): median ${quantile(loads.length ? loads : [0], 0.5).toFixed(2)}, highest ${peakLoad.toFixed(2)}

The platform as \`npm start\` runs it, grown in steps to ${sizes.join(' → ')} passports of ${EVENTS_PER_PASSPORT} signed events each, with ${RECORDS.toLocaleString('en')} registry records (2 versions each), ${RECORDS.toLocaleString('en')} trust nodes and a snapshot of one passport in ${SNAPSHOT_EVERY}. At each size, ${first.figures[0]!.samples === SAMPLES ? SAMPLES.toLocaleString('en') : `up to ${SAMPLES.toLocaleString('en')}`} requests per path (fewer when the set is smaller), one at a time from one client, each for a different passport (or record, or set of 10 passports) drawn with a fixed seed from the whole built set; the verdict is asked only of passports with their 10 events (none appended to). Goals (issue 30): every read median at the largest size within 1.5× of the smallest; the append median under 10 ms.

## Latency

${table}

## Data, build and memory

${dataTable}

Building took ${seconds(buildTotal)} in all. How the data is built (test/support/national/): each passport's ten events (\`activated\`, then nine EPCIS ObjectEvents) and eleven signed log heads (the empty log's, then one per event, as the issuer keeps them in \`passport_event.log_head\`) are made by the issuer's own domain functions (\`appendEvent\`, \`signLogHead\`; RFC 8785 and RFC 6962 from lib/formats/) with real Ed25519 signatures under the issuer's own event key, opened from its store by the issuer's unsealing code; the passport row holds the frontier, last event, head, status and status index an append keeps. Worker threads (one per core) sign and load with COPY into the platform's own (logged) tables; a step that at least doubles the passports drops the issuer tables' indexes and constraints and makes them again from PostgreSQL's own definitions after the load, then ANALYZE. Registry records and the trust graph (test/support/synthetic-trust-graph.ts) are bulk SQL; snapshots are made through POST /archive/snapshots, 4 at a time. Before measuring each size, ${VERIFY_SAMPLE} random passports are checked with the offline verifier (verifier/log.ts) under the keyring the running platform publishes; the run fails if one does not verify. Memory: the peak resident set of \`npm start\`'s node process and the proportional set (Pss, shared buffers counted once) of PostgreSQL's processes, sampled every 0.5 s while measuring.
`;
  if (printOnly) return void console.log(`\n${document}`);
  const figures: KeyFigure[] = [
    ...pathRows.map((row) => ({
      measure: `${row[0]} at ${sizes.at(-1)} passports (median / p95; ${sizes.at(-1)} / ${sizes[0]})`,
      value: `${row.at(-3)} (${row.at(-2)})`,
      target: row[0]!.startsWith('event append') ? 'median < 10 ms' : '≤ 1.5×',
    })),
    { measure: `build of ${sizes.at(-1)} passports, ${last.events.toLocaleString('en')} events`, value: seconds(buildTotal), target: '< 30 min' },
    { measure: 'issuer tables per passport / per event', value: `${((last.passportBytes + last.eventBytes) / last.passports).toFixed(0)} B / ${(last.eventBytes / last.events).toFixed(0)} B` },
  ];
  writeReport(benchRun, document, figures);
}
