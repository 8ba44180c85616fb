/**
 * Access tokens of an external OpenID provider (issue 44, item 2b), as a machine client meets the
 * platform: a real provider on loopback (oidc-provider, test/support/openid-provider.ts) issues JWT
 * access tokens by the client-credentials grant; the authenticator finds it by discovery and checks
 * them against its JWKS. Forged tokens are signed with keys of their own, never made unsigned.
 */
import { createPublicKey, verify } from 'node:crypto';
import { type JWK, SignJWT, generateKeyPair } from 'jose';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokens } from '../../lib/auth/tokens.js';
import { IdentityProviderUnavailable, openIdAuthenticator, type OidcTiming } from '../../lib/auth/oidc.js';
import { loadOidcConfig, type OidcConfig } from '../../lib/config/oidc.js';
import { ConfigurationError } from '../../lib/config/runtime.js';
import type { ServiceRoutes } from '../../rest-facade/route-table.js';
import { startFacade } from '../../rest-facade/server.js';
import { freePort } from '../support/free-port.js';
import { type MachineClient, type OpenIdProvider, type SigningKey, signingKey, startOpenIdProvider } from '../support/openid-provider.js';

const AUDIENCE = 'https://passport.example/api';

const CLIENTS: Record<string, MachineClient> = {
  'acme-line': { claims: { operator: 'acme', roles: ['writer', 'reader', 'auditor'] } },
  'acme-reader': { claims: { operator: 'acme', roles: 'reader legitimate-interest' } },
  'no-operator': { claims: { roles: ['writer'] } },
  'no-known-role': { claims: { operator: 'acme', roles: ['superuser'] } },
  'acme-ec': { claims: { operator: 'acme', roles: ['writer'] }, alg: 'ES256' },
  'keycloak-style': { claims: { 'https://passport.example/operator': 'beta', realm_access: { roles: ['offline_access', 'authority'] } } },
};

let rsa: SigningKey;
let ec: SigningKey;
let provider: OpenIdProvider;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function configOf(issuer: string, more: NodeJS.ProcessEnv = {}): OidcConfig {
  return loadOidcConfig({ PASSPORT_OIDC_ISSUER: issuer, PASSPORT_OIDC_AUDIENCE: AUDIENCE, ...more })!;
}

function authenticator(more: NodeJS.ProcessEnv = {}, timing: Partial<OidcTiming> = {}) {
  return openIdAuthenticator(configOf(provider.issuer, more), timing);
}

let forgersKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** A token the provider never issued: claims chosen by the forger, signed with a key of the forger's. */
function forged(claims: Record<string, unknown>, kid: string, issuer = provider.issuer): Promise<string> {
  return new SignJWT({ operator: 'acme', roles: ['admin'], ...claims })
    .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid })
    .setIssuer(issuer)
    .setAudience(AUDIENCE)
    .setSubject('acme-line')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(forgersKey);
}

const jwksFetches = () => provider.requests.get('/jwks') ?? 0;

beforeAll(async () => {
  [rsa, ec, { privateKey: forgersKey }] = await Promise.all([signingKey('RS256', 'rsa-1'), signingKey('ES256', 'ec-1'), generateKeyPair('RS256')]);
  provider = await startOpenIdProvider(CLIENTS, [rsa, ec]);
});

afterAll(async () => {
  await provider?.stop();
});

describe('an access token of the OpenID provider', () => {
  it('authenticates to the operator and the known roles of its claims; its signature is the provider’s by node:crypto too', async () => {
    const token = await provider.token('acme-line', AUDIENCE);
    expect(await authenticator().authenticate(token)).toEqual({ name: 'acme-line', operator: 'acme', roles: ['writer', 'reader'], credential: 'acme-line' });
    const [header, payload, signature] = token.split('.');
    const publicKey = createPublicKey({ key: rsa as JWK & { kty: string }, format: 'jwk' });
    expect(verify('sha256', Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature!, 'base64url'))).toBe(true);
  });

  it('takes roles as a space-separated string, and claims by name or by a dotted path (Keycloak’s realm_access.roles)', async () => {
    expect(await authenticator().authenticate(await provider.token('acme-reader', AUDIENCE))).toMatchObject({ operator: 'acme', roles: ['reader', 'legitimate-interest'] });
    const keycloak = authenticator({ PASSPORT_OIDC_OPERATOR_CLAIM: 'https://passport.example/operator', PASSPORT_OIDC_ROLES_CLAIM: 'realm_access.roles' });
    expect(await keycloak.authenticate(await provider.token('keycloak-style', AUDIENCE))).toEqual({ name: 'keycloak-style', operator: 'beta', roles: ['authority'], credential: 'keycloak-style' });
  });

  it('authenticates to nothing without an operator or without a known role', async () => {
    const oidc = authenticator();
    expect(await oidc.authenticate(await provider.token('no-operator', AUDIENCE))).toBeUndefined();
    expect(await oidc.authenticate(await provider.token('no-known-role', AUDIENCE))).toBeUndefined();
  });

  it('authenticates to nothing for another audience', async () => {
    expect(await authenticator().authenticate(await provider.token('acme-line', 'https://other.example/api'))).toBeUndefined();
  });

  it('authenticates to nothing from another issuer, even one signing with the same key', async () => {
    const other = await startOpenIdProvider(CLIENTS, [rsa]);
    try {
      expect(await authenticator().authenticate(await other.token('acme-line', AUDIENCE))).toBeUndefined();
    } finally {
      await other.stop();
    }
  });

  it(`is taken up to the clock tolerance past its expiry, not after`, async () => {
    const token = await provider.token('acme-line', AUDIENCE);
    const { exp } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number };
    expect(await authenticator({}, { now: () => (exp + 29) * 1000 }).authenticate(token)).toMatchObject({ operator: 'acme' });
    expect(await authenticator({}, { now: () => (exp + 31) * 1000 }).authenticate(token)).toBeUndefined();
  });

  it('authenticates to nothing when signed with an algorithm outside the allowed list', async () => {
    const token = await provider.token('acme-ec', AUDIENCE);
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString())).toMatchObject({ alg: 'ES256', kid: 'ec-1' });
    expect(await authenticator({ PASSPORT_OIDC_ALGORITHMS: 'RS256' }).authenticate(token)).toBeUndefined();
    expect(await authenticator().authenticate(token)).toMatchObject({ operator: 'acme', roles: ['writer'] });
  });

  it('is recognised at once (for the rate limits) only after it authenticated, and not past its expiry', async () => {
    const token = await provider.token('acme-line', AUDIENCE);
    const { exp } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number };
    let now = Date.now();
    const oidc = authenticator({}, { now: () => now });
    expect(oidc.recognise?.(token)).toBeUndefined();
    expect(oidc.recognise?.(await forged({}, 'rsa-1'))).toBeUndefined();
    const principal = await oidc.authenticate(token);
    expect(oidc.recognise?.(token)).toEqual(principal);
    now = exp * 1000 + 1;
    expect(oidc.recognise?.(token)).toBeUndefined();
  });

  it('authenticates to nothing when signed by a key not in the JWKS, or with its payload changed', async () => {
    const oidc = authenticator();
    expect(await oidc.authenticate(await forged({}, 'rsa-1'))).toBeUndefined();
    const [header, , signature] = (await provider.token('acme-reader', AUDIENCE)).split('.');
    const payload = { ...JSON.parse(Buffer.from((await provider.token('acme-reader', AUDIENCE)).split('.')[1]!, 'base64url').toString()), roles: ['admin'] };
    expect(await oidc.authenticate(`${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`)).toBeUndefined();
    expect(await oidc.authenticate('not-a-jwt')).toBeUndefined();
    expect(await oidc.authenticate('a.b.c')).toBeUndefined();
  });

  it('a flood of unknown key ids fetches the JWKS no more than once per cooldown', async () => {
    const oidc = authenticator();
    expect(await oidc.authenticate(await provider.token('acme-line', AUDIENCE))).toBeDefined();
    const loaded = jwksFetches();
    const flood = await Promise.all(Array.from({ length: 40 }, (_, i) => forged({}, `made-up-${i}`)));
    for (const token of flood) expect(await oidc.authenticate(token)).toBeUndefined();
    expect(jwksFetches()).toBe(loaded);
    // Past the cooldown an unknown key id is looked for again: once, however many arrive together.
    const short = authenticator({}, { cooldownMs: 1_000 });
    expect(await short.authenticate(await provider.token('acme-line', AUDIENCE))).toBeDefined();
    await sleep(1_050);
    const before = jwksFetches();
    expect(await Promise.all(flood.map((token) => short.authenticate(token)))).toEqual(flood.map(() => undefined));
    expect(jwksFetches()).toBe(before + 1);
  });
});

describe('the OpenID provider', () => {
  it('rotating its signing key (a new key, the old one removed) is picked up without a restart', async () => {
    const oidc = authenticator({}, { cooldownMs: 100 });
    const before = await provider.token('acme-line', AUDIENCE);
    expect(await oidc.authenticate(before)).toMatchObject({ operator: 'acme' });
    const next = await signingKey('RS256', 'rsa-2');
    await provider.rotate([next, ec]);
    try {
      await sleep(150);
      const after = await provider.token('acme-line', AUDIENCE);
      expect(JSON.parse(Buffer.from(after.split('.')[0]!, 'base64url').toString())).toMatchObject({ kid: 'rsa-2' });
      expect(await oidc.authenticate(after)).toMatchObject({ operator: 'acme', roles: ['writer', 'reader'] });
      expect(await oidc.authenticate(before)).toBeUndefined();
    } finally {
      await provider.rotate([rsa, ec]);
    }
  });

  it('down at start: a token of it is answered 503 with Retry-After, not 401, nothing crashes; once it is up, the token authenticates', async () => {
    const port = await freePort();
    const late = await startOpenIdProvider(CLIENTS, [rsa], port);
    const token = await late.token('acme-line', AUDIENCE);
    await late.stop();
    try {
      // Retried a second after a failure (the default); past the cooldown at once, so an unknown key id asks the provider.
      const oidc = openIdAuthenticator(configOf(late.issuer), { cooldownMs: 0 });
      const unknownKeys = [await forged({}, 'rsa-9', late.issuer), await forged({}, 'rsa-10', late.issuer)];
      const refusal = await oidc.authenticate(token).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(IdentityProviderUnavailable);
      const { details, headers } = refusal as IdentityProviderUnavailable;
      expect(details).toMatchObject({ status: 503, code: 'IDENTITY_PROVIDER_UNAVAILABLE', retry_after: 1 });
      expect(headers).toEqual({ 'retry-after': '1' });
      // What is not this provider's token is told at once: another issuer's, or no JWT at all.
      expect(await oidc.authenticate(await provider.token('acme-line', AUDIENCE))).toBeUndefined();
      expect(await oidc.authenticate('opaque-token-0123456789')).toBeUndefined();

      await late.start();
      await sleep(1_050);
      expect(await oidc.authenticate(token)).toMatchObject({ operator: 'acme' });
      expect(late.requests.get('/.well-known/openid-configuration')).toBe(1);

      // Down again: keys it has serve, an unknown key id cannot be told (503), and no request is tried until Retry-After.
      await late.stop();
      expect(await oidc.authenticate(token)).toMatchObject({ operator: 'acme' });
      await expect(oidc.authenticate(unknownKeys[0]!)).rejects.toBeInstanceOf(IdentityProviderUnavailable);
      await expect(oidc.authenticate(unknownKeys[1]!)).rejects.toMatchObject({ reason: expect.stringContaining('Retry-After') });
    } finally {
      await late.stop();
    }
  });

  it('failing is asked again only after Retry-After, which doubles with each failure in a row', async () => {
    let asked = 0;
    const failing = createServer((_request, response) => {
      asked += 1;
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    try {
      const issuer = `http://127.0.0.1:${(failing.address() as { port: number }).port}`;
      const token = await forged({}, 'rsa-1', issuer);
      const oidc = openIdAuthenticator(configOf(issuer));
      const retryAfter = () =>
        oidc.authenticate(token).then(
          () => undefined,
          (error: IdentityProviderUnavailable) => error.retryAfterSeconds,
        );
      expect(await retryAfter()).toBe(1);
      expect(await Promise.all(Array.from({ length: 20 }, retryAfter))).toEqual(Array.from({ length: 20 }, () => 1));
      expect(asked).toBe(1);
      await sleep(1_050);
      expect(await retryAfter()).toBe(2);
      expect(asked).toBe(2);
    } finally {
      await new Promise((resolve) => failing.close(resolve));
    }
  });

  it('whose discovery document names another issuer is not trusted: 503, with the reason for the log', async () => {
    const oidc = openIdAuthenticator(configOf(`${provider.issuer}/`));
    await expect(oidc.authenticate(await forged({}, 'rsa-1', `${provider.issuer}/`))).rejects.toMatchObject({ reason: expect.stringContaining(`names the issuer ${provider.issuer},`) });
  });
});

describe('PASSPORT_OIDC_* settings', () => {
  it('are off without an issuer, and name the discovery document and the defaults with one', () => {
    expect(loadOidcConfig({})).toBeUndefined();
    expect(configOf('https://sso.example.com/realms/dpp/')).toMatchObject({
      issuer: 'https://sso.example.com/realms/dpp/',
      discoveryUrl: 'https://sso.example.com/realms/dpp/.well-known/openid-configuration',
      audience: AUDIENCE,
      operatorClaim: 'operator',
      rolesClaim: 'roles',
      algorithms: expect.arrayContaining(['RS256', 'ES256', 'EdDSA']),
    });
    expect(configOf('https://sso.example.com', { PASSPORT_OIDC_ALGORITHMS: 'RS256, PS256' }).algorithms).toEqual(['RS256', 'PS256']);
  });

  it('refuse none, HMAC, an issuer over plain http beyond loopback, and a missing audience, each in one sentence', () => {
    expect(() => configOf('https://sso.example.com', { PASSPORT_OIDC_ALGORITHMS: 'RS256,none' })).toThrow(/asymmetric JWS algorithms only .*, not none\.$/);
    expect(() => configOf('https://sso.example.com', { PASSPORT_OIDC_ALGORITHMS: 'HS256' })).toThrow(ConfigurationError);
    expect(() => configOf('http://sso.example.com')).toThrow(/https issuer URL/);
    expect(() => loadOidcConfig({ PASSPORT_OIDC_ISSUER: 'https://sso.example.com' })).toThrow(/PASSPORT_OIDC_AUDIENCE must be set/);
  });
});

describe("the facade's OpenAPI document", () => {
  let gateway: Server;

  beforeAll(async () => {
    gateway = createServer((_request, response) => response.end('{}'));
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => gateway.close(resolve));
  });

  it('offers the provider’s access tokens as an openIdConnect scheme beside the bearer tokens where a token is needed', async () => {
    const table: ServiceRoutes = {
      service: 'registry',
      title: 'Registry stand-in',
      routes: [
        { method: 'GET', path: '/{id}', summary: 'read', operation: 'query { read }', variables: () => ({}), result: () => ({ body: {} }), responses: { 200: { description: 'It.' } } },
        {
          method: 'POST',
          path: '/',
          summary: 'write',
          role: 'writer',
          operation: 'mutation { write }',
          variables: () => ({}),
          result: () => ({ body: {} }),
          responses: { 201: { description: 'Made.' } },
        },
      ],
    };
    const oidc = configOf('https://sso.example.com/realms/dpp');
    const facade = await startFacade({
      host: '127.0.0.1',
      mounts: [{ service: 'registry', port: 0, prefix: '/registry' }],
      tables: { registry: table } as never,
      gatewayUrl: `http://127.0.0.1:${(gateway.address() as { port: number }).port}/graphql`,
      tokens: new AccessTokens([]),
      oidc,
      bodyLimit: 1024 * 1024,
    });
    try {
      const document = (await (await fetch(`${facade.url}/docs/registry/openapi.json`)).json()) as {
        components: { securitySchemes: Record<string, unknown> };
        paths: Record<string, Record<string, { security: unknown[] }>>;
      };
      expect(document.components.securitySchemes.openIdConnect).toMatchObject({ type: 'openIdConnect', openIdConnectUrl: 'https://sso.example.com/realms/dpp/.well-known/openid-configuration' });
      expect(document.paths['/']!.post!.security).toEqual([{ bearer: ['writer'] }, { openIdConnect: [] }]);
      expect(document.paths['/{id}']!.get!.security).toEqual([]);
    } finally {
      await facade.stop();
    }
  });
});
