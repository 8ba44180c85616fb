/**
 * Trust at scale (issue 17): the cost of a key-standing question and of a delegation write as the
 * trust graph grows from 1,000 to 10,000 to 100,000 nodes, through the whole platform (GraphQL at
 * the gateway for standings, the REST facade for POST /edges). The platform runs as `npm start` runs
 * it, in a process of its own (bench/processes.ts), so this process is only the client, on
 * kept-alive connections; beside it the trust subgraph runs alone (bin/subgraph.ts) and is asked the
 * same questions and every page of the graph, so that its memory is a process's own.
 *
 * How the graph is built (test/support/synthetic-trust-graph.ts: in SQL batches, as a registry of
 * that size would have been filled over years): 10 roots; 1 % of the nodes are authorities, each delegated by one root (every tenth by
 * two); the rest are issuers, each delegated by one authority (every twentieth by two). Every node
 * has one Ed25519 key; every edge is a signed-JSON credential a real issuer key signed, valid from
 * a day ago for a year. The graph grows in place: the questions at 10k are asked of the 1k graph
 * plus 9k more nodes, and so on.
 *
 * Before the first size's questions, the gateway and the trust subgraph alone each answer
 * WARM_UP_QUESTIONS standing questions about keys the timed ones do not ask (why: at the constant).
 * At each size: STANDING_QUESTIONS distinct issuer keys asked one after another (trustKeyStanding,
 * every answer checked `valid`), and EDGE_WRITES delegations from authorities spread over the graph
 * (at 1k its 10 authorities delegate several times each) to distinct new issuers (each checked
 * 201). Medians and p95 of each; the ratio to the 1k figure. Then GET /graph
 * streamed through the REST facade: its time, its size, and how far the platform process's resident
 * memory rose over its level before, against the one-shot `trustGraph` query's (answered up to the trust service's limit of records, refused beyond it: one answer holds the whole graph several times
 * over). And the cost the graph's size puts on everyone else: VERDICTS passport verdicts per size
 * (GET /issuer/passports/{id}/verdict, distinct passports issued before the graph grew, each asked
 * once), and the resident memory of the trust subgraph alone after each size, and at most so far.
 *
 *   node --import tsx bench/trust-scale.ts            # 1k, 10k, 100k
 *   TRUST_SCALE_SIZES=1000,10000 node --import tsx bench/trust-scale.ts
 *
 * Writes docs/benchmarks/trust-scale.md and trust-scale.json.
 */
import pg from 'pg';
import { ROUTE_TABLES } from '../rest-facade/routes/index.js';
import { SyntheticTrustGraph, syntheticKey } from '../test/support/synthetic-trust-graph.js';
import { KeptAliveClient, residentMemory, startPlatformProcess, startSubgraphProcess } from './processes.js';
import { BenchRun, benchToken, compactDelegation, formatMs, markdownTable, median, openBench, quantile, stopwatch, timed, timedInTurns, writeReport } from './support.js';

const SIZES = (process.env.TRUST_SCALE_SIZES ?? '1000,10000,100000').split(',').map(Number);
const ROOTS = 10;
const STANDING_QUESTIONS = 200;
const EDGE_WRITES = 100;
/** Calls before the counted ones (bench/support.ts `timed`); each asks a question of its own too. */
const WARMUPS = 5;
/**
 * Standing questions the gateway and the trust subgraph alone each answer before the first timed one,
 * once: a process fresh from its start answers its first few thousand 1.3-1.7× slower than it does
 * from then on (measured side by side on two stacks: medians of 1,031 distinct questions falling
 * 8.9 → 7.2 → 6.8 → 6.4 ms and 10.8 → 7.2 → 6.7 → 6.4 ms, then level), while V8 is still compiling
 * the request path. A platform in service has long passed that; the figures are of one that has.
 */
const WARM_UP_QUESTIONS = 3000;
const STANDING_QUERY = 'query($kid: String!, $at: DateTimeISO!) { trustKeyStanding(kid: $kid, at: $at) }';
/** GET /graph's route: its operation and variables are what the facade asks the trust subgraph, page after page. */
const GRAPH_ROUTE = ROUTE_TABLES.trust.routes.find((route) => route.method === 'GET' && route.path === '/graph')!;
const VERDICTS = 40;
/** V8's old-space limit docs/SCALING.md gives a subgraph process (NODE_OPTIONS=--max-old-space-size). */
const DEPLOYED_HEAP_MIB = 192;
/** Anchor bundles and graph revalidations asked per size. */
const REVISITS = 20;
/** The anchor bundle narrowed to a different jurisdiction each time (and once not narrowed). */
const JURISDICTIONS = ['DE', 'FR', 'IT', 'ES', 'NL', 'AT', 'BE', 'PL', 'SE', 'DK', 'FI', 'PT', 'IE', 'CZ', 'SK', 'HU', 'RO', 'BG', 'GR', 'HR', 'SI', 'LT', 'LV', 'EE', 'LU'];
const { token: TOKEN } = benchToken('writer');
const { token: ADMIN } = benchToken('admin');

const benchRun = new BenchRun('trust-scale', 'node --import tsx bench/trust-scale.ts');
const bench = await openBench('trust-scale');
const rows: string[][] = [];
const figures: { size: number; standing: number; edge: number; verdict: number; peak: number; peakWithDefaults: number }[] = [];
const graphRows: string[][] = [];
const revisitRows: string[][] = [];
const costRows: string[][] = [];

/**
 * Runs `read` with the resident memory of a server process sampled every 100 ms: its duration and
 * how far the memory rose over its level before.
 */
async function withPeakMemory<T>(pid: number, read: () => Promise<T>): Promise<{ value: T; ms: number; rise: number }> {
  const before = residentMemory(pid).rss;
  let highest = before;
  const sample = () => {
    highest = Math.max(highest, residentMemory(pid).rss);
  };
  const sampler = setInterval(sample, 100);
  try {
    const elapsed = stopwatch();
    const value = await read();
    const ms = elapsed();
    sample();
    return { value, ms, rise: highest - before };
  } finally {
    clearInterval(sampler);
  }
}
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

try {
  const platform = await startPlatformProcess(bench, { admin: ADMIN, writer: TOKEN });
  // The trust subgraph alone, answering what the platform's does, for the memory that is its own.
  // Twice: as docs/SCALING.md deploys it (a heap limit), and with Node's defaults, which size V8's heap from the machine's memory.
  const trustAlone = [
    await startSubgraphProcess(bench, 'trust', { admin: ADMIN }, platform.gatewayUrl, { heapLimitMiB: DEPLOYED_HEAP_MIB }),
    await startSubgraphProcess(bench, 'trust', { admin: ADMIN }, platform.gatewayUrl, { name: 'trust-node-defaults' }),
  ];
  const startedWith = residentMemory(trustAlone[0]!.pid).rss;
  const client = new KeptAliveClient();
  bench.defer(() => client.close());
  const base = platform.facadeUrls.trust;
  const db = new pg.Client({ connectionString: bench.databaseUrl });
  await db.connect();
  bench.defer(() => db.end());

  // Passports for the verdicts, issued (model, passport, two events, a pack) before the graph grows.
  const writer = { authorization: `Bearer ${TOKEN}` };
  const post = async (service: 'registry' | 'issuer', path: string, body?: unknown) => {
    const answer = await client.request('POST', `${platform.facadeUrls[service]}${path}`, { headers: writer, ...(body !== undefined && { body: JSON.stringify(body) }) });
    if (answer.status !== 201) throw new Error(`POST ${service}${path}: ${answer.status} ${answer.text}`);
    return JSON.parse(answer.text) as Record<string, unknown>;
  };
  await post('registry', '/', { kind: 'model', id: 'scale-battery', body: { title: 'scale-battery', schema: { type: 'object' } } });
  const verdictPassports: string[] = [];
  for (let i = 0; i < SIZES.length * (WARMUPS + VERDICTS); i += 1) {
    const identity = `https://id.gs1.org/01/09520123456788/21/SCALE-${i}`;
    const id = (await post('issuer', '/passports', { identity, type_ref: { id: 'scale-battery', version: 1 }, config_vector: {} })).passport_id as string;
    await post('issuer', `/passports/${id}/events`, { type: 'activated', payload: { placed_on_market_at: '2025-02-01T00:00:00Z' } });
    await post('issuer', `/passports/${id}/events`, {
      type: 'ObjectEvent',
      payload: {
        eventTime: new Date(Date.UTC(2025, 1, 2, 0, 0, i % 60)).toISOString(),
        eventTimeZoneOffset: '+01:00',
        action: 'OBSERVE',
        bizStep: 'inspecting',
        epcList: [identity],
        readPoint: { id: 'urn:epc:id:sgln:9520123.00001.0' },
      },
    });
    await post('issuer', `/passports/${id}/pack`);
    verdictPassports.push(id);
  }

  // Node indexes are laid out per size: each size's roots and authorities come first within its own range.
  const graph = new SyntheticTrustGraph(db, ROOTS);
  const { keys, authorities: authoritiesOf, issuers: issuersOf, keyIat: iat, issuedAt, expires } = graph;
  let fresh = 0;
  for (const size of SIZES) {
    await graph.growTo(size);
    // Vacuumed and analysed, as a graph grown over years stands; autovacuum would otherwise start on the new rows during the questions.
    await db.query('VACUUM (ANALYZE) trust.trust_node, trust.trust_node_version, trust.delegation_edge');

    // Distinct issuer keys, spread over the whole graph.
    const asked = Array.from({ length: WARMUPS + STANDING_QUESTIONS }, (_, i) => issuersOf[Math.floor(((i + 0.5) * issuersOf.length) / (WARMUPS + STANDING_QUESTIONS))]!);
    // Asked through the gateway and of the trust subgraph alone (its own process, no gateway) in turns,
    // the same key in both each round: the service's own share of the figure, side by side.
    const standingOf = async (url: string, node: number) => {
      const answer = await client.request('POST', url, {
        body: JSON.stringify({ query: STANDING_QUERY, variables: { kid: keys[node]!.jwk.kid, at: new Date().toISOString() } }),
      });
      const { data } = JSON.parse(answer.text) as { data?: { trustKeyStanding?: { standing: string } } };
      if (data?.trustKeyStanding?.standing !== 'valid') throw new Error(`standing at ${url}: ${answer.text.slice(0, 300)}`);
    };
    const standingAt = (url: string) => (run: number) => standingOf(url, asked[run]!);
    if (size === SIZES[0]) {
      // Keys the timed questions do not ask, so that each timed one is still a key nobody asked about.
      const timed = new Set(asked);
      const others = issuersOf.filter((issuer) => !timed.has(issuer));
      for (let question = 0; question < WARM_UP_QUESTIONS; question += 1) {
        for (const url of [platform.gatewayUrl, trustAlone[0]!.url]) await standingOf(url, others[question % others.length]!);
      }
    }
    const [standingTimes, atSubgraph] = (await timedInTurns(STANDING_QUESTIONS, [standingAt(platform.gatewayUrl), standingAt(trustAlone[0]!.url)], {
      warmups: WARMUPS,
      rotate: true,
    })) as [number[], number[]];

    // Delegations from authorities spread over the graph to new issuers, through the REST facade.
    const newIssuers = Array.from({ length: WARMUPS + EDGE_WRITES }, () => syntheticKey());
    const base0 = 10_000_000 + fresh;
    fresh += WARMUPS + EDGE_WRITES;
    await db.query('INSERT INTO trust.trust_node (id, kind, document) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])', [
      newIssuers.map((_, i) => `node-${base0 + i}`),
      newIssuers.map(() => 'issuer'),
      newIssuers.map((key, i) => JSON.stringify({ id: `node-${base0 + i}`, kind: 'issuer', keys: [{ ...key.jwk, iat }] })),
    ]);
    const writes = await timed(
      EDGE_WRITES,
      async (run) => {
        const authority = authoritiesOf[Math.floor(((run + 0.5) * authoritiesOf.length) / (WARMUPS + EDGE_WRITES))]!;
        const claims = { iss: `node-${authority}`, sub: `node-${base0 + run}`, scope: {}, iat: issuedAt, exp: expires };
        const jws = compactDelegation(claims, { kid: keys[authority]!.jwk.kid, privateKey: keys[authority]!.privateKey });
        const answer = await client.request('POST', `${base}/edges`, { headers: { authorization: `Bearer ${ADMIN}` }, body: JSON.stringify({ credential: jws }) });
        if (answer.status !== 201) throw new Error(`POST /edges: ${answer.status} ${answer.text}`);
      },
      { warmups: WARMUPS },
    );

    // Verdicts of passports nobody has asked about yet: each reads the standing of its signing keys.
    const mine = verdictPassports.splice(0, WARMUPS + VERDICTS);
    const verdicts = await timed(
      VERDICTS,
      async (run) => {
        const answer = await client.request('GET', `${platform.facadeUrls.issuer}/passports/${mine[run]}/verdict`);
        const verdict = JSON.parse(answer.text) as { outcome: string };
        if (answer.status !== 200 || verdict.outcome !== 'verified') throw new Error(`verdict ${answer.status}: ${answer.text.slice(0, 300)}`);
      },
      { warmups: WARMUPS },
    );

    const { rows: counted } = await db.query<{ nodes: string; edges: string }>('SELECT (SELECT count(*) FROM trust.trust_node) AS nodes, (SELECT count(*) FROM trust.delegation_edge) AS edges');
    const first = figures[0] ?? { standing: median(standingTimes), edge: median(writes.times), verdict: median(verdicts.times) };
    rows.push([
      `${Number(counted[0]!.nodes).toLocaleString('en')} nodes, ${Number(counted[0]!.edges).toLocaleString('en')} edges`,
      formatMs(median(standingTimes)),
      formatMs(quantile(standingTimes, 0.95)),
      `${(median(standingTimes) / first.standing).toFixed(2)}×`,
      formatMs(median(writes.times)),
      formatMs(quantile(writes.times, 0.95)),
      `${(median(writes.times) / first.edge).toFixed(2)}×`,
    ]);
    console.log(rows.at(-1)!.join('  '));

    // GET /graph streamed, each piece counted and dropped, as a client writing it to a file would.
    const streamed = await withPeakMemory(platform.pid, async () => {
      const answer = await client.drain(`${base}/graph`);
      if (answer.status !== 200 || answer.headers['content-length'] !== undefined) throw new Error(`GET /graph: ${answer.status}, content-length ${answer.headers['content-length']}`);
      return { bytes: answer.bytes, etag: String(answer.headers.etag) };
    });
    // The one-shot query: answered whole up to the trust service's limit of records, refused beyond it.
    const oneShot = await withPeakMemory(platform.pid, async () => {
      const answer = await client.request('POST', platform.gatewayUrl, {
        body: JSON.stringify({ query: '{ trustGraph { nodes { id kind jurisdiction keys threshold groupKey } edges { id iss sub scope iat nbf exp kid credential } revocations { subject } } }' }),
      });
      const { data, errors } = JSON.parse(answer.text) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
      if (data) return 'answered';
      if (errors?.[0]?.extensions?.code === 'GRAPH_TOO_LARGE') return 'refused (GRAPH_TOO_LARGE)';
      throw new Error(`trustGraph: ${answer.status} ${answer.text.slice(0, 300)}`);
    });
    graphRows.push([
      `${Number(counted[0]!.nodes).toLocaleString('en')} nodes`,
      mib(streamed.value.bytes),
      formatMs(streamed.ms),
      mib(streamed.rise),
      `${oneShot.value} in ${formatMs(oneShot.ms)}`,
      mib(oneShot.rise),
    ]);
    console.log(graphRows.at(-1)!.join('  '));

    // A revisit of the verification page: the anchor bundle (roots and quorums, read by kind) and the
    // graph revalidated by its version (one record read, 304), whatever the graph's size.
    const bundles = await timed(
      REVISITS,
      async (run) => {
        const answer = await client.request('GET', `${base}/anchor-bundle${run === 0 ? '' : `?jurisdiction=${JURISDICTIONS[run % JURISDICTIONS.length]}`}`);
        if (answer.status !== 200 || !answer.text.includes('"roots"')) throw new Error(`GET /anchor-bundle: ${answer.status} ${answer.text.slice(0, 300)}`);
      },
      { warmups: WARMUPS },
    );
    const revalidations = await timed(
      REVISITS,
      async () => {
        const answer = await client.request('GET', `${base}/graph`, { headers: { 'if-none-match': streamed.value.etag } });
        if (answer.status !== 304) throw new Error(`GET /graph with its ETag: ${answer.status}`);
      },
      { warmups: WARMUPS },
    );
    revisitRows.push([`${Number(counted[0]!.nodes).toLocaleString('en')} nodes`, formatMs(median(bundles.times)), formatMs(median(revalidations.times)), mib(streamed.value.bytes)]);
    console.log(revisitRows.at(-1)!.join('  '));

    // Both trust subgraphs alone answer every standing question (the first already has, in turns above) and read every page of the graph as the facade asks them.
    const memories = [];
    for (const alone of trustAlone) {
      if (alone !== trustAlone[0]) for (const run of asked.keys()) await standingAt(alone.url)(run);
      for (let after: string | null = null, pages = 0; pages === 0 || after !== null; pages += 1) {
        const answer = await client.request('POST', alone.url, {
          body: JSON.stringify({ query: GRAPH_ROUTE.operation, variables: { ...GRAPH_ROUTE.variables?.({ params: {}, query: {}, body: undefined }), after } }),
        });
        after = (JSON.parse(answer.text) as { data: { trustGraphPage: { pageInfo: { endCursor: string | null } } } }).data.trustGraphPage.pageInfo.endCursor;
      }
      // Its memory once that is done, and the most it has held since it started.
      memories.push(residentMemory(alone.pid));
    }
    const [deployed, defaults] = memories as [ReturnType<typeof residentMemory>, ReturnType<typeof residentMemory>];
    figures.push({ size, standing: median(standingTimes), edge: median(writes.times), verdict: median(verdicts.times), peak: deployed.peak, peakWithDefaults: defaults.peak });
    costRows.push([
      `${Number(counted[0]!.nodes).toLocaleString('en')} nodes`,
      formatMs(median(atSubgraph)),
      formatMs(median(verdicts.times)),
      formatMs(quantile(verdicts.times, 0.95)),
      `${(median(verdicts.times) / first.verdict).toFixed(2)}×`,
      mib(deployed.rss),
      mib(deployed.peak),
      mib(defaults.rss),
      mib(defaults.peak),
    ]);
    console.log(costRows.at(-1)!.join('  '));
  }

  const table = markdownTable(['trust graph', 'key standing median', 'p95', 'vs first size', 'POST /edges median', 'p95', 'vs first size'], rows, [
    'left',
    'right',
    'right',
    'right',
    'right',
    'right',
    'right',
  ]);
  const last = figures.at(-1)!;
  const document = `# Trust at scale

${benchRun.report(bench)}

The platform runs as \`npm start\` runs it (bin/start.ts: subgraphs, gateway and REST facade in one process) on
an embedded PostgreSQL, in a process of its own; the benchmark's process is only the client (kept-alive HTTP/1.1
connections, bench/processes.ts), so its requests, its 100k private keys and its bookkeeping cost the platform
neither time nor memory. Beside it the trust subgraph runs alone (bin/subgraph.ts, as docs/SCALING.md deploys it
beyond one process) on the same database, for its memory (below).
Key standing: ${STANDING_QUESTIONS} distinct issuer keys per size, one after another, as \`trustKeyStanding\`
through the gateway, after ${WARM_UP_QUESTIONS.toLocaleString('en')} questions of warm-up at the first size (a process fresh from its
start answers its first few thousand 1.3-1.7× slower, V8 still compiling the request path; the figures are of a
platform that has been serving). POST /edges: ${EDGE_WRITES} delegations from authorities spread over the graph to
new issuers through the REST facade. How the graph is built: see the head of bench/trust-scale.ts (10 roots, 1 % authorities,
the rest issuers; about one edge per node, signed-JSON credentials, grown in place).

${table}

GET /graph streamed through the REST facade (trustGraphPage pages, in one snapshot) against the one-shot
\`trustGraph\` query at the gateway (answered up to 20,000 records, refused with GRAPH_TOO_LARGE beyond); memory is how far the platform process's resident memory (VmRSS: trust
subgraph, gateway and facade together) rose over its level before the read, sampled every 100 ms during it.

${markdownTable(['trust graph', 'GET /graph body', 'streamed in', 'RSS rose by', 'one-shot trustGraph', 'RSS rose by'], graphRows, ['left', 'right', 'right', 'right', 'right', 'right'])}

What a client holding the graph pays on a revisit (the verification page's, or any other): ${REVISITS} anchor
bundles (GET /anchor-bundle, narrowed to a different jurisdiction each time; roots and quorums are read by
kind, never the issuers) and ${REVISITS} GET /graph with the ETag it was sent (the graph version: one record is read,
and a 304 answered without the body; the graph is transferred again only after a write).

${markdownTable(['trust graph', 'GET /anchor-bundle median', 'GET /graph revalidated (304) median', 'instead of'], revisitRows, ['left', 'right', 'right', 'right'])}

The trust subgraph alone (its own process) is asked the same standing questions without the gateway,
in turns with the questions through it (the same key in both each round, the order alternating): what
the service itself takes of the figure above. What the graph's size costs everyone else: ${VERDICTS} verdicts per size of distinct passports (model, passport,
an \`activated\` event and an ObjectEvent, a pack; all issued before the graph grew, each asked once, every one
\`verified\`), GET /issuer/passports/{id}/verdict through the facade; and the memory of the trust subgraph
alone once it has answered the size's standing questions and every page of GET /graph's operation: resident
now (VmRSS), and the most it has held since it started (VmHWM). It held ${mib(startedWith)} once started, before
any question: Node, tsx, the service's code and the Prisma client's WebAssembly query compiler. Two of them
do the same work: one as docs/SCALING.md deploys a subgraph process, with V8's old space limited to
${DEPLOYED_HEAP_MIB} MiB (\`NODE_OPTIONS=--max-old-space-size=${DEPLOYED_HEAP_MIB}\`), and one with Node's defaults, which
size the heap from the machine's memory and let the pages' garbage grow it before collecting.

${markdownTable(
  [
    'trust graph',
    'key standing at the trust subgraph alone (median)',
    'passport verdict median',
    'p95',
    'vs first size',
    `trust subgraph RSS (heap ${DEPLOYED_HEAP_MIB} MiB)`,
    'its highest so far',
    "RSS (Node's defaults)",
    'its highest so far',
  ],
  costRows,
  ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
)}

Goals (issue 17): key standing median < 5 ms at 100k and ≤ 2× the 1k figure; POST /edges median < 20 ms at 100k;
passport verdict time independent of the graph's size; trust subgraph memory < 300 MB at 100k.
A question reads the nodes listing the key and their ancestry (one lookup of the edges indexed by subject
per node reached), not the whole graph; a delegation locks and reads its issuer's ancestry and its subject.
`;
  console.log(document);
  writeReport(
    benchRun,
    document,
    [
      {
        measure: `key standing at ${last.size.toLocaleString('en')} nodes (median)`,
        value: formatMs(last.standing),
        target: `< 5 ms, ≤ 2× the 1k figure (${(last.standing / figures[0]!.standing).toFixed(2)}×)`,
      },
      { measure: `POST /edges at ${last.size.toLocaleString('en')} nodes (median)`, value: formatMs(last.edge), target: '< 20 ms' },
      {
        measure: `passport verdict at ${last.size.toLocaleString('en')} nodes (median)`,
        value: formatMs(last.verdict),
        target: `independent of size (${(last.verdict / figures[0]!.verdict).toFixed(2)}× the 1k figure)`,
      },
      {
        measure: `trust subgraph's highest resident memory up to ${last.size.toLocaleString('en')} nodes (VmHWM, heap limit ${DEPLOYED_HEAP_MIB} MiB as deployed; Node's defaults ${mib(last.peakWithDefaults)})`,
        value: mib(last.peak),
        target: '< 300 MB',
      },
    ],
    bench,
  );
} finally {
  await bench.close();
}
