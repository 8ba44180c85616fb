/**
 * The facade's handling of requests, on a real write path (the registry's POST /): malformed and
 * oversized bodies, wrong media types, and the 401/403 matrix — each refused before anything changes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../support/database.js';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';

let platform: SharedTestStack;
beforeAll(async () => {
  platform = await sharedTestStack();
});

const record = (id: string) => ({ kind: 'item', id, body: { title: id } });
const storedRecords = async () => Number((await sql<{ count: string }>(platform.databaseUrl, 'SELECT count(*) FROM registry.record_version')).rows[0]!.count);

async function post(body: string | Buffer, headers: Record<string, string>) {
  const response = await fetch(`${platform.base('registry')}/`, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.writer}`, ...headers }, body });
  return { status: response.status, type: response.headers.get('content-type'), headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

describe('request bodies', () => {
  it.each([
    ['malformed JSON', '{"kind": "item",', { 'content-type': 'application/json' }, 400, 'MALFORMED_JSON'],
    ['an empty body', '', { 'content-type': 'application/json' }, 400, 'MALFORMED_JSON'],
    ['bytes that are not UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { 'content-type': 'application/json' }, 400, 'MALFORMED_JSON'],
    ['a form instead of JSON', 'kind=item&id=x', { 'content-type': 'application/x-www-form-urlencoded' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['no content type', JSON.stringify(record('no-type')), {}, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['a body over the limit', JSON.stringify({ ...record('huge'), body: { text: 'x'.repeat(1_100_000) } }), { 'content-type': 'application/json' }, 413, 'BODY_TOO_LARGE'],
  ] as const)('refuses %s with an RFC 9457 problem and stores nothing', async (_, body, headers, status, code) => {
    const before = await storedRecords();
    const answer = await post(body, headers);
    expect(answer.status).toBe(status);
    expect(answer.type).toBe('application/problem+json');
    expect(answer.body).toMatchObject({
      status,
      code,
      type: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/docs\/problems#[a-z-]+$/),
      title: expect.any(String),
      detail: expect.any(String),
      instance: '/registry/',
    });
    expect(await storedRecords()).toBe(before);
  });

  it('accepts application/json with a charset, and +json media types', async () => {
    expect((await post(JSON.stringify(record('charset-ok')), { 'content-type': 'application/json; charset=utf-8' })).status).toBe(201);
    expect((await post(JSON.stringify(record('plus-json-ok')), { 'content-type': 'application/merge-patch+json' })).status).toBe(201);
  });

  it('refuses members the operation does not take as a 400', async () => {
    const answer = await post(JSON.stringify({ ...record('extra'), colour: 'red' }), { 'content-type': 'application/json' });
    expect(answer.status).toBe(400);
    expect(answer.type).toBe('application/problem+json');
  });
});

describe('credentials on a write path', () => {
  it.each([
    ['no token', undefined, 401, 'MISSING_TOKEN'],
    ['an unknown token', 'Bearer not-a-known-token', 401, 'INVALID_TOKEN'],
    ['a malformed header', 'Basic dXNlcjpwYXNz', 401, 'INVALID_TOKEN'],
  ] as const)('answers %s with %i and a Bearer challenge, storing nothing', async (_, authorization, status, code) => {
    const before = await storedRecords();
    const response = await fetch(`${platform.base('registry')}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(record('unauthorised')),
    });
    expect(response.status).toBe(status);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="passport"/);
    expect(((await response.json()) as { code: string }).code).toBe(code);
    expect(await storedRecords()).toBe(before);
  });

  it('lets writers write but not administer, and admins do both', async () => {
    expect((await platform.rest('registry', '/', { body: record('by-writer'), as: 'writer' })).status).toBe(201);
    expect((await platform.rest('registry', '/', { body: record('by-admin'), as: 'admin' })).status).toBe(201);
    const writerSeed = await platform.rest('registry', '/admin/seed', { method: 'POST', as: 'writer' });
    expect(writerSeed.status).toBe(403);
    expect(writerSeed.body.code).toBe('INSUFFICIENT_ROLE');
    expect((await platform.rest('registry', '/admin/log', { as: 'writer' })).status).toBe(403);
  });

  it('is checked again by the subgraph when the gateway is called directly', async () => {
    const mutation = 'mutation($input: RegistryRecordInput!) { createRegistryRecord(input: $input) { id } }';
    const input = { kind: 'item', id: 'direct', body: {} };
    expect((await platform.graphql(mutation, { input })).errors?.[0].extensions.code).toBe('MISSING_TOKEN');
    const log = await platform.rest('registry', '/admin/log', { as: 'admin' });
    expect(log.body.entries.map((entry: { action: string; actor: string; target: string }) => `${entry.action} ${entry.actor} ${entry.target}`)).toEqual(
      expect.arrayContaining(['createRegistryRecord test-writer by-writer', 'createRegistryRecord test-admin by-admin']),
    );
  });
});
