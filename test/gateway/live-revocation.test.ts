/**
 * A token revoked, expired, or its operator suspended, while a subscription is open ends the subscription, as
 * a client meets it: graphql-ws closes the socket 4403 `INVALID_TOKEN: The bearer token is no longer
 * valid.`, GraphQL over SSE sends one result with the error INVALID_TOKEN and completes; no event
 * appended after it is delivered. A revocation through REST (this process's identity store) ends the
 * stream at once; an expiry within a recheck; a suspension made by another process's store within
 * TOKEN_CACHE_MS and a recheck, at the gateway and at a subgraph's own port alike.
 */
import { randomBytes } from 'node:crypto';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { TOKEN_CACHE_MS } from '../../lib/auth/authentication.js';
import { IdentityStore } from '../../lib/auth/identity-store.js';
import { withSchema } from '../../lib/config/database.js';
import { appendEvent, createModel, createPassport, PAYLOADS } from '../issuer/support.js';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { collector, settle } from './live-support.js';

const MODEL = 'battery-live-revocation';
let platform: SharedTestStack;
/** Another process's identity store: its revocations and suspensions are not told to the stack's caches. */
let elsewhere: IdentityStore;
let passportId = '';

beforeAll(async () => {
  platform = await sharedTestStack();
  elsewhere = IdentityStore.open(withSchema(platform.databaseUrl, 'identity'));
  await createModel(platform, MODEL);
  passportId = (await createPassport(platform, MODEL)).passport_id;
}, 180_000);
afterAll(() => elsewhere?.close());

const EVENTS = 'subscription($id: ID!) { passportEvents(passportId: $id) { seq } }';

async function append(): Promise<void> {
  const appended = await appendEvent(platform, passportId, 'ObjectEvent', PAYLOADS.ObjectEvent!());
  expect(appended.status, JSON.stringify(appended.body)).toBe(201);
}

async function issueToken(operator: string, expiresAt?: Date): Promise<{ id: string; secret: string }> {
  const body = { operator, role: 'writer', label: 'live subscriber', ...(expiresAt ? { expires_at: expiresAt.toISOString() } : {}) };
  const issued = await platform.rest('issuer', '/admin/tokens', { as: 'admin', body });
  expect(issued.status, issued.text).toBe(201);
  return issued.body as { id: string; secret: string };
}

/** A graphql-sse client at `url` with `secret`, subscribed to the passport's events: what it got, whether it completed, and its end. */
function sseFollower(url: string, secret: string) {
  const client = createSseClient({ url, singleConnection: false, retryAttempts: 0, headers: { authorization: `Bearer ${secret}` } });
  const results: { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] }[] = [];
  const state = { completed: false };
  const dispose = client.subscribe<{ passportEvents: { seq: number } }>(
    { query: EVENTS, variables: { id: passportId } },
    { next: (result) => void results.push(result as never), error: (error) => void results.push({ errors: [{ message: String(error) }] }), complete: () => void (state.completed = true) },
  );
  const end = () => {
    dispose();
    client.dispose();
  };
  return { results, state, end };
}

/** The last result of each SSE stream ended by its token is INVALID_TOKEN, and nothing appended after it is delivered to any. */
async function expectEndedNoLongerValid(...streams: (readonly unknown[])[]): Promise<void> {
  for (const [index, results] of streams.entries())
    expect(results.at(-1), `stream ${index + 1}`).toEqual({ errors: [{ message: 'The bearer token is no longer valid.', extensions: { code: 'INVALID_TOKEN' } }] });
  const delivered = streams.map((results) => results.length);
  await append();
  await settle();
  expect(streams.map((results) => results.length)).toEqual(delivered);
}

const ENDED = { code: 4403, reason: 'INVALID_TOKEN: The bearer token is no longer valid.' };

/**
 * A graphql-ws client opened with `secret`, subscribed to the passport's events and live (an event
 * appended has been delivered); what it got, how its socket was closed, and its end.
 */
async function liveWsClient(secret: string) {
  const state: { closed?: { code: number; reason: string } } = {};
  const client = createWsClient({
    url: platform.stack.gateway.graphqlUrl.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${secret}` },
    retryAttempts: 0,
    on: { closed: (event) => void (state.closed = { code: (event as { code: number }).code, reason: String((event as { reason: string }).reason) }) },
  });
  const got = collector<{ seq: number }>('passportEvents');
  const dispose = client.subscribe({ query: EVENTS, variables: { id: passportId } }, got.sink);
  const end = async () => {
    dispose();
    await client.dispose();
  };
  try {
    await append();
    await got.until(1);
  } catch (error) {
    await end();
    throw error;
  }
  return { got, state, end };
}

describe('a token revoked while its subscriptions are open', () => {
  it('graphql-ws: the socket is closed 4403 at once, and nothing appended after is delivered', async () => {
    const { id, secret } = await issueToken('default');
    const { got, state, end } = await liveWsClient(secret);
    try {
      const revoked = await platform.rest('issuer', `/admin/tokens/${id}/revocation?operator=default`, { as: 'admin', method: 'POST' });
      expect(revoked.status, revoked.text).toBe(200);
      await expect.poll(() => state.closed, { timeout: 2_000, interval: 50 }).toEqual(ENDED);
      const delivered = got.items.length;
      await append();
      await settle();
      expect(got.items.length).toBe(delivered);
    } finally {
      await end();
    }
  });

  it('graphql-ws: a token that expires ends its connection within a recheck (1 s) of its expiry', async () => {
    const expiresAt = new Date(Date.now() + 3_000);
    const { secret } = await issueToken('default', expiresAt);
    const { state, end } = await liveWsClient(secret);
    try {
      expect(state.closed).toBeUndefined();
      await expect.poll(() => state.closed, { timeout: 8_000, interval: 50 }).toEqual(ENDED);
      // A recheck each second, with room for a loaded machine.
      expect(Date.now() - expiresAt.getTime()).toBeLessThan(2_500);
    } finally {
      await end();
    }
  });
});

describe('an operator suspended by another process while its token’s subscriptions are open', () => {
  it(`GraphQL over SSE, at the gateway and at a subgraph's own port: one result with INVALID_TOKEN, then complete, within TOKEN_CACHE_MS (${TOKEN_CACHE_MS} ms) and a recheck`, async () => {
    const operator = `live-${randomBytes(4).toString('hex')}`;
    await elsewhere.createOperator({ id: operator, name: 'Live subscriber' });
    const { secret } = await issueToken(operator);
    const followers = Object.entries({ gateway: platform.stack.gateway.graphqlUrl, 'issuer subgraph': platform.stack.subgraphUrls.issuer }).map(([face, url]) => ({
      face,
      ...sseFollower(url, secret),
    }));
    try {
      await append();
      for (const { face, results } of followers) await expect.poll(() => results.some((result) => result.data), { timeout: 20_000, interval: 50, message: face }).toBe(true);
      const suspendedAt = Date.now();
      expect(await elsewhere.suspendOperator(operator)).toMatchObject({ status: 'suspended' });
      for (const { face, state } of followers) {
        await expect.poll(() => state.completed, { timeout: TOKEN_CACHE_MS + 3_000, interval: 50, message: face }).toBe(true);
        // The cache's bound and one recheck (a second), with room for a loaded machine.
        expect(Date.now() - suspendedAt, face).toBeLessThan(TOKEN_CACHE_MS + 2_500);
      }
      await expectEndedNoLongerValid(...followers.map(({ results }) => results));
    } finally {
      for (const { end } of followers) end();
    }
  }, 30_000);
});

describe("a token revoked while it follows a subgraph's own subscription (GraphQL over SSE on the subgraph's port, as Hive Gateway subscribes)", () => {
  it('the stream gets one result with INVALID_TOKEN and completes at once, and nothing appended after is delivered', async () => {
    const { id, secret } = await issueToken('default');
    const { results, state, end } = sseFollower(platform.stack.subgraphUrls.issuer, secret);
    try {
      await expect.poll(() => results.some((result) => result.data), { timeout: 20_000, interval: 50 }).toBe(true);
      const revoked = await platform.rest('issuer', `/admin/tokens/${id}/revocation?operator=default`, { as: 'admin', method: 'POST' });
      expect(revoked.status, revoked.text).toBe(200);
      await expect.poll(() => state.completed, { timeout: 2_000, interval: 50 }).toBe(true);
      await expectEndedNoLongerValid(results);
    } finally {
      end();
    }
  });
});
