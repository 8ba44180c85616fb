/**
 * GET /graph read page by page (issue 17 item 3): a graph of a few thousand nodes streamed by the
 * REST facade equals the one-shot trustGraph answer member for member, sent chunked; the pages of
 * trustGraphPage are one snapshot, whatever is written between them; bad cursors are 400s. The
 * graph version is GET /graph's ETag: a client holding it revalidates for one record read, and any
 * write (node, key, edge, revocation) gives a new one.
 *
 * The bulk of the graph goes in by SQL, as bench/trust-scale.ts builds its graphs (a few thousand
 * POSTs would take minutes); the writes between pages go through the API like anyone's.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawGet } from '../support/raw-http.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { compactCredential, DAY, fromNow, newKey, seconds, type Key } from './support.js';

const NODES = 3000;
const keyIat = seconds(new Date(Date.now() - 30 * DAY));

let platform: TestStack;
let db: pg.Client;
let rootKey: Key;

const NODE = 'id kind jurisdiction keys threshold group_key: groupKey';
const EDGE = 'id iss sub scope iat nbf exp kid credential';
const REVOCATION = 'subject reason effective_at: effectiveAt recorded_at: recordedAt retroactive attestation';
const ONE_SHOT = `{ trustGraph { nodes { ${NODE} } edges { ${EDGE} } revocations { ${REVOCATION} } } }`;
const PAGE = `query($first: Int, $after: String) { trustGraphPage(first: $first, after: $after) { version nodes { ${NODE} } edges { ${EDGE} } revocations { ${REVOCATION} } pageInfo { hasNextPage endCursor } } }`;

type Graph = { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[]; revocations: Record<string, unknown>[] };

/** The REST body's members: absent optional ones left out, as GET /graph has them. */
const withoutNulls = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null));
const asRest = (graph: Graph): Graph => ({ nodes: graph.nodes.map(withoutNulls), edges: graph.edges, revocations: graph.revocations.map(withoutNulls) });

async function oneShot(): Promise<Graph> {
  const { data, errors } = await platform.graphql<{ trustGraph: Graph }>(ONE_SHOT);
  expect(errors).toBeUndefined();
  return data!.trustGraph;
}

async function page(first: number, after?: string): Promise<Graph & { version: string; pageInfo: { hasNextPage: boolean; endCursor: string | null } }> {
  const { data, errors } = await platform.graphql(PAGE, { first, after });
  expect(errors).toBeUndefined();
  return data.trustGraphPage;
}

/** GET /graph (or another URL) over plain HTTP: status, headers and the body as it arrived. */
const getGraph = (headers: Record<string, string> = {}, url = `${platform.base('trust')}/graph`) => rawGet(url, headers);

const post = (path: string, body: unknown) => platform.rest('trust', path, { body, as: 'admin' });

/** Records (nodes, edges and revocations) stored now, counted by SQL. */
const stored = async () =>
  Number((await db.query('SELECT (SELECT count(*) FROM trust.trust_node) + (SELECT count(*) FROM trust.delegation_edge) + (SELECT count(*) FROM trust.revocation) AS n')).rows[0].n);

beforeAll(async () => {
  platform = await startTestStack();
  db = new pg.Client({ connectionString: platform.databaseUrl.replace(/\?.*$/, '') });
  await db.connect();
  rootKey = await newKey();
  expect((await post('/nodes', { id: 'p-root', kind: 'root', keys: [{ ...rootKey.jwk, iat: keyIat }] })).status).toBe(201);
  // Issuers delegated by the root, with credentials signed by jose, stored as the service stores them.
  const issuers = await Promise.all(Array.from({ length: NODES }, () => newKey()));
  const edges = await Promise.all(
    issuers.map(async (_, index) => {
      const claims = { iss: 'p-root', sub: `p-issuer-${String(index).padStart(5, '0')}`, scope: {}, iat: fromNow(-3_600_000), exp: fromNow(365 * DAY) };
      return { id: `p-edge-${index}`, ...claims, nbf: claims.iat, kid: rootKey.jwk.kid, credential: await compactCredential(claims, rootKey) };
    }),
  );
  await db.query('INSERT INTO trust.trust_node (id, kind, document) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])', [
    edges.map((edge) => edge.sub),
    edges.map(() => 'issuer'),
    issuers.map((key, index) => JSON.stringify({ id: edges[index]!.sub, kind: 'issuer', jurisdiction: 'DE', keys: [{ ...key.jwk, iat: keyIat }] })),
  ]);
  await db.query('INSERT INTO trust.delegation_edge (id, iss, sub, document) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])', [
    edges.map((edge) => edge.id),
    edges.map((edge) => edge.iss),
    edges.map((edge) => edge.sub),
    edges.map((edge) => JSON.stringify(edge)),
  ]);
  await db.query(
    `INSERT INTO trust.revocation (subject, document, recorded_at) SELECT s, jsonb_build_object('subject', s, 'reason', 'keyCompromise', 'effective_at', now(), 'recorded_at', now(), 'retroactive', false), now()
     FROM unnest($1::text[]) AS s`,
    [Array.from({ length: 40 }, (_, index) => `p-issuer-${String(index * 7).padStart(5, '0')}`)],
  );
}, 300_000);
afterAll(async () => {
  await db?.end();
  await platform?.stop();
});

describe('GET /graph, streamed', () => {
  it('equals the one-shot trustGraph answer member for member, sent chunked without a content-length', async () => {
    const expected = asRest(await oneShot());
    // The seeded nodes, their root, the platform's own keys and the default operator's node delegated from them (placed at start).
    expect(expected.nodes).toHaveLength(NODES + 3);
    expect(expected.edges).toHaveLength(NODES + 1);
    expect(expected.revocations).toHaveLength(40);
    const response = await getGraph();
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['content-length']).toBeUndefined();
    expect(response.headers['transfer-encoding']).toBe('chunked');
    // The same bytes the one-shot body had, member order and all (so the same members too).
    expect(response.body).toBe(JSON.stringify(expected));
  });
});

describe('trustGraphPage', () => {
  it('pages the graph in the snapshot of the first page: writes between pages do not appear half-way', async () => {
    const before = await oneShot();
    const first = await page(700);
    expect(first.nodes).toHaveLength(700);
    expect(first.pageInfo.hasNextPage).toBe(true);

    // Between pages: a new node, a key merged into a node on a later page, a delegation to the new
    // node (a new edge) and a revocation.
    const [late, added] = [await newKey(), await newKey()];
    expect((await post('/nodes', { id: 'p-issuer-02999', keys: [{ ...late.jwk, iat: keyIat }] })).status).toBe(200);
    expect((await post('/nodes', { id: 'p-issuer-zz', kind: 'issuer', keys: [{ ...added.jwk, iat: keyIat }] })).status).toBe(201);
    const credential = await compactCredential({ iss: 'p-root', sub: 'p-issuer-zz', scope: {}, iat: fromNow(-3_600_000), exp: fromNow(365 * DAY) }, rootKey);
    expect((await post('/edges', { credential })).status).toBe(201);
    await db.query(
      `INSERT INTO trust.revocation (subject, document, recorded_at) VALUES ('p-issuer-00001', jsonb_build_object('subject', 'p-issuer-00001', 'reason', 'superseded', 'effective_at', now(), 'recorded_at', now(), 'retroactive', false), now())`,
    );

    const pages = [first];
    while (pages.at(-1)!.pageInfo.endCursor) pages.push(await page(700, pages.at(-1)!.pageInfo.endCursor!));
    expect(pages.length).toBe(Math.ceil((NODES + 1 + NODES + 40) / 700));
    // Every page names the version of the snapshot they read, not of the graph as it is now.
    expect(new Set(pages.map((p) => p.version))).toEqual(new Set([first.version]));
    const concatenated = { nodes: pages.flatMap((p) => p.nodes), edges: pages.flatMap((p) => p.edges), revocations: pages.flatMap((p) => p.revocations) };
    expect(concatenated).toEqual(before);

    // A new read sees them all.
    const after = await oneShot();
    expect(after.nodes.find((node) => node.id === 'p-issuer-02999')!.keys).toHaveLength(2);
    expect(after.nodes.map((node) => node.id)).toContain('p-issuer-zz');
    expect(after.edges).toHaveLength(NODES + 2);
    expect(after.revocations).toHaveLength(41);
    const fresh = await page(2000);
    expect(fresh.nodes).toEqual(after.nodes.slice(0, 2000));
    // Four writes, each a row: a node document (twice), an edge and a revocation.
    expect(BigInt(fresh.version) - BigInt(first.version)).toBe(4n);
  });

  it('stops exactly at the end: a page that fills up on the last record has no next page', async () => {
    // Every record stored, counted by SQL (the one-shot answer holds as many: see 'a graph larger than one answer').
    const total = await stored();
    const pages = [await page(2000)];
    while (pages.at(-1)!.pageInfo.endCursor) pages.push(await page(2000, pages.at(-1)!.pageInfo.endCursor!));
    expect(pages.reduce((sum, p) => sum + p.nodes.length + p.edges.length + p.revocations.length, 0)).toBe(total);
    expect(pages.at(-1)!.pageInfo).toEqual({ hasNextPage: false, endCursor: null });
  });

  it.each([
    ['text that is no cursor', 'not-a-cursor'],
    ['an unknown section', Buffer.from(JSON.stringify(['1:2:', '7', 'keys', null])).toString('base64url')],
    ['a snapshot that is not one', Buffer.from(JSON.stringify(['1:2:x', '7', 'nodes', null])).toString('base64url')],
    ['a version that is no number', Buffer.from(JSON.stringify(['1:2:', '7x', 'nodes', null])).toString('base64url')],
    ['a cursor without a version (of a release before versions)', Buffer.from(JSON.stringify(['1:2:', 'nodes', null])).toString('base64url')],
    ['an edge key that is not [instant, id]', Buffer.from(JSON.stringify(['1:2:', '7', 'edges', 'p-edge-1'])).toString('base64url')],
    ['a revocation key that is no number', Buffer.from(JSON.stringify(['1:2:', '7', 'revocations', "1'"])).toString('base64url')],
  ])('refuses %s as after with 400 INVALID_CURSOR', async (_name, after) => {
    const { data, errors } = await platform.graphql(PAGE, { first: 10, after });
    expect(data).toBeNull();
    expect(errors![0].extensions).toMatchObject({ code: 'INVALID_CURSOR' });
  });

  it.each([0, -1, 2001])('refuses first = %i with 400 INVALID_QUERY', async (first) => {
    const { errors } = await platform.graphql(PAGE, { first });
    expect(errors![0].extensions).toMatchObject({ code: 'INVALID_QUERY' });
  });
});

describe('the graph version, as the ETag of GET /graph', () => {
  it('lets a client holding the graph revalidate it for one record read (304, no body), and gives a new one after any write', async () => {
    const statements = () => platform.stack.sqlStatements().trust;
    const held = await getGraph();
    const tag = held.headers.etag as string;
    // The number of node documents, edges and revocations stored, those put in by SQL included.
    const { rows } = await db.query(
      'SELECT ((SELECT count(*) FROM trust.trust_node_version) + (SELECT count(*) FROM trust.delegation_edge) + (SELECT count(*) FROM trust.revocation))::text AS stored',
    );
    expect(tag).toBe(`"trust-graph-${rows[0].stored}"`);
    expect(held.headers['cache-control']).toBe('no-cache');

    const before = statements();
    const unchanged = await getGraph({ 'if-none-match': tag });
    expect([unchanged.status, unchanged.body, unchanged.headers.etag]).toEqual([304, '', tag]);
    // The snapshot with its version, and the rows of the first page's sections: never the whole graph.
    expect(statements() - before).toBeLessThanOrEqual(4);
    expect((await getGraph({ 'if-none-match': `"other", W/${tag}` })).status).toBe(304);
    expect((await getGraph({ 'if-none-match': '"trust-graph-1"' })).status).toBe(200);

    // Each kind of write makes the held copy stale: a key merged into a node, a new node, an edge, a revocation.
    const seen = [tag];
    const stale = async () => {
      const answer = await getGraph({ 'if-none-match': seen.join(', ') });
      expect(answer.status).toBe(200);
      expect(seen).not.toContain(answer.headers.etag);
      // Streamed on from a first page of one record: the same document an unconditional GET sends.
      const whole = await getGraph();
      expect([whole.headers.etag, whole.body]).toEqual([answer.headers.etag, answer.body]);
      seen.push(answer.headers.etag as string);
      return JSON.parse(answer.body) as Graph;
    };
    const [merged, added] = [await newKey(), await newKey()];
    expect((await post('/nodes', { id: 'p-issuer-00002', keys: [{ ...merged.jwk, iat: keyIat }] })).status).toBe(200);
    expect((await stale()).nodes.find((node) => node.id === 'p-issuer-00002')!.keys).toHaveLength(2);
    expect((await post('/nodes', { id: 'p-issuer-etag', kind: 'issuer', keys: [{ ...added.jwk, iat: keyIat }] })).status).toBe(201);
    await stale();
    const credential = await compactCredential({ iss: 'p-root', sub: 'p-issuer-etag', scope: {}, iat: fromNow(-3_600_000), exp: fromNow(365 * DAY) }, rootKey);
    expect((await post('/edges', { credential })).status).toBe(201);
    await stale();
    expect((await post('/revocations', { subject: 'p-issuer-etag', reason: 'superseded' })).status).toBe(201);
    const latest = await stale();
    expect(latest.revocations.map((revocation) => revocation.subject)).toContain('p-issuer-etag');
    // A write refused changes nothing, the version included.
    expect((await post('/edges', { credential: 'not a credential' })).status).toBe(422);
    expect((await getGraph({ 'if-none-match': seen.at(-1)! })).status).toBe(304);
    // Ten reads of the whole graph: on a loaded machine 30 s ran out.
  }, 120_000);
});

describe('a graph larger than one answer', () => {
  /**
   * Adds `count` keyless issuer nodes by SQL, numbered from `from`, a thousand a statement (each its
   * own transaction): every node row fires the version trigger, whose write count updates one row
   * again and again within a transaction, at a cost that grows with the square of the rows in it
   * (34,000 nodes in two statements took PostgreSQL ~8 CPU-s, in statements of 1,000 ~3).
   */
  const addNodes = async (from: number, count: number) => {
    for (let start = from; start < from + count; start += 1_000) {
      await db.query(
        `INSERT INTO trust.trust_node (id, kind, document)
         SELECT 'big-' || i, 'issuer', jsonb_build_object('id', 'big-' || i, 'kind', 'issuer', 'keys', '[]'::jsonb) FROM generate_series($1::int, $2::int - 1) AS i`,
        [start, Math.min(start + 1_000, from + count)],
      );
    }
  };

  it('is answered whole by trustGraph up to 20,000 records, refused with GRAPH_TOO_LARGE from the next one (on the statistics alone once clearly larger); pages and GET /graph read it all', async () => {
    const missing = 20_000 - (await stored());
    await addNodes(0, missing);
    const whole = await oneShot();
    expect(whole.nodes.length + whole.edges.length + whole.revocations.length).toBe(20_000);

    await addNodes(missing, 1);
    const statements = () => platform.stack.sqlStatements().trust;
    const before = statements();
    const refused = await platform.graphql(ONE_SHOT);
    const readToRefuse = statements() - before;
    expect(refused.data).toBeNull();
    expect(refused.errors![0].extensions).toMatchObject({ code: 'GRAPH_TOO_LARGE', problem: { status: 400 } });
    expect(refused.errors![0].message).toMatch(/trustGraphPage/);

    const streamed = await getGraph();
    expect(streamed.status).toBe(200);
    const body = JSON.parse(streamed.body) as Graph;
    expect(body.nodes.length + body.edges.length + body.revocations.length).toBe(20_001);

    // Twice the limit by PostgreSQL's statistics: refused at once, on the estimate alone.
    await addNodes(missing + 1, 20_000);
    await db.query('ANALYZE trust.trust_node, trust.delegation_edge, trust.revocation');
    const fastBefore = statements();
    const refusedAtOnce = await platform.graphql(ONE_SHOT);
    expect(refusedAtOnce.errors![0].extensions).toMatchObject({ code: 'GRAPH_TOO_LARGE' });
    expect(statements() - fastBefore).toBe(1);
    expect(readToRefuse).toBeGreaterThan(1);
  }, 120_000);
});

describe('a delegation cycle put in by SQL (an operator, another tool)', () => {
  it('does not keep a standing question from ending: the walk up the ancestry keeps each node once', async () => {
    const [first, second] = [await newKey(), await newKey()];
    await db.query('INSERT INTO trust.trust_node (id, kind, document) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])', [
      ['cycle-a', 'cycle-b'],
      ['authority', 'authority'],
      [first, second].map((key, index) => JSON.stringify({ id: `cycle-${'ab'[index]}`, kind: 'authority', keys: [{ ...key.jwk, iat: keyIat }] })),
    ]);
    await db.query('INSERT INTO trust.delegation_edge (id, iss, sub, document) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])', [
      ['cycle-ab', 'cycle-ba'],
      ['cycle-a', 'cycle-b'],
      ['cycle-b', 'cycle-a'],
      ['ab', 'ba'].map((pair) =>
        JSON.stringify({ id: `cycle-${pair}`, iss: `cycle-${pair[0]}`, sub: `cycle-${pair[1]}`, scope: {}, iat: fromNow(-DAY), nbf: fromNow(-DAY), exp: fromNow(DAY), credential: 'x' }),
      ),
    ]);
    const { data, errors } = await platform.graphql('query($kid: String!, $at: DateTimeISO!) { trustKeyStanding(kid: $kid, at: $at) }', { kid: first.jwk.kid, at: new Date().toISOString() });
    expect(errors).toBeUndefined();
    // No root reaches either node.
    expect(data.trustKeyStanding).toMatchObject({ kid: first.jwk.kid, standing: 'unknown' });
  });
});
