/**
 * API tokens as a stranger meets them (issue 44 item 2a): an admin issues a token for an operator
 * and role through the facade, and the token is recognised by the facade, the gateway and a
 * subgraph reached directly; revoked or expired it is refused everywhere with the answer an unknown
 * token gets; another operator's admin can neither issue, list nor revoke it; its secret is in no
 * list and no admin log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_CACHE_MS, IssuedTokenAuthenticator, ofActiveOperators } from '../../lib/auth/authentication.js';
import { IdentityStore } from '../../lib/auth/identity-store.js';
import { withSchema } from '../../lib/config/database.js';
import { type SharedTestStack, sharedTestStack } from '../support/stack.js';

let platform: SharedTestStack;
let store: IdentityStore;
const suffix = Math.random().toString(36).slice(2, 8);
const ours = `ours-${suffix}`;
const theirs = `theirs-${suffix}`;

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

/** The token's admin-only read at each server: the facade's REST, the gateway's and the issuer subgraph's GraphQL. */
async function statusesEverywhere(secret: string): Promise<{ facade: number; gateway: string; subgraph: string }> {
  const facade = (await platform.rest('issuer', '/admin/tokens', { headers: bearer(secret) })).status;
  const query = JSON.stringify({ query: '{ accessTokens { id } }' });
  const graphql = async (url: string) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(secret) }, body: query });
    const body = (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
    return body.errors?.[0]?.extensions?.code ?? 'ok';
  };
  return { facade, gateway: await graphql(platform.stack.gateway.graphqlUrl), subgraph: await graphql(platform.stack.subgraphUrls.issuer) };
}

async function issue(as: string, body: Record<string, unknown>) {
  return platform.rest('issuer', '/admin/tokens', { headers: bearer(as), body });
}

let ourAdmin: string;
let theirAdmin: string;

beforeAll(async () => {
  platform = await sharedTestStack();
  store = IdentityStore.open(withSchema(platform.databaseUrl, 'identity'));
  await store.createOperator({ id: ours, name: 'Our Batteries' });
  await store.createOperator({ id: theirs, name: 'Their Batteries' });
  // The platform admin (the configured admin token) issues each operator its first admin token.
  const first = await platform.rest('issuer', '/admin/tokens', { as: 'admin', body: { operator: ours, role: 'admin', label: 'our first admin' } });
  expect(first.status, first.text).toBe(201);
  ourAdmin = first.body.secret;
  theirAdmin = (await platform.rest('issuer', '/admin/tokens', { as: 'admin', body: { operator: theirs, role: 'admin', label: 'their first admin' } })).body.secret;
});
afterAll(() => store.close());

describe('an API token', () => {
  it('is issued once with its secret, and recognised by the facade, the gateway and a subgraph reached directly', async () => {
    const created = await issue(ourAdmin, { role: 'admin', label: 'deploy bot' });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.body).toMatchObject({ operator: ours, role: 'admin', label: 'deploy bot', expires_at: null, revoked_at: null, secret: expect.stringMatching(/^dpp_/) });
    expect(await statusesEverywhere(created.body.secret)).toEqual({ facade: 200, gateway: 'ok', subgraph: 'ok' });

    // A writer of the operator is authenticated, then its request judged: a malformed body is a 400, not a 401.
    const writer = (await issue(ourAdmin, { role: 'writer', label: 'line 3' })).body.secret;
    const write = await platform.rest('issuer', '/passports', { headers: bearer(writer), body: { identity: 'not an identity' } });
    expect(write.status, write.text).toBe(400);
    expect((await platform.rest('issuer', '/admin/tokens', { headers: bearer(writer) })).body.code).toBe('INSUFFICIENT_ROLE');
  });

  it('revoked, is refused everywhere as an unknown token is, and the revocation is in the admin log without any secret', async () => {
    const { secret, id } = (await issue(ourAdmin, { role: 'admin', label: 'to revoke' })).body;
    expect(await statusesEverywhere(secret)).toEqual({ facade: 200, gateway: 'ok', subgraph: 'ok' });
    const revoked = await platform.rest('issuer', `/admin/tokens/${id}/revocation`, { headers: bearer(ourAdmin), method: 'POST' });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    // At once in this process (its servers share one cache); other processes within TOKEN_CACHE_MS (below).
    expect(await statusesEverywhere(secret)).toEqual({ facade: 401, gateway: 'INVALID_TOKEN', subgraph: 'INVALID_TOKEN' });
    const unknown = await platform.rest('issuer', '/admin/tokens', { headers: bearer(`dpp_${'x'.repeat(43)}`) });
    const refused = await platform.rest('issuer', '/admin/tokens', { headers: bearer(secret) });
    expect([refused.status, refused.headers.get('www-authenticate'), refused.body.detail]).toEqual([unknown.status, unknown.headers.get('www-authenticate'), unknown.body.detail]);

    const log = await platform.rest('issuer', '/admin/log?limit=100', { as: 'admin' });
    expect(log.body.entries).toEqual(
      expect.arrayContaining([expect.objectContaining({ action: 'revokeAccessToken', outcome: 'ok' }), expect.objectContaining({ action: 'createAccessToken', outcome: 'ok' })]),
    );
    expect(log.text).not.toContain(secret);
    expect(log.text).not.toContain(ourAdmin);
  });

  it('expired, is refused everywhere at once, though the servers still hold it', async () => {
    const expiresAt = Date.now() + 3_000;
    const { secret } = (await issue(ourAdmin, { role: 'admin', label: 'short', expires_at: new Date(expiresAt).toISOString() })).body;
    const before = await statusesEverywhere(secret);
    // On a machine too loaded to ask three servers in 3 s the token expired meanwhile: only what follows is shown then.
    if (Date.now() < expiresAt) expect(before).toEqual({ facade: 200, gateway: 'ok', subgraph: 'ok' });
    await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 50));
    expect(await statusesEverywhere(secret)).toEqual({ facade: 401, gateway: 'INVALID_TOKEN', subgraph: 'INVALID_TOKEN' });
  });

  it("of another operator cannot be issued, listed or revoked by an operator's admin: its operator is unknown to it", async () => {
    const mine = (await issue(ourAdmin, { role: 'reader', label: 'mine' })).body;
    for (const attempt of [
      await issue(theirAdmin, { operator: ours, role: 'admin', label: 'takeover' }),
      await platform.rest('issuer', `/admin/tokens?operator=${ours}`, { headers: bearer(theirAdmin) }),
      await platform.rest('issuer', `/admin/tokens/${mine.id}/revocation?operator=${ours}`, { headers: bearer(theirAdmin), method: 'POST' }),
      await issue(theirAdmin, { operator: 'default', role: 'admin', label: 'default takeover' }),
    ]) {
      expect([attempt.status, attempt.body.code], attempt.text).toEqual([404, 'UNKNOWN_OPERATOR']);
    }
    // Named as its own, our token is not theirs to revoke: not found.
    const revocation = await platform.rest('issuer', `/admin/tokens/${mine.id}/revocation`, { headers: bearer(theirAdmin), method: 'POST' });
    expect([revocation.status, revocation.body.code]).toEqual([404, 'UNKNOWN_TOKEN']);
    const theirList = await platform.rest('issuer', '/admin/tokens', { headers: bearer(theirAdmin) });
    expect(theirList.body.tokens.map((token: { id: string }) => token.id)).not.toContain(mine.id);
    // Nothing changed: ours is listed, not revoked, and no token was made for us by them.
    const ourList = await platform.rest('issuer', '/admin/tokens', { headers: bearer(ourAdmin) });
    expect(ourList.body.tokens.find((token: { id: string }) => token.id === mine.id)).toMatchObject({ revoked_at: null });
    expect(ourList.body.tokens.map((token: { label: string }) => token.label)).not.toContain('takeover');
    expect(ourList.text).not.toMatch(/dpp_/);
    // Refused writes reach the admin log.
    const log = await platform.rest('issuer', '/admin/log?limit=100', { as: 'admin' });
    expect(log.body.entries).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'createAccessToken', outcome: 'UNKNOWN_OPERATOR' })]));
  });

  it('is refused on bad input with a problem, and nothing is made', async () => {
    const before = (await platform.rest('issuer', '/admin/tokens', { headers: bearer(ourAdmin) })).body.tokens.length;
    for (const body of [{ role: 'owner', label: 'x' }, { role: 'reader', label: '' }, { role: 'reader', label: 'x', expires_at: '2001-01-01T00:00:00Z' }, { role: 'reader' }]) {
      const refused = await issue(ourAdmin, body);
      expect(refused.status, refused.text).toBe(400);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect((await platform.rest('issuer', '/admin/tokens', { headers: bearer(ourAdmin) })).body.tokens.length).toBe(before);
  });

  // Revoked or suspended in another process, as this test's own store is: a server (here one with a
  // clock of the test's) answers from its cache until TOKEN_CACHE_MS is up, then asks the store.
  it('revoked in another process is refused by a server within TOKEN_CACHE_MS, not before', async () => {
    // lru-cache takes an entry made at 0 for one without a time to live: the clock starts later.
    let now = 1_000;
    const server = new IssuedTokenAuthenticator(store, { now: () => now });
    const { secret, id } = (await issue(ourAdmin, { role: 'writer', label: 'cached' })).body;
    expect(await server.authenticate(secret)).toMatchObject({ operator: ours, roles: ['writer'], credential: id });
    await store.revokeToken(id, ours);
    now += TOKEN_CACHE_MS - 1;
    expect(await server.authenticate(secret)).toBeDefined();
    now += 2;
    expect(await server.authenticate(secret)).toBeUndefined();
  });

  it('of an operator suspended in another process is refused by a server within TOKEN_CACHE_MS', async () => {
    // lru-cache takes an entry made at 0 for one without a time to live: the clock starts later.
    let now = 1_000;
    const server = new IssuedTokenAuthenticator(store, { now: () => now });
    const { secret } = (await issue(theirAdmin, { role: 'admin', label: 'before suspension' })).body;
    expect(await server.authenticate(secret)).toMatchObject({ operator: theirs, roles: ['admin'] });
    await store.suspendOperator(theirs);
    now += TOKEN_CACHE_MS + 1;
    expect(await server.authenticate(secret)).toBeUndefined();
    expect(await store.tokenHolder(secret)).toBeUndefined();
  });

  it("of an OpenID provider names an operator that exists and is active, else it authenticates to nothing, as the store's own tokens", async () => {
    const doomed = `doomed-${suffix}`;
    expect((await platform.rest('issuer', '/operators', { as: 'admin', body: { id: doomed, name: 'Doomed' } })).status).toBe(201);
    // The provider's verdict stands in for a verified JWT: what is judged here is the operator it names.
    const provider = ofActiveOperators({ authenticate: async (operator) => ({ name: 'machine', operator, roles: ['writer'], credential: 'machine' }) }, store);
    expect(await provider.authenticate(ours)).toMatchObject({ operator: ours });
    expect(await provider.authenticate(`nobody-${suffix}`)).toBeUndefined();
    expect(await provider.authenticate(doomed)).toMatchObject({ operator: doomed });
    await store.suspendOperator(doomed);
    provider.forget();
    expect(await provider.authenticate(doomed)).toBeUndefined();
  });

  it("of the audience roles is issued by the platform admin only: an operator's admin granting itself authority would read every operator's restricted members", async () => {
    for (const role of ['authority', 'legitimate-interest']) {
      const refused = await issue(ourAdmin, { role, label: 'my own authority' });
      expect([refused.status, refused.body.code]).toEqual([403, 'PLATFORM_ADMIN_REQUIRED']);
    }
    expect((await platform.rest('issuer', '/admin/tokens', { as: 'admin', body: { operator: ours, role: 'authority', label: 'a surveillance authority' } })).status).toBe(201);
  });

  it('being looked up while this process revokes another is asked again, not failed (the revocation aborts the lookups in flight)', async () => {
    const { secret, id } = (await issue(ourAdmin, { role: 'reader', label: 'looked up during a revocation' })).body;
    let asked = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = new IssuedTokenAuthenticator({
      async tokenHolder(token) {
        asked += 1;
        if (asked === 1) await held;
        return store.tokenHolder(token);
      },
    });
    const answer = server.authenticate(secret);
    await new Promise((resolve) => setImmediate(resolve));
    server.forget();
    release();
    expect(await answer).toMatchObject({ operator: ours, credential: id });
    expect(asked).toBe(2);
  });

  it('configured in the environment still works: the admin token is the platform admin, the writer writes for the default operator', async () => {
    const platformTokens = await platform.rest('issuer', '/admin/tokens', { as: 'admin' });
    expect(platformTokens.status).toBe(200);
    const forDefault = await platform.rest('issuer', '/admin/tokens', { as: 'admin', body: { operator: 'default', role: 'reader', label: 'default reader' } });
    expect([forDefault.status, forDefault.body.operator, forDefault.body.created_by]).toEqual([201, 'default', 'test-admin']);
    expect((await platform.rest('issuer', '/admin/tokens', { as: 'writer' })).body.code).toBe('INSUFFICIENT_ROLE');
  });
});
