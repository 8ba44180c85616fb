/**
 * CPU per passport when a client reads many passports at once through the federated graph:
 * `passports(ids:)` with 50 or 500 ids a request, `{ id status logSize typeRecord { id version kind } }`
 * (typeRecord is the registry's, fetched by the gateway as `_entities`), as test/gateway/heap-bound
 * asks it, on 1,000 → 100,000 distinct passports. The gateway, the issuer and registry subgraphs
 * (and trust and archive, which compose the graph but take no part) each run as a process of their
 * own, so that the CPU a passport costs is read by hop from /proc: gateway, issuer, registry, PostgreSQL.
 *
 * The passports are copies of one real passport made in SQL (test/support/national/shape-copies.ts),
 * as heap-bound makes them: this measures reading, not signing.
 *
 *   npm run bench:passport-batches
 *   BATCH_PROFILE=/tmp/profiles npm run bench:passport-batches   # CPU profiles of the gateway, issuer and registry (node --cpu-prof), written when they stop
 *   BATCH_SIZES=1000,10000 BATCH_IDS=50 BATCH_ROUNDS=2 npm run bench:passport-batches   # shorter, while developing (printed, not written)
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { lockingPostmaster } from '../lib/db/embedded-postgres.js';
import { SERVICES } from '../lib/config/services.js';
import { nationalPassportId } from '../test/support/national/layout.js';
import { insertShapeCopies } from '../test/support/national/shape-copies.js';
import { KeptAliveClient, startGatewayProcess, startSubgraphProcess } from './processes.js';
import { BenchRun, benchToken, cpuSeconds, freePort, markdownTable, median, openBench, writeReport, type KeyFigure } from './support.js';

const sizesAsked = process.env.BATCH_SIZES?.split(',').map(Number);
/** Passports in the database at each step. */
const SIZES = sizesAsked ?? [1_000, 10_000, 100_000];
/** Ids a request. */
const BATCHES = process.env.BATCH_IDS?.split(',').map(Number) ?? [50, 500];
/** Rounds at each size and batch; the figure is the median round. */
const ROUNDS = Number(process.env.BATCH_ROUNDS ?? 3);
/** Distinct passports asked a round (all of them at a smaller size): enough for a steady figure, few enough for a shared machine. */
const ASKED = Number(process.env.BATCH_ASKED ?? 10_000);
/** Requests in flight, as heap-bound's two clients. */
const CLIENTS = 2;
const PROFILE_DIR = process.env.BATCH_PROFILE;
const MODEL = 'batch-bench-battery';
const QUERY = 'query Batch($ids: [ID!]!) { passports(ids: $ids) { id status logSize typeRecord { id version kind } } }';
const HOPS = ['gateway', 'issuer', 'registry', 'postgres'] as const;
type Hop = (typeof HOPS)[number];

const total = (perPassport: Record<Hop, number>) => HOPS.reduce((sum, hop) => sum + perPassport[hop], 0);
const us = (value: number) => `${value.toFixed(0)} µs`;
const describe = (perPassport: Record<Hop, number>) => `${HOPS.map((hop) => `${hop} ${us(perPassport[hop])}`).join(', ')}; all ${us(total(perPassport))} a passport`;

const written = !sizesAsked && !process.env.BATCH_IDS && !process.env.BATCH_ROUNDS && !process.env.BATCH_ASKED && !PROFILE_DIR;
const benchRun = new BenchRun('passport-batches', 'npm run bench:passport-batches');
const { token: ADMIN, tokens } = benchToken('admin');
const bench = await openBench('passport-batches');
const client = new KeptAliveClient();

try {
  // A model and one activated passport through the API (an in-process platform, stopped after), the template of every copy.
  const seeding = await bench.startStack(tokens);
  const rest = async (service: 'registry' | 'issuer', path: string, body: unknown): Promise<any> => {
    const answer = await client.request('POST', `${seeding.facade.baseUrls[service]}${path}`, { body: JSON.stringify(body), headers: { authorization: `Bearer ${ADMIN}` } });
    if (answer.status >= 300) throw new Error(`POST ${service}${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return JSON.parse(answer.text);
  };
  await rest('registry', '/', {
    kind: 'model',
    id: MODEL,
    body: { title: MODEL, schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { chemistry: { enum: ['LFP', 'NMC'] } }, required: ['chemistry'] } },
  });
  const template = (
    await rest('issuer', '/passports', { identity: 'https://id.gs1.org/01/09520123456788/21/BATCH-TEMPLATE', type_ref: { id: MODEL, version: 1 }, config_vector: { chemistry: 'LFP' } })
  ).passport_id as string;
  await rest('issuer', `/passports/${template}/events`, { type: 'activated', payload: { placed_on_market_at: '2025-02-01T00:00:00Z' } });
  await seeding.stop();

  // The graph as processes: four subgraphs (bin/subgraph.ts) and the gateway (bin/gateway.ts), errors-only logging.
  const profile = (name: string) => (PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE_DIR, name)}`] : []);
  const gatewayPort = await freePort();
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}/graphql`;
  console.log('Starting the four subgraphs and the gateway as processes …');
  const subgraphs = Object.fromEntries(
    await Promise.all(
      SERVICES.map(async (service) => [service, await startSubgraphProcess(bench, service, { admin: ADMIN }, gatewayUrl, { env: { LOG_LEVEL: 'error' }, nodeFlags: profile(service) })] as const),
    ),
  );
  const gatewayDir = join(bench.dataDir, 'gateway');
  mkdirSync(gatewayDir);
  const gateway = await startGatewayProcess(
    bench,
    { admin: ADMIN },
    {
      port: gatewayPort,
      dataDir: gatewayDir,
      subgraphUrls: Object.fromEntries(SERVICES.map((service) => [service, subgraphs[service]!.url])) as Record<(typeof SERVICES)[number], string>,
      env: { LOG_LEVEL: 'error' },
      nodeFlags: profile('gateway'),
    },
  );
  const postmaster = await lockingPostmaster(bench.clusterDir);
  if (postmaster === undefined) throw new Error("the benchmark's PostgreSQL has no postmaster");
  const pids: Record<Hop, number> = { gateway: gateway.pid!, issuer: subgraphs.issuer!.pid, registry: subgraphs.registry!.pid, postgres: postmaster };
  const cpuNow = () => Object.fromEntries(HOPS.map((hop) => [hop, cpuSeconds(pids[hop])])) as Record<Hop, number>;

  /** Asks for passports n in `numbers`, `batch` a request, CLIENTS requests in flight; every one must come back, typed. */
  async function ask(numbers: readonly number[], batch: number): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < numbers.length) {
          const ids = numbers.slice(next, (next += batch)).map(nationalPassportId);
          const answer = await client.request('POST', gatewayUrl, { body: JSON.stringify({ query: QUERY, variables: { ids } }), headers: { authorization: `Bearer ${ADMIN}` } });
          const body = JSON.parse(answer.text) as { data?: { passports: { id: string; typeRecord: { id: string } | null }[] }; errors?: unknown[] };
          if (
            answer.status !== 200 ||
            body.errors ||
            body.data?.passports.length !== ids.length ||
            body.data.passports.some((passport, i) => passport.id !== ids[i] || passport.typeRecord?.id !== MODEL)
          )
            throw new Error(`the gateway answered ${answer.status}: ${answer.text.slice(0, 400)}`);
        }
      }),
    );
  }

  const db = new pg.Client({ connectionString: bench.databaseUrl });
  await db.connect();
  /** Microseconds of CPU per passport, by hop, the median of the rounds, by size and batch. */
  const results: { size: number; batch: number; asked: number; perPassport: Record<Hop, number> }[] = [];
  try {
    let built = 0;
    for (const size of SIZES) {
      console.log(`Copying passports ${built.toLocaleString('en')} … ${size.toLocaleString('en')} in SQL …`);
      await insertShapeCopies(db, { from: built, to: size, templatePassportId: template });
      built = size;
      // The distinct passports of each round: a different stretch of the whole set each round, none asked twice within it.
      const asked = Math.min(ASKED, size);
      const stride = Math.max(1, Math.floor(size / asked));
      for (const batch of BATCHES) {
        const rounds: Record<Hop, number>[] = [];
        for (let round = -1; round < ROUNDS; round += 1) {
          const numbers = Array.from({ length: asked }, (_, i) => (i * stride + round + 1) % size);
          const before = cpuNow();
          await ask(numbers, batch);
          const after = cpuNow();
          // Round -1 warms up (JIT, plans, connections); not counted.
          if (round >= 0) rounds.push(Object.fromEntries(HOPS.map((hop) => [hop, ((after[hop] - before[hop]) / asked) * 1e6])) as Record<Hop, number>);
        }
        const perPassport = Object.fromEntries(HOPS.map((hop) => [hop, median(rounds.map((r) => r[hop]))])) as Record<Hop, number>;
        results.push({ size, batch, asked, perPassport });
        console.log(`${size.toLocaleString('en')} passports, ${batch} a request: ${describe(perPassport)}`);
      }
    }
  } finally {
    await db.end();
  }

  const table = markdownTable(
    ['passports', 'ids a request', 'asked a round', ...HOPS.map((hop) => (hop === 'postgres' ? 'PostgreSQL' : hop)), 'all'],
    results.map(({ size, batch, asked, perPassport }) => [size.toLocaleString('en'), String(batch), asked.toLocaleString('en'), ...HOPS.map((hop) => us(perPassport[hop])), us(total(perPassport))]),
    ['right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
  console.log(`\n${table}`);
  if (written) {
    const largest = SIZES.at(-1)!;
    const figures: KeyFigure[] = BATCHES.map((batch) => {
      const result = results.find((r) => r.size === largest && r.batch === batch)!;
      return { measure: `CPU per passport, passports(ids:) of ${batch} with typeRecord across services, at ${largest.toLocaleString('en')} passports`, value: describe(result.perPassport) };
    });
    writeReport(
      benchRun,
      `# Passport batches

${benchRun.report(bench)}

CPU per passport of \`${QUERY}\` through the gateway, as test/gateway/heap-bound.test.ts asks it: ${CLIENTS} clients, each one request at a time, ${BATCHES.join(' or ')} ids a request, every id a different passport within a round (up to ${ASKED.toLocaleString('en')} a round, spread over the whole set), the median of ${ROUNDS} rounds after one not counted. \`typeRecord\` is the registry subgraph's: the gateway fetches it as \`_entities\` from the registry for every passport of a request. The gateway and each subgraph run as processes of their own (bin/gateway.ts, bin/subgraph.ts, errors-only logging), so each hop's CPU (user + system, from /proc) is its own; PostgreSQL's is its postmaster's and backends'. The passports are copies of one activated passport made in SQL (test/support/national/shape-copies.ts).

## CPU per passport by hop

${table}
`,
      figures,
      bench,
    );
  }
} finally {
  client.close();
  await bench.close();
}
