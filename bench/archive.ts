/**
 * Archive benchmark: snapshot of a passport with 10,000 events — median creation time through
 * POST /snapshots, and GET /snapshots/{id} throughput in MB/s through the REST facade — with the
 * in-process costs beside them (building the bag alone; reading the stored chunks straight from
 * PostgreSQL), so the ratios show what the HTTP and GraphQL hops cost.
 *
 *   node --import tsx bench/archive.ts              # the whole stack; the passport is made through the issuer's REST paths
 *   node --import tsx bench/archive.ts --stand-in   # the archive with a stand-in issuer/trust subgraph and a synthetic passport
 *
 * Starts its own embedded PostgreSQL in a temporary folder. Writes docs/benchmarks/archive.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem, type as osType, release } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createHash } from 'node:crypto';
import { AccessTokens, hashToken } from '../lib/auth/tokens.js';
import { withSchema } from '../lib/config/database.js';
import { loadRuntimeConfig } from '../lib/config/runtime.js';
import { startEmbeddedPostgres } from '../lib/db/embedded-postgres.js';
import { startStack } from '../bin/stack.js';
import { deployMigrations } from '../prisma/engine/migrate.js';
import { buildBag, snapshotBag, type SnapshotContent } from '../subgraphs/archive/domain/index.js';
import { openArchive, stubGateway } from '../test/archive/support/harness.js';
import { issuePassport, registryModel, type RestCaller } from '../test/archive/support/issuer-fixture.js';
import { startStandInGraph } from '../test/archive/support/stand-in-graph.js';
import { syntheticPassport } from '../test/archive/support/synthetic-passport.js';
import { GATHER_QUERY, gatherPassport } from '../subgraphs/archive/service/gather.js';
import { gatewayClient } from '../lib/graphql/gateway-client.js';

const EVENTS = 10_000;
const CREATION_RUNS = 7;
const GET_RUNS = 10;
/** A passport five times larger, for the memory a GET holds. */
const LARGE_EVENTS = 50_000;
const standIn = process.argv.includes('--stand-in');
const TOKEN = 'bench-admin-token-0123456789abcdef';
const tokens = new AccessTokens([{ name: 'bench', role: 'admin', sha256: hashToken(TOKEN) }]);

/** A full collection before each memory baseline (the flag is set at run time, so the command stays plain). */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const median = (values: number[]) => quantile(values, 0.5);
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}
const milliseconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const megabytes = (bytes: number) => bytes / 1e6;

const dataDir = mkdtempSync(join(tmpdir(), 'archive-bench-'));
const postgres = await startEmbeddedPostgres({ dataDir, port: 54_000 + Math.floor(Math.random() * 1_000) });
const stoppers: (() => Promise<unknown>)[] = [() => postgres.stop()];
const started = Date.now();

try {
  let archiveBase: string;
  let passportId: string;
  let gatewayUrl: string;

  if (standIn) {
    const content = syntheticPassport(EVENTS, { passportId: 'pp-bench' });
    await deployMigrations('archive', withSchema(postgres.url, 'archive'));
    const graph = await startStandInGraph({ databaseUrl: postgres.url, tokens, passports: [content] });
    stoppers.unshift(() => graph.stop());
    archiveBase = graph.archiveBase;
    gatewayUrl = graph.gatewayUrl;
    passportId = content.passportId;
  } else {
    const config = { ...loadRuntimeConfig({ HOST: '127.0.0.1', FACADE_PORT: '0', GATEWAY_PORT: '0', TRUST_SUBGRAPH_PORT: '0', REGISTRY_SUBGRAPH_PORT: '0', ISSUER_SUBGRAPH_PORT: '0', ARCHIVE_SUBGRAPH_PORT: '0' }), databaseUrl: postgres.url };
    const stack = await startStack({ config, tokens });
    stoppers.unshift(() => stack.stop());
    archiveBase = stack.facade.baseUrls.archive;
    gatewayUrl = stack.gateway.graphqlUrl;
    const rest: RestCaller = async (service, path, init = {}) => {
      const response = await fetch(`${stack.facade.baseUrls[service]}${path}`, {
        method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
        headers: { authorization: `Bearer ${TOKEN}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      const text = await response.text();
      return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
    };
    const probe = (await (await fetch(gatewayUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: GATHER_QUERY, variables: { id: 'probe' } }) })).json()) as { errors?: unknown[] };
    if (probe.errors) throw new Error(`the graph does not answer the gather query (the issuer's passport(id) is needed; try --stand-in): ${JSON.stringify(probe.errors)}`);
    const issuing = process.hrtime.bigint();
    const passport = await issuePassport(rest, { traceEvents: EVENTS - 1, serial: 'BENCH-1', pack: true, model: await registryModel(rest), concurrency: 8 });
    console.log(`issued ${passport.events} events in ${(milliseconds(issuing) / 1000).toFixed(1)} s`);
    passportId = passport.id;
  }

  // Creation through the facade: POST /snapshots, gathering through the gateway.
  const creation: number[] = [];
  let snapshot: { id: string; size: number; sha512: string } | undefined;
  for (let run = 0; run < CREATION_RUNS + 1; run += 1) {
    const start = process.hrtime.bigint();
    const response = await fetch(`${archiveBase}/snapshots`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ passport_id: passportId }),
    });
    const body = (await response.json()) as { id: string; size: number; sha512: string };
    if (response.status !== 201) throw new Error(`POST /snapshots answered ${response.status}: ${JSON.stringify(body)}`);
    if (run > 0) creation.push(milliseconds(start));
    snapshot = body;
  }

  // The gather query alone, through the gateway, as the archive sends it.
  const gateway = gatewayClient(() => gatewayUrl);
  const gathering: number[] = [];
  let content: SnapshotContent | undefined;
  for (let run = 0; run < CREATION_RUNS + 1; run += 1) {
    const start = process.hrtime.bigint();
    content = await gatherPassport(gateway, passportId);
    if (run > 0) gathering.push(milliseconds(start));
  }

  // The same content bagged in process, without gathering, storing or notarizing.
  const bagOnly: number[] = [];
  for (let run = 0; run < CREATION_RUNS + 1; run += 1) {
    const start = process.hrtime.bigint();
    await buildBag(snapshotBag({ snapshotId: `bench-${run}`, baggedAt: new Date().toISOString(), content: content!, sourceOrganization: 'bench', softwareAgent: 'bench' }));
    if (run > 0) bagOnly.push(milliseconds(start));
  }

  // GET /snapshots/{id} through the facade, every byte read and hashed by the client. Halfway
  // through the body, a full GC is forced and the JavaScript and buffer memory still in use is
  // compared with readings taken the same way before and after the request: what the transfer holds.
  async function getOnce(target: { id: string; size: number; sha512: string }): Promise<{ megabytesPerSecond: number; memoryMiB: number }> {
    const inUse = () => {
      collectGarbage();
      const usage = process.memoryUsage();
      return usage.heapUsed + usage.external;
    };
    const baseline = inUse();
    let halfway = 0;
    const start = process.hrtime.bigint();
    const response = await fetch(`${archiveBase}/snapshots/${target.id}`);
    const hash = createHash('sha512');
    let length = 0;
    for await (const piece of response.body!) {
      hash.update(piece);
      const before = length;
      length += piece.length;
      if (before < target.size / 2 && length >= target.size / 2) halfway = inUse();
    }
    const elapsed = milliseconds(start);
    if (length !== target.size || hash.digest('hex') !== target.sha512) throw new Error('GET /snapshots/{id} did not return the stored bytes');
    // Compared with the lower of the readings before and after, so unrelated memory freed meanwhile does not count against it.
    return { megabytesPerSecond: megabytes(length) / (elapsed / 1000), memoryMiB: (halfway - Math.min(baseline, inUse())) / 2 ** 20 };
  }
  const throughput: number[] = [];
  const getMemory: number[] = [];
  for (let run = 0; run < GET_RUNS + 2; run += 1) {
    const { megabytesPerSecond, memoryMiB } = await getOnce(snapshot!);
    if (run > 1) {
      throughput.push(megabytesPerSecond);
      getMemory.push(memoryMiB);
    }
  }

  // The stored chunks read straight from PostgreSQL in process, checked against their digests.
  const large = syntheticPassport(LARGE_EVENTS, { passportId: 'pp-bench-large' });
  const parts = await openArchive(postgres.url, stubGateway([large]));
  stoppers.unshift(() => parts.close());
  const record = (await parts.repository.find(snapshot!.id))!;
  const direct: number[] = [];
  for (let run = 0; run < GET_RUNS + 2; run += 1) {
    const start = process.hrtime.bigint();
    let length = 0;
    for (let from = 0; from < record.chunkCount; from += 4) for (const chunk of await parts.repository.chunks(record, from, 4)) length += chunk.length;
    if (run > 1) direct.push(megabytes(length) / (milliseconds(start) / 1000));
  }

  // A snapshot five times larger, stored directly: what a GET holds should not grow with it.
  const largeRecord = await parts.service.create(large.passportId);
  const largeMemory: number[] = [];
  const largeThroughput: number[] = [];
  for (let run = 0; run < 5; run += 1) {
    const { megabytesPerSecond, memoryMiB } = await getOnce(largeRecord);
    if (run > 0) {
      largeMemory.push(memoryMiB);
      largeThroughput.push(megabytesPerSecond);
    }
  }

  const rows: [string, string, string, string][] = [
    ['snapshot creation, POST /snapshots through the facade (gather, bag, store, notarize)', `${median(creation).toFixed(0)} ms`, `${quantile(creation, 0.95).toFixed(0)} ms`, `${(median(creation) / median(bagOnly)).toFixed(2)}× bag only`],
    ['gather query alone, through the gateway (the issuer computes the verdict)', `${median(gathering).toFixed(0)} ms`, `${quantile(gathering, 0.95).toFixed(0)} ms`, `${(median(gathering) / median(bagOnly)).toFixed(2)}× bag only`],
    ['bag only, in process (JCS of every part, tar, SHA-512 manifests)', `${median(bagOnly).toFixed(0)} ms`, `${quantile(bagOnly, 0.95).toFixed(0)} ms`, '1×'],
    ['GET /snapshots/{id} through the facade', `${median(throughput).toFixed(1)} MB/s`, `${quantile(throughput, 0.05).toFixed(1)} MB/s (p95 slowest)`, `${(median(throughput) / median(direct)).toFixed(2)}× direct`],
    ['stored chunks read from PostgreSQL in process', `${median(direct).toFixed(1)} MB/s`, `${quantile(direct, 0.05).toFixed(1)} MB/s (p95 slowest)`, '1×'],
    [`memory held during GET, ${(snapshot!.size / 2 ** 20).toFixed(1)} MiB snapshot (heap + buffers in use halfway, after a GC)`, `${median(getMemory).toFixed(1)} MiB`, `${quantile(getMemory, 0.95).toFixed(1)} MiB`, '1×'],
    [
      `memory held during GET, ${(largeRecord.size / 2 ** 20).toFixed(1)} MiB snapshot (${LARGE_EVENTS} synthetic events), at ${median(largeThroughput).toFixed(1)} MB/s`,
      `${median(largeMemory).toFixed(1)} MiB`,
      `${quantile(largeMemory, 0.95).toFixed(1)} MiB`,
      `${(median(largeMemory) / median(getMemory)).toFixed(2)}× for ${(largeRecord.size / snapshot!.size).toFixed(1)}× the bytes`,
    ],
  ];
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${osType()} ${release()}, Node ${process.version}`;
  const source = standIn
    ? `synthetic passport of ${EVENTS} events served by a stand-in issuer/trust subgraph through the real gateway (\`--stand-in\`)`
    : `passport of ${EVENTS} events made through the issuer's REST paths, whole stack`;
  const table = [
    '| measure | median | p95 | ratio |',
    '|---|---|---|---|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
  const report = `# Archive benchmark

${new Date().toISOString()} — ${machine}

Passport: ${source}. Snapshot: ${(snapshot!.size / 2 ** 20).toFixed(2)} MiB (${snapshot!.size} bytes), ${record.chunkCount} chunks of 1 MiB.
Creation: ${CREATION_RUNS} runs after one warm-up; GET: ${GET_RUNS} runs after two warm-ups, each response read to its end and hashed.
Peak resident memory of the whole process (PostgreSQL aside): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB.

${table}

Command: \`node --import tsx bench/archive.ts${standIn ? ' --stand-in' : ''}\` (${((Date.now() - started) / 1000).toFixed(0)} s).
`;
  console.log(report);
  mkdirSync('docs/benchmarks', { recursive: true });
  writeFileSync('docs/benchmarks/archive.md', report);
} finally {
  for (const stop of stoppers) await stop().catch((error: unknown) => console.error('while stopping:', error));
  rmSync(dataDir, { recursive: true, force: true });
}
