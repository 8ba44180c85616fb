/**
 * Platform benchmark: the parts between the client and the subgraphs, and the whole in memory.
 *
 * 1. Our gateway against Hive Gateway: the same supergraph SDL over the same running subgraphs, each
 *    gateway a process of its own, loaded in turns by autocannon (50 connections, another process)
 *    with one cross-subgraph query; requests/s and p95 latency, and their ratio.
 * 2. The REST facade's overhead: reads through the facade against the same operation (the one its
 *    route table runs) posted to the gateway, sequential, in turns.
 * 3. The gateway's overhead: a query only the issuer answers, at the issuer subgraph's own URL and
 *    through the gateway, sequential, in turns.
 * 4. Memory of `npm start` (bin/start.ts as a child process on its own data folder): resident memory
 *    of the node process and of its whole process tree (embedded PostgreSQL included), idle after
 *    start and while autocannon loads a read path; then it is stopped with SIGTERM and no process of
 *    its tree may be left.
 *
 *   node --import tsx bench/platform.ts
 *   node --import tsx bench/platform.ts --gateways   # some parts (--gateways, --overheads, --memory), printed, no report
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { SERVICES } from '../lib/config/services.js';
import { ROUTE_TABLES } from '../rest-facade/routes/index.js';
import { PlatformProcess } from './platform-process.js';
import { autocannonLoad, BENCH_TOOLS, BenchRun, ensureBenchTools, benchToken, formatMs as ms, freePort, markdownTable, median, openBench, processTree, REPO_ROOT, summarize, timedInTurns, writeReport, type KeyFigure, type Load, type LoadOptions } from './support.js';

const CONNECTIONS = 50;
/** Rounds of the gateway comparison: ours then Hive's (the order alternates), LOAD_SECONDS each. */
const ROUNDS = 4;
const LOAD_SECONDS = 6;
const WARMUP_SECONDS = 3;
const PASSPORTS = 12;
const SEQUENTIAL_ROUNDS = 300;
const MEMORY_LOAD_SECONDS = 8;
const { token: ADMIN, tokens } = benchToken('admin');
const MODEL = 'bench-platform-battery';
/** Parts asked for on the command line (--gateways, --overheads, --memory) are run and printed, not written; by default, all of them, written. */
const PARTS = ['gateways', 'overheads', 'memory'] as const;
const asked = PARTS.filter((part) => process.argv.includes(`--${part}`));
const everything = asked.length === 0;
const parts = new Set<string>(everything ? PARTS : asked);

/** Passports with their registry type record, archive snapshots and the trust standing of their keys: four subgraphs, one request. */
const CROSS_QUERY = `query PlatformBench($ids: [ID!]!) {
  passports(ids: $ids) {
    id status
    typeRecord { id version kind status }
    snapshots { id sha512 size }
    signingKeys { role kid firstUsed standingAtFirstUse { standing revoked rootId reason } standingAtLastUse { standing revoked } }
  }
}`;
/** A query only the issuer answers, the same text at the subgraph and at the gateway. */
const ISSUER_QUERY = 'query IssuerOnly($id: ID!) { passport(id: $id) { id status core manifest logHead capabilityClass logSize latestPack } }';

const benchRun = new BenchRun('platform', 'node --import tsx bench/platform.ts');
const bench = await openBench('platform');
const stack = await bench.startStack(tokens).catch(async (error: unknown) => {
  await bench.close();
  throw error;
});

// ---------------------------------------------------------------------------------------------
// Helpers

async function rest(service: (typeof SERVICES)[number], path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${stack.facade.baseUrls[service]}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`POST ${service}${path} answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  return answer;
}

async function graphql(url: string, query: string, variables: Record<string, unknown>): Promise<{ data?: unknown; errors?: unknown[] }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  const answer = (await response.json()) as { data?: unknown; errors?: unknown[] };
  if (response.status !== 200 || answer.errors?.length) throw new Error(`${url} answered ${response.status}: ${JSON.stringify(answer).slice(0, 400)}`);
  return answer;
}

/** autocannon against `url` with the benchmark's connections. */
const load = (url: string, seconds: number, request: Pick<LoadOptions, 'method' | 'headers' | 'body'> = {}): Promise<Load> => autocannonLoad({ url, connections: CONNECTIONS, seconds, ...request });

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('error', reject);
    child.once('exit', () => resolve());
  });

/** Starts a server process, stopped (SIGTERM) by bench.close(); resolves once `ready()` holds. */
async function serverProcess(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, ready: () => Promise<boolean>): Promise<ChildProcess> {
  const child = spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, NODE_ENV: 'production', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-2000)));
  bench.defer(async () => {
    child.kill('SIGTERM');
    await exited(child);
  });
  for (let waited = 0; waited < 60_000; waited += 200) {
    if (child.exitCode !== null) break;
    if (await ready().catch(() => false)) return child;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${name} did not start: ${errors}`);
}

const answersGraphql = (url: string) => async () => (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' })).ok;

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
const percentMore = (a: number, b: number) => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)} %`;

const rows: string[][] = [];
const figures: KeyFigure[] = [];
try {
  // ---------------------------------------------------------------------------------------------
  // Data: a model, passports of it with an event (every third with a pack) and a snapshot each.

  console.log(`Seeding ${PASSPORTS} passports across the four services …`);
  await rest('registry', '/', {
    kind: 'model',
    id: MODEL,
    body: { title: MODEL, schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { chemistry: { enum: ['LFP', 'NMC'] } }, required: ['chemistry'] } },
  });
  const passportIds: string[] = [];
  for (let i = 0; i < PASSPORTS; i += 1) {
    const identity = `https://id.gs1.org/01/09520123456788/21/PLATFORM-${i}`;
    const passport = await rest('issuer', '/passports', { identity, type_ref: { id: MODEL, version: 1 }, config_vector: { chemistry: 'LFP' } });
    const id = passport.passport_id as string;
    await rest('issuer', `/passports/${id}/events`, {
      type: 'ObjectEvent',
      payload: { eventTime: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(), eventTimeZoneOffset: '+01:00', action: 'OBSERVE', bizStep: 'inspecting', epcList: [identity], readPoint: { id: 'urn:epc:id:sgln:9520123.00001.0' } },
    });
    if (i % 3 === 0) await rest('issuer', `/passports/${id}/pack`);
    await rest('archive', '/snapshots', { passport_id: id });
    passportIds.push(id);
  }
  const crossVariables = { ids: passportIds.slice(0, 10) };
  const crossBody = JSON.stringify({ query: CROSS_QUERY, variables: crossVariables });
  const jsonHeaders = { 'content-type': 'application/json' };

  if (parts.has('gateways')) {
    // -------------------------------------------------------------------------------------------
    // 1. Our gateway and Hive Gateway, each its own process, over the subgraphs of this process.

    const subgraphEnv = Object.fromEntries(SERVICES.map((service) => [`${service.toUpperCase()}_SUBGRAPH_URL`, stack.subgraphUrls[service]]));
    const oursDir = join(bench.dataDir, 'ours');
    mkdirSync(oursDir);
    const oursPort = await freePort();
    const oursUrl = `http://127.0.0.1:${oursPort}/graphql`;
    console.log('Starting our gateway (bin/gateway.ts) and Hive Gateway as processes …');
    await serverProcess('our gateway', process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { HOST: '127.0.0.1', GATEWAY_PORT: String(oursPort), PASSPORT_DATA_DIR: oursDir, ...subgraphEnv }, answersGraphql(oursUrl));
    // The very SDL our gateway composed (its supergraphFile), with the subgraphs' URLs in it.
    const supergraphFile = join(oursDir, 'supergraph.graphql');
    if (readFileSync(supergraphFile, 'utf8') !== stack.gateway.supergraphSdl) throw new Error('the two compositions differ');
    const hiveDir = join(bench.dataDir, 'hive');
    mkdirSync(hiveDir);
    const hiveConfig = join(hiveDir, 'gateway.config.mjs');
    // Nothing beyond serving: no GraphiQL or landing page, no websockets, errors-only logging; with
    // no Hive or Apollo token given it reports no usage, and no OpenTelemetry endpoint is set.
    writeFileSync(
      hiveConfig,
      `export const gatewayConfig = {
    graphiql: false,
    landingPage: false,
    disableWebsockets: true,
    logging: 'error',
    // As ours: the caller's credentials go on to every subgraph.
    propagateHeaders: { fromClientToSubgraphs: ({ request }) => (request.headers.get('authorization') ? { authorization: request.headers.get('authorization') } : {}) },
  };
  `,
    );
    const hivePort = await freePort();
    const hiveUrl = `http://127.0.0.1:${hivePort}/graphql`;
    ensureBenchTools();
    const hiveBin = join(BENCH_TOOLS, 'node_modules', '.bin', 'hive-gateway');
    await serverProcess('Hive Gateway', hiveBin, ['supergraph', supergraphFile, '--port', String(hivePort), '--host', '127.0.0.1', '--config-path', hiveConfig, '--disable-websockets'], {}, answersGraphql(hiveUrl));

    const oursAnswer = await graphql(oursUrl, CROSS_QUERY, crossVariables);
    const hiveAnswer = await graphql(hiveUrl, CROSS_QUERY, crossVariables);
    if (!isDeepStrictEqual(oursAnswer.data, hiveAnswer.data)) throw new Error(`the gateways answer differently:\n${JSON.stringify(oursAnswer.data).slice(0, 600)}\n${JSON.stringify(hiveAnswer.data).slice(0, 600)}`);
    const subgraphsHit = JSON.stringify(oursAnswer.data).includes('"standing"') && JSON.stringify(oursAnswer.data).includes('"sha512"');
    if (!subgraphsHit) throw new Error('the query should reach trust and archive');
    console.log(`  both answer the same data (${JSON.stringify(oursAnswer.data).length} bytes of JSON)`);

    const gatewayLoad = { method: 'POST', headers: jsonHeaders, body: crossBody };
    console.log(`Warming up each for ${WARMUP_SECONDS} s …`);
    await load(oursUrl, WARMUP_SECONDS, gatewayLoad);
    await load(hiveUrl, WARMUP_SECONDS, gatewayLoad);
    const runs = { ours: [] as Load[], hive: [] as Load[] };
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternating who goes first, so that neither always follows the other's garbage.
      for (const which of round % 2 === 0 ? (['ours', 'hive'] as const) : (['hive', 'ours'] as const)) {
        const result = await load(which === 'ours' ? oursUrl : hiveUrl, LOAD_SECONDS, gatewayLoad);
        runs[which].push(result);
        console.log(`  round ${round + 1}, ${which}: ${result.perSecond.toFixed(0)} req/s, p95 ${ms(result.latency.p95)}, non-2xx ${result.non2xx}, errors ${result.errors}`);
      }
    }
    // Still the same answers after the load.
    if (!isDeepStrictEqual((await graphql(oursUrl, CROSS_QUERY, crossVariables)).data, (await graphql(hiveUrl, CROSS_QUERY, crossVariables)).data)) throw new Error('the gateways answer differently after the load');
    const gatewayStats = (list: Load[]) => ({
      perSecond: median(list.map((run) => run.perSecond)),
      p95: median(list.map((run) => run.latency.p95)),
      latency: median(list.map((run) => run.latency.median)),
      failed: list.reduce((sum, run) => sum + run.non2xx + run.errors + run.timeouts, 0),
      requests: list.reduce((sum, run) => sum + run.requests, 0),
    });
    const ours = gatewayStats(runs.ours);
    const hive = gatewayStats(runs.hive);
    const pairRatios = runs.ours.map((run, i) => run.perSecond / runs.hive[i]!.perSecond);
    for (const [label, stats] of [
      ['our gateway (@apollo/gateway, bin/gateway.ts)', ours],
      ['Hive Gateway', hive],
    ] as const) {
      rows.push([`cross-subgraph query, ${CONNECTIONS} connections: ${label}`, `**${stats.perSecond.toFixed(0)} req/s**`, ms(stats.latency), ms(stats.p95), `${stats.failed} of ${stats.requests}`]);
    }
    rows.push(['ours / Hive (median of the rounds)', `**${ratio(ours.perSecond, hive.perSecond)}** req/s (rounds: ${pairRatios.map((r) => r.toFixed(2)).join(', ')})`, ratio(ours.latency, hive.latency), ratio(ours.p95, hive.p95), '—']);
    figures.push(
      { measure: `gateway requests/s, ours / Hive Gateway (cross-subgraph query, ${CONNECTIONS} connections)`, value: `${ratio(ours.perSecond, hive.perSecond)} (${ours.perSecond.toFixed(0)} / ${hive.perSecond.toFixed(0)} req/s)`, target: '≥ 1.0' },
      { measure: 'gateway p95 latency, ours / Hive Gateway', value: `${ms(ours.p95)} / ${ms(hive.p95)}` },
      { measure: 'failed requests under load (non-2xx, errors, timeouts), ours / Hive', value: `${ours.failed} / ${hive.failed}`, target: '0' },
    );
  }

  if (parts.has('overheads')) {
    // -------------------------------------------------------------------------------------------
    // 2. The REST facade against the same operation posted to the gateway; 3. the gateway against
    //    the issuer subgraph. Sequential requests, all the ways in turns, the order rotating.

    const gatewayUrl = stack.gateway.graphqlUrl;
    const routeOperation = (service: 'issuer' | 'registry', path: string) => ROUTE_TABLES[service].routes.find((route) => route.method === 'GET' && route.path === path)!.operation;
    const passportOperation = routeOperation('issuer', '/passports/{id}');
    const recordOperation = routeOperation('registry', '/models/{id}');
    const target = passportIds[1]!;
    const get = async (url: string) => {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
    };
    const post = (url: string, query: string, variables: Record<string, unknown>) => async () => void (await graphql(url, query, variables));
    console.log(`Sequential reads, ${SEQUENTIAL_ROUNDS} rounds in turns …`);
    const [facadePassport, gatewayPassport, facadeRecord, gatewayRecord, subgraphIssuer, gatewayIssuer] = await timedInTurns(
      SEQUENTIAL_ROUNDS,
      [
        () => get(`${stack.facade.baseUrls.issuer}/passports/${target}`),
        post(gatewayUrl, passportOperation, { id: target, withEvents: false }),
        () => get(`${stack.facade.baseUrls.registry}/models/${MODEL}`),
        post(gatewayUrl, recordOperation, { id: MODEL, version: null, kind: 'model' }),
        post(stack.subgraphUrls.issuer, ISSUER_QUERY, { id: target }),
        post(gatewayUrl, ISSUER_QUERY, { id: target }),
      ],
      { warmups: 20, rotate: true },
    );
    const pairs = [
      ['GET /issuer/passports/{id} through the facade', 'its operation posted to the gateway', facadePassport!, gatewayPassport!],
      ['GET /registry/models/{id} through the facade', 'its operation posted to the gateway', facadeRecord!, gatewayRecord!],
      ['passport(id) through the gateway', 'at the issuer subgraph directly', gatewayIssuer!, subgraphIssuer!],
    ] as const;
    for (const [label, baseline, times, baseTimes] of pairs) {
      const a = summarize(times);
      const b = summarize(baseTimes);
      rows.push([`${label} (sequential)`, `median **${ms(a.median)}**`, ms(a.median), ms(a.p95), '—']);
      rows.push([`… ${baseline}`, `median ${ms(b.median)}; the first costs **${percentMore(a.median, b.median)}**`, ms(b.median), ms(b.p95), '—']);
    }
    const facadeExtra = [percentMore(median(facadePassport!), median(gatewayPassport!)), percentMore(median(facadeRecord!), median(gatewayRecord!))];
    figures.push(
      { measure: 'REST facade overhead, median latency: GET /issuer/passports/{id}, GET /registry/models/{id} against their operations at the gateway', value: facadeExtra.join(', '), target: '< 15 %' },
      { measure: 'gateway overhead, median latency: passport(id) through the gateway against the issuer subgraph', value: `${percentMore(median(gatewayIssuer!), median(subgraphIssuer!))} (${ms(median(gatewayIssuer!))} against ${ms(median(subgraphIssuer!))})` },
    );

    // The facade under load too: the same passport read, autocannon against each in turns.
    console.log('The facade and the gateway under load, in turns …');
    const facadeLoads: Load[] = [];
    const gatewayLoads: Load[] = [];
    const passportBody = JSON.stringify({ query: passportOperation, variables: { id: target, withEvents: false } });
    for (let round = 0; round < 2; round += 1) {
      facadeLoads.push(await load(`${stack.facade.baseUrls.issuer}/passports/${target}`, 4));
      gatewayLoads.push(await load(gatewayUrl, 4, { method: 'POST', headers: jsonHeaders, body: passportBody }));
    }
    const facadeRate = median(facadeLoads.map((run) => run.perSecond));
    const gatewayRate = median(gatewayLoads.map((run) => run.perSecond));
    rows.push([`GET /issuer/passports/{id} through the facade, ${CONNECTIONS} connections (stack in one process)`, `${facadeRate.toFixed(0)} req/s`, ms(median(facadeLoads.map((run) => run.latency.median))), ms(median(facadeLoads.map((run) => run.latency.p95))), `${facadeLoads.reduce((sum, run) => sum + run.non2xx + run.errors, 0)}`]);
    rows.push([`… its operation posted to the gateway, ${CONNECTIONS} connections`, `${gatewayRate.toFixed(0)} req/s (facade: ${ratio(facadeRate, gatewayRate)})`, ms(median(gatewayLoads.map((run) => run.latency.median))), ms(median(gatewayLoads.map((run) => run.latency.p95))), `${gatewayLoads.reduce((sum, run) => sum + run.non2xx + run.errors, 0)}`]);
  }

  if (parts.has('memory')) {
    // -------------------------------------------------------------------------------------------
    // 4. Memory of `npm start`.

    console.log('Memory of npm start …');
    const memory = await measureStart();
    rows.push(['`npm start`, idle after start: node process / whole tree (RSS) / whole tree (PSS)', `${mib(memory.idle.node)} / ${mib(memory.idle.treeRss)} / **${mib(memory.idle.treePss)}** (${memory.idle.processes} processes)`, '—', '—', '—']);
    rows.push([`\`npm start\` under load (GET /issuer/passports/{id}, ${CONNECTIONS} connections, ${MEMORY_LOAD_SECONDS} s; median of samples)`, `${mib(memory.loaded.node)} / ${mib(memory.loaded.treeRss)} / **${mib(memory.loaded.treePss)}** at ${memory.loadRate.toFixed(0)} req/s`, '—', '—', '—']);
    rows.push(['`npm start`, peak seen', `${mib(memory.peak.node)} / ${mib(memory.peak.treeRss)} / **${mib(memory.peak.treePss)}**`, '—', '—', '—']);
    rows.push(['`npm start` stopped with SIGTERM', `exited in ${memory.stopSeconds.toFixed(1)} s; processes of its tree left: ${memory.leftBehind}`, '—', '—', '—']);
    figures.push(
      { measure: '`npm start` memory, whole process tree (PSS): idle / under load / peak', value: `${mib(memory.idle.treePss)} / ${mib(memory.loaded.treePss)} / ${mib(memory.peak.treePss)}` },
      { measure: '`npm start` memory, node process (RSS): idle / under load / peak', value: `${mib(memory.idle.node)} / ${mib(memory.loaded.node)} / ${mib(memory.peak.node)}` },
    );
    if (memory.leftBehind) throw new Error(`${memory.leftBehind} processes of npm start were left behind`);
  }

  if (!everything) {
    console.log(`\n${markdownTable(['measure', 'result', 'median', 'p95', 'failed'], rows)}\n`);
  } else {
    const document = [
      '# Platform benchmark',
      '',
      benchRun.report(bench),
      '',
      '## What is measured, and how',
      '',
      `Data: ${PASSPORTS} passports of one registry model, each with an ObjectEvent, every third with a Tier-A pack, each with an archive snapshot, made through the REST facade.`,
      '',
      `1. **Our gateway against Hive Gateway** (@graphql-hive/gateway, \`hive-gateway supergraph <file> --port P --host 127.0.0.1 --config-path gateway.config.mjs --disable-websockets\`, with GraphiQL, landing page and websockets off and error-only logging; no usage reporting or telemetry is configured). Both serve the SDL our gateway composed (its \`supergraphFile\`) over the same four subgraphs, which run in the benchmark's process; each gateway is a process of its own (ours: \`node --import tsx bin/gateway.ts\` with \`<SERVICE>_SUBGRAPH_URL\`), both with \`NODE_ENV=production\`. Before and after the load both must answer the query with the same \`data\` and no errors. Load: autocannon in another process (bench/tools/load-worker.mjs), ${CONNECTIONS} connections, POST of the query below with the first 10 passports' ids; ${WARMUP_SECONDS} s of warm-up each, then ${ROUNDS} rounds of ${LOAD_SECONDS} s per gateway, alternating (ours, Hive; Hive, ours; …). Figures are the medians of the rounds; the ratio's per-round values are given too.`,
      `2. **REST facade overhead**: GET /issuer/passports/{id} and GET /registry/models/{id} through the facade against the operation the facade's route table runs for that path, posted to the gateway with the same variables; ${SEQUENTIAL_ROUNDS} sequential requests each (after 20 warm-up rounds), all the ways of 2 and 3 in turns with a rotating order (timedInTurns). The same passport read is also loaded with autocannon (${CONNECTIONS} connections, 2 rounds of 4 s each, in turns); there the facade, gateway and subgraphs share one process, as in \`npm start\`.`,
      `3. **Gateway overhead**: \`${ISSUER_QUERY}\` posted to the issuer subgraph's own URL and to the gateway, in the same turns as 2.`,
      `4. **Memory**: \`node --import tsx bin/start.ts\` on its own data folder and free ports (a fresh embedded PostgreSQL cluster); VmRSS of the node process from /proc/<pid>/status, and over its whole process tree (the embedded PostgreSQL processes included) both the sum of RSS (which counts PostgreSQL's shared buffers once per process) and the sum of PSS from /proc/<pid>/smaps_rollup (shared pages divided among their sharers: the honest total). Idle: the median of samples over 3 s, 2 s after it printed that it runs. Under load: autocannon on GET /issuer/passports/{id} (${CONNECTIONS} connections, ${MEMORY_LOAD_SECONDS} s), sampled every 250 ms. Then SIGTERM; every process of its tree must be gone.`,
      '',
      'Both gateways send identical subgraph queries that are in flight at the same moment only once (Hive Gateway by default, in @graphql-tools/executor-http; ours since issue 9, gateway/index.ts). Neither shares whole incoming requests (Hive Gateway\'s `inboundInflightRequestDeduplication` is off by default and left off). With every client sending the same query, as here, that sharing weighs heavily: the figures are those of a hot, repeated query, not of a mix.',
    '',
    'Tuning of our gateway and facade (issue 9), measured side by side with `--gateways` and `--overheads` on this machine, one change at a time (the machine is shared, so compare the ratios):',
    '',
    markdownTable(
      ['change', 'ours / Hive, req/s', 'facade overhead (passport, record), sequential', 'facade, passport read under load', 'gateway overhead, passport(id)'],
      [
        ['before (subgraph fetch with Node\'s fetch; facade with fetch)', '0.16× (54 / 340)', '+15.5 %, +21.3 %', '731 req/s', '+56.5 %'],
        ['identical subgraph queries in flight sent once', '1.77× (455 / 257)', '+21.1 %, +18.0 %', '1390 req/s', '+62.2 %'],
        ['facade asks the gateway over node:http, keep-alive agent', '—', '+16.9 %, +14.6 %', '2410 req/s', '+53.1 %'],
        ['gateway asks the subgraphs over node:http, keep-alive agent, minimal Response', '2.37× (636 / 268)', '+5.1 %, +9.7 %', '3246 req/s', '+39.5 %'],
      ],
    ),
    '',
    'The cross-subgraph query (registry, archive and trust are each asked once per plan step for all ten passports; the keys are not vouched for in trust, so standings are `unknown`, which trust still computes from its graph):',
      '',
      '```graphql',
      CROSS_QUERY,
      '```',
      '',
      markdownTable(['measure', 'result', 'median latency', 'p95 latency', 'failed (non-2xx, errors, timeouts)'], rows),
      '',
    ].join('\n');
    console.log(`\n${markdownTable(['measure', 'result', 'median', 'p95', 'failed'], rows)}\n`);
    writeReport(benchRun, document, figures, bench);
  }
} finally {
  await bench.close();
}

// ---------------------------------------------------------------------------------------------
// Memory of `npm start`

interface MemorySample {
  node: number;
  treeRss: number;
  treePss: number;
  processes: number;
}
function mib(kib: number): string {
  return `${(kib / 1024).toFixed(0)} MiB`;
}

/** A field in kB of a /proc file (VmRSS of status, Pss of smaps_rollup); 0 once the process is gone. */
function procKib(pid: number, file: string, field: string): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

function sampleMemory(pid: number): MemorySample {
  const tree = processTree(pid);
  return {
    node: procKib(pid, 'status', 'VmRSS'),
    treeRss: tree.reduce((sum, id) => sum + procKib(id, 'status', 'VmRSS'), 0),
    treePss: tree.reduce((sum, id) => sum + procKib(id, 'smaps_rollup', 'Pss'), 0),
    processes: tree.length,
  };
}

function medianSample(samples: MemorySample[]): MemorySample {
  return { node: median(samples.map((s) => s.node)), treeRss: median(samples.map((s) => s.treeRss)), treePss: median(samples.map((s) => s.treePss)), processes: median(samples.map((s) => s.processes)) };
}

async function measureStart() {
  // `npm start` as its users run it: bin/start.ts in a process of its own (bench/platform-process.ts).
  const platform = await PlatformProcess.prepare({ dataDir: join(bench.dataDir, 'start') });
  // Should the measurement fail, it is still stopped.
  bench.defer(() => platform.stop());
  await platform.start();
  const pid = platform.pid!;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idleSamples: MemorySample[] = [];
  for (let i = 0; i < 12; i += 1) {
    idleSamples.push(sampleMemory(pid));
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const facade = platform.facadeUrl;
  const post = async (path: string, body: unknown): Promise<any> => {
    const response = await fetch(`${facade}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${platform.tokens.writer}` }, body: JSON.stringify(body) });
    const answer = await response.json();
    if (!response.ok) throw new Error(`npm start: POST ${path} answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    return answer;
  };
  await post('/registry/', { kind: 'model', id: MODEL, body: { title: MODEL, schema: { type: 'object' } } });
  const passport = await post('/issuer/passports', { identity: 'https://id.gs1.org/01/09520123456788/21/MEMORY-1', type_ref: { id: MODEL, version: 1 }, config_vector: {} });
  const loadSamples: MemorySample[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      loadSamples.push(sampleMemory(pid));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  const loaded = await load(`${facade}/issuer/passports/${passport.passport_id}`, MEMORY_LOAD_SECONDS);
  sampling = false;
  await sampler;
  if (loaded.non2xx || loaded.errors) throw new Error(`npm start under load: ${loaded.non2xx} non-2xx, ${loaded.errors} errors`);
  const seenTree = processTree(pid);
  const all = [...idleSamples, ...loadSamples];
  const peak = { node: Math.max(...all.map((s) => s.node)), treeRss: Math.max(...all.map((s) => s.treeRss)), treePss: Math.max(...all.map((s) => s.treePss)), processes: Math.max(...all.map((s) => s.processes)) };

  const stopping = performance.now();
  await platform.stop();
  const stopSeconds = (performance.now() - stopping) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 500));
  const left = seenTree.filter((pid) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '));
  for (const pid of left) process.kill(pid, 'SIGKILL');
  return { idle: medianSample(idleSamples), loaded: medianSample(loadSamples), peak, loadRate: loaded.perSecond, stopSeconds, leftBehind: left.length };
}
