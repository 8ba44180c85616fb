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
import { createHash } from 'node:crypto';
import { withSchema } from '../lib/config/database.js';
import { deployMigrations } from '../lib/db/migrate.js';
import { buildBag, snapshotBag } from '../subgraphs/archive/domain/index.js';
import { openArchive, stubGateway } from '../test/archive/support/harness.js';
import { issuePassport, registryModel, type RestCaller } from '../test/archive/support/issuer-fixture.js';
import { startStandInGraph } from '../test/archive/support/stand-in-graph.js';
import { syntheticPassport } from '../test/archive/support/synthetic-passport.js';
import { GATHER_QUERY, gatherPassport } from '../subgraphs/archive/service/gather.js';
import { gatewayClient } from '../lib/graphql/gateway-client.js';
import { BenchRun, benchToken, collectGarbage, markdownTable, median, openBench, quantile, stopwatch, timed, writeReport } from './support.js';

const EVENTS = 10_000;
const CREATION_RUNS = 7;
const GET_RUNS = 10;
/** A passport five times larger, for the memory a GET holds. */
const LARGE_EVENTS = 50_000;
const standIn = process.argv.includes('--stand-in');
const { token: TOKEN, tokens } = benchToken('admin');

const megabytes = (bytes: number) => bytes / 1e6;

const benchRun = new BenchRun('archive', `node --import tsx bench/archive.ts${standIn ? ' --stand-in' : ''}`);
const bench = await openBench('archive');

try {
  let archiveBase: string;
  let passportId: string;
  let gatewayUrl: string;

  if (standIn) {
    const content = syntheticPassport(EVENTS, { passportId: 'pp-bench' });
    await deployMigrations('archive', withSchema(bench.databaseUrl, 'archive'));
    const graph = await startStandInGraph({ databaseUrl: bench.databaseUrl, tokens, passports: [content] });
    bench.defer(() => graph.stop());
    archiveBase = graph.archiveBase;
    gatewayUrl = graph.gatewayUrl;
    passportId = content.passportId;
  } else {
    const stack = await bench.startStack(tokens);
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
    const probe = (await (
      await fetch(gatewayUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: GATHER_QUERY, variables: { id: 'probe' } }) })
    ).json()) as { errors?: unknown[] };
    if (probe.errors) throw new Error(`the graph does not answer the gather query (the issuer's passport(id) is needed; try --stand-in): ${JSON.stringify(probe.errors)}`);
    const issuing = stopwatch();
    const passport = await issuePassport(rest, { traceEvents: EVENTS - 1, serial: 'BENCH-1', pack: true, model: await registryModel(rest), concurrency: 8 });
    console.log(`issued ${passport.events} events in ${(issuing() / 1000).toFixed(1)} s`);
    passportId = passport.id;
  }

  // Creation through the facade: POST /snapshots, gathering through the gateway.
  const { times: creation, last: snapshot } = await timed(CREATION_RUNS, async () => {
    const response = await fetch(`${archiveBase}/snapshots`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ passport_id: passportId }),
    });
    const body = (await response.json()) as { id: string; size: number; sha512: string };
    if (response.status !== 201) throw new Error(`POST /snapshots answered ${response.status}: ${JSON.stringify(body)}`);
    return body;
  });

  // The gather query alone, through the gateway, as the archive sends it.
  const gateway = gatewayClient(() => gatewayUrl);
  const { times: gathering, last: gathered } = await timed(CREATION_RUNS, () => gatherPassport(gateway, passportId));
  if (!gathered) throw new Error(`the gateway does not know passport ${passportId}`);
  const { content } = gathered;

  // The same content bagged in process, without gathering, storing or notarizing.
  const { times: bagOnly } = await timed(CREATION_RUNS, (run) =>
    buildBag(snapshotBag({ snapshotId: `bench-${run}`, baggedAt: new Date().toISOString(), content, sourceOrganization: 'bench', softwareAgent: 'bench' })),
  );

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
    const elapsed = stopwatch();
    const response = await fetch(`${archiveBase}/snapshots/${target.id}`);
    const hash = createHash('sha512');
    let length = 0;
    for await (const piece of response.body!) {
      hash.update(piece);
      const before = length;
      length += piece.length;
      if (before < target.size / 2 && length >= target.size / 2) halfway = inUse();
    }
    const took = elapsed();
    if (length !== target.size || hash.digest('hex') !== target.sha512) throw new Error('GET /snapshots/{id} did not return the stored bytes');
    // Compared with the lower of the readings before and after, so unrelated memory freed meanwhile does not count against it.
    return { megabytesPerSecond: megabytes(length) / (took / 1000), memoryMiB: (halfway - Math.min(baseline, inUse())) / 2 ** 20 };
  }
  const gets = (await timed(GET_RUNS, () => getOnce(snapshot), { warmups: 2 })).results;
  const throughput = gets.map((get) => get.megabytesPerSecond);
  const getMemory = gets.map((get) => get.memoryMiB);

  // The stored chunks read straight from PostgreSQL in process, checked against their digests.
  const large = syntheticPassport(LARGE_EVENTS, { passportId: 'pp-bench-large' });
  const parts = await openArchive(bench.databaseUrl, stubGateway([large]));
  bench.defer(() => parts.close());
  const record = (await parts.repository.find(snapshot.id))!;
  const direct: number[] = [];
  for (let run = 0; run < GET_RUNS + 2; run += 1) {
    const elapsed = stopwatch();
    let length = 0;
    for (let from = 0; from < record.chunkCount; from += 4) for (const chunk of await parts.repository.chunks(record, from, 4)) length += chunk.length;
    if (run > 1) direct.push(megabytes(length) / (elapsed() / 1000));
  }

  // A snapshot five times larger, stored directly: what a GET holds should not grow with it.
  const largeRecord = await parts.service.create(large.passportId, { operator: null });
  const largeGets = (await timed(4, () => getOnce(largeRecord))).results;
  const largeMemory = largeGets.map((get) => get.memoryMiB);
  const largeThroughput = largeGets.map((get) => get.megabytesPerSecond);

  const rows: [string, string, string, string][] = [
    [
      'snapshot creation, POST /snapshots through the facade (gather, bag, store, notarize)',
      `${median(creation).toFixed(0)} ms`,
      `${quantile(creation, 0.95).toFixed(0)} ms`,
      `${(median(creation) / median(bagOnly)).toFixed(2)}× bag only`,
    ],
    [
      'gather query alone, through the gateway (the issuer computes the verdict)',
      `${median(gathering).toFixed(0)} ms`,
      `${quantile(gathering, 0.95).toFixed(0)} ms`,
      `${(median(gathering) / median(bagOnly)).toFixed(2)}× bag only`,
    ],
    ['bag only, in process (JCS of every part, tar, SHA-512 manifests)', `${median(bagOnly).toFixed(0)} ms`, `${quantile(bagOnly, 0.95).toFixed(0)} ms`, '1×'],
    [
      'GET /snapshots/{id} through the facade',
      `${median(throughput).toFixed(1)} MB/s`,
      `${quantile(throughput, 0.05).toFixed(1)} MB/s (p95 slowest)`,
      `${(median(throughput) / median(direct)).toFixed(2)}× direct`,
    ],
    ['stored chunks read from PostgreSQL in process', `${median(direct).toFixed(1)} MB/s`, `${quantile(direct, 0.05).toFixed(1)} MB/s (p95 slowest)`, '1×'],
    [
      `memory held during GET, ${(snapshot.size / 2 ** 20).toFixed(1)} MiB snapshot (heap + buffers in use halfway, after a GC)`,
      `${median(getMemory).toFixed(1)} MiB`,
      `${quantile(getMemory, 0.95).toFixed(1)} MiB`,
      '1×',
    ],
    [
      `memory held during GET, ${(largeRecord.size / 2 ** 20).toFixed(1)} MiB snapshot (${LARGE_EVENTS} synthetic events), at ${median(largeThroughput).toFixed(1)} MB/s`,
      `${median(largeMemory).toFixed(1)} MiB`,
      `${quantile(largeMemory, 0.95).toFixed(1)} MiB`,
      `${(median(largeMemory) / median(getMemory)).toFixed(2)}× for ${(largeRecord.size / snapshot.size).toFixed(1)}× the bytes`,
    ],
  ];
  const source = standIn
    ? `synthetic passport of ${EVENTS} events served by a stand-in issuer/trust subgraph through the real gateway (\`--stand-in\`)`
    : `passport of ${EVENTS} events made through the issuer's REST paths, whole stack`;
  const table = markdownTable(['measure', 'median', 'p95', 'ratio'], rows);
  const report = `# Archive benchmark

${benchRun.report(bench)}

Passport: ${source}. Snapshot: ${(snapshot.size / 2 ** 20).toFixed(2)} MiB (${snapshot.size} bytes), ${record.chunkCount} chunks of 1 MiB.
Creation: ${CREATION_RUNS} runs after one warm-up; GET: ${GET_RUNS} runs after two warm-ups, each response read to its end and hashed.
Peak resident memory of the whole process (PostgreSQL aside): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB.

${table}
`;
  console.log(report);
  writeReport(
    benchRun,
    report,
    [
      { measure: `snapshot creation, POST /snapshots, ${EVENTS.toLocaleString('en')} events${standIn ? ' (stand-in)' : ''} (median)`, value: `${median(creation).toFixed(0)} ms` },
      { measure: 'GET /snapshots/{id} through the facade (median)', value: `${median(throughput).toFixed(1)} MB/s` },
      {
        measure: `memory held during GET, ${(snapshot.size / 2 ** 20).toFixed(1)} MiB / ${(largeRecord.size / 2 ** 20).toFixed(1)} MiB snapshot (median)`,
        value: `${median(getMemory).toFixed(1)} / ${median(largeMemory).toFixed(1)} MiB`,
      },
    ],
    bench,
  );
} finally {
  await bench.close();
}
