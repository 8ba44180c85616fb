/**
 * A subscription is held to the rules of a query, as a client meets them over graphql-ws and GraphQL
 * over SSE: depth, alias and cost limits refuse it with the limit's setting, and one connection and
 * one client hold at most so many subscriptions (GRAPHQL_MAX_SUBSCRIPTIONS_PER_CONNECTION, _PER_CLIENT);
 * and the operator's side: the metrics of connections, subscriptions, events and lag, and the close
 * code 1012 when the platform stops.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { appendEvent, createModel, createPassport, PAYLOADS } from '../issuer/support.js';
import { GATEWAY_CREDENTIAL_HEADER } from '../../lib/graphql/gateway-credential.js';
import { startTestStack, TOKENS, type TestStack } from '../support/stack.js';

let platform: TestStack;
let passportId = '';
/** The gateway's credential to the subgraphs (it bears on the quota of a subgraph's own subscriptions). */
const SECRET = 'live-limits-subgraph-secret-0123';

beforeAll(async () => {
  platform = await startTestStack({ env: { GRAPHQL_MAX_SUBSCRIPTIONS_PER_CONNECTION: '2', GRAPHQL_MAX_SUBSCRIPTIONS_PER_CLIENT: '3', SUBGRAPH_SECRET: SECRET } });
  await createModel(platform, 'battery-live-limits');
  passportId = (await createPassport(platform, 'battery-live-limits')).passport_id;
  // One event in the log: a subscription without `after` replays it at once, so an accepted one
  // answers at once with data, and a refused one with its error (no wait for an answer that never comes).
  expect((await appendEvent(platform, passportId, 'ObjectEvent', PAYLOADS.ObjectEvent!())).status).toBe(201);
}, 180_000);

let stopped = false;
afterAll(() => (stopped ? undefined : platform?.stop()));

const wsClient = () => createWsClient({ url: platform.stack.gateway.graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
const EVENTS = 'subscription($id: ID!) { passportEvents(passportId: $id) { cursor } }';

/** The first thing a subscription answers: a result, or its error; it stays open otherwise. */
function firstAnswer(client: Client, query: string, variables: Record<string, unknown> = { id: passportId }): Promise<any> {
  return new Promise((resolve) => {
    client.subscribe({ query, variables }, { next: (result) => resolve(result), error: (error) => resolve({ error }), complete: () => resolve('complete') });
  });
}

/** Whether a first answer is the replay of an accepted subscription (which stays open, live): data, no error. */
const accepted = (answer: any) => (answer?.data && !answer.errors ? 'open' : answer);

/** Opens a subscription on the passport: accepted, it answers with the replayed event and stays open. */
async function holdOpen(client: Client, query = EVENTS): Promise<unknown> {
  return accepted(await firstAnswer(client, query));
}

describe('subscriptions under the limits of a query', () => {
  it('refuses a subscription too deep, with too many aliases or too costly, naming the setting', async () => {
    const client = wsClient();
    try {
      const deep = `subscription($id: ID!) { passportEvents(passportId: $id) { passport { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { id } } } } } } } } } } } } } } } }`;
      expect(await firstAnswer(client, deep)).toMatchObject({ error: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: { setting: 'GRAPHQL_MAX_DEPTH' } } }] });
      const aliases = `subscription($id: ID!) { passportEvents(passportId: $id) { ${Array.from({ length: 61 }, (_, index) => `a${index}: cursor`).join(' ')} } }`;
      expect(await firstAnswer(client, aliases)).toMatchObject({ error: [{ extensions: { limit: { setting: 'GRAPHQL_MAX_ALIASES' } } }] });
      const costly = `subscription($id: ID!) { passportEvents(passportId: $id) { passport { ${Array.from({ length: 30 }, (_, index) => `v${index}: verdict`).join(' ')} } } }`;
      expect(await firstAnswer(client, costly)).toMatchObject({ error: [{ extensions: { limit: { setting: 'GRAPHQL_MAX_COST' } } }] });
    } finally {
      await client.dispose();
    }
  });

  it('holds one connection and one client to their most subscriptions, over both protocols', async () => {
    const first = wsClient();
    const second = wsClient();
    const sse = createSseClient({ url: platform.stack.gateway.graphqlUrl, singleConnection: false, retryAttempts: 0 });
    try {
      expect(await holdOpen(first)).toBe('open');
      expect(await holdOpen(first)).toBe('open');
      expect(await firstAnswer(first, EVENTS)).toMatchObject({ error: [{ extensions: { code: 'SUBSCRIPTION_LIMIT', limit: { setting: 'GRAPHQL_MAX_SUBSCRIPTIONS_PER_CONNECTION', value: 2 } } }] });
      // The client's third, on another connection; its fourth is refused whatever the protocol.
      expect(await holdOpen(second)).toBe('open');
      expect(await firstAnswer(second, EVENTS)).toMatchObject({ error: [{ extensions: { code: 'SUBSCRIPTION_LIMIT', limit: { setting: 'GRAPHQL_MAX_SUBSCRIPTIONS_PER_CLIENT', value: 3 } } }] });
      const overSse = await new Promise<unknown>((resolve) => sse.subscribe({ query: EVENTS, variables: { id: passportId } }, { next: resolve, error: resolve, complete: () => resolve('complete') }));
      expect(String(overSse)).toMatch(/429|GRAPHQL_MAX_SUBSCRIPTIONS_PER_CLIENT/);
      // Closing a connection gives its places back.
      await first.dispose();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await holdOpen(second)).toBe('open');
    } finally {
      sse.dispose();
      await first.dispose();
      await second.dispose();
    }
  });

  it("holds one client to as many subscriptions at a subgraph's own port (GraphQL over SSE, as Hive Gateway subscribes), but for the streams a gateway counted (its credential)", async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const url = new URL(platform.stack.subgraphUrls.issuer);
    url.searchParams.set('query', `subscription { passportEvents(passportId: "${passportId}") { seq } }`);
    const streams: AbortController[] = [];
    const open = (headers: Record<string, string> = {}) => {
      const stream = new AbortController();
      streams.push(stream);
      return fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: stream.signal });
    };
    try {
      for (let index = 0; index < 3; index += 1) expect((await open()).status).toBe(200);
      const over = await open({ authorization: `Bearer ${TOKENS.writer}` });
      expect(over.status).toBe(429);
      expect(await over.json()).toEqual({
        errors: [
          {
            message: 'This client has 3 subscriptions open, the most one client may hold.',
            extensions: { code: 'SUBSCRIPTION_LIMIT', limit: { setting: 'GRAPHQL_MAX_SUBSCRIPTIONS_PER_CLIENT', value: 3 } },
          },
        ],
      });
      expect((await open({ [GATEWAY_CREDENTIAL_HEADER]: SECRET })).status).toBe(200);
      // A stream ended gives its place back.
      streams[0]!.abort();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await open()).status).toBe(200);
    } finally {
      for (const stream of streams) stream.abort();
    }
  });

  it('holds one client to subscriptions whose events together cost at most what one request may', async () => {
    // The previous test's connections give their places back as they close.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const client = wsClient();
    // Half of the 30 verdicts that one subscription may not ask for: one is taken, a second is more than one request's cost.
    const half = `subscription($id: ID!) { passportEvents(passportId: $id) { passport { ${Array.from({ length: 15 }, (_, index) => `v${index}: verdict`).join(' ')} } } }`;
    try {
      expect(await holdOpen(client, half)).toBe('open');
      expect(await firstAnswer(client, half)).toMatchObject({ error: [{ extensions: { code: 'SUBSCRIPTION_LIMIT', limit: { setting: 'GRAPHQL_MAX_COST' } } }] });
    } finally {
      await client.dispose();
    }
  });

  it('are counted: connections and subscriptions open, events delivered, the lag of live ones', async () => {
    const client = wsClient();
    try {
      const got: unknown[] = [];
      let replayed: () => void;
      const replay = new Promise<void>((resolve) => (replayed = resolve));
      client.subscribe(
        { query: EVENTS, variables: { id: passportId } },
        {
          next: (result) => {
            got.push(result);
            replayed();
          },
          error: () => {},
          complete: () => {},
        },
      );
      // Live once the log it replays has come: an event appended now is delivered live.
      await replay;
      const appended = await platform.rest('issuer', `/passports/${passportId}/events`, { body: { type: 'ObjectEvent', payload: PAYLOADS.ObjectEvent!() }, as: 'writer' });
      expect(appended.status).toBe(201);
      for (let waited = 0; got.length < 2 && waited < 100; waited += 1) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(got).toHaveLength(2);
      const exposition = await platform.stack.operations.metrics.exposition();
      expect(exposition).toMatch(/graphql_subscription_connections\{server="gateway",protocol="graphql-ws"\} [1-9]/);
      expect(exposition).toMatch(/graphql_subscriptions\{server="gateway",subscription="passportEvents"\} [1-9]/);
      expect(exposition).toMatch(/graphql_subscription_events_total\{server="gateway",subscription="passportEvents"\} [1-9]/);
      expect(exposition).toMatch(/graphql_subscription_delivery_lag_seconds_count\{server="gateway",subscription="passportEvents"\} [1-9]/);
    } finally {
      await client.dispose();
    }
  });

  it("count a subgraph's own subscriptions in the same metrics, by the subgraph's server label, and count closed a GraphQL over SSE stream its client left", async () => {
    const gauge = async (pattern: RegExp) => Number(pattern.exec(await platform.stack.operations.metrics.exposition())?.[1] ?? 'NaN');
    const subgraphConnections = /graphql_subscription_connections\{server="issuer",protocol="graphql-sse"\} (\d+)/;
    const gatewayConnections = /graphql_subscription_connections\{server="gateway",protocol="graphql-sse"\} (\d+)/;
    const subgraphSubscriptions = /graphql_subscriptions\{server="issuer",subscription="passportEvents"\} (\d+)/;
    const query = `subscription { passportEvents(passportId: "${passportId}") { seq } }`;
    const streams = [new AbortController(), new AbortController()];
    /** A GraphQL over SSE stream of the passport's events at `url`, read until its first event. */
    const follow = async (url: string, stream: AbortController) => {
      const response = await fetch(`${url}?query=${encodeURIComponent(query)}`, { headers: { accept: 'text/event-stream' }, signal: stream.signal });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      let text = '';
      while (!text.includes('event: next')) text += new TextDecoder().decode((await reader.read()).value);
    };
    try {
      await follow(platform.stack.subgraphUrls.issuer, streams[0]!);
      await follow(platform.stack.gateway.graphqlUrl, streams[1]!);
      expect(await gauge(subgraphConnections)).toBe(1);
      expect(await gauge(gatewayConnections)).toBe(1);
      expect(await gauge(subgraphSubscriptions)).toBe(1);
      const appended = await platform.rest('issuer', `/passports/${passportId}/events`, { body: { type: 'ObjectEvent', payload: PAYLOADS.ObjectEvent!() }, as: 'writer' });
      expect(appended.status).toBe(201);
      await expect.poll(() => gauge(/graphql_subscription_delivery_lag_seconds_count\{server="issuer",subscription="passportEvents"\} (\d+)/), { timeout: 5_000, interval: 100 }).toBeGreaterThan(0);
      expect(await gauge(/graphql_subscription_events_total\{server="issuer",subscription="passportEvents"\} (\d+)/)).toBeGreaterThan(1);
    } finally {
      for (const stream of streams) stream.abort();
    }
    // The clients gone: nothing left counted open, at the gateway or the subgraph.
    await expect.poll(async () => [await gauge(subgraphConnections), await gauge(gatewayConnections), await gauge(subgraphSubscriptions)], { timeout: 3_000, interval: 100 }).toEqual([0, 0, 0]);
  });

  it('on shutdown, close each graphql-ws connection with 1012 (service restart), and end each subgraph event stream with retry:, so that clients reconnect and resume', async () => {
    let subscribed: () => void;
    const live = new Promise<void>((resolve) => (subscribed = resolve));
    const closed = new Promise<number>((resolve) => {
      const socket = new WebSocket(platform.stack.gateway.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init' })));
      socket.on('message', (message) => {
        const { type } = JSON.parse(String(message));
        if (type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: EVENTS, variables: { id: passportId } } }));
        // The replay has come: the subscription is live.
        if (type === 'next') subscribed();
      });
      socket.on('close', (code) => resolve(code));
    });
    // A subscription on the issuer's own port (as Hive Gateway subscribes): its stream ends with a reconnect hint.
    const url = new URL(platform.stack.subgraphUrls.issuer);
    url.searchParams.set('query', `subscription { passportEvents(passportId: "${passportId}") { seq } }`);
    const subgraphStream = await fetch(url, { headers: { accept: 'text/event-stream' } });
    expect(subgraphStream.status).toBe(200);
    // Read as it comes: the stream is live once its replay has come.
    const reader = subgraphStream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let subgraphText = '';
    const replayed = async () => {
      while (!subgraphText.includes('"seq"')) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the subgraph's stream ended before its replay: ${subgraphText}`);
        subgraphText += value;
      }
    };
    await Promise.all([live, replayed()]);
    const ended = (async () => {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) subgraphText += chunk.value;
      return subgraphText;
    })();
    stopped = true;
    await platform.stop();
    expect(await closed).toBe(1012);
    expect(await ended).toMatch(/retry: 1000\n\n$/);
  });
});
