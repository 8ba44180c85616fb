/**
 * Automatic persisted queries at the gateway (Apollo Server's APQ over its in-memory cache): a
 * client sends the SHA-256 of its query; the first time the gateway answers
 * PERSISTED_QUERY_NOT_FOUND and the client sends the query with its hash, after which the hash
 * alone is enough, by POST or by GET (where an HTTP cache can keep the answer).
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';

let platform: SharedTestStack;
beforeAll(async () => {
  platform = await sharedTestStack();
});

const QUERY = 'query Health { trust { health } registry { health } }';
const persisted = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') } });

async function post(body: unknown) {
  const response = await fetch(platform.stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as { data?: any; errors?: { message: string; extensions: { code: string } }[] } };
}

describe('automatic persisted queries', () => {
  it('are asked for once by hash, registered with the query, and then answered by hash alone', async () => {
    const unknown = await post({ extensions: persisted(QUERY) });
    expect(unknown.body.errors?.[0]?.extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');

    const registered = await post({ query: QUERY, extensions: persisted(QUERY) });
    expect(registered.body.errors).toBeUndefined();
    expect(registered.body.data.trust.health.service).toBe('trust');

    const byHash = await post({ extensions: persisted(QUERY) });
    expect(byHash.status).toBe(200);
    expect(byHash.body.errors).toBeUndefined();
    expect(byHash.body.data.registry.health.service).toBe('registry');

    const url = new URL(platform.stack.gateway.graphqlUrl);
    url.searchParams.set('extensions', JSON.stringify(persisted(QUERY)));
    const get = await fetch(url, { headers: { 'apollo-require-preflight': 'true' } });
    expect(get.status).toBe(200);
    expect(((await get.json()) as { data: any }).data.trust.health.service).toBe('trust');
  });

  it('refuse a query whose hash does not match it', async () => {
    const wrong = await post({ query: QUERY, extensions: persisted('{ __typename }') });
    expect(wrong.body.data).toBeUndefined();
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual([{ message: 'The persistedQuery sha256Hash is not the SHA-256 of the query sent with it.', extensions: { code: 'BAD_REQUEST' } }]);
  });
});
