/**
 * What the costliest GraphQL requests cost in CPU, one at a time, on one in-process stack with a
 * long passport (300 events, a pack, snapshots) and a trust graph: each field whose work grows with
 * the data, asked once (the figures the weights of lib/graphql/cost.ts were set from), and the
 * costliest requests the limits allow.
 *
 *   npm run bench:graphql-cost -- [rounds]    (node --import tsx/esm bench/graphql-cost.ts)
 *
 * CPU is this process's (process.cpuUsage: the gateway, the four subgraphs and the facade run in it)
 * plus PostgreSQL's (postmaster and backends, from /proc), median over the rounds.
 */
import { buildASTSchema, Kind, parse, type OperationDefinitionNode } from 'graphql';
import pg from 'pg';
import { costAnnotations, operationCost } from '../lib/graphql/cost.js';
import { lockingPostmaster } from '../lib/db/embedded-postgres.js';
import { SyntheticTrustGraph } from '../test/support/synthetic-trust-graph.js';
import { benchToken, cpuSeconds, median, openBench } from './support.js';

const ROUNDS = Number(process.argv[2] ?? 3);
const EVENTS = Number(process.env.EVENTS ?? 300);
process.env.LOG_LEVEL ??= 'warn';
const { token: WRITER, tokens } = benchToken('writer');

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
    return (await response.json()) as { data?: any; errors?: any[] };
  };
  const post = async (url: string, body: unknown) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${WRITER}` }, body: JSON.stringify(body) });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${url}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
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

  const supergraph = parse(stack.gateway.supergraphSdl);
  const schema = buildASTSchema(supergraph, { assumeValidSDL: true });
  const annotations = costAnnotations(supergraph);
  const estimate = (query: string, variables: Record<string, unknown>) => {
    const document = parse(query);
    const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)!;
    return operationCost({ schema, document, operation, variables }, annotations);
  };
  const measure = async (label: string, query: string, variables: Record<string, unknown> = {}) => {
    const node: number[] = [];
    const postgres: number[] = [];
    let errors: unknown;
    for (let round = 0; round <= ROUNDS; round += 1) {
      const nodeBefore = process.cpuUsage();
      const postgresBefore = cpuSeconds(postmaster);
      const answer = await gql(query, variables);
      const spent = process.cpuUsage(nodeBefore);
      errors = answer.errors?.[0];
      if (round === 0) continue;
      node.push((spent.user + spent.system) / 1e6);
      postgres.push(cpuSeconds(postmaster) - postgresBefore);
    }
    console.log(`| ${label} | ${estimate(query, variables)} | ${median(node).toFixed(3)} | ${median(postgres).toFixed(2)} | ${errors ? JSON.stringify(errors).slice(0, 160) : ''} |`);
  };
  console.log('| request | cost | node CPU s | PostgreSQL CPU s | error |');
  console.log('|---|---:|---:|---:|---|');
  await measure('passport { id }', 'query($id: ID!) { passport(id: $id) { id } }', { id });
  await measure('passport { verdict }', 'query($id: ID!) { passport(id: $id) { verdict } }', { id });
  await measure('passport { events }', 'query($id: ID!) { passport(id: $id) { events } }', { id });
  await measure('passport(at) { id }', 'query($id: ID!, $at: String) { passport(id: $id, at: $at) { id } }', { id, at: midway });
  await measure('passport(at) { asOf { consistencyProof } }', 'query($id: ID!, $at: String) { passport(id: $id, at: $at) { asOf { consistencyProof } } }', { id, at: midway });
  await measure('passport { credential { jwt } }', 'query($id: ID!) { passport(id: $id) { credential { jwt } } }', { id });
  await measure('passport { snapshots { chunks(8) } }', 'query($id: ID!) { passport(id: $id) { snapshots { chunks(from: 0, count: 8) } } }', { id });
  await measure('passports(10 ids) { verdict }', 'query($ids: [ID!]!) { passports(ids: $ids) { verdict } }', { ids: Array(10).fill(id) });
  await measure('10 aliases passport { verdict }', `query($id: ID!) { ${Array.from({ length: 10 }, (_, i) => `a${i}: passport(id: $id) { verdict }`).join(' ')} }`, { id });
  await measure('passports(28 ids) { verdict }', 'query($ids: [ID!]!) { passports(ids: $ids) { verdict } }', { ids: Array(28).fill(id) });
  await measure(
    '15 aliases passport(at) { asOf { consistencyProof } verdict events }',
    `query($id: ID!, $at: String) { ${Array.from({ length: 15 }, (_, i) => `a${i}: passport(id: $id, at: $at) { asOf { consistencyProof } verdict events }`).join(' ')} }`,
    { id, at: midway },
  );
  const db = new pg.Client({ connectionString: bench.databaseUrl });
  await db.connect();
  bench.defer(() => db.end());
  const graph = new SyntheticTrustGraph(db, 10);
  await graph.growTo(Number(process.env.TRUST_NODES ?? 9000));
  await db.query('VACUUM (ANALYZE) trust.trust_node, trust.trust_node_version, trust.delegation_edge');
  const kids = graph.issuers.slice(0, 1000).map((node) => graph.keys[node]!.jwk.kid);
  const at = new Date().toISOString();
  await measure('trustGraph { all }', '{ trustGraph { nodes { id keys } edges { id credential } revocations { subject } } }');
  await measure('trustGraphPage(2000)', '{ trustGraphPage(first: 2000) { nodes { id keys } edges { id credential } revocations { subject } } }');
  await measure('trustKeyStandings(1000)', 'query($q: [TrustKeyStandingQuestion!]!) { trustKeyStandings(questions: $q) { standing path { id } } }', { q: kids.map((kid) => ({ kid, at })) });
  await measure('trustKeyStandings(500)', 'query($q: [TrustKeyStandingQuestion!]!) { trustKeyStandings(questions: $q) { standing path { id } } }', {
    q: kids.slice(0, 500).map((kid) => ({ kid, at })),
  });
  await measure('trustKeyStandings(100)', 'query($q: [TrustKeyStandingQuestion!]!) { trustKeyStandings(questions: $q) { standing path { id } } }', {
    q: kids.slice(0, 100).map((kid) => ({ kid, at })),
  });
  await measure('trustKeyStanding', 'query($kid: String!, $at: DateTimeISO!) { trustKeyStanding(kid: $kid, at: $at) }', { kid: kids[0], at });
  await measure('trustKeyPath', 'query($kid: String!) { trustKeyPath(kid: $kid) }', { kid: kids[0] });
  await measure('trustRevocations', '{ trustRevocations { subject } }');
  await measure('trustAnchorBundle', '{ trustAnchorBundle }');
  await measure('trustNode', '{ trustNode(id: "node-500") { id keys } }');
  await measure('issuer adminLog(500)', '{ issuer { adminLog(first: 500) { nodes { id detail } } } }');
  await measure('snapshots(100) { chunks(8) }', '{ snapshots(first: 100) { nodes { chunks(from: 0, count: 8) } } }');
  await measure('registryRecords(500)', '{ registryRecords(kind: "model", first: 500) { nodes { id body } } }');
  await measure('issuer health', '{ issuer { health } }');
  await measure('issuerStatusList', '{ issuerStatusList(list: 0, purpose: "revocation") { jwt } }');
} finally {
  await bench.close();
}
