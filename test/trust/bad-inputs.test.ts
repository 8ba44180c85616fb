/**
 * Every write path of the trust service against bodies of the wrong shape and every read path
 * against bad parameters: never a 5xx, and the state stays exactly as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.js';
import { newKey, seconds } from './support.js';

let platform: TestStack;

const snapshot = async () => Promise.all(['/graph', '/trust-lists', '/master-list', '/revocations'].map(async (path) => (await platform.rest('trust', path)).body));

beforeAll(async () => {
  platform = await startTestStack();
  const key = await newKey();
  const writes: [string, unknown][] = [
    ['/nodes', { id: 'root', kind: 'root', keys: [{ ...key.jwk, iat: seconds() - 60 }] }],
    ['/trust-lists', { jurisdiction: 'DE', framework: 'eIDAS' }],
    ['/master-list/witnesses', { m: 1, keys: [key.jwk] }],
  ];
  for (const [path, body] of writes) expect((await platform.rest('trust', path, { body, as: 'admin' })).status).toBeLessThan(300);
});
afterAll(() => platform?.stop());

const deep = (depth: number): unknown => {
  let value: unknown = {};
  for (let i = 0; i < depth; i += 1) value = { a: value };
  return value;
};

const shapes: [string, unknown][] = [
  ['null', null],
  ['a number', 42],
  ['a string', 'text'],
  ['an array', [{}]],
  ['an empty object', {}],
  ['huge numbers', { id: 'x', m: 1e300, threshold: 2 ** 53, time: -1 }],
  ['nulls everywhere', { id: null, kind: null, keys: null, body: null, subject: null, reason: null }],
  ['wrong types everywhere', { id: 7, kind: [], keys: 'k', jurisdiction: {}, body: 'b', cosignatures: {}, subject: 1, reason: true, effective_at: 3, attestation: [] }],
  ['nesting 3,000 deep', { id: 'x', kind: 'issuer', body: deep(3_000), keys: [deep(3_000)] }],
  ['a NUL in every string', { id: 'x\u0000', kind: 'issuer\u0000', subject: 'root\u0000', reason: 'superseded', jurisdiction: 'D\u0000' }],
];

const writePaths = ['/nodes', '/edges', '/trust-lists', '/trust-lists/DE/entries', '/trust-lists/%00/entries', '/master-list/witnesses', '/master-list/entries', '/revocations'];

describe('writes with bodies of the wrong shape', () => {
  it.each(writePaths)('POST %s answers 4xx and changes nothing', async (path) => {
    const before = await snapshot();
    for (const [name, body] of shapes) {
      const response = await platform.rest('trust', path, { body, as: 'admin' });
      expect(response.status, `${name}: ${response.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expect(response.status, `${name}: ${response.text.slice(0, 200)}`).toBeLessThan(500);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
    }
    expect(await snapshot()).toEqual(before);
  });

  it('logs every refused write, text PostgreSQL cannot store replaced by U+FFFD', async () => {
    const log = await platform.rest('trust', '/admin/log?limit=500', { as: 'admin' });
    expect(log.status).toBe(200);
    expect(log.body.entries.some((entry: { action: string; target: string | null }) => entry.action === 'addTrustEdge' && entry.target === 'x\ufffd')).toBe(true);
  });

  it('looks up no node by an id outside the syntax', async () => {
    const before = await snapshot();
    for (const id of ['x\u0000', 'a b', '\ud800', 'x'.repeat(300)]) {
      const response = await platform.rest('trust', '/nodes', { body: { id, kind: 'issuer' }, as: 'admin' });
      expect(response.status).toBe(422);
      expect(response.body.code).toBe('INVALID_NODE');
      const read = await platform.graphql('query($id: ID!) { trustNode(id: $id) { id } }', { id });
      expect(read.errors).toBeUndefined();
      expect(read.data.trustNode).toBeNull();
    }
    expect(await snapshot()).toEqual(before);
  });

  it('answers a body that is not JSON with 400 and a body of another type with 415', async () => {
    for (const path of writePaths) {
      expect((await platform.rest('trust', path, { body: '{"id":', as: 'admin' })).status).toBe(400);
      expect((await platform.rest('trust', path, { body: 'id=x', as: 'admin', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(415);
    }
  });
});

describe('reads with bad parameters', () => {
  it.each([
    '/trust-lists?at=2026-13-01T00:00:00Z',
    '/trust-lists?at=2026-01-01 00:00:00Z',
    '/trust-lists?at=2026-01-01T00:00:60Z',
    '/trust-lists?jurisdiction=%00',
    '/trust-lists?at=1&at=2',
    '/trust-lists/DE?at=now',
    '/revocations?window=2026-01-02T00:00:00Z/2026-01-01T00:00:00Z',
    '/revocations?window=2026-01-01T00:00:00Z/2026-01-01T00:00:00Z',
    '/revocations?subject=root%23short',
    '/revocations?known_by=',
    '/anchor-bundle?jurisdiction=%F0%9F%98%80',
    '/graph?limit=1',
    '/master-list?at=2026-01-01T00:00:00Z',
  ])('GET %s is a 400', async (path) => {
    const response = await platform.rest('trust', path);
    expect(response.status, response.text).toBe(400);
  });

  it('answers GraphQL arguments of the wrong type as a client error', async () => {
    // A DateTimeISO is read with the services' one RFC 3339 check, and refused as a String instant is.
    const result = await platform.graphql('{ trustKeyStanding(kid: "x", at: "yesterday") }');
    expect([result.errors?.[0].extensions.code, result.errors?.[0].extensions.problem?.status]).toEqual(['INVALID_QUERY', 400]);
    const lists = await platform.graphql('{ trustLists(at: "not a time") { jurisdiction } }');
    expect(lists.errors?.[0].extensions.code).toBe('INVALID_QUERY');
  });
});
