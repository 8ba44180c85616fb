/**
 * What GraphQL requests cost in CPU against what the cost limit counts for them (lib/graphql/cost.ts,
 * docs/ONE-GRAPH.md "What a request may cost"), on one in-process stack with a long passport (300
 * signed events, a pack, three snapshots) and a synthetic trust graph (9,000 nodes): each field whose
 * work grows with the data, asked once (the figures the weights were set from), then the costliest
 * requests the limits allow. Writes docs/benchmarks/graphql-cost.md.
 *
 *   npm run bench:graphql-cost -- [rounds]    (node --import tsx bench/graphql-cost.ts)
 *
 * CPU is this process's (process.cpuUsage: the facade, the gateway and the four subgraphs run in it)
 * and PostgreSQL's (postmaster and backends, from /proc), each the median over the rounds after one
 * to warm up. The cost is the gateway's own count of the request (operationCost over the supergraph).
 */
import { buildASTSchema, Kind, parse, type OperationDefinitionNode } from 'graphql';
import pg from 'pg';
import { lockingPostmaster } from '../lib/db/embedded-postgres.js';
import { costAnnotations, operationCost } from '../lib/graphql/cost.js';
import { SyntheticTrustGraph } from '../test/support/synthetic-trust-graph.js';
import { BenchRun, benchToken, cpuSeconds, markdownTable, median, openBench, postWith, writeReport } from './support.js';

const ROUNDS = Number(process.argv[2] ?? 3);
const EVENTS = 300;
const TRUST_NODES = 9000;
process.env.LOG_LEVEL ??= 'warn';
const { token: WRITER, tokens } = benchToken('writer');
const benchRun = new BenchRun('graphql-cost', 'node --import tsx bench/graphql-cost.ts');

interface Measured {
  label: string;
  cost: number;
  node: number;
  postgres: number;
  error?: string;
}

const bench = await openBench('graphql-cost');
try {
  const stack = await bench.startStack(tokens);
  const postmaster = await lockingPostmaster(bench.clusterDir);
  if (postmaster === undefined) throw new Error('no postmaster');
  const gql = async (query: string, variables: Record<string, unknown> = {}, token?: string) => {
    const response = await fetch(stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
  };
  const post = postWith(WRITER);

  // A passport of EVENTS events, appended through the graph as a writer would (50 a request), a pack and snapshots.
  const modelSchema = { type: 'object', properties: { chemistry: { enum: ['LFP', 'NMC'] } }, required: ['chemistry'] };
  await post(`${stack.facade.baseUrls.registry}/`, { kind: 'model', id: 'cost-battery', body: { title: 'cost-battery', schema: modelSchema } });
  const created = await post(`${stack.facade.baseUrls.issuer}/passports`, {
    identity: 'https://id.gs1.org/01/09520123456788/21/SN-COST-1',
    type_ref: { id: 'cost-battery', version: 1 },
    config_vector: { chemistry: 'LFP' },
  });
  const id: string = created.passport_id;
  const payload = { eventTime: '2025-01-01T00:00:00.000Z', eventTimeZoneOffset: '+01:00', action: 'OBSERVE', bizStep: 'inspecting', epcList: ['https://id.gs1.org/01/09520123456788/21/SN-1'] };
  const appends = Array.from({ length: 50 }, (_, i) => `e${i}: appendPassportEvent(passportId: $id, type: "ObjectEvent", payload: $payload) { status }`).join(' ');
  for (let done = 0; done < EVENTS; done += 50) {
    const answer = await gql(`mutation Append($id: ID!, $payload: JSONObject!) { ${appends} }`, { id, payload }, WRITER);
    if (answer.errors) throw new Error(JSON.stringify(answer.errors[0]));
  }
  await post(`${stack.facade.baseUrls.issuer}/passports/${id}/pack`, {});
  const midway = new Date(Date.now() - 1).toISOString();
  for (let i = 0; i < 3; i += 1) await post(`${stack.facade.baseUrls.archive}/snapshots`, { passport_id: id });

  // A trust graph grown in SQL (test/support/synthetic-trust-graph.ts), as bench/trust-scale.ts grows its own.
  const db = new pg.Client({ connectionString: bench.databaseUrl });
  await db.connect();
  bench.defer(() => db.end());
  const graph = new SyntheticTrustGraph(db, 10);
  await graph.growTo(TRUST_NODES);
  await db.query('VACUUM (ANALYZE) trust.trust_node, trust.trust_node_version, trust.delegation_edge');
  const at = new Date().toISOString();
  const questions = (count: number) => graph.issuers.slice(0, count).map((node) => ({ kid: graph.keys[node]!.jwk.kid, at }));
  const records = (await db.query<{ n: string }>('SELECT (SELECT count(*) FROM trust.trust_node) + (SELECT count(*) FROM trust.delegation_edge) AS n')).rows[0]!.n;

  const supergraph = parse(stack.gateway.supergraphSdl);
  const schema = buildASTSchema(supergraph, { assumeValidSDL: true });
  const annotations = costAnnotations(supergraph);
  const estimate = (query: string, variables: Record<string, unknown>) => {
    const document = parse(query);
    const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)!;
    return operationCost({ schema, document, operation, variables }, annotations);
  };
  const measure = async (label: string, query: string, variables: Record<string, unknown> = {}): Promise<Measured> => {
    const node: number[] = [];
    const postgres: number[] = [];
    let error: string | undefined;
    for (let round = 0; round <= ROUNDS; round += 1) {
      const nodeBefore = process.cpuUsage();
      const postgresBefore = cpuSeconds(postmaster);
      const answer = await gql(query, variables);
      const spent = process.cpuUsage(nodeBefore);
      error = answer.errors?.[0]?.message;
      if (round === 0) continue;
      node.push((spent.user + spent.system) / 1e6);
      postgres.push(cpuSeconds(postmaster) - postgresBefore);
    }
    const measured = { label, cost: estimate(query, variables), node: median(node), postgres: median(postgres), ...(error ? { error } : {}) };
    console.error(`${label}: cost ${measured.cost}, ${measured.node.toFixed(3)} s node, ${measured.postgres.toFixed(2)} s PostgreSQL${error ? `, ${error.slice(0, 120)}` : ''}`);
    return measured;
  };
  const aliases = (count: number, field: string) => Array.from({ length: count }, (_, i) => `a${i}: ${field}`).join(' ');

  const baseline = await measure('`passport(id:) { id }`', 'query($id: ID!) { passport(id: $id) { id } }', { id });
  const fields = [
    baseline,
    await measure('`passport(id:) { verdict }`', 'query($id: ID!) { passport(id: $id) { verdict } }', { id }),
    await measure('`passports(ids: 10) { verdict }`', 'query($ids: [ID!]!) { passports(ids: $ids) { verdict } }', { ids: Array(10).fill(id) }),
    await measure('`passport(id:) { events }`', 'query($id: ID!) { passport(id: $id) { events } }', { id }),
    await measure('`passport(id:, at:) { id }`', 'query($id: ID!, $at: String) { passport(id: $id, at: $at) { id } }', { id, at: midway }),
    await measure('`passport(id:, at:) { asOf { consistencyProof } }`', 'query($id: ID!, $at: String) { passport(id: $id, at: $at) { asOf { consistencyProof } } }', { id, at: midway }),
    await measure('`passports(ids: 100) { credential { jwt } }`', 'query($ids: [ID!]!) { passports(ids: $ids) { credential { jwt } } }', { ids: Array(100).fill(id) }),
    await measure('`trustKeyStandings(questions: 100)`', 'query($q: [TrustKeyStandingQuestion!]!) { trustKeyStandings(questions: $q) { standing path { id } } }', { q: questions(100) }),
    await measure('`trustKeyStandings(questions: 490)`', 'query($q: [TrustKeyStandingQuestion!]!) { trustKeyStandings(questions: $q) { standing path { id } } }', { q: questions(490) }),
    await measure('`trustKeyStandings(questions: 1000)`', 'query($q: [TrustKeyStandingQuestion!]!) { trustKeyStandings(questions: $q) { standing path { id } } }', { q: questions(1000) }),
    await measure(`\`trustGraph\` (${records} records)`, '{ trustGraph { nodes { id keys } edges { id credential } revocations { subject } } }'),
    await measure('`trustGraphPage(first: 2000)`', '{ trustGraphPage(first: 2000) { nodes { id keys } edges { id credential } revocations { subject } } }'),
    await measure('`trustKeyPath`', 'query($kid: String!) { trustKeyPath(kid: $kid) }', { kid: questions(1)[0]!.kid }),
  ];
  const costliest = [
    await measure('`passports(ids: 26) { verdict }`', 'query($ids: [ID!]!) { passports(ids: $ids) { verdict } }', { ids: Array(26).fill(id) }),
    await measure('26 aliases of `passport(id:) { verdict }`', `query($id: ID!) { ${aliases(26, 'passport(id: $id) { verdict }')} }`, { id }),
    await measure(
      '14 aliases of `passport(id:, at:) { asOf { consistencyProof } verdict events }`',
      `query($id: ID!, $at: String) { ${aliases(14, 'passport(id: $id, at: $at) { asOf { consistencyProof } verdict events }')} }`,
      {
        id,
        at: midway,
      },
    ),
    await measure(
      '`passports(ids: 74) { events credential { jwt } signingKeys { standingAtFirstUse { standing path { id } } standingAtLastUse { standing } } }`',
      'query($ids: [ID!]!) { passports(ids: $ids) { events credential { jwt } signingKeys { standingAtFirstUse { standing path { id } } standingAtLastUse { standing } } } }',
      { ids: Array(74).fill(id) },
    ),
    await measure('`trustKeyStandings(questions: 490) { standing path { id } }`', 'query($q: [TrustKeyStandingQuestion!]!) { trustKeyStandings(questions: $q) { standing path { id } } }', {
      q: questions(490),
    }),
    await measure('2 aliases of `trustGraph`', `{ ${aliases(2, 'trustGraph { nodes { id keys } edges { id credential } revocations { subject } }')} }`),
    await measure('60 aliases of `trustKeyPath`', `query($kid: String!) { ${aliases(60, 'trustKeyPath(kid: $kid)')} }`, { kid: questions(1)[0]!.kid }),
    await measure("the issue's `passports(ids: 500) { verdict }` under 60 aliases", `query($ids: [ID!]!) { ${aliases(60, 'passports(ids: $ids) { verdict }')} }`, { ids: Array(500).fill(id) }),
  ];

  const seconds = (value: number) => value.toFixed(value < 0.1 ? 3 : 2);
  const perUnit = (row: Measured) => (row.error || row.cost <= 1 ? '' : (((row.node - baseline.node) * 1e6) / row.cost).toFixed(1));
  const fieldTable = markdownTable(
    ['request', 'cost', 'CPU s (node)', 'CPU s (PostgreSQL)', 'µs of CPU a unit (less the first row)'],
    fields.map((row) => [row.label, row.error ? `${row.cost} (refused)` : String(row.cost), row.error ? '' : seconds(row.node), row.error ? '' : seconds(row.postgres), perUnit(row)]),
    ['left', 'right', 'right', 'right', 'right'],
  );
  const costliestTable = markdownTable(
    ['request', 'cost', 'CPU s (node)', 'CPU s (PostgreSQL)', 'answer'],
    costliest.map((row) => [
      row.label,
      String(row.cost),
      row.error?.startsWith('The operation costs') ? '' : seconds(row.node),
      row.error?.startsWith('The operation costs') ? '' : seconds(row.postgres),
      row.error ? row.error.replace(/\(the weight.*?\);/, '…;') : 'answered',
    ]),
    ['left', 'right', 'right', 'right', 'left'],
  );
  const allowed = costliest.filter((row) => !row.error?.startsWith('The operation costs'));
  const worst = allowed.reduce((a, b) => (a.node + a.postgres >= b.node + b.postgres ? a : b));
  const document = [
    '# GraphQL request cost',
    '',
    benchRun.report(bench),
    `- A passport of ${EVENTS} events (appended through the graph), a pack and three snapshots; a synthetic trust graph of ${TRUST_NODES.toLocaleString('en')} nodes (${records} nodes and edges); each request sent ${ROUNDS + 1} times to the gateway, the first to warm up, medians of the others`,
    '',
    'Fields whose work grows with the data, one request each, against what the cost limit counts for them (`lib/graphql/cost.ts`; a unit is meant to be about 10 µs of CPU, so GRAPHQL_MAX_COST 200,000 about 2 s). A refused request costs next to nothing.',
    '',
    fieldTable,
    '',
    'The costliest requests the limits allow (GRAPHQL_MAX_COST 200,000; aliases 60), and the one the issue found:',
    '',
    costliestTable,
    '',
  ].join('\n');
  console.log(`\n${fieldTable}\n\n${costliestTable}\n`);
  writeReport(
    benchRun,
    document,
    [
      { measure: `costliest request the limits allow (${worst.label.replaceAll('`', '')})`, value: `${(worst.node + worst.postgres).toFixed(2)} s of CPU`, target: '≈ 2 s' },
      { measure: `verdict of ${EVENTS} events, of 10 in one request`, value: `${(((fields[2]!.node - baseline.node) / 10) * 1000).toFixed(0)} ms of CPU` },
    ],
    bench,
  );
} finally {
  await bench.close();
}
