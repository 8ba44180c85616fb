/**
 * A subscriber's credentials are checked when its connection opens, as a client meets it: over
 * graphql-ws in the connection_init payload or the upgrade request's Authorization header, over
 * GraphQL over SSE in the request's Authorization header. A bad token is refused there (graphql-ws
 * close 4401, SSE 401 problem+json), never served as an anonymous caller; a good one, or none,
 * subscribes.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createModel, createPassport } from '../issuer/support.js';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';

const MODEL = 'battery-live-auth';
let platform: SharedTestStack;
let passportId = '';

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
  passportId = (await createPassport(platform, MODEL)).passport_id;
}, 180_000);

const wsUrl = () => platform.stack.gateway.graphqlUrl.replace(/^http/, 'ws');
const EVENTS = 'subscription($id: ID!) { passportEvents(passportId: $id) { cursor } }';

type Outcome = { closed: { code: number; reason: string } } | { subscribed: true } | { error: unknown };

/** What a graphql-ws client that opens with these credentials meets: the connection closed, or its subscription open. */
function openWs(connectionParams: Record<string, unknown> | undefined, headers: Record<string, string> = {}): Promise<Outcome> {
  class WithHeaders extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  return new Promise((resolve) => {
    const client = createWsClient({
      url: wsUrl(),
      webSocketImpl: WithHeaders,
      lazy: false,
      retryAttempts: 0,
      // The refusal is what is looked for, not a fault to print.
      onNonLazyError: () => {},
      ...(connectionParams ? { connectionParams } : {}),
      on: {
        closed: (event) => {
          const { code, reason } = event as { code: number; reason: string };
          resolve({ closed: { code, reason: String(reason) } });
        },
        connected: () => {
          // A passport without events answers nothing while its subscription is open.
          client.subscribe({ query: EVENTS, variables: { id: passportId } }, { next: () => {}, error: (error) => resolve({ error }), complete: () => {} });
          setTimeout(() => {
            resolve({ subscribed: true });
            void client.dispose();
          }, 500);
        },
      },
    });
  });
}

describe('authentication when a graphql-ws connection opens', () => {
  it('refuses a bad token in connection_init with close 4401 INVALID_TOKEN, before any subscription', async () => {
    const outcome = await openWs({ authorization: 'Bearer not-a-token-of-this-platform' });
    expect(outcome).toEqual({ closed: { code: 4401, reason: 'INVALID_TOKEN: The bearer token is not valid.' } });
    // Under its other names, and malformed.
    expect(await openWs({ headers: { authorization: 'Bearer not-a-token-of-this-platform' } })).toMatchObject({ closed: { code: 4401 } });
    expect(await openWs({ authorization: 'Basic dXNlcjpwYXNz' })).toMatchObject({ closed: { code: 4401 } });
    expect(await openWs({ authorization: 42 })).toMatchObject({ closed: { code: 4401 } });
  });

  it("refuses a bad token in the upgrade request's Authorization header", async () => {
    expect(await openWs(undefined, { authorization: 'Bearer not-a-token-of-this-platform' })).toMatchObject({ closed: { code: 4401, reason: expect.stringMatching(/^INVALID_TOKEN/) } });
  });

  it('subscribes with a valid token (payload or header), and without one', async () => {
    expect(await openWs({ authorization: `Bearer ${TOKENS.writer}` })).toEqual({ subscribed: true });
    expect(await openWs(undefined, { authorization: `Bearer ${TOKENS.admin}` })).toEqual({ subscribed: true });
    expect(await openWs(undefined)).toEqual({ subscribed: true });
  });
});

describe('authentication of a GraphQL over SSE subscription', () => {
  const post = (authorization?: string) =>
    fetch(platform.stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({ query: EVENTS, variables: { id: passportId } }),
    });

  it('refuses a bad token 401 problem+json INVALID_TOKEN with a Bearer challenge', async () => {
    for (const authorization of ['Bearer not-a-token-of-this-platform', 'Basic dXNlcjpwYXNz']) {
      const response = await post(authorization);
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="passport", error="invalid_token"');
      expect(await response.json()).toMatchObject({ status: 401, code: 'INVALID_TOKEN' });
    }
  });

  it('the graphql-sse client meets the refusal as an error; with a valid token it subscribes', async () => {
    const subscribe = (authorization: string) =>
      new Promise<unknown>((resolve) => {
        const client = createSseClient({ url: platform.stack.gateway.graphqlUrl, singleConnection: false, retryAttempts: 0, headers: { authorization } });
        const dispose = client.subscribe({ query: EVENTS, variables: { id: passportId } }, { next: () => {}, error: (error) => resolve({ error }), complete: () => resolve('complete') });
        setTimeout(() => {
          dispose();
          client.dispose();
          resolve('open');
        }, 1_000);
      });
    const refused = (await subscribe('Bearer not-a-token-of-this-platform')) as { error: Response | Error };
    expect(refused).toHaveProperty('error');
    expect(await subscribe(`Bearer ${TOKENS.writer}`)).toBe('open');
  });
});
