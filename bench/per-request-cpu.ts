/**
 * The platform's own CPU per request, by kind of request, on one in-process stack (as the tests and
 * `npm start` run it): REST facade → gateway → subgraph(s) → PostgreSQL.
 *
 *   npm run bench:per-request -- [rounds] [scale]    (node --import tsx/esm bench/per-request-cpu.ts)
 *
 * Kinds: GET of an unknown passport (404, a new id every request, as test/ops/metrics.test.ts asks
 * 10,000), GET of a passport (200), a GraphQL query across the four subgraphs posted to the gateway,
 * an event appended through the facade, a passport creation refused for want of a token (401), and the facade's 404 query sent to the gateway and straight
 * to the issuer subgraph (what each hop adds). KINDS=<name start>,… picks some; CONNECTIONS=1 asks
 * one request at a time, as most tests do (the gateway then has nothing to batch). METRICS=off runs the
 * stack with metrics off (bench/support.ts passes METRICS through), to compare with the default on. tsx/esm rather
 * than tsx: tsx's CommonJS hooks would bill every require() of a package at run time (Apollo's
 * createHash requires crypto per call) to the platform. autocannon runs in a process of its own, so this
 * process's CPU (process.cpuUsage) is the platform's alone; PostgreSQL's (postmaster and backends) is
 * read from /proc. Each round runs every kind once; the figures are medians over the rounds, in ms of
 * CPU per request. Judge CPU, not wall: the machine may be shared. With CPU_PROFILE=<folder>, the
 * measured rounds of each kind are profiled (V8's sampling profiler) into <folder>/<kind>.cpuprofile.
 *
 * TRACED=ab (with tracing on: an OTLP endpoint and OTEL_TRACES_SAMPLER=parentbased_always_off) runs
 * each kind twice a round, its requests carrying a caller's `traceparent` that is sampled, then one
 * that is not: what a sampled request costs against an unsampled one, in one process, the two
 * measured minutes apart rather than in runs far apart on a machine whose speed drifts. The flag
 * decides at a subgraph only: the facade and the gateway sample at their own ratio
 * (docs/OPERATIONS.md, "Traces"), 0 under parentbased_always_off.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { lockingPostmaster } from '../lib/db/embedded-postgres.js';
import { autocannonLoad, benchToken, cpuSeconds, median, openBench, postWith } from './support.js';

const ROUNDS = Number(process.argv[2] ?? 5);
/** Requests per round of each kind, times `scale`: a count rather than a duration, so a slow stretch of a shared machine changes no round's work. */
const SCALE = Number(process.argv[3] ?? 1);
const AMOUNTS = {
  'GET passport 404': 2000,
  'GET passport 200': 1000,
  'GraphQL across 4 subgraphs': 400,
  'POST event': 400,
  'POST passport refused': 2000,
  '404 query at the gateway': 2000,
  '404 query at the subgraph': 2000,
};
// As the tests run (vitest.config.ts): a line per request would be much of what a request costs.
process.env.LOG_LEVEL ??= 'warn';
// CONNECTIONS=1 is how most tests ask: one request at a time, so the gateway has nothing to batch.
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 8);
const PASSPORTS = 40;
const { token: WRITER, tokens } = benchToken('writer');

const bench = await openBench('per-request-cpu');
try {
  const stack = await bench.startStack(tokens);
  const issuer = stack.facade.baseUrls.issuer;
  const postmaster = await lockingPostmaster(bench.clusterDir);
  if (postmaster === undefined) throw new Error('no postmaster');
  const post = postWith(WRITER);
  const schema = { type: 'object', properties: { chemistry: { enum: ['LFP', 'NMC'] } }, required: ['chemistry'] };
  await post(`${stack.facade.baseUrls.registry}/`, { kind: 'model', id: 'bench-battery', body: { title: 'bench-battery', schema } });
  const ids: string[] = [];
  for (let index = 0; index < PASSPORTS; index += 1) {
    const created = await post(`${issuer}/passports`, {
      identity: `https://id.gs1.org/01/09520123456788/21/SN-CPU-${index}`,
      type_ref: { id: 'bench-battery', version: 1 },
      config_vector: { chemistry: 'LFP' },
    });
    ids.push(created.passport_id);
  }
  const issuerPath = new URL(issuer).pathname;
  let unknown = 0;
  const unknownId = () => `00000000-0000-4000-8000-${String((unknown += 1)).padStart(12, '0')}`;
  const unknownIds = (count: number) => Array.from({ length: count }, () => `${issuerPath}/passports/${unknownId()}`);
  // What the facade asks for GET /passports/{id} (rest-facade/routes/issuer/operations.ts), sent to the gateway or straight to the subgraph.
  const passportQuery = (count: number) =>
    Array.from({ length: count }, () =>
      JSON.stringify({
        query: `query Passport($id: ID!) { passport(id: $id) { passport_id: id status core manifest log_head: logHead capability_class: capabilityClass log_size: logSize latest_pack: latestPack predecessor_id: predecessorId } }`,
        variables: { id: unknownId() },
      }),
    );
  const query = `query Across($ids: [ID!]!) { passports(ids: $ids) { id status typeRecord { id version kind } snapshots { id } signingKeys { role kid standingAtFirstUse { standing } } } }`;
  const event = {
    type: 'ObjectEvent',
    payload: { eventTime: '2025-01-01T00:00:00.000Z', eventTimeZoneOffset: '+01:00', action: 'OBSERVE', bizStep: 'inspecting', epcList: ['https://id.gs1.org/01/09520123456788/21/SN-1'] },
  };
  const origin = new URL(issuer).origin;
  const kinds = {
    'GET passport 404': (count: number) => ({ url: origin, paths: unknownIds(count), pick: 'request' as const, expect: 'non2xx' }),
    'GET passport 200': () => ({ url: origin, paths: ids.map((id) => `${issuerPath}/passports/${id}`), pick: 'request' as const, expect: '2xx' }),
    'GraphQL across 4 subgraphs': () => ({
      url: stack.gateway.graphqlUrl,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      bodies: ids.map((id) => JSON.stringify({ query, variables: { ids: [id] } })),
      expect: '2xx',
    }),
    '404 query at the gateway': (count: number) => ({ url: stack.gateway.graphqlUrl, method: 'POST', headers: { 'content-type': 'application/json' }, bodies: passportQuery(count), expect: '2xx' }),
    '404 query at the subgraph': (count: number) => ({ url: stack.subgraphUrls.issuer, method: 'POST', headers: { 'content-type': 'application/json' }, bodies: passportQuery(count), expect: '2xx' }),
    'POST event': () => ({
      url: origin,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${WRITER}` },
      body: JSON.stringify(event),
      paths: ids.map((id) => `${issuerPath}/passports/${id}/events`),
      pick: 'request' as const,
      expect: '2xx',
    }),
    // A write refused at the facade for want of a token (401): what refusing, and logging the refusal, costs.
    'POST passport refused': () => ({
      url: `${issuer}/passports`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ identity: 'https://id.gs1.org/01/09520123456788/21/SN-REFUSED', type_ref: { id: 'bench-battery', version: 1 }, config_vector: { chemistry: 'LFP' } }),
      expect: 'non2xx',
    }),
  };
  type Kind = keyof typeof kinds;
  // KINDS=a,b picks some (by the start of their names).
  const picked = (Object.keys(kinds) as Kind[]).filter((kind) => !process.env.KINDS || process.env.KINDS.split(',').some((start) => kind.startsWith(start)));
  // TRACED=ab: each kind as a sampled and as an unsampled caller's request (W3C flags 01 and 00).
  const traced = process.env.TRACED === 'ab';
  const variants = traced ? (['sampled', 'unsampled'] as const) : ([undefined] as const);
  const chosen = picked.flatMap((kind) => variants.map((variant) => ({ kind, variant, label: variant ? `${kind}, ${variant}` : kind })));
  const traceparent = (variant: 'sampled' | 'unsampled') => `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-${variant === 'sampled' ? '01' : '00'}`;
  const profiles = process.env.CPU_PROFILE;
  const session = profiles ? new Session() : undefined;
  session?.connect();
  await session?.post('Profiler.enable');
  await session?.post('Profiler.setSamplingInterval', { interval: 200 });
  const figures = new Map<string, { node: number[]; user: number[]; postgres: number[]; perSecond: number[] }>();
  for (let round = 0; round <= ROUNDS; round += 1) {
    for (const { kind, variant, label } of chosen) {
      const amount = Math.round((round === 0 ? 0.5 : SCALE) * AMOUNTS[kind]);
      const { expect, ...made } = kinds[kind](amount);
      const load = variant ? { ...made, headers: { ...('headers' in made ? made.headers : {}), traceparent: traceparent(variant) } } : made;
      if (session && round > 0) await session.post('Profiler.start');
      const nodeBefore = process.cpuUsage();
      const postgresBefore = cpuSeconds(postmaster);
      const statementsBefore = Object.values(stack.sqlStatements()).reduce((sum, count) => sum + count, 0);
      const result = await autocannonLoad({ ...load, connections: CONNECTIONS, seconds: 600, amount });
      const node = process.cpuUsage(nodeBefore);
      const postgres = cpuSeconds(postmaster) - postgresBefore;
      const statements = Object.values(stack.sqlStatements()).reduce((sum, count) => sum + count, 0) - statementsBefore;
      if (session && round > 0) {
        const { profile } = await session.post('Profiler.stop');
        writeFileSync(join(profiles!, `${label.replace(/\W+/g, '-')}-${round}.cpuprofile`), JSON.stringify(profile));
      }
      const wrong = expect === '2xx' ? result.non2xx : result.requests - result.non2xx;
      if (wrong || result.errors || result.timeouts) throw new Error(`${label}: ${wrong} unexpected statuses, ${result.errors} errors, ${result.timeouts} timeouts of ${result.requests}`);
      // Round 0 warms up.
      if (round === 0) continue;
      const entry = figures.get(label) ?? { node: [], user: [], postgres: [], perSecond: [] };
      entry.node.push((node.user + node.system) / 1000 / result.requests);
      entry.user.push(node.user / 1000 / result.requests);
      entry.postgres.push((postgres * 1000) / result.requests);
      entry.perSecond.push(result.perSecond);
      figures.set(label, entry);
      console.error(
        `round ${round} ${label}: ${entry.node.at(-1)!.toFixed(3)} ms node, ${entry.postgres.at(-1)!.toFixed(3)} ms postgres, ${result.requests} requests, ${(statements / result.requests).toFixed(2)} SQL statements each`,
      );
    }
  }
  console.log(`CPU per request, ms (median of ${ROUNDS} rounds, ${CONNECTIONS} connections):`);
  console.log('| kind | node (platform process) | of which user | PostgreSQL | requests/s |');
  console.log('|---|---|---|---|---|');
  for (const [kind, entry] of figures)
    console.log(`| ${kind} | ${median(entry.node).toFixed(3)} | ${median(entry.user).toFixed(3)} | ${median(entry.postgres).toFixed(3)} | ${median(entry.perSecond).toFixed(0)} |`);
  if (traced) {
    // Each round's sampled run against the unsampled one just after it: the machine's drift between rounds cancels.
    console.log("\nA sampled request against an unsampled one, node CPU (median over the rounds of each round's ratio):");
    for (const kind of picked) {
      const sampled = figures.get(`${kind}, sampled`)!.node;
      const unsampled = figures.get(`${kind}, unsampled`)!.node;
      const ratios = sampled.map((value, round) => value / unsampled[round]!);
      console.log(`- ${kind}: ×${median(ratios).toFixed(3)} (rounds ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}); +${(median(sampled) - median(unsampled)).toFixed(3)} ms`);
    }
  }
} finally {
  await bench.close();
}
