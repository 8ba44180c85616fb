/**
 * The plans of the hot statements (issue 30): with tables large enough that the planner prefers an
 * index where one serves (20,000 passports of 3 events, a snapshot of one in 50, 10,000 registry
 * records, a trust graph of 1,000 nodes), every read path of the national-scale benchmark and the
 * event append are driven through the whole stack, every SQL statement they send is captured at the
 * PostgreSQL driver (pg's Client.query, under Prisma and the raw statements alike, so a new
 * statement cannot escape), and each is EXPLAINed with its own parameters: none may plan a
 * sequential scan of a table that grows with passports, events, snapshots, records or trust nodes.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRegistryRecords } from '../support/national/registry-records.js';
import { nationalPassportId } from '../support/national/layout.js';
import { insertShapeCopies } from '../support/national/shape-copies.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { SyntheticTrustGraph } from '../support/synthetic-trust-graph.js';
import { appendEvent, createModel, createPassport, objectEvent, PAYLOADS } from './support.js';

const PASSPORTS = 20_000;
const MODEL = 'hot-plans-battery';
/** Tables whose rows grow with the passports, their events, snapshots, registry records or the trust graph. */
const GROWING = new Set(['passport', 'passport_event', 'admin_log', 'snapshot', 'snapshot_chunk', 'record', 'record_version', 'trust_node', 'trust_node_version', 'delegation_edge', 'revocation']);
// status_list is not among them: one row per 131,072 passports and purpose (16 at a million), read whole.

interface Captured {
  text: string;
  values: unknown[];
}

let platform: TestStack;
let db: pg.Client;
let template: string;
const captured: Captured[] = [];
let capturing = false;
const originalQuery = pg.Client.prototype.query;

/** The statements one path sends, driven `times` with different passports. */
async function statementsOf(drive: () => Promise<unknown>): Promise<Captured[]> {
  captured.length = 0;
  capturing = true;
  try {
    await drive();
  } finally {
    capturing = false;
  }
  return captured.filter((statement) => /^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b/i.test(statement.text));
}

/** The relations a plan tree reads with a sequential scan. */
function seqScansIn(node: Record<string, unknown>, found: string[] = []): string[] {
  if (node['Node Type'] === 'Seq Scan') found.push(String(node['Relation Name']));
  for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) seqScansIn(child, found);
  return found;
}

const isWrite = (text: string) => /^\s*(INSERT|UPDATE|DELETE)\b/i.test(text) || /\bINSERT\s+INTO\b/i.test(text);

/**
 * The plans a statement runs with, its parameters bound. A read runs in a transaction rolled back,
 * under auto_explain with nested statements: the plans of the statements inside the functions it
 * calls (the trust graph's) come to this session as notices too. A write is EXPLAINed without
 * running (it has run once already: again, it would break a key).
 */
async function plansOf(statement: Captured): Promise<Record<string, unknown>[]> {
  if (isWrite(statement.text)) {
    const { rows } = await db.query<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }>({ text: `EXPLAIN (FORMAT JSON) ${statement.text}`, values: statement.values });
    return rows[0]!['QUERY PLAN'].map((plan) => plan.Plan);
  }
  const plans: Record<string, unknown>[] = [];
  const onNotice = (notice: { message?: string }) => {
    if (notice.message?.includes('plan:')) plans.push((JSON.parse(notice.message.slice(notice.message.indexOf('{'))) as { Plan: Record<string, unknown> }).Plan);
  };
  db.on('notice', onNotice);
  try {
    await db.query('BEGIN');
    await db.query({ text: statement.text, values: statement.values });
  } finally {
    await db.query('ROLLBACK');
    db.off('notice', onNotice);
  }
  expect(plans.length, `auto_explain reported no plan for ${statement.text.slice(0, 200)}`).toBeGreaterThan(0);
  return plans;
}

/** Every relation a plan tree reads. */
function relationsIn(node: Record<string, unknown>, found = new Set<string>()): Set<string> {
  if (typeof node['Relation Name'] === 'string') found.add(node['Relation Name']);
  for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) relationsIn(child, found);
  return found;
}

beforeAll(async () => {
  // Records every statement pg sends while a path is driven, and sends it on unchanged.
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (capturing) {
      const [config, values] = args as [string | { text: string; values?: unknown[] }, unknown];
      if (typeof config === 'string') captured.push({ text: config, values: Array.isArray(values) ? values : [] });
      else if (config && typeof config.text === 'string') captured.push({ text: config.text, values: config.values ?? (Array.isArray(values) ? values : []) });
    }
    return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pg.Client.prototype.query;
  platform = await startTestStack();
  await createModel(platform, MODEL);
  template = (await createPassport(platform, MODEL)).passport_id;
  for (const type of ['activated', 'ObjectEvent', 'ObjectEvent']) {
    expect((await appendEvent(platform, template, type, type === 'activated' ? PAYLOADS.activated!() : objectEvent())).status).toBe(201);
  }
  const snapshot = await platform.rest('archive', '/snapshots', { body: { passport_id: template }, as: 'writer' });
  expect(snapshot.status, snapshot.text).toBe(201);
  db = new pg.Client({ connectionString: platform.databaseUrl.split('?')[0] });
  await db.connect();
  await insertShapeCopies(db, { from: 0, to: PASSPORTS, templatePassportId: template, snapshotEvery: 50, templateSnapshotId: snapshot.body.id });
  await insertRegistryRecords(db, { from: 1, to: 10_000, versions: 2, idSql: `'hot-' || lpad(n::text, 6, '0')` });
  await new SyntheticTrustGraph(db).growTo(1_000);
  for (const table of ['registry.record', 'registry.record_version', 'trust.trust_node', 'trust.delegation_edge']) await db.query(`ANALYZE ${table}`);
  // Every plan this session's statements run with, nested ones included, comes back as a notice.
  await db.query(`LOAD 'auto_explain'`);
  for (const setting of ['auto_explain.log_min_duration = 0', 'auto_explain.log_nested_statements = on', 'auto_explain.log_level = notice', 'auto_explain.log_format = json']) {
    await db.query(`SET ${setting}`);
  }
}, 120_000);

afterAll(async () => {
  pg.Client.prototype.query = originalQuery;
  await db?.end();
  await platform?.stop();
});

const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => nationalPassportId(from + i));

const PATHS: [string, () => Promise<unknown>][] = [
  ['GET /issuer/passports/{id}', () => Promise.all(ids(100, 3).map((id) => platform.rest('issuer', `/passports/${id}`)))],
  ['verdict', () => Promise.all(ids(200, 2).map((id) => platform.rest('issuer', `/passports/${id}/verdict`)))],
  ['verification page online check', () => fetch(`${new URL(platform.base('issuer')).origin}/verify/latest/${nationalPassportId(300)}`)],
  ['GET /archive/snapshots?passport_id=', () => Promise.all(ids(400, 2).map((id) => platform.rest('archive', `/snapshots?passport_id=${id}`)))],
  ['GET /registry/items/{id}', () => platform.rest('registry', '/items/hot-000005')],
  [
    'GraphQL passports(ids:) of 10 across services',
    () =>
      platform.graphql(`query($ids: [ID!]!) { passports(ids: $ids) { id status typeRecord { id version kind } snapshots { id size } signingKeys { kid standingAtLastUse { standing revoked } } } }`, {
        ids: ids(500, 10),
      }),
  ],
  ['GET /issuer/passports/{id}?at=', () => platform.rest('issuer', `/passports/${nationalPassportId(600)}?at=${new Date().toISOString()}`)],
  ['event append', () => appendEvent(platform, template, 'ObjectEvent', objectEvent())],
];

/** Relations the paths' plans read, nested statements included. */
const read = new Set<string>();

describe('the hot statements at size', () => {
  it.each(PATHS)('%s plans no sequential scan of a growing table', async (_name, drive) => {
    const statements = await statementsOf(drive);
    expect(statements.length).toBeGreaterThan(0);
    const scans: string[] = [];
    for (const statement of statements) {
      for (const plan of await plansOf(statement)) {
        for (const relation of relationsIn(plan)) read.add(relation);
        for (const relation of seqScansIn(plan)) if (GROWING.has(relation)) scans.push(`${relation}: ${statement.text.replace(/\s+/g, ' ').slice(0, 300)}`);
      }
    }
    expect(scans).toEqual([]);
  });

  it("saw the plans of every growing table the paths read, the trust graph functions' own statements included", () => {
    for (const table of ['passport', 'passport_event', 'snapshot', 'record', 'record_version', 'trust_node']) expect([...read], table).toContain(table);
  });
});
