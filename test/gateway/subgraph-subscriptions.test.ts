/**
 * A subgraph's own subscriptions, as a gateway that forwards subscriptions to subgraphs meets them
 * (Hive Gateway, Cosmo Router: GraphQL over SSE to the subgraph that owns the field; the events'
 * fields of other subgraphs are that gateway's to resolve): the graphql-sse client library on the
 * issuer's and the archive's own ports. The replay after a cursor, then each event appended through
 * REST; what such a gateway sends other than a subscription, or over a limit, is refused as at the
 * subgraph's plain HTTP path.
 */
import { createClient } from 'graphql-sse';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendEvent, PAYLOADS } from '../issuer/support.js';
import type { SharedTestStack } from '../support/stack.js';
import { collector, settle } from './live-support.js';
import { sharedStackWithPassports } from './support.js';

const MODEL = 'battery-subgraph-live';
let platform: SharedTestStack;
let passportId = '';

beforeAll(async () => {
  // One passport with one event (an ObjectEvent) and one archive snapshot.
  const made = await sharedStackWithPassports(MODEL, 1);
  platform = made.platform;
  passportId = made.ids[0]!;
}, 180_000);

const subgraphClient = (service: 'issuer' | 'archive') => createClient({ url: platform.stack.subgraphUrls[service], singleConnection: false, retryAttempts: 0 });

/** A request to a subgraph's port as GraphQL over SSE (a GET with the query in its parameters, as Hive Gateway sends it). */
async function eventStreamGet(service: 'issuer' | 'archive', query: string, variables: Record<string, unknown> = {}): Promise<Response> {
  const url = new URL(platform.stack.subgraphUrls[service]);
  url.searchParams.set('query', query);
  url.searchParams.set('variables', JSON.stringify(variables));
  return fetch(url, { headers: { accept: 'text/event-stream' } });
}

describe("a subgraph's own subscriptions over GraphQL over SSE", () => {
  it("replays a passport's events after a cursor, then delivers each one appended, in order and once, with the federation keys of other subgraphs' fields", async () => {
    const client = subgraphClient('issuer');
    type Delivered = { cursor: string; seq: number; type: string; passport: { __typename: string; id: string } };
    const got = collector<Delivered>('passportEvents');
    const dispose = client.subscribe({ query: 'subscription($id: ID!) { passportEvents(passportId: $id) { cursor seq type passport { __typename id } } }', variables: { id: passportId } }, got.sink);
    try {
      await got.until(1);
      expect(got.items[0]).toEqual({ cursor: '0', seq: 0, type: 'ObjectEvent', passport: { __typename: 'Passport', id: passportId } });
      for (let index = 0; index < 3; index += 1) expect((await appendEvent(platform, passportId, 'ObjectEvent', PAYLOADS.ObjectEvent!())).status).toBe(201);
      await got.until(4);
      await settle();
      expect(got.items.map((event) => [event.seq, event.cursor])).toEqual([0, 1, 2, 3].map((seq) => [seq, String(seq)]));
      expect(got.errors).toEqual([]);
    } finally {
      dispose();
      client.dispose();
    }

    // Resumed after the last cursor it had: only what came after.
    const resumed = collector<{ seq: number }>('passportEvents');
    const again = subgraphClient('issuer');
    const disposeAgain = again.subscribe({ query: `subscription { passportEvents(passportId: "${passportId}", after: "2") { seq } }` }, resumed.sink);
    try {
      await resumed.until(1);
      await settle();
      expect(resumed.items).toEqual([{ seq: 3 }]);
    } finally {
      disposeAgain();
      again.dispose();
    }
  });

  it("follows the archive's snapshots of a passport as that subgraph stores them", async () => {
    const client = subgraphClient('archive');
    const got = collector<{ cursor: string; snapshot: { sha512: string } }>('passportSnapshots');
    const dispose = client.subscribe({ query: `subscription { passportSnapshots(passportId: "${passportId}") { cursor snapshot { sha512 } } }` }, got.sink);
    try {
      await got.until(1);
      expect(got.items[0]!.snapshot.sha512).toMatch(/^[0-9a-f]{128}$/);
    } finally {
      dispose();
      client.dispose();
    }
  });

  it('answers an unknown passport with NOT_FOUND, and refuses other operations and a subscription over a limit before anything runs', async () => {
    const unknown = await eventStreamGet('issuer', 'subscription { passportEvents(passportId: "no-such-passport") { seq } }');
    expect(unknown.status, await unknown.clone().text()).toBe(200);
    expect(await unknown.text()).toMatch(/event: next\ndata: \{"data":null,"errors":\[\{"message":"No passport has id no-such-passport\.".*"code":"NOT_FOUND"/);

    const query = await eventStreamGet('issuer', '{ passport(id: "x") { id } }');
    expect(query.status).toBe(400);
    expect(((await query.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('BAD_REQUEST');

    const mutation = await eventStreamGet('issuer', 'mutation { createPassport(input: {}) { id } }');
    expect(mutation.status).toBe(400);

    // Deeper than the subgraph takes (the gateway's depth, 15 by default, and 2 more for a plan's entity fetches).
    const deep = `passport { ${'successor { '.repeat(17)}id${' }'.repeat(17)} }`;
    const tooDeep = await eventStreamGet('issuer', `subscription { passportEvents(passportId: "${passportId}") { seq ${deep} } }`);
    expect(tooDeep.status).toBe(400);
    const [depthError] = ((await tooDeep.json()) as { errors: { message: string; extensions: { code: string } }[] }).errors;
    expect([depthError!.extensions.code, depthError!.message]).toEqual(['GRAPHQL_VALIDATION_FAILED', expect.stringContaining('depth limit of 17')]);

    const badToken = await fetch(new URL(`?query=${encodeURIComponent(`subscription { passportEvents(passportId: "${passportId}") { seq } }`)}`, platform.stack.subgraphUrls.issuer), {
      headers: { accept: 'text/event-stream', authorization: 'Bearer not-a-token' },
    });
    expect([badToken.status, badToken.headers.get('content-type')]).toEqual([401, 'application/problem+json']);
  });
});
