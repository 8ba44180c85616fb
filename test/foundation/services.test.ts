import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../lib/crypto/jcs.js';
import { SERVICES } from '../../lib/config/services.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let platform: TestStack;
beforeAll(async () => {
  platform = await startTestStack();
});
afterAll(() => platform?.stop());

/** The JWK Set a service publishes: /keyring, or its discovery document for the registry. */
async function keyringOf(service: (typeof SERVICES)[number]) {
  const response = service === 'registry' ? await platform.rest(service, '/') : await platform.rest(service, '/keyring');
  expect(response.status).toBe(200);
  return (service === 'registry' ? response.body.keyring : response.body) as { keys: (jose.JWK & { kid: string; iat: number; exp?: number; purpose: string; signs: string[] })[] };
}

/** Verifies signed JSON the way an outside verifier would: jose, the JCS form, the pinned key. */
async function verifySignedJson(document: Record<string, unknown>, keys: jose.JWK[]) {
  const { signature, ...plain } = document;
  const [protectedHeader, detached, sig] = String(signature).split('.');
  expect(detached).toBe('');
  const header = jose.decodeProtectedHeader(String(signature));
  const jwk = keys.find((key) => key.kid === header.kid);
  expect(jwk, `key ${header.kid} is in the keyring`).toBeDefined();
  const key = await jose.importJWK(jwk!, 'Ed25519');
  return jose.flattenedVerify({ protected: protectedHeader!, payload: Buffer.from(canonicalize(plain)).toString('base64url'), signature: sig! }, key);
}

describe.each(SERVICES)('the %s service', (service) => {
  it('answers its discovery document with its endpoints and OpenAPI link', async () => {
    const response = await platform.rest(service, '/');
    expect(response.status).toBe(200);
    expect(response.body.service).toBe(service);
    expect(response.body.base_url).toBe(platform.base(service));
    const paths = response.body.endpoints.map((endpoint: { method: string; path: string }) => `${endpoint.method} ${endpoint.path}`);
    expect(paths).toEqual(expect.arrayContaining(['GET /', 'GET /healthz', 'GET /admin/log']));
    const openapi = await fetch(response.body.openapi);
    expect(openapi.status).toBe(200);
    const document = (await openapi.json()) as { openapi: string; paths: Record<string, unknown>; servers: { url: string }[] };
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers[0]!.url).toBe(platform.base(service));
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/', '/healthz', '/admin/log']));
  });

  it('signs its health, verifiable with jose against its published key', async () => {
    const response = await platform.rest(service, '/healthz');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ service, status: 'ok', database: 'ok' });
    const verified = await verifySignedJson(response.body, (await keyringOf(service)).keys);
    expect(verified.protectedHeader?.alg).toBe('Ed25519');
    const tampered = { ...response.body, status: 'degraded' };
    await expect(verifySignedJson(tampered, (await keyringOf(service)).keys)).rejects.toThrow();
  });

  it('publishes a JWK Set whose kids are RFC 7638 thumbprints', async () => {
    const { keys } = await keyringOf(service);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key.kid).toBe(await jose.calculateJwkThumbprint(key, 'sha256'));
      expect(key).not.toHaveProperty('d');
      expect(typeof key.iat).toBe('number');
    }
  });

  it('says in its keyring what each key is for (docs/KEYS.md): purpose, use and what it signs', async () => {
    const { keys } = await keyringOf(service);
    const described = keys.map(({ purpose, use, alg, signs }) => ({ purpose, use, alg, signs }));
    const expected = {
      trust: [{ purpose: 'service', use: 'sig', alg: 'Ed25519', signs: ['health', 'trust anchor bundles'] }],
      registry: [{ purpose: 'service', use: 'sig', alg: 'Ed25519', signs: ['health'] }],
      issuer: [
        { purpose: 'service', use: 'sig', alg: 'Ed25519', signs: ['health'] },
        { purpose: 'event', use: 'sig', alg: 'Ed25519', signs: ['events', 'log heads'] },
        { purpose: 'carrier', use: 'sig', alg: 'ES256', signs: ['Tier-A packs'] },
        { purpose: 'credential', use: 'sig', alg: 'Ed25519', signs: ['UNTP passport credentials (vc+jwt)', 'Bitstring Status List credentials (vc+jwt)'] },
      ],
      archive: [
        { purpose: 'service', use: 'sig', alg: 'Ed25519', signs: ['health'] },
        { purpose: 'notary', use: 'sig', alg: 'Ed25519', signs: ['notarizations of snapshots'] },
      ],
    }[service];
    expect(described).toEqual(expect.arrayContaining(expected));
    expect(new Set(described.map((key) => key.purpose))).toEqual(new Set(expected.map((key) => key.purpose)));
  });

  it('shows its admin log to admins only', async () => {
    expect((await platform.rest(service, '/admin/log')).status).toBe(401);
    expect((await platform.rest(service, '/admin/log', { as: 'writer' })).status).toBe(403);
    const page = await platform.rest(service, '/admin/log', { as: 'admin' });
    expect(page.status).toBe(200);
    expect(page.body).toHaveProperty('entries');
    expect((await platform.rest(service, '/admin/log?limit=0', { as: 'admin' })).status).toBe(400);
    expect((await platform.rest(service, '/admin/log?colour=red', { as: 'admin' })).body.code).toBe('INVALID_QUERY');
  });

  it('answers unknown paths with 404 and wrong methods with 405 and Allow, as problem+json', async () => {
    const missing = await platform.rest(service, '/no/such/path/here');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
    expect(missing.body).toMatchObject({ status: 404, code: 'NOT_FOUND', title: 'Not Found' });
    const wrongMethod = await platform.rest(service, '/healthz', { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD');
    expect(wrongMethod.body.code).toBe('METHOD_NOT_ALLOWED');
  });
});

describe('one graph', () => {
  it('answers a query that reaches all four subgraphs', async () => {
    const result = await platform.graphql('{ trust { health } registry { health } issuer { keyring } archive { discovery } }');
    expect(result.errors).toBeUndefined();
    expect(result.data.trust.health.service).toBe('trust');
    expect(result.data.registry.health.service).toBe('registry');
    expect(result.data.issuer.keyring.keys.length).toBeGreaterThanOrEqual(3);
    expect(result.data.archive.discovery.service).toBe('archive');
  });

  it('passes subgraph authorisation errors through with the service name and no internals', async () => {
    const result = await platform.graphql('{ issuer { adminLog { nodes { id } } } }');
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'MISSING_TOKEN', serviceName: 'issuer' });
    expect(JSON.stringify(result.errors)).not.toMatch(/stacktrace|at \w+ \(/);
  });
});

describe('keys', () => {
  it('rotate on an admin request, keeping the retired key published with exp', async () => {
    const before = await keyringOf('issuer');
    const healthBefore = (await platform.rest('issuer', '/healthz')).body;
    const denied = await platform.graphql('mutation { issuerRotateKey(purpose: "service") }', {}, 'writer');
    expect(denied.errors?.[0].extensions.code).toBe('INSUFFICIENT_ROLE');
    const unknown = await platform.graphql('mutation { issuerRotateKey(purpose: "nonsense") }', {}, 'admin');
    expect(unknown.errors?.[0].extensions.code).toBe('NOT_FOUND');

    const rotated = await platform.graphql('mutation { issuerRotateKey(purpose: "service") }', {}, 'admin');
    expect(rotated.errors).toBeUndefined();
    const after = await keyringOf('issuer');
    expect(after.keys).toHaveLength(before.keys.length + 1);
    const retired = after.keys.find((key) => key.kid === jose.decodeProtectedHeader(healthBefore.signature).kid)!;
    expect(typeof retired.exp).toBe('number');
    // What the retired key signed still verifies; new documents are signed by the new key.
    await verifySignedJson(healthBefore, after.keys);
    const healthAfter = (await platform.rest('issuer', '/healthz')).body;
    expect(jose.decodeProtectedHeader(healthAfter.signature).kid).toBe(rotated.data.issuerRotateKey.kid);
    await verifySignedJson(healthAfter, after.keys);
  });

  it('are revoked with a time and a reason, and a revoked current key is replaced', async () => {
    const current = jose.decodeProtectedHeader((await platform.rest('archive', '/healthz')).body.signature).kid!;
    const revoked = await platform.graphql('mutation($kid: String!) { archiveRevokeKey(kid: $kid, reason: "keyCompromise") }', { kid: current }, 'admin');
    expect(revoked.errors).toBeUndefined();
    expect(revoked.data.archiveRevokeKey.revoked).toMatchObject({ reason: 'keyCompromise' });
    const next = jose.decodeProtectedHeader((await platform.rest('archive', '/healthz')).body.signature).kid;
    expect(next).not.toBe(current);
    const log = await platform.rest('archive', '/admin/log', { as: 'admin' });
    expect(log.body.entries[0]).toMatchObject({ action: 'archiveRevokeKey', outcome: 'ok', actor: 'test-admin' });
  });

  it('survive a restart of the whole stack', async () => {
    const before = await Promise.all(SERVICES.map(keyringOf));
    await platform.restart();
    const after = await Promise.all(SERVICES.map(keyringOf));
    expect(after).toEqual(before);
  });
});

describe('the gateway in public', () => {
  it('refuses queries with more aliases than its limit, and oversized bodies', async () => {
    const aliased = await platform.graphql(`{ ${Array.from({ length: 70 }, (_, i) => `a${i}: trust { health }`).join(' ')} }`);
    expect(aliased.errors?.[0].message).toMatch(/alias/i);
    const huge = await fetch(platform.stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ trust { health } } # ${'x'.repeat(1_100_000)}` }),
    });
    expect(huge.status).toBe(413);
  });
});
