/**
 * Trusted documents: with TRUSTED_DOCUMENTS set, the gateway runs registered documents only (the
 * platform's own, made by `npm run documents`, and an operator's manifest of a partner app's), named
 * by `documentId` or `extensions.persistedQuery.sha256Hash`, in a POST or a GET; any other request is
 * refused 400 with a stable code. The platform's own callers name theirs by id, so the REST facade,
 * the issuer asking the registry through the graph and the verification page's trust material work
 * as before. Without the setting, any document runs, and the platform's ids too.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { platformDocumentsText } from '../../bin/platform-documents.js';
import { documentHash, PLATFORM_DOCUMENTS_FILE } from '../../lib/graphql/trusted-documents.js';
import { RECORD } from '../../rest-facade/routes/registry/operations.js';
import { issuePassport } from '../archive/support/issuer-fixture.js';
import { scratchFolder } from '../support/scratch-folder.js';
import { sharedTestStack, startTestStack, TOKENS, type TestStack } from '../support/stack.js';

/** A partner app's own query, registered by the operator in a manifest of its own. */
const PARTNER_QUERY = 'query PartnerItem($id: ID!) { registryRecord(id: $id, kind: "item") { id version } }';
const PARTNER_MANIFEST = join(scratchFolder('partner-documents-'), 'manifest.json');

let platform: TestStack;
beforeAll(async () => {
  writeFileSync(PARTNER_MANIFEST, JSON.stringify({ [documentHash(PARTNER_QUERY)]: PARTNER_QUERY }));
  platform = await startTestStack({ env: { TRUSTED_DOCUMENTS: PARTNER_MANIFEST } });
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

/** A POST to the gateway, its status and body. */
async function post(graphqlUrl: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.writer}` }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

/** A whole answer that ran: its data, and what it cost (the gateway adds `extensions.cost` to every answer that ran). */
const answered = (data: unknown) => ({ data, extensions: { cost: { estimated: expect.any(Number), actual: expect.any(Number), max: expect.any(Number) } } });
const codeOf = (answer: { body: any }) => answer.body.errors?.[0]?.extensions?.code;

it('the committed manifest is what `npm run documents` writes from the sources', () => {
  expect(readFileSync(PLATFORM_DOCUMENTS_FILE, 'utf8')).toBe(platformDocumentsText());
});

describe('in trusted-documents mode', () => {
  it('the facade, the issuer through the graph and the verification page work: they send ids', async () => {
    const created = await platform.rest('registry', '/', { body: { kind: 'item', id: 'trusted-item', body: { label: 'registered documents only' } }, as: 'writer' });
    expect(created.status).toBe(201);
    expect((await platform.rest('registry', '/items/trusted-item')).body.id).toBe('trusted-item');
    // The issuer asks the registry for the model (through the gateway) before it makes the passport.
    const passport = await issuePassport(platform.rest as never, { traceEvents: 1, serial: 'trusted-1' });
    expect((await platform.rest('issuer', `/passports/${passport.id}`)).status).toBe(200);
    const anchors = await fetch(`${platform.stack.facade.url}/verify/anchors.json`);
    expect([anchors.status, Object.keys((await anchors.json()) as object)]).toEqual([200, ['anchor_bundle', 'trust_keyring']]);
  });

  it('runs an operator-registered document named by documentId or persistedQuery, in a POST or a GET', async () => {
    const { graphqlUrl } = platform.stack.gateway;
    const id = documentHash(PARTNER_QUERY);
    const expected = answered({ registryRecord: { id: 'trusted-item', version: 1 } });
    expect(await post(graphqlUrl, { documentId: `sha256:${id}`, variables: { id: 'trusted-item' } })).toEqual({ status: 200, body: expected });
    expect(await post(graphqlUrl, { extensions: { persistedQuery: { version: 1, sha256Hash: id } }, variables: { id: 'trusted-item' } })).toEqual({ status: 200, body: expected });
    const get = await fetch(`${graphqlUrl}?documentId=${id}&variables=${encodeURIComponent(JSON.stringify({ id: 'trusted-item' }))}`);
    expect([get.status, await get.json()]).toEqual([200, expected]);
  });

  it('refuses any other document 400 with a stable code, POST or GET, before running it', async () => {
    const { graphqlUrl } = platform.stack.gateway;
    const text = await post(graphqlUrl, { query: PARTNER_QUERY, variables: { id: 'trusted-item' } });
    expect([text.status, codeOf(text), text.body.data]).toEqual([400, 'PERSISTED_QUERY_ID_REQUIRED', undefined]);
    const mutation = await post(graphqlUrl, { query: 'mutation { seedRegistry { records } }' });
    expect([mutation.status, codeOf(mutation)]).toEqual([400, 'PERSISTED_QUERY_ID_REQUIRED']);
    const unknown = documentHash('{ __typename }');
    for (const body of [{ documentId: `sha256:${unknown}` }, { extensions: { persistedQuery: { version: 1, sha256Hash: unknown } } }]) {
      const refused = await post(graphqlUrl, body);
      expect([refused.status, codeOf(refused)]).toEqual([400, 'PERSISTED_QUERY_NOT_IN_LIST']);
    }
    const get = await fetch(`${graphqlUrl}?query=${encodeURIComponent('{ __typename }')}`);
    expect([get.status, codeOf({ body: await get.json() })]).toEqual([400, 'PERSISTED_QUERY_ID_REQUIRED']);
    // A subscription's text over graphql-ws too, and an id no manifest has.
    const client = createWsClient({ url: graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
    const subscribed = (payload: { query: string; documentId?: string }) =>
      new Promise<unknown>((resolve) => client.subscribe(payload, { next: resolve, error: (error) => resolve({ error }), complete: () => resolve('complete') }));
    try {
      const events = 'subscription { passportEvents(passportId: "no-such-passport") { cursor } }';
      expect(await subscribed({ query: events })).toMatchObject({ error: [{ extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED' } }] });
      expect(await subscribed({ query: '', documentId: `sha256:${unknown}` })).toMatchObject({ error: [{ extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' } }] });
    } finally {
      await client.dispose();
    }
  });
});

describe('without it (the default)', () => {
  it('runs any document, and the platform’s own by id', async () => {
    const shared = await sharedTestStack();
    const { graphqlUrl } = shared.stack.gateway;
    expect(await post(graphqlUrl, { query: '{ __typename }' })).toEqual({ status: 200, body: answered({ __typename: 'Query' }) });
    const byId = await post(graphqlUrl, { documentId: `sha256:${documentHash(RECORD)}`, variables: { id: 'no-such-record', kind: 'item' } });
    expect(byId).toEqual({ status: 200, body: answered({ registryRecord: null }) });
  });
});
