/**
 * Trust benchmark (issue 3, Speed), through the whole stack (REST facade -> gateway -> subgraph ->
 * PostgreSQL):
 *  - GET /master-list with 1,000 entries of 5 witness cosignatures each: every read re-verifies all
 *    5,000 Ed25519 cosignatures. Beside it, in process: the same 5,000 verifications with lib/crypto's
 *    verifyBytes (Node's OpenSSL, the path the service takes) and with @noble/curves' strict verify,
 *    and the domain's quorumVerdict over the 1,000 entries.
 *  - GET /graph with 10,000 nodes and 20,000 edges (each a signed-JSON credential): median time,
 *    response size and peak memory (RSS of this process, which runs the whole stack).
 * Entries, nodes and edges are inserted with SQL batches; witness set through the API.
 *
 *   node --import tsx bench/trust.ts
 *
 * Starts its own embedded PostgreSQL in a temporary folder (bench/support.ts). Writes docs/benchmarks/trust.md
 * and its key figures to trust.json.
 */
import { createHash, sign as nodeSign, type KeyObject } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import pg from 'pg';
import { canonicalize } from '../lib/crypto/jcs.js';
import { jwkThumbprint, verifyBytes } from '../lib/crypto/index.js';
import { quorumVerdict, validateWitnessSet, type MasterListEntry } from '../subgraphs/trust/domain/index.js';
import { BenchRun, benchToken, collectGarbage, ed25519KeyPair, markdownTable, median, openBench, quantile, timed, timedInTurns, writeReport } from './support.js';

const ENTRIES = 1_000;
const WITNESSES = 5;
const NODES = 10_000;
const EDGES = 20_000;
const MASTER_LIST_RUNS = 9;
const GRAPH_RUNS = 5;
// The trust graph is the platform admin's to write (docs/OPERATORS.md).
const { token: TOKEN, tokens } = benchToken('admin');

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

interface Key {
  jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string };
  raw: Uint8Array;
  privateKey: KeyObject;
}
function newKey(): Key {
  const { publicKey, privateKey } = ed25519KeyPair();
  const x = publicKey.export({ format: 'jwk' }).x!;
  const jwk = { kty: 'OKP' as const, crv: 'Ed25519' as const, x, kid: '' };
  jwk.kid = jwkThumbprint(jwk);
  return { jwk, raw: Buffer.from(x, 'base64url'), privateKey };
}

const benchRun = new BenchRun('trust', 'node --import tsx bench/trust.ts');
const bench = await openBench('trust');
const rows: string[][] = [];

try {
  const stack = await bench.startStack(tokens);
  const base = stack.facade.baseUrls.trust;
  const db = new pg.Client({ connectionString: bench.databaseUrl });
  await db.connect();
  bench.defer(() => db.end());

  // Master list: witness set through the API, 1,000 entries x 5 cosignatures by SQL.
  const witnesses = Array.from({ length: WITNESSES }, newKey);
  const replaced = await fetch(`${base}/master-list/witnesses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ m: 3, keys: witnesses.map((witness) => witness.jwk) }),
  });
  if (replaced.status !== 200) throw new Error(`witness set: ${replaced.status} ${await replaced.text()}`);
  const origin = ((await (await fetch(`${base}/master-list`)).json()) as { origin: string }).origin;
  const time = Math.floor(Date.now() / 1000);
  const messages: { raw: Uint8Array; message: Uint8Array; signature: Uint8Array }[] = [];
  const entries: MasterListEntry[] = Array.from({ length: ENTRIES }, (_, index) => {
    const id = `entry-${String(index).padStart(4, '0')}`;
    const body = { jurisdiction: 'DE', root: `root-${index}`, keys: [`kid-${index}-a`, `kid-${index}-b`] };
    const digest = createHash('sha256').update(canonicalize(body)).digest('base64');
    const message = Buffer.from(`cosignature/v1\ntime ${time}\n${origin}\nentry ${id}\nsha256 ${digest}\n`);
    const cosignatures = witnesses.map((witness) => {
      const signature = nodeSign(null, message, witness.privateKey);
      messages.push({ raw: witness.raw, message, signature });
      return { kid: witness.jwk.kid, time, signature: signature.toString('base64url') };
    });
    return { id, body, cosignatures };
  });
  await db.query(`INSERT INTO trust.master_list_entry (id, body, cosignatures) SELECT * FROM unnest($1::text[], $2::jsonb[], $3::jsonb[])`, [
    entries.map((entry) => entry.id),
    entries.map((entry) => JSON.stringify(entry.body)),
    entries.map((entry) => JSON.stringify(entry.cosignatures)),
  ]);

  const restMasterList = async () => (await (await fetch(`${base}/master-list`)).json()) as { entries: { verdict: { quorate: boolean; valid: number } }[] };
  const checked = await restMasterList();
  const quorate = checked.entries.filter((entry) => entry.verdict.quorate && entry.verdict.valid === WITNESSES).length;
  if (checked.entries.length !== ENTRIES || quorate !== ENTRIES) throw new Error(`only ${quorate} of ${checked.entries.length} entries verified`);

  const MASTER_LIST_QUERY = JSON.stringify({
    query: '{ trustMasterList { origin shape m k witnessSet { keys recordedAt } entries { id body cosignatures verdict { valid required quorate reasons { index kid outcome } explanation } } } }',
  });
  const graphql = (url: string) => async () => (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: MASTER_LIST_QUERY })).json();
  const [restTimes, gatewayTimes, subgraphTimes] = await timedInTurns(MASTER_LIST_RUNS, [restMasterList, graphql(stack.gateway.graphqlUrl), graphql(stack.subgraphUrls.trust)]);
  const masterList = { times: restTimes! };
  const viaGateway = { times: gatewayTimes! };
  const viaSubgraph = { times: subgraphTimes! };

  const witnessSet = validateWitnessSet({ m: 3, keys: witnesses.map((witness) => witness.jwk) });
  if (!witnessSet.ok) throw new Error(witnessSet.message);
  const verdicts = await timed(MASTER_LIST_RUNS, () => entries.filter((entry) => quorumVerdict(entry, witnessSet.value, origin).quorate).length);
  const native = await timed(MASTER_LIST_RUNS, () => messages.filter(({ raw, message, signature }) => verifyBytes('Ed25519', raw, message, signature)).length);
  const noble = await timed(3, () => messages.filter(({ raw, message, signature }) => ed25519.verify(signature, message, raw, { zip215: false })).length);
  if (native.last !== messages.length || noble.last !== messages.length) throw new Error('a cosignature did not verify');

  const row = (name: string, times: number[], note: string) => rows.push([name, median(times).toFixed(1), quantile(times, 0.95).toFixed(1), String(times.length), note]);
  row('GET /master-list (1,000 entries x 5 cosignatures)', masterList.times, 'REST facade -> gateway -> subgraph -> PostgreSQL; 5,000 live verifications');
  row('  the same in GraphQL, through the gateway', viaGateway.times, 'the query the facade sends');
  row('  the same in GraphQL, straight to the trust subgraph', viaSubgraph.times, 'no gateway, no facade');
  row('  in process: quorumVerdict x 1,000 (lib verifyBytes)', verdicts.times, 'the domain work of one read');
  row('  in process: 5,000 x lib/crypto verifyBytes (OpenSSL)', native.times, 'used by the service');
  row('  in process: 5,000 x @noble/curves verify (strict)', noble.times, `${(median(noble.times) / median(native.times)).toFixed(1)}x slower than OpenSSL`);

  // The graph: 10,000 nodes with a key each, 20,000 signed-JSON delegation edges (iss before sub, so acyclic).
  const nodeKeys = Array.from({ length: NODES }, newKey);
  const iat = Math.floor(Date.now() / 1000) - 86_400;
  const kinds = (index: number) => (index < 10 ? 'root' : index < 1_000 ? 'authority' : 'issuer');
  const nodes = nodeKeys.map((key, index) => ({ id: `node-${index}`, kind: kinds(index), keys: [{ ...key.jwk, iat }] }));
  for (let start = 0; start < NODES; start += 2_000) {
    const chunk = nodes.slice(start, start + 2_000);
    await db.query(`INSERT INTO trust.trust_node (id, kind, document) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])`, [
      chunk.map((node) => node.id),
      chunk.map((node) => node.kind),
      chunk.map((node) => JSON.stringify(node)),
    ]);
  }
  const issuedAt = new Date(Date.now() - 3_600_000).toISOString();
  const expires = new Date(Date.now() + 365 * 86_400_000).toISOString();
  let seed = 42;
  const random = (below: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % below;
  };
  const edges = Array.from({ length: EDGES }, (_, index) => {
    const sub = 10 + (index % (NODES - 10));
    const iss = random(Math.min(sub, 1_000));
    const claims = { iss: `node-${iss}`, sub: `node-${sub}`, scope: { jurisdictions: ['DE'], event_types: [`type-${index % 7}`] }, iat: issuedAt, exp: expires };
    const header = Buffer.from(JSON.stringify({ alg: 'Ed25519', kid: nodeKeys[iss]!.jwk.kid })).toString('base64url');
    const signingInput = `${header}.${Buffer.from(canonicalize(claims)).toString('base64url')}`;
    const credential = { ...claims, signature: `${header}..${nodeSign(null, Buffer.from(signingInput), nodeKeys[iss]!.privateKey).toString('base64url')}` };
    const id = createHash('sha256').update(canonicalize(credential)).digest('base64url');
    return { id, iss: claims.iss, sub: claims.sub, scope: claims.scope, iat: issuedAt, nbf: issuedAt, exp: expires, kid: nodeKeys[iss]!.jwk.kid, credential };
  });
  for (let start = 0; start < EDGES; start += 2_000) {
    const chunk = edges.slice(start, start + 2_000);
    await db.query(`INSERT INTO trust.delegation_edge (id, iss, sub, document) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])`, [
      chunk.map((edge) => edge.id),
      chunk.map((edge) => edge.iss),
      chunk.map((edge) => edge.sub),
      chunk.map((edge) => JSON.stringify(edge)),
    ]);
  }

  collectGarbage();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  let bytes = 0;
  const graph = await timed(GRAPH_RUNS, async () => {
    const response = await fetch(`${base}/graph`);
    const text = await response.text();
    bytes = Buffer.byteLength(text);
    peak = Math.max(peak, process.memoryUsage().rss);
    return JSON.parse(text) as { nodes: unknown[]; edges: unknown[] };
  });
  clearInterval(sampler);
  // NODES, and the platform's own root node, which every start places (docs/trust.md).
  if (graph.last.nodes.length !== NODES + 1 || graph.last.edges.length !== EDGES) throw new Error(`graph answered ${graph.last.nodes.length} nodes, ${graph.last.edges.length} edges`);
  row('GET /graph (10,000 nodes, 20,000 edges)', graph.times, `${mb(bytes)} MB of JSON; peak RSS ${mb(peak)} MB (+${mb(peak - baseline)} MB over ${mb(baseline)} MB idle)`);
  const GRAPH_QUERY = JSON.stringify({
    query: '{ trustGraph { nodes { id kind jurisdiction keys threshold groupKey } edges { id iss sub scope iat nbf exp kid credential } revocations { subject } } }',
  });
  const graphGraphql = (url: string) => async () => (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: GRAPH_QUERY })).text();
  const [graphGateway, graphSubgraph] = await timedInTurns(GRAPH_RUNS, [graphGraphql(stack.gateway.graphqlUrl), graphGraphql(stack.subgraphUrls.trust)]);
  row('  the same in GraphQL, through the gateway', graphGateway!, 'the query the facade sends');
  row('  the same in GraphQL, straight to the trust subgraph', graphSubgraph!, 'no gateway, no facade');

  // Writes and path questions are judged against the whole graph.
  let posted = 0;
  const postEdge = await timed(GRAPH_RUNS, async () => {
    posted += 1;
    const claims = { iss: 'node-0', sub: `node-${5_000 + posted}`, scope: { jurisdictions: ['FR'] }, iat: issuedAt, exp: expires };
    const header = Buffer.from(JSON.stringify({ alg: 'Ed25519', kid: nodeKeys[0]!.jwk.kid })).toString('base64url');
    const signingInput = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const jws = `${signingInput}.${nodeSign(null, Buffer.from(signingInput), nodeKeys[0]!.privateKey).toString('base64url')}`;
    const response = await fetch(`${base}/edges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ credential: jws }),
    });
    if (response.status !== 201) throw new Error(`POST /edges: ${response.status} ${await response.text()}`);
  });
  row('POST /edges into that graph', postEdge.times, "locks and reads its issuer's ancestry and its subject, judges scope, cycle and keys there");
  const standing = await timed(GRAPH_RUNS, async () => {
    const response = await fetch(stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query($kid: String!, $at: DateTimeISO!) { trustKeyStanding(kid: $kid, at: $at) }', variables: { kid: nodeKeys[7_777]!.jwk.kid, at: new Date().toISOString() } }),
    });
    const { data } = (await response.json()) as { data: { trustKeyStanding: { standing: string } } };
    if (data.trustKeyStanding.standing !== 'valid') throw new Error(`standing ${JSON.stringify(data.trustKeyStanding)}`);
  });
  row('trustKeyStanding in that graph (GraphQL)', standing.times, 'the nodes listing the key and their ancestry read, path from a root resolved at the instant');

  const table = markdownTable(['measure', 'median ms', 'p95 ms', 'runs', 'notes'], rows);
  const budget = median(masterList.times) < 1_000 ? 'within' : 'OVER';
  const document = `# Trust service benchmark

${benchRun.report(bench)}

The whole stack runs in this one process (subgraphs, gateway, REST facade) on an embedded PostgreSQL.

${table}

GET /master-list median is ${budget} the 1 s budget. Every read re-verifies every cosignature against
the current witness set through lib/crypto's verifyBytes (OpenSSL with cached key objects, small-order
keys refused first, so it accepts nothing @noble/curves' strict mode would refuse).
Idle RSS is the whole stack's (four subgraphs, gateway, facade) with the data loaded.
`;
  console.log(document);
  writeReport(
    benchRun,
    document,
    [
      { measure: 'GET /master-list, 1,000 entries × 5 cosignatures (median)', value: `${median(masterList.times).toFixed(0)} ms`, target: '< 1 s' },
      { measure: 'GET /graph, 10,000 nodes and 20,000 edges (median)', value: `${median(graph.times).toFixed(0)} ms, ${mb(bytes)} MB` },
      { measure: 'POST /edges into that graph (median)', value: `${median(postEdge.times).toFixed(0)} ms` },
      { measure: 'trustKeyStanding in that graph (median)', value: `${median(standing.times).toFixed(0)} ms` },
    ],
    bench,
  );
} finally {
  await bench.close();
}
