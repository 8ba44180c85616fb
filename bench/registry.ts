/**
 * Registry read benchmark: 100,000 records of 5 versions each, bulk-loaded with SQL, then read
 * through the REST facade (and, for comparison, through the gateway and the subgraph directly).
 *
 *   node --import tsx bench/registry.ts
 *
 * Starts its own embedded PostgreSQL and stack in a temporary folder, prints a table and writes it
 * to docs/benchmarks/registry.md.
 */
import pg from 'pg';
import { insertRegistryRecords } from '../test/support/national/registry-records.js';
import { encodeCursor } from '../subgraphs/registry/domain/listing.js';
import { autocannonLoad, BenchRun, benchToken, loadAverage, markdownTable, openBench, stopwatch, summarize, timedInTurns, writeReport, type Summary } from './support.js';

const RECORDS = 100_000;
const VERSIONS = 5;
/** Collections the records are spread over, round robin (REGISTRY_KINDS' order); '' is the root (generic records). */
const COLLECTIONS = [
  { kind: 'item', path: '/items' },
  { kind: 'service', path: '/services' },
  { kind: 'cross_register_mapping', path: '/cross-register-mappings' },
  { kind: 'generic', path: '' },
] as const;
const { token: WRITER, tokens } = benchToken('writer');

const idOf = (n: number) => `bench-${String(n).padStart(6, '0')}`;
const collectionOf = (n: number) => COLLECTIONS[(n - 1) % COLLECTIONS.length]!;
const random = (max: number) => 1 + Math.floor(Math.random() * max);

/** Every record and version in two INSERT … SELECT statements, generated inside PostgreSQL. */
async function bulkLoad(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const elapsed = stopwatch();
  try {
    await insertRegistryRecords(client, { from: 1, to: RECORDS, versions: VERSIONS, idSql: `'bench-' || lpad(n::text, 6, '0')` });
    await client.query('ANALYZE registry.record');
    await client.query('ANALYZE registry.record_version');
  } finally {
    await client.end();
  }
  return elapsed();
}

interface Stats extends Summary {
  perSecond: number;
}

function stats(samples: number[], wall: number): Stats {
  return { ...summarize(samples), perSecond: (samples.length / wall) * 1000 };
}

/** Times `count` requests one after another (after a warm-up), each checked by `check`. */
async function measure(count: number, request: (i: number) => Promise<Response>, check: (response: Response, body: any) => void): Promise<Stats> {
  for (let i = 0; i < Math.min(100, count); i++) await (await request(i)).arrayBuffer();
  const samples: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const response = await request(i);
    const body = await response.json();
    samples.push(performance.now() - t0);
    check(response, body);
  }
  return stats(samples, performance.now() - started);
}

/**
 * The same request at several layers, taken in turns (the order rotating), so that whatever else
 * the machine does weighs on every layer alike and their ratios hold. The first 100 rounds warm up.
 */
async function measureLayers(count: number, layers: readonly { request: (n: number) => Promise<Response>; check: (body: any) => boolean }[]): Promise<Stats[]> {
  const ns = Array.from({ length: count + 100 }, () => random(RECORDS));
  const times = await timedInTurns(
    count,
    layers.map((layer, index) => async (round: number) => {
      const response = await layer.request(ns[round]!);
      const body = await response.json();
      if (response.status !== 200 || !layer.check(body)) throw new Error(`layer ${index}: ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
    }),
    { warmups: 100, rotate: true },
  );
  return times.map((samples) =>
    stats(
      samples,
      samples.reduce((sum, took) => sum + took, 0),
    ),
  );
}

function expectOk(response: Response, body: any, what: string, test: (body: any) => boolean) {
  if (response.status !== 200 || !test(body)) throw new Error(`${what}: unexpected answer ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
}

const benchRun = new BenchRun('registry', 'node --import tsx bench/registry.ts');
const bench = await openBench('registry');
try {
  const stack = await bench.startStack(tokens);
  console.log(`Loading ${RECORDS.toLocaleString('en')} records × ${VERSIONS} versions …`);
  const loadMs = await bulkLoad(stack.databaseUrl);
  console.log(`  loaded in ${(loadMs / 1000).toFixed(1)} s`);

  const base = stack.facade.baseUrls.registry;
  const gateway = stack.gateway.graphqlUrl;
  const subgraph = stack.subgraphUrls.registry;
  const graphql = (url: string, query: string, variables: Record<string, unknown>) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  const recordPath = (n: number) => `${collectionOf(n).path}/${idOf(n)}`;
  const readQuery =
    'query($id: ID!, $version: Int) { registryRecord(id: $id, version: $version) { id kind version status body effectiveFrom effectiveTo createdAt supersedes supersededBy current currentVersion path } }';

  const rows: [string, Stats][] = [];
  const run = async (label: string, result: Promise<Stats>) => {
    const value = await result;
    rows.push([label, value]);
    console.log(`  ${label.padEnd(58)} median ${value.median.toFixed(2)} ms  p95 ${value.p95.toFixed(2)} ms`);
  };

  // Other work on the machine moves these figures; the load when measuring starts is reported with them.
  const load = loadAverage();
  console.log('Measuring …');
  await run(
    'REST GET /{kind}/{id} (current version)',
    measure(
      2000,
      () => fetch(`${base}${recordPath(random(RECORDS))}`),
      (r, b) => expectOk(r, b, 'read', (body) => body.version === VERSIONS && body.current === true),
    ),
  );
  await run(
    'REST GET /{kind}/{id}?version=k (older version)',
    measure(
      2000,
      () => fetch(`${base}${recordPath(random(RECORDS))}?version=${random(VERSIONS - 1)}`),
      (r, b) => expectOk(r, b, 'old version', (body) => body.current === false),
    ),
  );
  await run(
    'REST GET /{id} (generic record at the root)',
    measure(
      1000,
      () => fetch(`${base}/${idOf(4 * random(RECORDS / 4))}`),
      (r, b) => expectOk(r, b, 'root read', (body) => body.kind === 'generic'),
    ),
  );
  await run(
    'REST GET /{kind}/{id}/supersession (5 versions)',
    measure(
      2000,
      () => fetch(`${base}${recordPath(random(RECORDS))}/supersession`),
      (r, b) => expectOk(r, b, 'supersession', (body) => body.versions.length === VERSIONS),
    ),
  );
  await run(
    'REST GET /items?limit=100 (page of 100, random cursor)',
    measure(
      300,
      () => fetch(`${base}/items?limit=100&cursor=${encodeCursor(idOf(random(RECORDS - 1000)))}`),
      (r, b) => expectOk(r, b, 'list', (body) => body.records.length === 100 && body.next_cursor),
    ),
  );
  await run(
    'REST GET /items?limit=100&status=active&id_prefix=bench-0 (filtered)',
    measure(
      300,
      () => fetch(`${base}/items?limit=100&status=active&id_prefix=bench-0&cursor=${encodeCursor(idOf(random(RECORDS / 2)))}`),
      (r, b) => expectOk(r, b, 'filtered list', (body) => body.records.length === 100),
    ),
  );
  const listQuery = `query($cursor: String) { registryRecords(kind: "item", first: 100, after: $cursor) { nodes { id kind version status body effectiveFrom effectiveTo createdAt supersedes supersededBy current currentVersion path } pageInfo { endCursor } } }`;
  const [facadeRead, gatewayRead, subgraphRead] = await measureLayers(1000, [
    { request: (n) => fetch(`${base}${recordPath(n)}`), check: (body) => body.current === true },
    { request: (n) => graphql(gateway, readQuery, { id: idOf(n), version: null }), check: (body) => body.data.registryRecord.current === true },
    { request: (n) => graphql(subgraph, readQuery, { id: idOf(n), version: null }), check: (body) => body.data.registryRecord.current === true },
  ]);
  rows.push(
    ['read by id, in turns: REST facade GET /{kind}/{id}', facadeRead!],
    ['read by id, in turns: gateway registryRecord', gatewayRead!],
    ['read by id, in turns: subgraph registryRecord', subgraphRead!],
  );
  const startAt = (n: number) => encodeCursor(idOf(Math.min(n, RECORDS - 1000)));
  const [facadeList, gatewayList, subgraphList] = await measureLayers(200, [
    { request: (n) => fetch(`${base}/items?limit=100&cursor=${startAt(n)}`), check: (body) => body.records.length === 100 },
    { request: (n) => graphql(gateway, listQuery, { cursor: startAt(n) }), check: (body) => body.data.registryRecords.nodes.length === 100 },
    { request: (n) => graphql(subgraph, listQuery, { cursor: startAt(n) }), check: (body) => body.data.registryRecords.nodes.length === 100 },
  ]);
  rows.push(
    ['page of 100, in turns: REST facade GET /items?limit=100', facadeList!],
    ['page of 100, in turns: gateway registryRecords', gatewayList!],
    ['page of 100, in turns: subgraph registryRecords', subgraphList!],
  );
  for (const [label, value] of rows.slice(-6)) console.log(`  ${label.padEnd(58)} median ${value.median.toFixed(2)} ms  p95 ${value.p95.toFixed(2)} ms`);
  let next = 0;
  await run(
    'REST POST /items/{id}/versions (write, sequential)',
    measure(
      300,
      () => {
        // Each write builds on the version the previous one left: every item gets a 6th version once.
        const n = 1 + 4 * next++;
        return fetch(`${base}/items/${idOf(n)}/versions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${WRITER}` },
          body: JSON.stringify({ expected_version: VERSIONS, body: { title: `Benchmark record ${n}`, revision: VERSIONS + 1 } }),
        });
      },
      (response, body) => {
        if (response.status !== 201 || body.version !== VERSIONS + 1) throw new Error(`write: ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
      },
    ),
  );
  // Throughput: autocannon in a process of its own, 8 connections, each request a random record.
  const { origin, pathname } = new URL(base);
  const loaded = await autocannonLoad({ url: origin, connections: 8, seconds: 5, paths: Array.from({ length: 2000 }, () => `${pathname}${recordPath(random(RECORDS))}`), pick: 'request' });
  if (loaded.non2xx || loaded.errors || loaded.timeouts) throw new Error(`concurrent reads: ${loaded.non2xx} answers other than 2xx, ${loaded.errors} errors, ${loaded.timeouts} timeouts`);
  const concurrent: Stats = { n: loaded.requests, median: loaded.latency.median, p95: loaded.latency.p95, p99: loaded.latency.p99, min: NaN, max: NaN, perSecond: loaded.perSecond };
  rows.push(['REST GET /{kind}/{id}, 8 concurrent clients (autocannon)', concurrent]);
  console.log(`  8 concurrent clients: ${concurrent.perSecond.toFixed(0)} reads/s, median ${concurrent.median.toFixed(2)} ms`);

  const headline = rows[0]![1];
  const table = markdownTable(
    ['operation', 'requests', 'median (ms)', 'p95 (ms)', 'p99 (ms)', 'requests/s'],
    rows.map(([label, s]) => [label, String(s.n), s.median.toFixed(2), s.p95.toFixed(2), s.p99.toFixed(2), s.perSecond.toFixed(0)]),
    ['left', 'right', 'right', 'right', 'right', 'right'],
  );
  const ratios = [
    `- read by id (medians, measured in turns): REST facade ${facadeRead!.median.toFixed(2)} ms = ${(facadeRead!.median / gatewayRead!.median).toFixed(2)} × gateway ${gatewayRead!.median.toFixed(2)} ms = ${(facadeRead!.median / subgraphRead!.median).toFixed(2)} × subgraph ${subgraphRead!.median.toFixed(2)} ms`,
    `- page of 100 (medians, measured in turns): REST facade ${facadeList!.median.toFixed(2)} ms = ${(facadeList!.median / gatewayList!.median).toFixed(2)} × gateway ${gatewayList!.median.toFixed(2)} ms = ${(facadeList!.median / subgraphList!.median).toFixed(2)} × subgraph ${subgraphList!.median.toFixed(2)} ms`,
    `- read by id through the facade, median ${headline.median.toFixed(2)} ms: ${headline.median < 10 ? 'under' : 'OVER'} the 10 ms target`,
  ].join('\n');
  const report = `# Registry benchmark

${benchRun.report(bench)}

- All servers on loopback in one process; 1-minute load average ${load.toFixed(2)} when measuring began (after the bulk load)
- Data: ${RECORDS.toLocaleString('en')} records × ${VERSIONS} versions (${(RECORDS * VERSIONS).toLocaleString('en')} version rows) spread over items, services, cross-register mappings and generic records, bulk-loaded with two \`INSERT … SELECT\` statements in ${(loadMs / 1000).toFixed(1)} s
- Requests one after another from one keep-alive client (except the concurrent row: autocannon in a process of its own, 8 connections for 5 s, each request a random one of 2,000 record paths, no answer other than 200 allowed), random ids, after a warm-up of 100; every answer is checked

${table}

${ratios}
`;
  console.log(`\n${table}\n\n${ratios}`);
  const page = rows.find(([label]) => label.startsWith('REST GET /items?limit=100 '))![1];
  const writes = rows.find(([label]) => label.startsWith('REST POST'))![1];
  writeReport(
    benchRun,
    report,
    [
      { measure: 'REST GET /{kind}/{id}, current version, 100,000 records (median / p95)', value: `${headline.median.toFixed(2)} / ${headline.p95.toFixed(2)} ms`, target: 'median < 10 ms' },
      { measure: 'REST GET /{kind}/{id}, 8 concurrent clients', value: `${concurrent.perSecond.toFixed(0)} reads/s` },
      { measure: 'REST GET /items?limit=100, page of 100 (median)', value: `${page.median.toFixed(2)} ms` },
      { measure: 'REST POST /items/{id}/versions, sequential (median)', value: `${writes.median.toFixed(2)} ms` },
    ],
    bench,
  );
} finally {
  await bench.close();
}
