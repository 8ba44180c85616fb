/**
 * Graph writes lock the rows they read, not the whole graph: writers in disjoint parts of the graph
 * all succeed together, and two delegations that would together close a cycle never both land. The
 * graph version, counted by triggers as rows are written, misses none of them.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.js';
import { compactCredential, DAY, fromNow, newKey, seconds, type Key } from './support.js';

let platform: TestStack;
const keyIat = seconds(new Date(Date.now() - 30 * DAY));

const post = (path: string, body: unknown) => platform.rest('trust', path, { body, as: 'admin' });
const delegate = async (iss: string, sub: string, key: Key) => post('/edges', { credential: await compactCredential(claims(iss, sub), key) });
const claims = (iss: string, sub: string) => ({ iss, sub, scope: {}, iat: fromNow(-3_600_000), exp: fromNow(365 * DAY) });
const graph = async () => (await platform.rest('trust', '/graph')).body as { nodes: { id: string }[]; edges: { iss: string; sub: string }[] };

async function node(id: string, kind: string, key: Key): Promise<void> {
  const response = await post('/nodes', { id, kind, keys: [{ ...key.jwk, iat: keyIat }] });
  expect(response.status).toBe(201);
}

beforeAll(async () => {
  platform = await startTestStack();
});
afterAll(() => platform?.stop());

describe('concurrent delegations', () => {
  it('in 12 disjoint subtrees all land, each once, and every delegate stands', async () => {
    const subtrees = 12;
    const roots = await Promise.all(Array.from({ length: subtrees }, () => newKey()));
    const authorities = await Promise.all(Array.from({ length: subtrees }, () => newKey()));
    await Promise.all(roots.flatMap((key, i) => [node(`c-root-${i}`, 'root', key), node(`c-authority-${i}`, 'authority', authorities[i]!)]));
    const answers = await Promise.all(roots.map((key, i) => delegate(`c-root-${i}`, `c-authority-${i}`, key)));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));

    const edges = (await graph()).edges.filter((edge) => edge.iss.startsWith('c-root-'));
    expect(edges).toHaveLength(subtrees);
    const questions = authorities.map((key) => `{ kid: "${key.jwk.kid}", at: "${new Date().toISOString()}" }`).join(', ');
    const standings = await platform.graphql(`{ trustKeyStandings(questions: [${questions}]) { standing rootId node { id } } }`);
    expect(standings.data.trustKeyStandings).toEqual(authorities.map((_, i) => ({ standing: 'valid', rootId: `c-root-${i}`, node: { id: `c-authority-${i}` } })));

    // The graph version counted every one of these concurrent writes: it is the number of node
    // documents, edges and revocations stored.
    const db = new pg.Client({ connectionString: platform.databaseUrl.replace(/\?.*$/, '') });
    await db.connect();
    try {
      const { rows } = await db.query(
        'SELECT ((SELECT count(*) FROM trust.trust_node_version) + (SELECT count(*) FROM trust.delegation_edge) + (SELECT count(*) FROM trust.revocation))::text AS stored',
      );
      expect((await platform.rest('trust', '/graph')).headers.get('etag')).toBe(`"trust-graph-${rows[0].stored}"`);
    } finally {
      await db.end();
    }
  });

  it('that would together close a cycle: one lands, the other is refused as a CYCLE, never both', async () => {
    const rootKey = await newKey();
    await node('k-root', 'root', rootKey);
    for (let round = 0; round < 5; round += 1) {
      const [aKey, bKey] = await Promise.all([newKey(), newKey()]);
      const [a, b] = [`k-a-${round}`, `k-b-${round}`];
      await node(a, 'authority', aKey);
      await node(b, 'authority', bKey);
      expect((await delegate('k-root', a, rootKey)).status).toBe(201);
      expect((await delegate('k-root', b, rootKey)).status).toBe(201);

      const [ab, ba] = await Promise.all([delegate(a, b, aKey), delegate(b, a, bKey)]);
      expect([ab.status, ba.status].sort()).toEqual([201, 422]);
      expect((ab.status === 422 ? ab : ba).body).toMatchObject({ code: 'CYCLE' });
      expect((await graph()).edges.filter((edge) => [a, b].includes(edge.iss))).toHaveLength(1);
    }
  });
});

describe('the locked read of a delegation (trust_locked_graph_part)', () => {
  it('that waited for a write into its part reads and locks the part as that write left it', async () => {
    const sql = () => new pg.Client({ connectionString: platform.databaseUrl.replace(/\?.*$/, ''), options: '-c search_path=trust' });
    const [writer, delegation, probe] = [sql(), sql(), sql()];
    await Promise.all([writer.connect(), delegation.connect(), probe.connect()]);
    try {
      const ids = ['l-above', 'l-middle', 'l-below'];
      await writer.query(`INSERT INTO trust_node (id, kind, document) SELECT id, 'authority', jsonb_build_object('id', id, 'kind', 'authority', 'keys', '[]'::jsonb) FROM unnest($1::text[]) AS id`, [
        ids,
      ]);
      const part = (client: pg.Client, seeds: string[]) => client.query<{ nodes: { id: string }[]; edges: { iss: string }[] }>('SELECT nodes, edges FROM trust_locked_graph_part($1)', [seeds]);

      // A write of l-above -> l-middle holds the part around them, and adds the edge.
      await writer.query('BEGIN');
      expect((await part(writer, ['l-above', 'l-middle'])).rows[0]!.nodes.map((node) => node.id)).toEqual(['l-above', 'l-middle']);
      await writer.query(`INSERT INTO delegation_edge (id, iss, sub, document) VALUES ('l-edge', 'l-above', 'l-middle', '{"id":"l-edge","iss":"l-above","sub":"l-middle"}')`);
      // A delegation l-middle -> l-below reads its part: before that commit l-above is not in it.
      await delegation.query('BEGIN');
      const waiting = part(delegation, ['l-middle', 'l-below']);
      // Committed only once the delegation waits for the lock, so that the read after the wait is what is tested.
      const backend = (delegation as unknown as { processID: number }).processID;
      for (let polls = 0; ; polls += 1) {
        const activity = await probe.query('SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [backend]);
        if (activity.rows[0]?.wait_event_type === 'Lock') break;
        if (polls > 200) throw new Error('the delegation never waited for the lock');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await writer.query('COMMIT');
      // It waited for l-middle's lock, then read again and found l-above, which it locked too.
      const read = (await waiting).rows[0]!;
      expect(read.nodes.map((node) => node.id)).toEqual(['l-above', 'l-below', 'l-middle']);
      expect(read.edges.map((edge) => edge.iss)).toEqual(['l-above']);
      for (const id of ids) {
        await expect(probe.query('SELECT id FROM trust_node WHERE id = $1 FOR UPDATE NOWAIT', [id]), id).rejects.toMatchObject({ code: '55P03' });
      }
      await delegation.query('COMMIT');
      expect((await probe.query('SELECT id FROM trust_node WHERE id = $1 FOR UPDATE NOWAIT', ['l-above'])).rowCount).toBe(1);
    } finally {
      await Promise.all([writer.end(), delegation.end(), probe.end()]);
    }
  });
});
