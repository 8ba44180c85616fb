import { createHash } from 'node:crypto';
import * as jose from 'jose';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, encodeBase64Url, signJson } from '../../../lib/crypto/index.js';
import {
  delegationParties,
  formatInstant,
  resolvePath,
  scopesHeldAt,
  upsertNode,
  validateDelegation,
  type DelegationEdge,
  type Revocation,
  type TrustGraph,
  type TrustNode,
} from '../../../subgraphs/trust/domain/index.js';
import { ed25519Key, p256Key, t, type TestKey } from './fixtures.js';

const NOW = t('2025-01-01T00:00:00Z');
/** NumericDate seconds of an RFC 3339 instant, for key lifetimes. */
const seconds = (text: string) => Date.parse(text) / 1000;
const KEY_IAT = seconds('2024-01-01T00:00:00Z');

const rootKey = ed25519Key();
const authorityKey = p256Key();
const issuerKey = ed25519Key();
const strangerKey = ed25519Key();

function node(id: string, kind: TrustNode['kind'], key: TestKey, keyMembers: Record<string, unknown> = {}): TrustNode {
  const result = upsertNode(undefined, { id, kind, keys: [{ ...key.jwk, iat: KEY_IAT, ...keyMembers }] });
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

const nodes = [node('root', 'root', rootKey), node('authority', 'authority', authorityKey), node('issuer', 'issuer', issuerKey), node('stranger', 'authority', strangerKey)];

const rootToAuthority = {
  iss: 'root',
  sub: 'authority',
  scope: { jurisdictions: ['DE', 'FR'], event_types: ['a', 'b'] },
  iat: '2024-06-01T00:00:00Z',
  exp: '2026-01-01T00:00:00Z',
};
const authorityToIssuer = {
  iss: 'authority',
  sub: 'issuer',
  scope: { jurisdictions: ['DE'], event_types: ['a'] },
  iat: '2024-12-01T00:00:00Z',
  exp: '2025-06-01T00:00:00Z',
};

/** A compact JWS made by jose, a stock JOSE implementation independent of lib/crypto. */
async function joseCompact(claims: object, key: TestKey, header: Record<string, unknown> = { kid: key.jwk.kid }): Promise<string> {
  return new jose.CompactSign(new TextEncoder().encode(JSON.stringify(claims))).setProtectedHeader({ alg: key.jwk.kty === 'OKP' ? 'EdDSA' : 'ES256', ...header }).sign(key.privateKey);
}

function edge(credential: unknown, graph: TrustGraph): DelegationEdge {
  const result = validateDelegation(credential, graph, NOW);
  if (!result.ok) throw new Error(`${result.code}: ${result.message}`);
  return result.value;
}

const base: TrustGraph = { nodes, edges: [] };
const first = edge(signJson(rootToAuthority, rootKey.signer), base);
const chain: TrustGraph = { nodes, edges: [first, edge(await joseCompact(authorityToIssuer, authorityKey), { nodes, edges: [first] })] };

describe('delegationParties', () => {
  it('names issuer and subject of signed JSON and of a compact JWS, and nothing of what cannot be read', async () => {
    expect(delegationParties(signJson(rootToAuthority, rootKey.signer))).toEqual(['root', 'authority']);
    expect(delegationParties(await joseCompact(authorityToIssuer, authorityKey))).toEqual(['authority', 'issuer']);
    expect(delegationParties('not.a.jws')).toEqual([]);
    expect(delegationParties({ iss: 'root', sub: 'x y', signature: signJson(rootToAuthority, rootKey.signer).signature })).toEqual(['root']);
    expect(delegationParties(7)).toEqual([]);
  });
});

describe('validateDelegation accepts', () => {
  it('signed JSON from a root, with the edge as the graph stores it', () => {
    const credential = signJson(rootToAuthority, rootKey.signer);
    expect(validateDelegation(credential, base, NOW)).toEqual({
      ok: true,
      value: {
        id: createHash('sha256').update(canonicalBytes(credential)).digest('base64url'),
        iss: 'root',
        sub: 'authority',
        scope: { jurisdictions: ['DE', 'FR'], event_types: ['a', 'b'] },
        iat: '2024-06-01T00:00:00.000Z',
        nbf: '2024-06-01T00:00:00.000Z',
        exp: '2026-01-01T00:00:00.000Z',
        kid: rootKey.jwk.kid,
        credential,
      },
    });
  });

  it('a compact JWS signed by jose with ES256, within the issuer scope', () => {
    expect(chain.edges[1]).toMatchObject({ iss: 'authority', sub: 'issuer', kid: authorityKey.jwk.kid });
  });

  it('a scope covered only by two delegations together', async () => {
    const graph: TrustGraph = {
      nodes,
      edges: [
        edge(signJson({ ...rootToAuthority, scope: { jurisdictions: ['DE'], event_types: ['a'] } }, rootKey.signer), base),
        edge(signJson({ ...rootToAuthority, scope: { jurisdictions: ['FR'], event_types: ['a'] } }, rootKey.signer), base),
      ],
    };
    const both = { ...authorityToIssuer, scope: { jurisdictions: ['DE', 'FR'], event_types: ['a'] } };
    expect(validateDelegation(await joseCompact(both, authorityKey), graph, NOW).ok).toBe(true);
    const mixed = { ...authorityToIssuer, scope: { jurisdictions: ['DE', 'FR'], event_types: ['a', 'b'] } };
    expect(validateDelegation(await joseCompact(mixed, authorityKey), graph, NOW)).toMatchObject({ ok: false, code: 'WIDENED_SCOPE' });
  });
});

describe('validateDelegation refuses', () => {
  const expectCode = (credential: unknown, code: string, graph: TrustGraph = chain) => expect(validateDelegation(credential, graph, NOW)).toMatchObject({ ok: false, code });

  it('MALFORMED_CREDENTIAL', async () => {
    expectCode('not a credential', 'MALFORMED_CREDENTIAL');
    expectCode({ ...rootToAuthority }, 'MALFORMED_CREDENTIAL');
    expectCode(42, 'MALFORMED_CREDENTIAL');
    expectCode(signJson({ ...rootToAuthority, aud: 'x' }, rootKey.signer), 'MALFORMED_CREDENTIAL');
    expectCode(signJson({ ...rootToAuthority, nbf: '2026-01-01T00:00:00Z' }, rootKey.signer), 'MALFORMED_CREDENTIAL');
    expectCode(signJson({ ...rootToAuthority, exp: 'next year' }, rootKey.signer), 'MALFORMED_CREDENTIAL');
    expectCode(signJson({ ...rootToAuthority, scope: { jurisdictions: [] } }, rootKey.signer), 'MALFORMED_CREDENTIAL');
    expectCode(await joseCompact(rootToAuthority, rootKey, {}), 'MALFORMED_CREDENTIAL');
    const notJson = await new jose.CompactSign(new TextEncoder().encode('[1,2]')).setProtectedHeader({ alg: 'EdDSA', kid: rootKey.jwk.kid }).sign(rootKey.privateKey);
    expectCode(notJson, 'MALFORMED_CREDENTIAL');
  });

  it('UNKNOWN_ISSUER and UNKNOWN_SUBJECT', () => {
    expectCode(signJson({ ...rootToAuthority, iss: 'nobody' }, rootKey.signer), 'UNKNOWN_ISSUER');
    expectCode(signJson({ ...rootToAuthority, sub: 'nobody' }, rootKey.signer), 'UNKNOWN_SUBJECT');
  });

  it('BAD_SIGNATURE: altered after signing, signed by a key the issuer does not list, or an alg that does not fit', async () => {
    expectCode({ ...signJson(rootToAuthority, rootKey.signer), scope: {} }, 'BAD_SIGNATURE');
    expectCode(signJson(rootToAuthority, strangerKey.signer), 'BAD_SIGNATURE');
    expectCode(signJson(rootToAuthority, { ...strangerKey.signer, kid: rootKey.jwk.kid }), 'BAD_SIGNATURE');
    const wrongAlg = await joseCompact(authorityToIssuer, authorityKey, { kid: authorityKey.jwk.kid, alg: 'ES256' });
    const header = encodeBase64Url(JSON.stringify({ alg: 'EdDSA', kid: authorityKey.jwk.kid }));
    expectCode(`${header}.${wrongAlg.split('.').slice(1).join('.')}`, 'BAD_SIGNATURE');
  });

  it('REVOKED_KEY when the key is revoked at or before iat, by itself or by a revocation record', () => {
    const credential = signJson(rootToAuthority, rootKey.signer);
    const withRevokedKey = (revokedAt: string): TrustGraph => ({
      nodes: [node('root', 'root', rootKey, { revoked: { revoked_at: seconds(revokedAt), reason: 'compromised' } }), ...nodes.slice(1)],
      edges: [],
    });
    expectCode(credential, 'REVOKED_KEY', withRevokedKey('2024-06-01T00:00:00Z'));
    expect(validateDelegation(credential, withRevokedKey('2024-06-01T00:00:01Z'), NOW).ok).toBe(true);
    const record: Revocation = {
      subject: `root#${rootKey.jwk.kid}`,
      reason: 'keyCompromise',
      effective_at: '2024-05-01T00:00:00Z',
      recorded_at: '2024-12-01T00:00:00.000Z',
      retroactive: true,
    };
    expectCode(credential, 'REVOKED_KEY', { ...base, revocations: [record] });
    expectCode(credential, 'REVOKED_KEY', { ...base, revocations: [{ ...record, subject: 'root' }] });
  });

  it('KEY_NOT_CURRENT when the key was issued after, or expired by, the credential iat', () => {
    const credential = signJson(rootToAuthority, rootKey.signer);
    const withKey = (members: Record<string, unknown>): TrustGraph => ({ nodes: [node('root', 'root', rootKey, members), ...nodes.slice(1)], edges: [] });
    expectCode(credential, 'KEY_NOT_CURRENT', withKey({ iat: seconds('2024-06-01T00:00:01Z') }));
    expectCode(credential, 'KEY_NOT_CURRENT', withKey({ exp: seconds('2024-06-01T00:00:00Z') }));
    expect(validateDelegation(credential, withKey({ iat: seconds('2024-06-01T00:00:00Z'), exp: seconds('2024-06-01T00:00:01Z') }), NOW).ok).toBe(true);
  });

  it('NOT_YET_VALID and EXPIRED against now', () => {
    expectCode(signJson({ ...rootToAuthority, nbf: '2025-01-01T00:00:01Z' }, rootKey.signer), 'NOT_YET_VALID', base);
    expectCode(signJson({ ...rootToAuthority, iat: '2025-01-01T00:00:01Z' }, rootKey.signer), 'NOT_YET_VALID', base);
    expectCode(signJson({ ...rootToAuthority, exp: '2025-01-01T00:00:00Z' }, rootKey.signer), 'EXPIRED', base);
    expect(validateDelegation(signJson({ ...rootToAuthority, nbf: '2025-01-01T00:00:00Z' }, rootKey.signer), base, NOW).ok).toBe(true);
  });

  it('WIDENED_SCOPE beyond what the issuer holds, or from a node no root reaches', async () => {
    expectCode(await joseCompact({ ...authorityToIssuer, scope: { jurisdictions: ['DE', 'IT'], event_types: ['a'] } }, authorityKey), 'WIDENED_SCOPE');
    expectCode(await joseCompact({ ...authorityToIssuer, scope: { jurisdictions: ['DE'] } }, authorityKey), 'WIDENED_SCOPE');
    expectCode(signJson({ ...authorityToIssuer, iss: 'stranger' }, strangerKey.signer), 'WIDENED_SCOPE');
    // The authority's own delegation is not yet in force at now: it holds nothing.
    const later = edge(signJson({ ...rootToAuthority }, rootKey.signer), base);
    const pending: TrustGraph = { nodes, edges: [{ ...later, nbf: '2025-02-01T00:00:00.000Z' }] };
    expectCode(await joseCompact(authorityToIssuer, authorityKey), 'WIDENED_SCOPE', pending);
  });

  it('CYCLE when the subject already reaches the issuer, or for a self-delegation', async () => {
    expectCode(signJson({ ...authorityToIssuer, iss: 'issuer', sub: 'authority' }, issuerKey.signer), 'CYCLE');
    expectCode(await joseCompact({ ...authorityToIssuer, sub: 'authority' }, authorityKey), 'CYCLE');
    expectCode(signJson({ ...authorityToIssuer, iss: 'issuer', sub: 'root' }, issuerKey.signer), 'CYCLE');
  });
});

describe('resolvePath', () => {
  const at = t('2025-03-01T00:00:00Z');

  it('returns the chain from a pinned root', () => {
    expect(resolvePath(chain, ['root'], 'issuer', at)).toEqual({ ok: true, value: chain.edges });
    expect(resolvePath(chain, ['root'], 'root', at)).toEqual({ ok: true, value: [] });
    expect(resolvePath(chain, ['authority'], 'issuer', at)).toEqual({ ok: true, value: [chain.edges[1]] });
  });

  it('fails with UNKNOWN_NODE or NO_PATH, saying why', () => {
    expect(resolvePath(chain, ['root'], 'nobody', at)).toMatchObject({ ok: false, code: 'UNKNOWN_NODE' });
    const expired = resolvePath(chain, ['root'], 'issuer', t('2025-06-01T00:00:00Z'));
    expect(expired).toMatchObject({ ok: false, code: 'NO_PATH' });
    expect(!expired.ok && expired.message).toContain('expired at 2025-06-01T00:00:00.000Z');
    expect(resolvePath(chain, ['stranger'], 'issuer', at)).toMatchObject({ ok: false, code: 'NO_PATH' });
    expect(resolvePath(chain, ['root'], 'stranger', at)).toMatchObject({ ok: false, code: 'NO_PATH' });
  });

  it('keeps only delegations that grant the act asked about', () => {
    expect(resolvePath(chain, ['root'], 'issuer', at, { scope: { jurisdiction: 'DE', event_type: 'a' } }).ok).toBe(true);
    expect(resolvePath(chain, ['root'], 'issuer', at, { scope: { jurisdiction: 'FR' } })).toMatchObject({ ok: false, code: 'NO_PATH' });
    expect(resolvePath(chain, ['root'], 'issuer', at, { scope: { event_type: 'b' } })).toMatchObject({ ok: false, code: 'NO_PATH' });
  });

  it('breaks at a node revoked by then, as known by then', () => {
    const revocation: Revocation = {
      subject: 'authority',
      reason: 'privilegeWithdrawn',
      effective_at: '2025-02-01T00:00:00Z',
      recorded_at: '2025-02-10T00:00:00.000Z',
      retroactive: true,
    };
    const graph = { ...chain, revocations: [revocation] };
    expect(resolvePath(graph, ['root'], 'issuer', t('2025-01-31T00:00:00Z')).ok).toBe(true);
    expect(resolvePath(graph, ['root'], 'issuer', at)).toMatchObject({ ok: false, code: 'NO_PATH' });
    expect(resolvePath(graph, ['root'], 'issuer', at, { known_by: t('2025-02-09T00:00:00Z') }).ok).toBe(true);
    expect(resolvePath(graph, ['root'], 'authority', at)).toMatchObject({ ok: false, code: 'NO_PATH' });
  });

  it('drops what a key signed from its revocation on, and keeps what it signed before', () => {
    const revokeKey = (effective_at: string): TrustGraph => ({
      ...chain,
      revocations: [{ subject: `authority#${authorityKey.jwk.kid}`, reason: 'keyCompromise', effective_at, recorded_at: formatInstant(at), retroactive: true }],
    });
    expect(resolvePath(revokeKey('2024-12-01T00:00:00Z'), ['root'], 'issuer', at)).toMatchObject({ ok: false, code: 'NO_PATH' });
    expect(resolvePath(revokeKey('2024-12-01T00:00:01Z'), ['root'], 'issuer', at).ok).toBe(true);
  });

  it('derives what each node holds at an instant', () => {
    expect(scopesHeldAt(chain, 'issuer', at)).toEqual([{ jurisdictions: ['DE'], event_types: ['a'] }]);
    expect(scopesHeldAt(chain, 'root', at)).toEqual([{}]);
    expect(scopesHeldAt(chain, 'issuer', t('2026-01-01T00:00:00Z'))).toEqual([]);
  });
});

describe('delegation credentials as JWT libraries make them', () => {
  const numeric = (text: string) => Date.parse(text) / 1000;

  it('take NumericDate iat, nbf and exp (RFC 7519), and store them as RFC 3339 like the rest', async () => {
    // jose's SignJWT writes iat and exp as NumericDate; header alg the RFC 9864 name, then the JOSE one.
    for (const alg of ['Ed25519', 'EdDSA']) {
      const jwt = await new jose.SignJWT({ scope: rootToAuthority.scope })
        .setProtectedHeader({ alg, kid: rootKey.jwk.kid })
        .setIssuer('root')
        .setSubject('authority')
        .setIssuedAt(numeric('2024-06-01T00:00:00Z'))
        .setNotBefore(numeric('2024-06-02T00:00:00.5Z'))
        .setExpirationTime(numeric('2026-01-01T00:00:00Z'))
        .sign(rootKey.privateKey);
      expect(validateDelegation(jwt, base, NOW)).toMatchObject({
        ok: true,
        value: { iat: '2024-06-01T00:00:00.000Z', nbf: '2024-06-02T00:00:00.500Z', exp: '2026-01-01T00:00:00.000Z', kid: rootKey.jwk.kid },
      });
    }
    // The two spellings of an instant mix freely in one credential.
    const mixed = signJson({ ...rootToAuthority, iat: numeric('2024-06-01T00:00:00Z') }, rootKey.signer);
    expect(validateDelegation(mixed, base, NOW)).toMatchObject({ ok: true, value: { iat: '2024-06-01T00:00:00.000Z', exp: '2026-01-01T00:00:00.000Z' } });
  });

  it('refuse a NumericDate that is negative, beyond year 9999 or a numeric string', () => {
    for (const iat of [-1, 253_402_300_800, '1717200000']) {
      expect(validateDelegation(signJson({ ...rootToAuthority, iat }, rootKey.signer), base, NOW)).toMatchObject({ ok: false, code: 'MALFORMED_CREDENTIAL' });
    }
    const upsideDown = signJson({ ...rootToAuthority, iat: numeric('2026-01-01T00:00:00Z') }, rootKey.signer);
    expect(validateDelegation(upsideDown, base, NOW)).toMatchObject({ ok: false, code: 'MALFORMED_CREDENTIAL' });
  });

  it('may leave exp out: the edge has none and stands until a revocation takes it', () => {
    const { exp: _exp, ...open } = rootToAuthority;
    const lasting = edge(signJson(open, rootKey.signer), base);
    expect(lasting).not.toHaveProperty('exp');
    const graph: TrustGraph = { nodes, edges: [lasting] };
    expect(resolvePath(graph, ['root'], 'authority', t('2124-01-01T00:00:00Z'))).toEqual({ ok: true, value: [lasting] });
    const revoked: Revocation = { subject: 'authority', reason: 'privilegeWithdrawn', effective_at: '2030-01-01T00:00:00Z', recorded_at: '2025-01-01T00:00:00.000Z', retroactive: false };
    expect(resolvePath({ ...graph, revocations: [revoked] }, ['root'], 'authority', t('2031-01-01T00:00:00Z'))).toMatchObject({ ok: false, code: 'NO_PATH' });
  });

  it('signed by us (alg Ed25519, the RFC 9864 name) verify with jose', async () => {
    const credential = signJson(rootToAuthority, rootKey.signer);
    const [protectedHeader, , signature] = credential.signature.split('.');
    const { signature: _signature, ...claims } = credential;
    const key = await jose.importJWK({ ...rootKey.jwk, alg: undefined }, 'Ed25519');
    const verified = await jose.flattenedVerify({ protected: protectedHeader!, payload: encodeBase64Url(canonicalBytes(claims)), signature: signature! }, key);
    expect(verified.protectedHeader).toMatchObject({ alg: 'Ed25519', kid: rootKey.jwk.kid });
  });
});
