/**
 * The trust graph end to end: POST /nodes, POST /edges with credentials made by jose, GET /graph,
 * key standings and the TrustNode entity through the gateway, signed anchor bundle, admin log.
 */
import * as jose from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../lib/crypto/jcs.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { compactCredential, DAY, fromNow, newKey, seconds, signedJsonCredential, type Key } from './support.js';

let platform: TestStack;
let rootKey: Key;
let authorityKey: Key;
let issuerKey: Key;
let strangerKey: Key;
const keyIat = seconds(new Date(Date.now() - 30 * DAY));

const post = (path: string, body: unknown, as: 'writer' | 'admin' | null = 'admin') => platform.rest('trust', path, { body, ...(as && { as }) });
const graph = async () => (await platform.rest('trust', '/graph')).body as { nodes: any[]; edges: any[]; revocations: any[] };

/** Claims of a delegation valid from an hour ago for a year. */
const claims = (iss: string, sub: string, scope: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  iss,
  sub,
  scope,
  iat: fromNow(-3_600_000),
  exp: fromNow(365 * DAY),
  ...extra,
});

beforeAll(async () => {
  platform = await startTestStack();
  [rootKey, authorityKey, issuerKey, strangerKey] = await Promise.all([newKey(), newKey('P-256'), newKey(), newKey()]);
});
afterAll(() => platform?.stop());

describe('POST /nodes', () => {
  it('creates nodes (201) and merges keys by kid on upsert (200), never dropping one', async () => {
    const root = await post('/nodes', { id: 'root-eu', kind: 'root', keys: [{ ...rootKey.jwk, iat: keyIat }] });
    expect(root.status).toBe(201);
    expect(root.body).toEqual({ id: 'root-eu', kind: 'root', keys: [{ ...rootKey.jwk, iat: keyIat }] });
    expect((await post('/nodes', { id: 'auth-de', kind: 'authority', jurisdiction: 'de', keys: [{ ...authorityKey.jwk, iat: keyIat }] })).status).toBe(201);
    const issuer = await post('/nodes', { id: 'acme', kind: 'issuer', jurisdiction: 'DE', keys: [{ ...issuerKey.jwk, iat: keyIat }] });
    expect(issuer.status).toBe(201);

    const second = await newKey();
    const merged = await post('/nodes', { id: 'acme', keys: [{ ...second.jwk, iat: keyIat }] });
    expect(merged.status).toBe(200);
    expect(merged.body.keys.map((key: { kid: string }) => key.kid)).toEqual([issuerKey.jwk.kid, second.jwk.kid]);
    expect(merged.body).toMatchObject({ kind: 'issuer', jurisdiction: 'DE' });
    // Restating keys without the others keeps them all.
    const restated = await post('/nodes', { id: 'acme', keys: [{ ...issuerKey.jwk, iat: keyIat }] });
    expect(restated.body.keys).toHaveLength(2);
  });

  it('answers 409 for the same kid with other key material, or a changed kind, and changes nothing', async () => {
    const before = await graph();
    const other = await newKey();
    const conflict = await post('/nodes', { id: 'acme', keys: [{ ...other.jwk, kid: issuerKey.jwk.kid, iat: keyIat }] });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ status: 409, code: 'KEY_CONFLICT' });
    expect(conflict.headers.get('content-type')).toBe('application/problem+json');
    const changedIat = await post('/nodes', { id: 'acme', keys: [{ ...issuerKey.jwk, iat: keyIat + 1 }] });
    expect(changedIat.body.code).toBe('KEY_CONFLICT');
    expect((await post('/nodes', { id: 'acme', kind: 'root' })).body.code).toBe('NODE_CONFLICT');
    expect(await graph()).toEqual(before);
  });

  it.each([
    ['a private key member', () => ({ id: 'bad', kind: 'issuer', keys: [{ ...issuerKey.jwk, d: 'AAAA', iat: keyIat }] })],
    ['an RFC 3339 iat (keys carry NumericDate)', () => ({ id: 'bad', kind: 'issuer', keys: [{ ...issuerKey.jwk, iat: '2026-01-01T00:00:00Z' }] })],
    ['an unknown kind', () => ({ id: 'bad', kind: 'emperor' })],
    ['an id with a space', () => ({ id: 'bad id', kind: 'issuer' })],
    ['a threshold on a non-quorum', () => ({ id: 'bad', kind: 'issuer', threshold: 2 })],
    ['a key that is not an object', () => ({ id: 'bad', kind: 'issuer', keys: [7] })],
    ['text PostgreSQL cannot store', () => ({ id: 'bad', kind: 'issuer', keys: [{ ...issuerKey.jwk, iat: keyIat, revoked: { revoked_at: keyIat, reason: 'x\u0000' } }] })],
    ['a group key that is text', () => ({ id: 'bad', kind: 'quorum', threshold: 1, group_key: 'key' })],
  ])('refuses %s with 422 and stores nothing', async (_name, body) => {
    const response = await post('/nodes', body());
    expect(response.status).toBe(422);
    expect(response.body.code).toMatch(/^INVALID_(NODE|KEY)$/);
    expect((await graph()).nodes.map((node) => node.id)).not.toContain('bad');
  });

  it.each([
    ['not JSON', '{"id": '],
    ['an array', [1, 2]],
    ['an unknown member', { id: 'bad', kind: 'issuer', colour: 'red' }],
    ['an ill-typed threshold', { id: 'bad', kind: 'quorum', threshold: 'three' }],
  ])('answers %s with 400, never a 5xx', async (_name, body) => {
    const response = await post('/nodes', body);
    expect(response.status).toBe(400);
    expect((await graph()).nodes.map((node) => node.id)).not.toContain('bad');
  });

  it("is the platform admin's: 401 without a token, 403 for a writer, the admin writes", async () => {
    expect((await post('/nodes', { id: 'x', kind: 'issuer' }, null)).status).toBe(401);
    const bad = await platform.rest('trust', '/nodes', { body: { id: 'x', kind: 'issuer' }, headers: { authorization: 'Bearer nope' } });
    expect(bad.status).toBe(401);
    expect(bad.body.code).toBe('INVALID_TOKEN');
    const writer = await post('/nodes', { id: 'by-writer', kind: 'witness' }, 'writer');
    expect([writer.status, writer.body.code]).toEqual([403, 'INSUFFICIENT_ROLE']);
    expect((await graph()).nodes.map((node) => node.id)).not.toContain('by-writer');
    expect((await post('/nodes', { id: 'by-admin', kind: 'witness' }, 'admin')).status).toBe(201);
  });
});

describe('POST /edges', () => {
  let rootToAuthority: Record<string, unknown>;
  let authorityToIssuer: string;

  it('adds a signed-JSON credential and a compact JWS, both made by jose, with the credential kept verbatim', async () => {
    rootToAuthority = await signedJsonCredential(claims('root-eu', 'auth-de', { jurisdictions: ['DE', 'FR'] }), rootKey);
    const first = await post('/edges', rootToAuthority);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ iss: 'root-eu', sub: 'auth-de', kid: rootKey.jwk.kid, scope: { jurisdictions: ['DE', 'FR'] } });
    expect(first.body.credential).toEqual(rootToAuthority);
    expect(first.body.id).toBe(Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonicalize(rootToAuthority)))).toString('base64url'));

    authorityToIssuer = await compactCredential(claims('auth-de', 'acme', { jurisdictions: ['DE'], event_types: ['repair', 'recycle'] }), authorityKey);
    const second = await post('/edges', { credential: authorityToIssuer });
    expect(second.status).toBe(201);
    expect(second.body.credential).toBe(authorityToIssuer);
    expect(second.body.id).toBe(Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(authorityToIssuer))).toString('base64url'));
  });

  it('answers 200 with the stored edge when the same credential is sent again', async () => {
    const before = await graph();
    const again = await post('/edges', { credential: authorityToIssuer });
    expect(again.status).toBe(200);
    expect(again.body.credential).toBe(authorityToIssuer);
    expect((await graph()).edges).toHaveLength(before.edges.length);
  });

  it('answers the stored edge for a credential sent again even once it would no longer pass, and adds nothing', async () => {
    const frenchKey = await newKey();
    const frenchKeyJwk = { ...frenchKey.jwk, iat: keyIat };
    expect((await post('/nodes', { id: 'auth-fr', kind: 'authority', keys: [frenchKeyJwk] })).status).toBe(201);
    expect((await post('/nodes', { id: 'recycler', kind: 'issuer', keys: [{ ...(await newKey()).jwk, iat: keyIat }] })).status).toBe(201);
    expect((await post('/edges', { credential: await compactCredential(claims('root-eu', 'auth-fr'), rootKey) })).status).toBe(201);
    const delegation = await compactCredential(claims('auth-fr', 'recycler'), frenchKey);
    const stored = await post('/edges', { credential: delegation });
    expect(stored.status).toBe(201);
    // auth-fr's key turns out compromised since before the delegation was signed.
    const revokedAt = seconds(new Date(Date.now() - 2 * DAY));
    expect((await post('/nodes', { id: 'auth-fr', keys: [{ ...frenchKeyJwk, revoked: { revoked_at: revokedAt, reason: 'keyCompromise' } }] })).status).toBe(200);
    const before = await graph();
    const again = await post('/edges', { credential: delegation });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(stored.body);
    // A new credential of that key is checked, and refused.
    const fresh = await post('/edges', { credential: await compactCredential(claims('auth-fr', 'recycler', {}, { nbf: fromNow(-60_000) }), frenchKey) });
    expect(fresh.body).toMatchObject({ status: 422, code: 'REVOKED_KEY' });
    expect(await graph()).toEqual(before);
  });

  describe('refuses a failing credential with 422, its reason as code, and adds nothing', () => {
    const cases: [string, () => Promise<unknown>][] = [
      ['MALFORMED_CREDENTIAL', async () => 'not.a.jws'],
      ['MALFORMED_CREDENTIAL', async () => signedJsonCredential({ ...claims('root-eu', 'acme'), colour: 'red' }, rootKey)],
      ['UNKNOWN_ISSUER', async () => compactCredential(claims('nobody', 'acme'), rootKey)],
      ['UNKNOWN_SUBJECT', async () => compactCredential(claims('root-eu', 'nobody'), rootKey)],
      ['BAD_SIGNATURE', async () => compactCredential(claims('root-eu', 'acme'), strangerKey, { kid: rootKey.jwk.kid })],
      ['BAD_SIGNATURE', async () => ({ ...(await signedJsonCredential(claims('root-eu', 'acme'), rootKey)), sub: 'auth-de' })],
      ['EXPIRED', async () => compactCredential(claims('root-eu', 'acme', {}, { iat: fromNow(-3 * DAY), exp: fromNow(-DAY) }), rootKey)],
      ['NOT_YET_VALID', async () => compactCredential(claims('root-eu', 'acme', {}, { nbf: fromNow(DAY) }), rootKey)],
      ['KEY_NOT_CURRENT', async () => compactCredential(claims('root-eu', 'acme', {}, { iat: fromNow(-60 * DAY) }), rootKey)],
      ['WIDENED_SCOPE', async () => compactCredential(claims('auth-de', 'acme', { jurisdictions: ['DE', 'IT'] }), authorityKey)],
      ['WIDENED_SCOPE', async () => compactCredential(claims('acme', 'by-admin', {}), issuerKey)],
      ['CYCLE', async () => compactCredential(claims('auth-de', 'root-eu', { jurisdictions: ['DE'] }), authorityKey)],
    ];
    it.each(cases.map(([code, make], index) => [`${code} (${index})`, code, make] as const))('%s', async (_name, code, make) => {
      const before = await graph();
      const response = await post('/edges', { credential: await make() });
      expect(response.status).toBe(422);
      expect(response.body).toMatchObject({ status: 422, code });
      expect(await graph()).toEqual(before);
    });

    it('REVOKED_KEY: signed by a key revoked before the credential was issued', async () => {
      const revokedKey = await newKey();
      const revokedAt = seconds(new Date(Date.now() - 2 * DAY));
      expect((await post('/nodes', { id: 'root-eu', keys: [{ ...revokedKey.jwk, iat: keyIat, revoked: { revoked_at: revokedAt, reason: 'keyCompromise' } }] })).status).toBe(200);
      const before = await graph();
      const response = await post('/edges', { credential: await compactCredential(claims('root-eu', 'acme'), revokedKey) });
      expect(response.body).toMatchObject({ status: 422, code: 'REVOKED_KEY' });
      expect(await graph()).toEqual(before);
    });
  });

  it('answers 400 for a body that is not JSON and 401 without a token', async () => {
    expect((await post('/edges', '{')).status).toBe(400);
    expect((await post('/edges', { credential: authorityToIssuer }, null)).status).toBe(401);
  });
});

describe('concurrent writers', () => {
  it('keep every key of concurrent upserts of one node', async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => newKey()));
    const responses = await Promise.all(keys.map((key) => post('/nodes', { id: 'busy', kind: 'witness', keys: [{ ...key.jwk, iat: keyIat }] })));
    expect(responses.map((response) => response.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    const busy = (await graph()).nodes.find((node) => node.id === 'busy');
    expect(busy.keys.map((key: { kid: string }) => key.kid).sort()).toEqual(keys.map((key) => key.jwk.kid).sort());
  });

  it('never let two delegations that close a cycle both in', async () => {
    const [leftKey, rightKey] = await Promise.all([newKey(), newKey()]);
    for (const [id, key] of [
      ['left', leftKey],
      ['right', rightKey],
    ] as const) {
      expect((await post('/nodes', { id, kind: 'authority', keys: [{ ...key.jwk, iat: keyIat }] })).status).toBe(201);
      expect((await post('/edges', { credential: await compactCredential(claims('root-eu', id), rootKey) })).status).toBe(201);
    }
    const [toRight, toLeft] = await Promise.all([
      post('/edges', { credential: await compactCredential(claims('left', 'right'), leftKey) }),
      post('/edges', { credential: await compactCredential(claims('right', 'left'), rightKey) }),
    ]);
    expect([toRight.status, toLeft.status].sort()).toEqual([201, 422]);
    expect([toRight, toLeft].find((response) => response.status === 422)!.body.code).toBe('CYCLE');
  });
});

describe('GET /graph', () => {
  it('returns every node and edge with credentials verbatim, enough to resolve a path offline', async () => {
    const { nodes, edges } = await graph();
    expect(nodes.map((node) => node.id).sort()).toEqual(['acme', 'auth-de', 'auth-fr', 'busy', 'by-admin', 'left', 'operator:default', 'platform', 'recycler', 'right', 'root-eu']);
    // Resolve root -> auth-de -> acme with jose alone, from the graph's own data.
    const byId = new Map(nodes.map((node) => [node.id, node]));
    let current = 'acme';
    const chain: string[] = [];
    while (byId.get(current)!.kind !== 'root') {
      const edge = edges.find((candidate) => candidate.sub === current)!;
      const issuer = byId.get(edge.iss)!;
      const header = jose.decodeProtectedHeader(typeof edge.credential === 'string' ? edge.credential : edge.credential.signature);
      const jwk = issuer.keys.find((key: { kid: string }) => key.kid === header.kid);
      const key = await jose.importJWK({ ...jwk, iat: undefined }, header.alg);
      if (typeof edge.credential === 'string') await jose.compactVerify(edge.credential, key);
      else {
        const { signature, ...plain } = edge.credential;
        const [protectedHeader, , sig] = signature.split('.');
        await jose.flattenedVerify({ protected: protectedHeader, payload: Buffer.from(canonicalize(plain)).toString('base64url'), signature: sig }, key);
      }
      chain.unshift(edge.iss);
      current = edge.iss;
    }
    expect(chain).toEqual(['root-eu', 'auth-de']);
  });
});

describe('in the federated graph', () => {
  it('answers the key standing of the contract: valid with its path, unknown, not yet valid, revoked', async () => {
    const query = 'query($kid: String!, $at: DateTimeISO!) { trustKeyStanding(kid: $kid, at: $at) }';
    const { edges } = await graph();
    const valid = await platform.graphql(query, { kid: issuerKey.jwk.kid, at: new Date().toISOString() });
    expect(valid.errors).toBeUndefined();
    expect(valid.data.trustKeyStanding).toMatchObject({ kid: issuerKey.jwk.kid, standing: 'valid', node_id: 'acme' });
    expect(valid.data.trustKeyStanding.path).toEqual([edges.find((edge) => edge.sub === 'auth-de')!.id, edges.find((edge) => edge.sub === 'acme')!.id]);
    const unknown = await platform.graphql(query, { kid: strangerKey.jwk.kid, at: new Date().toISOString() });
    expect(unknown.data.trustKeyStanding.standing).toBe('unknown');
    const early = await platform.graphql(query, { kid: issuerKey.jwk.kid, at: new Date((keyIat - 10) * 1000).toISOString() });
    expect(early.data.trustKeyStanding.standing).toBe('not_yet_valid');

    const revoked = await post('/revocations', { subject: `acme#${issuerKey.jwk.kid}`, reason: 'keyCompromise' });
    expect(revoked.status).toBe(201);
    // GET /graph carries it too, so a verifier resolves paths offline with revocations applied.
    expect((await graph()).revocations).toEqual([revoked.body]);
    const after = await platform.graphql(query, { kid: issuerKey.jwk.kid, at: fromNow(1000) });
    expect(after.data.trustKeyStanding).toMatchObject({ standing: 'revoked', node_id: 'acme' });
    const before = await platform.graphql(query, { kid: issuerKey.jwk.kid, at: fromNow(-60_000) });
    expect(before.data.trustKeyStanding.standing).toBe('valid');
  });

  it("plans the statements of a key-standing read once per connection, not at every read (the database's functions keep generic plans)", async () => {
    const standing = await platform.graphql('query($kid: String!) { trustKeyStanding(kid: $kid, at: "2030-01-01T00:00:00Z") }', { kid: issuerKey.jwk.kid });
    expect(standing.errors).toBeUndefined();
    // The statement the trust service sent, run again on a connection of our own that reports each plan PostgreSQL makes.
    const client = new pg.Client({ connectionString: platform.databaseUrl.split('?')[0] });
    await client.connect();
    try {
      const [read] = (
        await client.query(`SELECT query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%trust_graph_part%' ORDER BY query_start DESC LIMIT 1`)
      ).rows;
      let planned = 0;
      client.on('notice', (notice) => {
        if (notice.message?.startsWith('PLANNER STATISTICS')) planned += 1;
      });
      await client.query('SET log_planner_stats = on');
      await client.query('SET client_min_messages = log');
      const reads = 20;
      for (let time = 0; time < reads; time += 1) {
        const { rows } = await client.query(String(read?.query), [[issuerKey.jwk.kid]]);
        expect(rows[0].nodes.map((node: { id: string }) => node.id)).toContain('acme');
      }
      await client.query('SET log_planner_stats = off');
      // Each read's own statement is planned (sent unprepared); the functions' few statements once, not three or more at every read.
      expect(planned - reads).toBeLessThan(reads / 2);
    } finally {
      await client.end();
    }
  });

  it('serves nodes and edges and resolves TrustNode entities by key, in one batch', async () => {
    const result = await platform.graphql('{ trustGraph { nodes { id kind keys } edges { id iss sub credential } } trustNode(id: "acme") { id kind jurisdiction } }');
    expect(result.errors).toBeUndefined();
    // The test's six delegations and the platform's to its default operator.
    expect(result.data.trustGraph.edges).toHaveLength(8);
    expect(result.data.trustNode).toEqual({ id: 'acme', kind: 'issuer', jurisdiction: 'DE' });
    const entities = await fetch(platform.stack.subgraphUrls.trust, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query($r: [_Any!]!) { _entities(representations: $r) { ... on TrustNode { id kind } } }',
        variables: {
          r: [
            { __typename: 'TrustNode', id: 'acme' },
            { __typename: 'TrustNode', id: 'root-eu' },
            { __typename: 'TrustNode', id: 'nobody' },
          ],
        },
      }),
    });
    expect(((await entities.json()) as { data: { _entities: unknown[] } }).data._entities).toEqual([{ id: 'acme', kind: 'issuer' }, { id: 'root-eu', kind: 'root' }, null]);
  });
});

describe('GET /anchor-bundle', () => {
  it('is signed JSON that jose verifies with the service key from /keyring, narrowed by jurisdiction', async () => {
    const bundle = (await platform.rest('trust', '/anchor-bundle?jurisdiction=de')).body;
    // The platform's own root has no jurisdiction, so every narrowed bundle keeps it.
    expect(bundle).toMatchObject({ service: 'trust', jurisdiction: 'DE', roots: [{ id: 'platform' }, { id: 'root-eu' }] });
    expect(bundle.roots[1].keys.map((key: { kid: string }) => key.kid)).toContain(rootKey.jwk.kid);
    const keyring = (await platform.rest('trust', '/keyring')).body as { keys: jose.JWK[] };
    const { signature, ...plain } = bundle;
    const [protectedHeader, , sig] = signature.split('.');
    const header = jose.decodeProtectedHeader(signature);
    const key = await jose.importJWK(keyring.keys.find((candidate) => candidate.kid === header.kid)!, 'Ed25519');
    await jose.flattenedVerify({ protected: protectedHeader, payload: Buffer.from(canonicalize(plain)).toString('base64url'), signature: sig }, key);
    await expect(jose.flattenedVerify({ protected: protectedHeader, payload: Buffer.from(canonicalize({ ...plain, roots: [] })).toString('base64url'), signature: sig }, key)).rejects.toThrow();
    const gathered = await platform.graphql('{ trustAnchorBundle trust { keyring } }');
    expect(gathered.data.trustAnchorBundle.service).toBe('trust');
    expect((await platform.rest('trust', '/anchor-bundle?jurisdiction=Bavaria')).status).toBe(400);
  });
});

describe('discovery', () => {
  it('lists every path of the trust table, documented in OpenAPI, and the master-list origin', async () => {
    const discovery = await platform.rest('trust', '/');
    const table = [
      'GET /',
      'GET /admin/log',
      'GET /anchor-bundle',
      'POST /edges',
      'GET /graph',
      'GET /healthz',
      'GET /keyring',
      'GET /keys/{kid}/path',
      'GET /master-list',
      'POST /master-list/entries',
      'POST /master-list/witnesses',
      'POST /nodes',
      'GET /revocations',
      'POST /revocations',
      'GET /trust-lists',
      'POST /trust-lists',
      'GET /trust-lists/{jur}',
      'POST /trust-lists/{jur}/entries',
    ];
    expect(discovery.body.endpoints.map((endpoint: { method: string; path: string }) => `${endpoint.method} ${endpoint.path}`).sort()).toEqual([...table].sort());
    expect(discovery.body.master_list_origin).toBe((await platform.rest('trust', '/master-list')).body.origin);
    const openapi = (await (await fetch(discovery.body.openapi)).json()) as { paths: Record<string, Record<string, unknown>> };
    for (const entry of table) {
      const [method, path] = entry.split(' ') as [string, string];
      expect(openapi.paths[path]?.[method.toLowerCase()], entry).toBeDefined();
    }
  });
});

describe('GET /admin/log', () => {
  it('records every write with its outcome', async () => {
    const log = await platform.rest('trust', '/admin/log?limit=500', { as: 'admin' });
    const actions = log.body.entries.map((entry: { action: string; outcome: string }) => `${entry.action} ${entry.outcome}`);
    expect(actions).toEqual(expect.arrayContaining(['upsertTrustNode ok', 'upsertTrustNode KEY_CONFLICT', 'addTrustEdge ok', 'addTrustEdge CYCLE', 'declareTrustRevocation ok']));
  });
});
