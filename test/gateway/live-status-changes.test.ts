/**
 * The status changes of an operator's passports, or of a set of passports, as a subscriber meets them
 * at the gateway with the graphql-ws and graphql-sse client libraries: statuses changed through REST
 * by two operators' writers; an operator's feed shows only its passports' changes, in commit order,
 * with fields of other subgraphs; a client dropped mid-stream resumes after its last cursor and gets
 * exactly the changes it missed.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CONFIG_VECTOR, createModel, createPassport, itemIdentity, PAYLOADS } from '../issuer/support.js';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';
import { collector, settle } from './live-support.js';

const MODEL = 'battery-live-status';
const ACME = `acme-live-${process.pid}`;
let platform: SharedTestStack;
let acmeWriter = '';

const CHANGES = `subscription Changes($operator: ID, $ids: [ID!], $after: String) {
  passportStatusChanges(operator: $operator, passportIds: $ids, after: $after) {
    cursor passportId operator seq from to
    passport { status typeRecord { id } }
  }
}`;

interface Change {
  cursor: string;
  passportId: string;
  operator: string;
  seq: number;
  from: string;
  to: string;
  passport: { status: string; typeRecord: { id: string } };
}

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
  const operator = await platform.rest('issuer', '/operators', { body: { id: ACME, name: 'ACME live' }, as: 'admin' });
  expect(operator.status, operator.text).toBe(201);
  const token = await platform.rest('issuer', '/admin/tokens', { body: { operator: ACME, role: 'writer', label: 'live status' }, as: 'admin' });
  expect(token.status, token.text).toBe(201);
  acmeWriter = token.body.secret;
}, 180_000);

/** A passport of ACME (created with its writer's token). */
async function acmePassport(): Promise<string> {
  const response = await fetch(`${platform.base('issuer')}/passports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${acmeWriter}`, 'content-type': 'application/json' },
    body: JSON.stringify({ identity: itemIdentity(), type_ref: { id: MODEL, version: 1 }, config_vector: CONFIG_VECTOR }),
  });
  const body = (await response.json()) as { passport_id: string };
  expect(response.status, JSON.stringify(body)).toBe(201);
  return body.passport_id;
}

/** Appends an event as the passport's operator's writer (ACME's or the default's). */
async function append(passportId: string, type: string, acme: boolean): Promise<void> {
  const response = await fetch(`${platform.base('issuer')}/passports/${passportId}/events`, {
    method: 'POST',
    headers: { authorization: acme ? `Bearer ${acmeWriter}` : `Bearer ${TOKENS.writer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type, payload: PAYLOADS[type]!() }),
  });
  expect(response.status, await response.text()).toBe(201);
}

const wsClient = () => createWsClient({ url: platform.stack.gateway.graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });

function subscribeWs(client: WsClient, variables: Record<string, unknown>) {
  const got = collector<Change>('passportStatusChanges');
  client.subscribe({ query: CHANGES, variables }, got.sink);
  return got;
}

const summary = (changes: Change[]) => changes.map(({ passportId, from, to }) => `${passportId} ${from}→${to}`);

describe('Subscription.passportStatusChanges', () => {
  it("an operator's feed shows only its passports' changes, in order, with fields of other subgraphs; a dropped client resumes after its last cursor with exactly what it missed", async () => {
    const a = await acmePassport();
    const other = (await createPassport(platform, MODEL)).passport_id;
    const first = wsClient();
    const before = subscribeWs(first, { operator: ACME, after: null });
    await append(a, 'activated', true);
    await append(a, 'ObjectEvent', true);
    await append(other, 'activated', false);
    await append(a, 'suspended', true);
    await before.until(2);
    expect(summary(before.items)).toEqual([`${a} draft→active`, `${a} active→suspended`]);
    expect(before.items[0]).toMatchObject({ operator: ACME, seq: 0, passport: { typeRecord: { id: MODEL } } });
    expect(before.items[1]).toMatchObject({ seq: 2, passport: { status: 'suspended' } });
    const last = before.items.at(-1)!.cursor;
    // The connection drops (the client goes away without completing); changes go on meanwhile.
    await first.dispose();
    const b = await acmePassport();
    await append(a, 'reinstated', true);
    await append(other, 'suspended', false);
    await append(b, 'activated', true);

    const second = wsClient();
    try {
      const after = subscribeWs(second, { operator: ACME, after: last });
      await after.until(2);
      await append(b, 'revoked', true);
      await after.until(3);
      await settle();
      expect(summary(after.items)).toEqual([`${a} suspended→active`, `${b} draft→active`, `${b} active→revoked`]);
      const cursors = [...before.items, ...after.items].map((change) => BigInt(change.cursor));
      expect(cursors).toEqual([...cursors].sort((x, y) => (x < y ? -1 : 1)));
      expect(after.errors).toEqual([]);
    } finally {
      await second.dispose();
    }
  });

  it('follows a set of passports over GraphQL over SSE, whatever their operators, replay then live', async () => {
    const a = await acmePassport();
    const other = (await createPassport(platform, MODEL)).passport_id;
    const unrelated = (await createPassport(platform, MODEL)).passport_id;
    await append(a, 'activated', true);
    await append(unrelated, 'activated', false);
    const got = collector<Change>('passportStatusChanges');
    const client = createSseClient({ url: platform.stack.gateway.graphqlUrl, singleConnection: false, retryAttempts: 0 });
    const dispose = client.subscribe({ query: CHANGES, variables: { ids: [a, other] } }, got.sink);
    try {
      await got.until(1);
      await append(other, 'activated', false);
      await append(unrelated, 'suspended', false);
      await append(a, 'end_of_life', true);
      await got.until(3);
      await settle();
      expect(summary(got.items)).toEqual([`${a} draft→active`, `${other} draft→active`, `${a} active→end_of_life`]);
      expect(got.errors).toEqual([]);
    } finally {
      dispose();
      client.dispose();
    }
  });

  it("follows every passport's changes when neither an operator nor passports are named, and the operator's among the passports named when both are", async () => {
    const a = await acmePassport();
    const other = (await createPassport(platform, MODEL)).passport_id;
    await append(a, 'activated', true);
    const known = await platform.graphql('query($ids: [ID!]) { passportStatusChangesAfter(passportIds: $ids) { nodes { cursor } } }', { ids: [a] });
    const since = known.data.passportStatusChangesAfter.nodes[0].cursor;
    const client = wsClient();
    try {
      const every = subscribeWs(client, { after: since });
      const both = subscribeWs(client, { operator: ACME, ids: [a, other] });
      await both.until(1);
      await append(other, 'activated', false);
      await append(a, 'suspended', true);
      await every.until(2);
      await both.until(2);
      await settle();
      expect(summary(every.items)).toEqual([`${other} draft→active`, `${a} active→suspended`]);
      expect(summary(both.items)).toEqual([`${a} draft→active`, `${a} active→suspended`]);
    } finally {
      await client.dispose();
    }
  });

  it('refuses a cursor that is none, and more passports than one subscription may name', async () => {
    const client = wsClient();
    try {
      const answer = (variables: Record<string, unknown>) =>
        new Promise<any>((resolve) => client.subscribe({ query: CHANGES, variables }, { next: resolve, error: (error) => resolve({ error }), complete: () => resolve('complete') }));
      expect(await answer({ operator: ACME, after: 'not-a-cursor' })).toMatchObject({ errors: [{ extensions: { code: 'INVALID_CURSOR' } }] });
      expect(await answer({ ids: Array.from({ length: 101 }, (_, index) => `p-${index}`) })).toMatchObject({ errors: [{ extensions: { code: 'INVALID_QUERY' } }] });
    } finally {
      await client.dispose();
    }
  });
});
