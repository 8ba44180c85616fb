/**
 * A passport's events as a subscriber meets them at the gateway's /graphql, with the graphql-ws and
 * graphql-sse client libraries: the replay after a cursor, then each event appended through REST,
 * with fields of the other subgraphs (the registry record, the archive's snapshots) resolved as in a
 * query; a client dropped mid-stream resumes after its last cursor and gets exactly what it missed.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { appendEvent, PAYLOADS } from '../issuer/support.js';
import { TOKENS, type SharedTestStack } from '../support/stack.js';
import { collector, settle } from './live-support.js';
import { sharedStackWithPassports } from './support.js';

const MODEL = 'battery-live';
let platform: SharedTestStack;
let passportId = '';

const EVENTS = `subscription PassportEvents($id: ID!, $after: String) {
  passportEvents(passportId: $id, after: $after) {
    cursor seq type record
    passport { id logSize typeRecord { id kind } snapshots { sha512 } }
  }
}`;

interface Delivered {
  cursor: string;
  seq: number;
  type: string;
  record: { seq: number; type: string };
  passport: { id: string; logSize: number; typeRecord: { id: string; kind: string }; snapshots: { sha512: string }[] };
}

beforeAll(async () => {
  // One passport with one event (an ObjectEvent) and one archive snapshot.
  const made = await sharedStackWithPassports(MODEL, 1);
  platform = made.platform;
  passportId = made.ids[0]!;
}, 180_000);

const wsUrl = () => platform.stack.gateway.graphqlUrl.replace(/^http/, 'ws');

async function append(count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const appended = await appendEvent(platform, passportId!, 'ObjectEvent', PAYLOADS.ObjectEvent!());
    expect(appended.status, JSON.stringify(appended.body)).toBe(201);
  }
}

function subscribeWs(client: WsClient, after: string | null) {
  const got = collector<Delivered>('passportEvents');
  const dispose = client.subscribe({ query: EVENTS, variables: { id: passportId, after } }, got.sink);
  return { ...got, events: got.items, dispose };
}

describe('Subscription.passportEvents over graphql-ws', () => {
  it('replays the log, then delivers each event appended, with fields of other subgraphs', async () => {
    const client = createWsClient({ url: wsUrl(), webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
    try {
      const stream = subscribeWs(client, null);
      await stream.until(1);
      expect(stream.events[0]).toMatchObject({ cursor: '0', seq: 0, type: 'ObjectEvent', record: { seq: 0, type: 'ObjectEvent' } });
      expect(stream.events[0]!.passport).toMatchObject({ id: passportId, typeRecord: { id: MODEL, kind: 'model' }, snapshots: [{ sha512: expect.stringMatching(/^[0-9a-f]{128}$/) }] });
      await append(3);
      await stream.until(4);
      expect(stream.events.map((event) => event.seq)).toEqual([0, 1, 2, 3]);
      // Each delivered event reads the passport as it is at delivery: at least as long as the event.
      for (const event of stream.events) expect(event.passport.logSize).toBeGreaterThan(event.seq);
      expect(stream.errors).toEqual([]);
      stream.dispose();
    } finally {
      await client.dispose();
    }
  });

  it('a client dropped mid-stream resumes after its last cursor and gets exactly the events it missed', async () => {
    const first = createWsClient({ url: wsUrl(), webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
    const before = subscribeWs(first, null);
    const { logSize } = (await platform.graphql('query($id: ID!) { passport(id: $id) { logSize } }', { id: passportId })).data.passport;
    await before.until(logSize);
    const last = before.events.at(-1)!.cursor;
    // The connection drops (the client goes away without completing).
    await first.dispose();
    await append(3);

    const second = createWsClient({ url: wsUrl(), webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
    try {
      const resumed = subscribeWs(second, last);
      await resumed.until(3);
      await append(1);
      await resumed.until(4);
      expect(resumed.events.map((event) => event.seq)).toEqual([logSize, logSize + 1, logSize + 2, logSize + 3]);
      resumed.dispose();
    } finally {
      await second.dispose();
    }
  });

  it('subscribers of a passport with the same credentials read each append once between them; another token reads its own', async () => {
    const FOLLOW = 'subscription SharedFollow($id: ID!) { passportEvents(passportId: $id) { seq } }';
    /** The gateway's reads of SharedFollow so far (its GraphQL operations of that name, whatever their outcome). */
    const reads = async () => {
      const exposition = await platform.stack.operations.metrics.exposition();
      let count = 0;
      for (const [, value] of exposition.matchAll(/^graphql_server_operation_duration_seconds_count\{server="gateway",graphql_operation_name="SharedFollow"[^}]*\} (\d+)$/gm)) count += Number(value);
      return count;
    };
    const { logSize } = (await platform.graphql('query($id: ID!) { passport(id: $id) { logSize } }', { id: passportId })).data.passport;
    const clients = [undefined, undefined, undefined, `Bearer ${TOKENS.writer}`].map((authorization) =>
      createWsClient({ url: wsUrl(), webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, connectionParams: authorization ? { authorization } : {} }),
    );
    try {
      const streams = clients.map((client) => {
        const got = collector<{ seq: number }>('passportEvents');
        client.subscribe({ query: FOLLOW, variables: { id: passportId } }, got.sink);
        return got;
      });
      for (const stream of streams) await stream.until(logSize);
      const before = await reads();
      // Each append once every subscriber has the one before, so that one notice wakes all four.
      for (const count of [logSize + 1, logSize + 2]) {
        await append(1);
        for (const stream of streams) await stream.until(count);
      }
      await settle();
      // Two appends, each read once by the three anonymous subscribers together and once by the writer's.
      expect((await reads()) - before).toBe(4);
      for (const stream of streams) {
        expect(stream.items.map((event) => event.seq)).toEqual(Array.from({ length: logSize + 2 }, (_, seq) => seq));
        expect(stream.errors).toEqual([]);
      }
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
    }
  });

  it('refuses an unknown passport, a bad cursor and a query sent over the socket, each with its code', async () => {
    const client = createWsClient({ url: wsUrl(), webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
    const outcome = (payload: { query: string; variables?: Record<string, unknown> }) =>
      new Promise<unknown>((resolve) => client.subscribe(payload, { next: (result) => resolve(result), error: (error) => resolve({ error }), complete: () => resolve('complete') }));
    try {
      expect(await outcome({ query: EVENTS, variables: { id: 'no-such-passport', after: null } })).toMatchObject({ errors: [{ extensions: { code: 'NOT_FOUND' } }] });
      expect(await outcome({ query: EVENTS, variables: { id: passportId, after: 'x' } })).toMatchObject({ errors: [{ extensions: { code: 'INVALID_CURSOR' } }] });
      expect(await outcome({ query: 'query { issuer { discovery } }' })).toMatchObject({ error: [{ extensions: { code: 'BAD_REQUEST' } }] });
    } finally {
      await client.dispose();
    }
  });
});

describe('Subscription.passportEvents over GraphQL over SSE', () => {
  it('resumes after a cursor and then goes live, in order, with no duplicate', async () => {
    const client = createSseClient({ url: platform.stack.gateway.graphqlUrl, singleConnection: false, retryAttempts: 0 });
    const { logSize } = (await platform.graphql('query($id: ID!) { passport(id: $id) { logSize } }', { id: passportId })).data.passport;
    const got = collector<Delivered>('passportEvents');
    const dispose = client.subscribe({ query: EVENTS, variables: { id: passportId, after: String(logSize - 2) } }, got.sink);
    try {
      await got.until(1);
      await append(2);
      await got.until(3);
      expect(got.items.map((event) => event.seq)).toEqual([logSize - 1, logSize, logSize + 1]);
      expect(got.items[2]!.passport.typeRecord).toEqual({ id: MODEL, kind: 'model' });
    } finally {
      dispose();
      client.dispose();
    }
  });

  it('a subscription sent as a plain POST is refused 400, naming the two protocols', async () => {
    const response = await fetch(platform.stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: EVENTS, variables: { id: passportId } }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('SUBSCRIPTION_NOT_SUPPORTED');
    expect(body.errors[0]!.message).toMatch(/graphql-transport-ws/);
    expect(body.errors[0]!.message).toMatch(/text\/event-stream/);
  });
});
