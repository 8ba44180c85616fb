/**
 * Platform benchmark: the parts between the client and the subgraphs, and the whole in memory.
 *
 * 1. Our gateway against Hive Gateway and Hive Gateway with its Rust query planner
 *    (@graphql-hive/router-runtime, HIVE_ROUTER_RUNTIME=true): the same supergraph SDL over the same
 *    four subgraph processes (bin/subgraph.ts), each gateway a process of its own, loaded in turns by
 *    autocannon (50 connections, another process), first with a mix of distinct cross-service queries
 *    (the headline: every request different, as real traffic), then with one cross-subgraph query
 *    repeated (the hot query); requests/s, p95 latency, their ratios, and the CPU each request cost
 *    by process (the gateway, each subgraph, PostgreSQL); the fetches of each planner's plans.
 * 2. The REST facade's overhead: reads through the facade against the same operation (the one its
 *    route table runs) posted to the gateway, sequential, in turns.
 * 3. The gateway's overhead: a query only the issuer answers, at the issuer subgraph's own URL and
 *    through the gateway, sequential, in turns.
 * 4. Memory of `npm start` (bin/start.ts as a child process on its own data folder): resident memory
 *    of the node process and of its whole process tree (embedded PostgreSQL included), idle after
 *    start and while autocannon loads a read path; then it is stopped with SIGTERM and no process of
 *    its tree may be left.
 * 5. Soak (only when asked: --soak, 30 min, or PLATFORM_SOAK_MINUTES): `npm start` seeded as above,
 *    the mixed workload at its gateway (20 connections) for that long, resident memory sampled every
 *    10 s; growth from the minute after warm-up (a tenth of the run, at least a minute) to the last.
 *
 *   node --import tsx bench/platform.ts
 *   node --import tsx bench/platform.ts --gateways   # some parts (--gateways, --overheads, --memory), printed, no report
 *   PLATFORM_ROUNDS=2 PLATFORM_LOAD_SECONDS=3 node --import tsx bench/platform.ts --gateways   # shorter, while developing
 *   BENCH_PROFILE=/tmp/profile node --import tsx bench/platform.ts --gateways                  # with CPU profiles of our gateway and each subgraph
 *   PLATFORM_PASSPORTS=1000 PLATFORM_HOT_QUERY=off node --import tsx bench/platform.ts --gateways  # more passports to draw from; the mix only
 *   PLATFORM_SOAK_MINUTES=30 node --import tsx bench/platform.ts --soak                           # the soak alone
 *   PLATFORM_NATIONAL=/data/national node --import tsx bench/platform.ts --gateways             # the mix over a million passports kept by bench:national (NATIONAL_KEEP)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { SERVICES } from '../lib/config/services.js';
import { lockingPostmaster } from '../lib/db/embedded-postgres.js';
import { ROUTE_TABLES } from '../rest-facade/routes/index.js';
import { MIX_MODEL, MIX_QUERIES, mixedWorkload, mixKinds, nationalMixData, readKeptNationalData, seedPlatformData } from './mixed-workload.js';
import { kekFile, readKekFile } from '../lib/keys/kek.js';
import { PlatformProcess } from './platform-process.js';
import { planCounts } from './query-plans.js';
import { answersGraphql, postgresMemory, residentMemory, serverProcess, startGatewayProcess, startSubgraphProcess } from './processes.js';
import {
  autocannonLoad,
  BENCH_TOOLS,
  BenchRun,
  cpuSeconds,
  ensureBenchTools,
  benchToken,
  formatMs as ms,
  freePort,
  markdownTable,
  median,
  openBench,
  processTree,
  summarize,
  timedInTurns,
  writeReport,
  type KeyFigure,
  type Load,
  type LoadOptions,
} from './support.js';

const CONNECTIONS = 50;
/** Rounds of the gateway comparison: ours then Hive's (the order alternates), LOAD_SECONDS each. */
const ROUNDS = Number(process.env.PLATFORM_ROUNDS ?? 4);
const LOAD_SECONDS = Number(process.env.PLATFORM_LOAD_SECONDS ?? 6);
/**
 * Seconds of load on each before the rounds (PLATFORM_WARMUP_SECONDS). Over a million passports the
 * operating system's cache of the cluster warms too, which took minutes after other work had emptied
 * it (docs/SCALING.md): 60 s each there, 3 s otherwise.
 */
const WARMUP_SECONDS = Number(process.env.PLATFORM_WARMUP_SECONDS ?? (process.env.PLATFORM_NATIONAL ? 60 : 3));
/** Passports seeded through the facade (each with an event, every third a pack, a snapshot); the mix draws from them uniformly. */
const PASSPORTS = Number(process.env.PLATFORM_PASSPORTS ?? 48);
const MODELS = 8;
/** Distinct request bodies of the mixed workload, handed out one per request in turn. */
const MIX_BODIES = 3000;
const SEQUENTIAL_ROUNDS = 300;
const MEMORY_LOAD_SECONDS = 8;
const { token: ADMIN, tokens } = benchToken('admin');
const MODEL = MIX_MODEL;
/** Parts asked for on the command line (--gateways, --replicas, --overheads, --memory) are run and printed, not written; by default, all of them, written. */
const PARTS = ['gateways', 'replicas', 'overheads', 'memory', 'soak'] as const;
/** Minutes of the soak (--soak, or PLATFORM_SOAK_MINUTES): the mix against `npm start`'s process for that long, its memory sampled. */
const SOAK_MINUTES = Number(process.env.PLATFORM_SOAK_MINUTES ?? (process.argv.includes('--soak') ? 30 : 0));
const SOAK_CONNECTIONS = 20;
const SOAK_SAMPLE_SECONDS = 10;
const asked = PARTS.filter((part) => process.argv.includes(`--${part}`) || (part === 'soak' && SOAK_MINUTES > 0));
const everything = asked.length === 0;
// Run in full, every part but the soak, which runs only when asked for (it takes half an hour).
const parts = new Set<string>(everything ? PARTS.filter((part) => part !== 'soak') : asked);

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

/**
 * PLATFORM_NATIONAL=<folder>: the data is a national build kept by bench:national (NATIONAL_KEEP),
 * its cluster opened in place: the mix draws its passports from all of them (a million: no cache
 * holds the working set) and nothing is seeded.
 */
const national = process.env.PLATFORM_NATIONAL ? readKeptNationalData(resolve(process.env.PLATFORM_NATIONAL)) : undefined;
if (national && [...parts].some((part) => part !== 'gateways')) throw new Error('PLATFORM_NATIONAL measures the gateways only: add --gateways (the other parts seed data of their own)');
const benchRun = new BenchRun('platform', 'node --import tsx bench/platform.ts');
const bench = await openBench('platform', national && { platformDataDir: national.platformDataDir, kek: readKekFile(kekFile({ PASSPORT_DATA_DIR: national.platformDataDir })) });
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
const load = (url: string, seconds: number, request: Pick<LoadOptions, 'method' | 'headers' | 'body' | 'bodies'> = {}): Promise<Load> =>
  autocannonLoad({ url, connections: CONNECTIONS, seconds, ...request });

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
const sum = (list: readonly number[]) => list.reduce((total, value) => total + value, 0);

/** The CPU a run cost where it was spent, and the SQL statements the subgraphs sent (when they run in this process and can be counted). */
interface Work {
  /** Seconds of CPU of the gateway's process. */
  gateway: number;
  /** Seconds of CPU of the subgraphs' processes, by the name its meters give each (SubgraphMeters). */
  subgraphs: Record<string, number>;
  /** Seconds of CPU of PostgreSQL (its postmaster and backends). */
  postgres: number;
  statements?: number;
}
type Run = Load & { work: Work };

/** How to read the subgraphs' CPU seconds so far, by process or service, and, where they can be counted, their SQL statements. */
interface SubgraphMeters {
  cpuSeconds(): Record<string, number>;
  statements?(): number;
}

/** The four subgraphs of this process (`stack`). */
const inProcessSubgraphs: SubgraphMeters = {
  cpuSeconds: () => {
    const used = process.cpuUsage();
    return { subgraphs: (used.user + used.system) / 1e6 };
  },
  statements: () => sum(Object.values(stack.sqlStatements())),
};

/** What `run` cost: CPU of the gateway (`gatewayPid`), of the subgraphs, of PostgreSQL, and the SQL statements sent. */
async function measuredWork<T>(gatewayPid: number, subgraphs: SubgraphMeters, run: () => Promise<T>): Promise<[T, Work]> {
  const postgresPid = await lockingPostmaster(bench.clusterDir);
  if (postgresPid === undefined) throw new Error("the benchmark's PostgreSQL has no postmaster");
  const before = { gateway: cpuSeconds(gatewayPid), subgraphs: subgraphs.cpuSeconds(), postgres: cpuSeconds(postgresPid), statements: subgraphs.statements?.() };
  const result = await run();
  const statements = subgraphs.statements?.();
  return [
    result,
    {
      gateway: cpuSeconds(gatewayPid) - before.gateway,
      subgraphs: Object.fromEntries(Object.entries(subgraphs.cpuSeconds()).map(([name, seconds]) => [name, seconds - before.subgraphs[name]!])),
      postgres: cpuSeconds(postgresPid) - before.postgres,
      ...(statements !== undefined && { statements: statements - before.statements! }),
    },
  ];
}

/** Warm-up of each, then ROUNDS rounds of LOAD_SECONDS per gateway, who goes first alternating. */
async function alternatedRounds<K extends string>(
  label: string,
  targets: Record<K, { url: string; pid: number }>,
  request: Pick<LoadOptions, 'method' | 'headers' | 'body' | 'bodies'>,
  subgraphs: SubgraphMeters = inProcessSubgraphs,
): Promise<Record<K, Run[]>> {
  const names = Object.keys(targets) as K[];
  console.log(`${label}: warming up each for ${WARMUP_SECONDS} s …`);
  for (const name of names) await load(targets[name].url, WARMUP_SECONDS, request);
  const runs = Object.fromEntries(names.map((name) => [name, [] as Run[]])) as Record<K, Run[]>;
  for (let round = 0; round < ROUNDS; round += 1) {
    // Alternating who goes first, so that neither always follows the other's garbage.
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const [result, work] = await measuredWork(targets[name].pid, subgraphs, () => load(targets[name].url, LOAD_SECONDS, request));
      runs[name].push({ ...result, work });
      console.log(
        `  ${label}, round ${round + 1}, ${name}: ${result.perSecond.toFixed(0)} req/s, p95 ${ms(result.latency.p95)}, non-2xx ${result.non2xx}, errors ${result.errors}; per request ${perRequest(work, result)}`,
      );
    }
  }
  return runs;
}

/** The work of a run (or of runs summed) per request: CPU milliseconds by process, and SQL statements. */
const perRequest = (work: Work, load: Pick<Load, 'requests'>) => {
  const cpu = (seconds: number) => `${((seconds / load.requests) * 1000).toFixed(2)} ms`;
  const statements = work.statements === undefined ? '' : `; ${(work.statements / load.requests).toFixed(1)} SQL statements`;
  const names = Object.keys(work.subgraphs);
  const bySubgraph = names.length > 1 ? ` (${names.map((name) => `${name} ${cpu(work.subgraphs[name]!)}`).join(', ')})` : '';
  return `CPU: gateway ${cpu(work.gateway)}, subgraphs ${cpu(sum(Object.values(work.subgraphs)))}${bySubgraph}, PostgreSQL ${cpu(work.postgres)}${statements}`;
};

const gatewayStats = (list: Run[]) => ({
  perSecond: median(list.map((run) => run.perSecond)),
  p95: median(list.map((run) => run.latency.p95)),
  latency: median(list.map((run) => run.latency.median)),
  failed: sum(list.map((run) => run.non2xx + run.errors + run.timeouts)),
  requests: sum(list.map((run) => run.requests)),
  work: {
    gateway: sum(list.map((run) => run.work.gateway)),
    subgraphs: Object.fromEntries(Object.keys(list[0]!.work.subgraphs).map((name) => [name, sum(list.map((run) => run.work.subgraphs[name]!))])),
    postgres: sum(list.map((run) => run.work.postgres)),
    statements: list.every((run) => run.work.statements !== undefined) ? sum(list.map((run) => run.work.statements!)) : undefined,
  },
});
type GatewayStats = ReturnType<typeof gatewayStats>;

/** The report's rows of one workload: each gateway, then ours against each other one, with the per-round values. */
function gatewayRows<K extends string>(workload: string, runs: Record<K, Load[]>, stats: Record<K, GatewayStats>, labels: Record<K, string>, ours: NoInfer<K>): void {
  const names = Object.keys(runs) as K[];
  for (const name of names) {
    rows.push([`${workload}: ${labels[name]}`, `**${stats[name].perSecond.toFixed(0)} req/s**`, ms(stats[name].latency), ms(stats[name].p95), `${stats[name].failed} of ${stats[name].requests}`]);
  }
  for (const other of names.filter((name) => name !== ours)) {
    const pair = { ours: runs[ours], hive: runs[other] };
    rows.push([
      `${labels[ours]} / ${labels[other]}: median of the rounds' ratios (each round's runs back to back)`,
      `**${pairedRatio(pair).toFixed(2)}×** req/s (rounds: ${roundRatios(pair)
        .map((r) => r.toFixed(2))
        .join(', ')}; ratio of the medians ${ratio(stats[ours].perSecond, stats[other].perSecond)})`,
      ratio(stats[ours].latency, stats[other].latency),
      ratio(stats[ours].p95, stats[other].p95),
      '—',
    ]);
  }
}
/** Requests/s of ours over theirs in each round: the two ran back to back, on the machine as it was then. */
const roundRatios = (runs: { ours: Load[]; hive: Load[] }) => runs.ours.map((run, i) => run.perSecond / runs.hive[i]!.perSecond);
/** The median of the rounds' ratios: a slower or faster stretch of the shared machine weighs on both sides of a round alike. */
const pairedRatio = (runs: { ours: Load[]; hive: Load[] }) => median(roundRatios(runs));
const percentMore = (a: number, b: number) => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)} %`;

const rows: string[][] = [];
const figures: KeyFigure[] = [];
try {
  // ---------------------------------------------------------------------------------------------
  // Data: a model, passports of it with an event (every third with a pack) and a snapshot each.

  const seed = async () => {
    console.log(`Seeding ${PASSPORTS} passports and ${MODELS} models across the four services …`);
    return seedPlatformData({ rest, issuerBase: stack.facade.baseUrls.issuer }, { passports: PASSPORTS, models: MODELS });
  };
  const seeded = national ? await nationalMixData(national, bench.databaseUrl) : await seed();
  const { passportIds, kids } = seeded;
  if (national) console.log(`The mix draws from the ${passportIds.length.toLocaleString('en')} passports built by bench:national at ${national.builtAt} (commit ${national.commit})`);
  const mix = mixedWorkload(seeded, MIX_BODIES);
  const distinctBodies = new Set(mix.map((request) => request.body)).size;
  const crossVariables = { ids: Array.from({ length: 10 }, (_, index) => passportIds.at(index)!) };
  const crossBody = JSON.stringify({ query: CROSS_QUERY, variables: crossVariables });
  const jsonHeaders = { 'content-type': 'application/json' };

  if (parts.has('gateways')) {
    // -------------------------------------------------------------------------------------------
    // 1. Our gateway, Hive Gateway and Hive Gateway with its Rust query planner, each its own
    //    process, over the same four subgraph processes (bin/subgraph.ts), so that the CPU each
    //    request costs is read by process: the gateway, every subgraph, PostgreSQL.

    // BENCH_PROFILE=<folder>: our gateway and each subgraph write a CPU profile into <folder>/<name> when they stop (node --cpu-prof).
    const profile = (name: string) => (process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(process.env.BENCH_PROFILE, name)}`] : []);
    const oursPort = await freePort();
    const oursUrl = `http://127.0.0.1:${oursPort}/graphql`;
    console.log('Starting the four subgraphs as processes …');
    const subgraphProcesses = Object.fromEntries(
      await Promise.all(
        SERVICES.map(async (service) => [service, await startSubgraphProcess(bench, service, { admin: ADMIN }, oursUrl, { name: `gateways-${service}`, nodeFlags: profile(service) })] as const),
      ),
    ) as Record<(typeof SERVICES)[number], { url: string; pid: number }>;
    const bySubgraphProcess: SubgraphMeters = { cpuSeconds: () => Object.fromEntries(SERVICES.map((service) => [service, cpuSeconds(subgraphProcesses[service].pid)])) };
    const oursDir = join(bench.dataDir, 'ours');
    mkdirSync(oursDir);
    console.log('Starting our gateway (bin/gateway.ts), Hive Gateway and Hive Gateway with the Rust query planner as processes …');
    const oursProcess = await startGatewayProcess(
      bench,
      { admin: ADMIN },
      {
        name: 'our gateway',
        port: oursPort,
        dataDir: oursDir,
        subgraphUrls: Object.fromEntries(SERVICES.map((service) => [service, subgraphProcesses[service].url])) as Record<(typeof SERVICES)[number], string>,
        // Errors-only logging, as Hive Gateway is configured below: a line per request (LOG_LEVEL=info, the default) costs about a tenth of the requests/s (docs/OPS-COST.md).
        env: { LOG_LEVEL: 'error' },
        nodeFlags: profile('gateway'),
      },
    );
    // The very SDL our gateway composed (its supergraphFile), with the subgraphs' URLs in it.
    const supergraphFile = join(oursDir, 'supergraph.graphql');
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
    await ensureBenchTools();
    // Hive Gateway falls back to its JavaScript planner, saying so only in its log, when the Rust runtime cannot be loaded: it must load here.
    try {
      await import(pathToFileURL(createRequire(join(BENCH_TOOLS, 'package.json')).resolve('@graphql-hive/router-runtime')).href);
    } catch (error) {
      throw new Error(
        `Hive Gateway's Rust query planner (@graphql-hive/router-runtime) does not load from bench/tools (installed before it was added there?): npm run bench:install. ${(error as Error).message}`,
      );
    }
    const hiveBin = join(BENCH_TOOLS, 'node_modules', '.bin', 'hive-gateway');
    const startHive = async (name: string, env: NodeJS.ProcessEnv) => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/graphql`;
      const args = ['supergraph', supergraphFile, '--port', String(port), '--host', '127.0.0.1', '--config-path', hiveConfig, '--disable-websockets'];
      return { url, pid: (await serverProcess(bench, name, hiveBin, args, env, answersGraphql(url))).pid! };
    };
    const gateways = {
      ours: { url: oursUrl, pid: oursProcess.pid! },
      hive: await startHive('Hive Gateway', {}),
      hiveRust: await startHive('Hive Gateway with the Rust query planner', { HIVE_ROUTER_RUNTIME: 'true' }),
    };
    const gatewayLabels = { ours: 'our gateway (@apollo/gateway, bin/gateway.ts)', hive: 'Hive Gateway', hiveRust: 'Hive Gateway + Rust planner' };
    const others = ['hive', 'hiveRust'] as const;
    /** The same `data` from every gateway, or an error naming what differs. */
    const sameAnswers = async (what: string, query: string, variables: Record<string, unknown>) => {
      const answers = { ours: await graphql(oursUrl, query, variables) } as Record<keyof typeof gateways, { data?: unknown }>;
      for (const other of others) {
        answers[other] = await graphql(gateways[other].url, query, variables);
        if (!isDeepStrictEqual(answers.ours.data, answers[other].data))
          throw new Error(`${gatewayLabels[other]} answers ${what} otherwise than ours:\n${JSON.stringify(answers.ours.data).slice(0, 600)}\n${JSON.stringify(answers[other].data).slice(0, 600)}`);
      }
      return answers.ours;
    };
    const oursAnswer = await sameAnswers('the hot query', CROSS_QUERY, crossVariables);
    const subgraphsHit = JSON.stringify(oursAnswer.data).includes('"standing"') && JSON.stringify(oursAnswer.data).includes('"sha512"');
    if (!subgraphsHit) throw new Error('the query should reach trust and archive');
    console.log(`  all answer the same data (${JSON.stringify(oursAnswer.data).length} bytes of JSON)`);

    // The mixed workload first: the same answers from all for every kind, then the rounds.
    for (const request of mix.slice(0, 100)) {
      const body = JSON.parse(request.body) as { query: string; variables: Record<string, unknown> };
      await sameAnswers(request.kind, body.query, body.variables);
    }
    const sample = JSON.stringify((await graphql(oursUrl, MIX_QUERIES.passport, { id: passportIds.at(0), kid: kids[0], at: new Date().toISOString() })).data);
    if (!sample.includes('"standing":"valid"')) throw new Error(`the passports' signing keys should stand valid in trust: ${sample.slice(0, 400)}`);
    // What each planner makes of the mix's queries: the same subgraph requests per query, so what differs under load is the cost of each.
    const plans = await planCounts(readFileSync(supergraphFile, 'utf8'), MIX_QUERIES);
    const planText = Object.entries(plans)
      .map(([kind, { ours, hiveRust }]) => `${kind} ${ours.fetches}/${ours.requests}/${ours.steps} against ${hiveRust.fetches}/${hiveRust.requests}/${hiveRust.steps}`)
      .join('; ');
    console.log(`  query plans, fetches/subgraph requests/steps, ours against Hive's Rust planner: ${planText}`);
    rows.push([
      "query plans of the mix's queries: fetches / subgraph requests / sequential steps, ours (@apollo/query-planner, fetches of one subgraph that start together batched) against Hive's Rust planner (BatchFetch, a request per fetch)",
      planText,
      '—',
      '—',
      '—',
    ]);
    const mixLoad = { method: 'POST', headers: jsonHeaders, bodies: mix.map((request) => request.body) };
    // PostgreSQL's memory sampled under the mix (its processes come and go); the node processes keep their own peak (VmHWM).
    let postgresPeak = 0;
    const postgresSampler = setInterval(() => (postgresPeak = Math.max(postgresPeak, postgresMemory(process.pid))), 1000);
    const mixRuns = await alternatedRounds('mixed workload', gateways, mixLoad, bySubgraphProcess).finally(() => clearInterval(postgresSampler));
    const peaks = [
      ...(Object.keys(gateways) as (keyof typeof gateways)[]).map((name) => `${gatewayLabels[name]} ${mebibytes(residentMemory(gateways[name].pid).peak)}`),
      ...SERVICES.map((service) => `${service} subgraph ${mebibytes(residentMemory(subgraphProcesses[service].pid).peak)}`),
      `PostgreSQL (Pss of all its processes) ${mebibytes(postgresPeak)}`,
    ].join(', ');
    rows.push(['peak resident memory of every process by the end of the mixed workload (VmHWM)', peaks, '—', '—', '—']);
    figures.push({ measure: 'peak resident memory of every process under the mixed workload (VmHWM; PostgreSQL sampled each second)', value: peaks });
    const mixStats = { ours: gatewayStats(mixRuns.ours), hive: gatewayStats(mixRuns.hive), hiveRust: gatewayStats(mixRuns.hiveRust) };
    gatewayRows(`mixed workload (${mixKinds.length} kinds of query, ${distinctBodies} distinct bodies of ${MIX_BODIES}), ${CONNECTIONS} connections`, mixRuns, mixStats, gatewayLabels, 'ours');
    // Where each gateway's requests cost CPU on this machine: in the gateway itself, in each subgraph its plans ask, in PostgreSQL.
    // All of it together: on a machine the load keeps busy, requests per second go as its inverse.
    const allCpu = (stats: GatewayStats) => ((stats.work.gateway + sum(Object.values(stats.work.subgraphs)) + stats.work.postgres) / stats.requests) * 1000;
    for (const name of Object.keys(gateways) as (keyof typeof gateways)[]) {
      const work = `${perRequest(mixStats[name].work, mixStats[name])}; all ${allCpu(mixStats[name]).toFixed(2)} ms`;
      rows.push([`the work behind one request of the mixed workload, ${gatewayLabels[name]}, over every round`, work, '—', '—', '—']);
      figures.push({ measure: `CPU per request of the mixed workload by process, ${gatewayLabels[name]}`, value: work });
    }
    for (const other of others) {
      const pair = { ours: mixRuns.ours, hive: mixRuns[other] };
      figures.push(
        {
          measure: `gateway requests/s on a mixed workload of distinct cross-service queries, ours / ${gatewayLabels[other]} (${CONNECTIONS} connections)`,
          value: `${pairedRatio(pair).toFixed(2)}× by round (medians ${mixStats.ours.perSecond.toFixed(0)} / ${mixStats[other].perSecond.toFixed(0)} req/s, ${ratio(mixStats.ours.perSecond, mixStats[other].perSecond)})`,
          target: other === 'hiveRust' ? '≥ 2×' : '≥ 1.5×',
        },
        {
          measure: `gateway p95 latency on the mixed workload, ours / ${gatewayLabels[other]}`,
          value: `${ms(mixStats.ours.p95)} / ${ms(mixStats[other].p95)} (${ratio(mixStats.ours.p95, mixStats[other].p95)})`,
          target: other === 'hiveRust' ? '≤ 0.5×' : '≤ 1.0×',
        },
      );
    }

    if (process.env.PLATFORM_HOT_QUERY !== 'off') {
      const gatewayLoad = { method: 'POST', headers: jsonHeaders, body: crossBody };
      const runs = await alternatedRounds('hot query', gateways, gatewayLoad, bySubgraphProcess);
      // Still the same answers after the load.
      await sameAnswers('the hot query after the load', CROSS_QUERY, crossVariables);
      const stats = { ours: gatewayStats(runs.ours), hive: gatewayStats(runs.hive), hiveRust: gatewayStats(runs.hiveRust) };
      gatewayRows(`one cross-subgraph query repeated (hot query), ${CONNECTIONS} connections`, runs, stats, gatewayLabels, 'ours');
      figures.push(
        {
          measure: `gateway requests/s on one cross-subgraph query repeated (hot query; secondary), ours / Hive Gateway / Hive Gateway + Rust planner`,
          value: `${pairedRatio({ ours: runs.ours, hive: runs.hive }).toFixed(2)}× / ${pairedRatio({ ours: runs.ours, hive: runs.hiveRust }).toFixed(2)}× by round (medians ${stats.ours.perSecond.toFixed(0)} / ${stats.hive.perSecond.toFixed(0)} / ${stats.hiveRust.perSecond.toFixed(0)} req/s), p95 ${ms(stats.ours.p95)} / ${ms(stats.hive.p95)} / ${ms(stats.hiveRust.p95)}`,
        },
        {
          measure: 'failed requests under load (non-2xx, errors, timeouts), ours / Hive / Hive + Rust, both workloads',
          value: (['ours', 'hive', 'hiveRust'] as const).map((name) => stats[name].failed + mixStats[name].failed).join(' / '),
          target: '0',
        },
      );
    }
  }

  if (parts.has('replicas')) {
    // -------------------------------------------------------------------------------------------
    // 2. Scale-out: every subgraph as two processes of its own (bin/subgraph.ts) on the benchmark's
    //    database, and two of our gateways (bin/gateway.ts): one over the first replica of each,
    //    one over both replicas of each (requests in turn). The mixed workload against each, in turns.

    const gatewayPorts = { one: await freePort(), two: await freePort() };
    const replicaUrls = Object.fromEntries(SERVICES.map((service) => [service, [] as string[]])) as Record<(typeof SERVICES)[number], string[]>;
    const replicaPids = Object.fromEntries(SERVICES.map((service) => [service, [] as number[]])) as Record<(typeof SERVICES)[number], number[]>;
    console.log('Starting two processes of each subgraph …');
    await Promise.all(
      SERVICES.flatMap((service) =>
        [0, 1].map(async (replica) => {
          const started = await startSubgraphProcess(bench, service, { admin: ADMIN }, `http://127.0.0.1:${gatewayPorts.two}/graphql`, { name: `replica-${service}-${replica}` });
          replicaUrls[service][replica] = started.url;
          replicaPids[service][replica] = started.pid;
        }),
      ),
    );
    const gatewayUrls = { one: `http://127.0.0.1:${gatewayPorts.one}/graphql`, two: `http://127.0.0.1:${gatewayPorts.two}/graphql` };
    const gatewayPids = { one: 0, two: 0 };
    for (const [name, count] of [
      ['one', 1],
      ['two', 2],
    ] as const) {
      const dir = join(bench.dataDir, `gateway-${name}`);
      mkdirSync(dir);
      const subgraphUrls = Object.fromEntries(SERVICES.map((service) => [service, replicaUrls[service].slice(0, count).join(',')])) as Record<(typeof SERVICES)[number], string>;
      gatewayPids[name] = (await startGatewayProcess(bench, { admin: ADMIN }, { name: `gateway over ${count} replica(s)`, port: gatewayPorts[name], dataDir: dir, subgraphUrls })).pid!;
    }
    for (const request of mix.slice(0, 20)) {
      const body = JSON.parse(request.body) as { query: string; variables: Record<string, unknown> };
      const [a, b] = [await graphql(gatewayUrls.one, body.query, body.variables), await graphql(gatewayUrls.two, body.query, body.variables)];
      if (!isDeepStrictEqual(a.data, b.data)) throw new Error(`one and two replicas answer ${request.kind} differently`);
    }
    const replicaRuns = await alternatedRounds(
      'replicas',
      { one: { url: gatewayUrls.one, pid: gatewayPids.one }, two: { url: gatewayUrls.two, pid: gatewayPids.two } },
      { method: 'POST', headers: jsonHeaders, bodies: mix.map((request) => request.body) },
      // By service, its replica processes together (a second one idles in the rounds over one); their statements are not counted here.
      { cpuSeconds: () => Object.fromEntries(SERVICES.map((service) => [service, sum(replicaPids[service].map(cpuSeconds))])) },
    );
    const one = gatewayStats(replicaRuns.one);
    const two = gatewayStats(replicaRuns.two);
    gatewayRows(
      `mixed workload, ${CONNECTIONS} connections, every subgraph a process`,
      { two: replicaRuns.two, one: replicaRuns.one },
      { two, one },
      { two: 'two replicas of each subgraph', one: 'one replica of each subgraph' },
      'two',
    );
    // Where the CPU goes under the mix with one process per subgraph, over the rounds of the gateway over one replica of each.
    const perThousand = (seconds: number) => `${((seconds / one.requests) * 1000).toFixed(1)} s`;
    const cpuUse = [
      `gateway ${perThousand(one.work.gateway)}`,
      ...Object.entries(one.work.subgraphs).map(([service, seconds]) => `${service} ${perThousand(seconds)}`),
      `PostgreSQL ${perThousand(one.work.postgres)}`,
    ];
    rows.push([`CPU per 1,000 requests of the mix, one process per subgraph (the ${one.requests} requests of its rounds)`, cpuUse.join(', '), '—', '—', '—']);
    figures.push({
      measure: `mixed workload with two replicas of each subgraph against one (separate processes, one PostgreSQL, ${CONNECTIONS} connections)`,
      value: `${pairedRatio({ ours: replicaRuns.two, hive: replicaRuns.one }).toFixed(2)}× by round (medians ${two.perSecond.toFixed(0)} / ${one.perSecond.toFixed(0)} req/s), p95 ${ms(two.p95)} / ${ms(one.p95)}`,
    });
    figures.push({ measure: 'CPU seconds per 1,000 requests of the mix, by process (one process per subgraph)', value: cpuUse.join(', ') });
  }

  if (parts.has('overheads')) {
    // -------------------------------------------------------------------------------------------
    // 2. The REST facade against the same operation posted to the gateway; 3. the gateway against
    //    the issuer subgraph. Sequential requests, all the ways in turns, the order rotating.

    const gatewayUrl = stack.gateway.graphqlUrl;
    // The operation a GET route runs at the gateway, with the variables the route itself makes of the request.
    const routeCall = (service: 'issuer' | 'registry', path: string, params: Record<string, string>) => {
      const route = ROUTE_TABLES[service].routes.find((candidate) => candidate.method === 'GET' && candidate.path === path)!;
      return { operation: route.operation, variables: route.variables?.({ params, query: {}, body: undefined }) ?? {} };
    };
    const target = passportIds.at(1)!;
    const passport = routeCall('issuer', '/passports/{id}', { id: target });
    const record = routeCall('registry', '/models/{id}', { id: MODEL });
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
        post(gatewayUrl, passport.operation, passport.variables),
        () => get(`${stack.facade.baseUrls.registry}/models/${MODEL}`),
        post(gatewayUrl, record.operation, record.variables),
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
      {
        measure: 'REST facade overhead, median latency: GET /issuer/passports/{id}, GET /registry/models/{id} against their operations at the gateway',
        value: facadeExtra.join(', '),
        target: '< 15 %',
      },
      {
        measure: 'gateway overhead, median latency: passport(id) through the gateway against the issuer subgraph',
        value: `${percentMore(median(gatewayIssuer!), median(subgraphIssuer!))} (${ms(median(gatewayIssuer!))} against ${ms(median(subgraphIssuer!))})`,
      },
    );

    // The facade under load too: the same passport read, autocannon against each in turns.
    console.log('The facade and the gateway under load, in turns …');
    const facadeLoads: Load[] = [];
    const gatewayLoads: Load[] = [];
    const passportBody = JSON.stringify({ query: passport.operation, variables: passport.variables });
    for (let round = 0; round < 2; round += 1) {
      facadeLoads.push(await load(`${stack.facade.baseUrls.issuer}/passports/${target}`, 4));
      gatewayLoads.push(await load(gatewayUrl, 4, { method: 'POST', headers: jsonHeaders, body: passportBody }));
    }
    const facadeRate = median(facadeLoads.map((run) => run.perSecond));
    const gatewayRate = median(gatewayLoads.map((run) => run.perSecond));
    rows.push([
      `GET /issuer/passports/{id} through the facade, ${CONNECTIONS} connections (stack in one process)`,
      `${facadeRate.toFixed(0)} req/s`,
      ms(median(facadeLoads.map((run) => run.latency.median))),
      ms(median(facadeLoads.map((run) => run.latency.p95))),
      `${facadeLoads.reduce((sum, run) => sum + run.non2xx + run.errors, 0)}`,
    ]);
    rows.push([
      `… its operation posted to the gateway, ${CONNECTIONS} connections`,
      `${gatewayRate.toFixed(0)} req/s (facade: ${ratio(facadeRate, gatewayRate)})`,
      ms(median(gatewayLoads.map((run) => run.latency.median))),
      ms(median(gatewayLoads.map((run) => run.latency.p95))),
      `${gatewayLoads.reduce((sum, run) => sum + run.non2xx + run.errors, 0)}`,
    ]);
  }

  if (parts.has('memory')) {
    // -------------------------------------------------------------------------------------------
    // 4. Memory of `npm start`.

    console.log('Memory of npm start …');
    const memory = await measureStart();
    rows.push([
      '`npm start`, idle after start: node process / whole tree (RSS) / whole tree (PSS)',
      `${mib(memory.idle.node)} / ${mib(memory.idle.treeRss)} / **${mib(memory.idle.treePss)}** (${memory.idle.processes} processes)`,
      '—',
      '—',
      '—',
    ]);
    rows.push([
      `\`npm start\` under load (GET /issuer/passports/{id}, ${CONNECTIONS} connections, ${MEMORY_LOAD_SECONDS} s; median of samples)`,
      `${mib(memory.loaded.node)} / ${mib(memory.loaded.treeRss)} / **${mib(memory.loaded.treePss)}** at ${memory.loadRate.toFixed(0)} req/s`,
      '—',
      '—',
      '—',
    ]);
    rows.push(['`npm start`, peak seen', `${mib(memory.peak.node)} / ${mib(memory.peak.treeRss)} / **${mib(memory.peak.treePss)}**`, '—', '—', '—']);
    rows.push(['`npm start` stopped with SIGTERM', `exited in ${memory.stopSeconds.toFixed(1)} s; processes of its tree left: ${memory.leftBehind}`, '—', '—', '—']);
    figures.push(
      { measure: '`npm start` memory, whole process tree (PSS): idle / under load / peak', value: `${mib(memory.idle.treePss)} / ${mib(memory.loaded.treePss)} / ${mib(memory.peak.treePss)}` },
      { measure: '`npm start` memory, node process (RSS): idle / under load / peak', value: `${mib(memory.idle.node)} / ${mib(memory.loaded.node)} / ${mib(memory.peak.node)}` },
    );
    if (memory.leftBehind) throw new Error(`${memory.leftBehind} processes of npm start were left behind`);
  }

  if (parts.has('soak')) {
    // -------------------------------------------------------------------------------------------
    // 5. Soak: the mixed workload against `npm start`'s process for SOAK_MINUTES, memory sampled.

    console.log(`Soak: the mixed workload against npm start for ${SOAK_MINUTES} min, ${SOAK_CONNECTIONS} connections …`);
    const soak = await soakStart(SOAK_MINUTES);
    const at = (sample: TimedSample) => `${mib(sample.node)} / ${mib(sample.treePss)}`;
    rows.push([`soak: \`npm start\` idle after seeding: node process (RSS) / whole tree (PSS)`, at(soak.idle), '—', '—', '—']);
    rows.push([
      `soak: warm (the minute after ${soak.warmupSeconds} s of warm-up) → last minute of ${SOAK_MINUTES} min of the mix, ${SOAK_CONNECTIONS} connections`,
      `${at(soak.warm)} → ${at(soak.end)}: growth **${percentMore(soak.end.node, soak.warm.node)}** (node RSS), ${percentMore(soak.end.treePss, soak.warm.treePss)} (tree PSS); peak ${at(soak.peak)}`,
      ms(soak.load.latency.median),
      ms(soak.load.latency.p95),
      `${soak.load.non2xx + soak.load.errors + soak.load.timeouts} of ${soak.load.requests}`,
    ]);
    rows.push([`soak: node RSS every minute (MiB)`, soak.perMinute.map((sample) => (sample.node / 1024).toFixed(0)).join(', '), '—', '—', '—']);
    figures.push({
      measure: `soak: \`npm start\` resident memory (node process) over ${SOAK_MINUTES} min of the mixed workload, growth after warm-up`,
      value: `${percentMore(soak.end.node, soak.warm.node)} (${mib(soak.warm.node)} → ${mib(soak.end.node)}; idle ${mib(soak.idle.node)}, peak ${mib(soak.peak.node)}; ${soak.load.perSecond.toFixed(0)} req/s)`,
      target: '< 10 % over 30 min',
    });
    if (soak.load.non2xx || soak.load.errors) throw new Error(`soak: ${soak.load.non2xx} non-2xx, ${soak.load.errors} errors`);
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
      `Data: ${PASSPORTS} passports of one registry model, each with an ObjectEvent, every third with a Tier-A pack, each with an archive snapshot, made through the REST facade; ${MODELS} registry models; a trust root delegating to the issuer's current signing keys (so the passports' keys stand \`valid\`, with a path).`,
      '',
      `1. **Our gateway against Hive Gateway, plain and with its Rust query planner** (@graphql-hive/gateway, \`hive-gateway supergraph <file> --port P --host 127.0.0.1 --config-path gateway.config.mjs --disable-websockets\`, with GraphiQL, landing page and websockets off and error-only logging, as ours (\`LOG_LEVEL=error\`; its Prometheus metrics stay on); no usage reporting or telemetry is configured; the second with \`HIVE_ROUTER_RUNTIME=true\` and @graphql-hive/router-runtime installed in bench/tools, which the benchmark loads first, as Hive Gateway would otherwise fall back to its JavaScript planner saying so only in its log). All serve the SDL our gateway composed (its \`supergraphFile\`) over the same four subgraph processes (\`bin/subgraph.ts\`, one per service, on the benchmark's database); each gateway is a process of its own (ours: \`node bin/run.mjs bin/gateway.ts\`, as \`npm run gateway\` runs it, with \`<SERVICE>_SUBGRAPH_URL\`), all with \`NODE_ENV=production\`. Load: autocannon in another process (bench/tools/load-worker.mjs), ${CONNECTIONS} connections; ${WARMUP_SECONDS} s of warm-up each, then ${ROUNDS} rounds of ${LOAD_SECONDS} s per gateway, alternating (ours, Hive, Hive + Rust; Hive + Rust, Hive, ours; …). Figures are the medians of the rounds; a ratio is the median of the rounds' ratios (each round's two runs back to back, so a slow stretch of the shared machine weighs on both alike), with each round's value and the ratio of the medians beside it. Every run also counts what it cost: the CPU time of the gateway's process, of each subgraph's process and of PostgreSQL (its postmaster and backends, exited ones included), read from /proc before and after; each divided by the requests answered. On this machine of two cores the load is bound by CPU, so those costs decide the requests per second. Two workloads:`,
      `   - **The mixed workload (the headline)**: ${MIX_BODIES} request bodies (the distinct ones are counted in the table), handed out one per request in turn: the ${mixKinds.length} queries below in turn (${mixKinds.join(', ')}), each with variables drawn for it (which passports, how many, which model, which keys at which instants, which page size at which instant; a fixed seed, so every run asks the same mix). No two requests in flight are alike, so sharing identical in-flight queries helps neither gateway. Before the load all must answer the first 100 bodies with the same \`data\` and no errors.`,
      `   - **The hot query (secondary)**: one cross-subgraph query (below) with the first 10 passports' ids, the same body every request; before and after the load all must answer it with the same \`data\`. Identical subgraph queries in flight are sent once by both gateways, so this measures a repeated query, not traffic.`,
      `2. **REST facade overhead**: GET /issuer/passports/{id} and GET /registry/models/{id} through the facade against the operation the facade's route table runs for that path, posted to the gateway with the same variables; ${SEQUENTIAL_ROUNDS} sequential requests each (after 20 warm-up rounds), all the ways of 2 and 3 in turns with a rotating order (timedInTurns). The same passport read is also loaded with autocannon (${CONNECTIONS} connections, 2 rounds of 4 s each, in turns); there the facade, gateway and subgraphs share one process, as in \`npm start\`.`,
      `3. **Gateway overhead**: \`${ISSUER_QUERY}\` posted to the issuer subgraph's own URL and to the gateway, in the same turns as 2.`,
      `4. **Memory**: \`node --import tsx bin/start.ts\` on its own data folder and free ports (a fresh embedded PostgreSQL cluster); VmRSS of the node process from /proc/<pid>/status, and over its whole process tree (the embedded PostgreSQL processes included) both the sum of RSS (which counts PostgreSQL's shared buffers once per process) and the sum of PSS from /proc/<pid>/smaps_rollup (shared pages divided among their sharers: the honest total). Idle: the median of samples over 3 s, 2 s after it printed that it runs. Under load: autocannon on GET /issuer/passports/{id} (${CONNECTIONS} connections, ${MEMORY_LOAD_SECONDS} s), sampled every 250 ms. Then SIGTERM; every process of its tree must be gone.`,
      '',
      "Both gateways send identical subgraph queries that are in flight at the same moment only once (Hive Gateway by default, in @graphql-tools/executor-http; ours since issue 9, gateway/subgraph-transport.ts). Neither shares whole incoming requests (Hive Gateway's `inboundInflightRequestDeduplication` is off by default and left off). With every client sending the same query, as in the hot query, that sharing weighs heavily; the mixed workload gives it nothing to share.",
      '',
      'Tuning of our gateway and facade (issue 9), measured side by side with `--gateways` and `--overheads` on this machine, one change at a time (the machine is shared, so compare the ratios):',
      '',
      markdownTable(
        ['change', 'ours / Hive, req/s', 'facade overhead (passport, record), sequential', 'facade, passport read under load', 'gateway overhead, passport(id)'],
        [
          ["before (subgraph fetch with Node's fetch; facade with fetch)", '0.16× (54 / 340)', '+15.5 %, +21.3 %', '731 req/s', '+56.5 %'],
          ['identical subgraph queries in flight sent once', '1.77× (455 / 257)', '+21.1 %, +18.0 %', '1390 req/s', '+62.2 %'],
          ['facade asks the gateway over node:http, keep-alive agent', '—', '+16.9 %, +14.6 %', '2410 req/s', '+53.1 %'],
          ['gateway asks the subgraphs over node:http, keep-alive agent, minimal Response', '2.37× (636 / 268)', '+5.1 %, +9.7 %', '3246 req/s', '+39.5 %'],
        ],
      ),
      '',
      "The mixed workload's queries:",
      '',
      '```graphql',
      ...mixKinds.map((kind) => MIX_QUERIES[kind]),
      '```',
      '',
      'The hot query (registry, archive and trust are each asked once per plan step for all ten passports):',
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
function mebibytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`;
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
  return {
    node: median(samples.map((s) => s.node)),
    treeRss: median(samples.map((s) => s.treeRss)),
    treePss: median(samples.map((s) => s.treePss)),
    processes: median(samples.map((s) => s.processes)),
  };
}

interface TimedSample extends MemorySample {
  /** Seconds since the load began. */
  second: number;
}

/**
 * `npm start` (bin/start.ts, its own process and data folder) seeded through its facade as the
 * gateway comparison is, then the mix at its gateway for `minutes`, resident memory sampled every
 * SOAK_SAMPLE_SECONDS. Warm-up: the first tenth of the run, at least a minute; growth is the median
 * of the last minute's samples against the median of the minute after warm-up.
 */
async function soakStart(minutes: number) {
  const platform = await PlatformProcess.prepare({ dataDir: join(bench.dataDir, 'soak') });
  bench.defer(() => platform.stop());
  await platform.start();
  const pid = platform.pid!;
  const restAt = async (service: (typeof SERVICES)[number], path: string, body?: unknown): Promise<any> => {
    const response = await fetch(`${platform.base(service)}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${platform.tokens.admin}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(`soak: POST ${service}${path} answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    return answer;
  };
  const seeded = await seedPlatformData({ rest: restAt, issuerBase: platform.base('issuer') }, { passports: PASSPORTS, models: MODELS });
  const bodies = mixedWorkload(seeded, MIX_BODIES).map((request) => request.body);
  const idleSamples: MemorySample[] = [];
  for (let i = 0; i < 12; i += 1) {
    idleSamples.push(sampleMemory(pid));
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const samples: TimedSample[] = [];
  const started = performance.now();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await new Promise((resolve) => setTimeout(resolve, SOAK_SAMPLE_SECONDS * 1000));
      if (!sampling) break;
      const second = (performance.now() - started) / 1000;
      samples.push({ second, ...sampleMemory(pid) });
      const last = samples.at(-1)!;
      console.log(`  soak, ${second.toFixed(0)} s: node ${mib(last.node)}, tree PSS ${mib(last.treePss)}`);
    }
  })();
  const loaded = await autocannonLoad({ url: platform.gatewayUrl, connections: SOAK_CONNECTIONS, seconds: minutes * 60, method: 'POST', headers: { 'content-type': 'application/json' }, bodies });
  sampling = false;
  await sampler;
  const warmupSeconds = Math.max(60, minutes * 6);
  const between = (from: number, to: number) => samples.filter((sample) => sample.second > from && sample.second <= to);
  const timedMedian = (list: TimedSample[]): TimedSample => ({ second: median(list.map((sample) => sample.second)), ...medianSample(list) });
  const end = minutes * 60;
  const perMinute = Array.from({ length: minutes }, (_, minute) => between(minute * 60, (minute + 1) * 60))
    .filter((list) => list.length)
    .map(timedMedian);
  return {
    idle: { second: 0, ...medianSample(idleSamples) },
    warm: timedMedian(between(warmupSeconds, warmupSeconds + 60)),
    end: timedMedian(between(end - 60, end + SOAK_SAMPLE_SECONDS)),
    peak: { second: 0, node: Math.max(...samples.map((s) => s.node)), treeRss: Math.max(...samples.map((s) => s.treeRss)), treePss: Math.max(...samples.map((s) => s.treePss)), processes: 0 },
    perMinute,
    warmupSeconds,
    load: loaded,
  };
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
    const response = await fetch(`${facade}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${platform.tokens.writer}` },
      body: JSON.stringify(body),
    });
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
  const peak = {
    node: Math.max(...all.map((s) => s.node)),
    treeRss: Math.max(...all.map((s) => s.treeRss)),
    treePss: Math.max(...all.map((s) => s.treePss)),
    processes: Math.max(...all.map((s) => s.processes)),
  };

  const stopping = performance.now();
  await platform.stop();
  const stopSeconds = (performance.now() - stopping) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 500));
  const left = seenTree.filter((pid) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '));
  for (const pid of left) process.kill(pid, 'SIGKILL');
  return { idle: medianSample(idleSamples), loaded: medianSample(loadSamples), peak, loadRate: loaded.perSecond, stopSeconds, leftBehind: left.length };
}
