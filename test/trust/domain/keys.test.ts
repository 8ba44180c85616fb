import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { jwkThumbprint } from '../../../lib/crypto/index.js';
import { mergeNodeKeys, upsertNode, validateNodeKey, validatePublicJwk, type NodeKey } from '../../../subgraphs/trust/domain/index.js';
import { ed25519Key, p256Key } from './fixtures.js';

// NumericDate seconds, as in every published JWK Set.
const JAN_2024 = Date.UTC(2024, 0, 1) / 1000;
const JUN_2024 = Date.UTC(2024, 5, 1) / 1000;
const JAN_2025 = Date.UTC(2025, 0, 1) / 1000;

const RFC8037_X = '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo';
const RFC8037_THUMBPRINT = 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k';

function nodeKey(overrides: Record<string, unknown> = {}): NodeKey {
  const key = validateNodeKey({ ...ed25519Key().jwk, iat: JAN_2024, ...overrides });
  if (!key.ok) throw new Error(key.message);
  return key.value;
}

describe('public keys', () => {
  it('accepts the RFC 8037 example key and fills in its RFC 7638 kid', () => {
    const key = validatePublicJwk({ kty: 'OKP', crv: 'Ed25519', x: RFC8037_X });
    expect(key).toEqual({ ok: true, value: { kty: 'OKP', crv: 'Ed25519', x: RFC8037_X, kid: RFC8037_THUMBPRINT } });
  });

  it('accepts a P-256 key exported by Node', () => {
    const { jwk } = p256Key();
    expect(validatePublicJwk({ ...jwk, alg: 'ES256', use: 'sig' }).ok).toBe(true);
  });

  it.each([
    ['a kid that is not the thumbprint', { kty: 'OKP', crv: 'Ed25519', x: RFC8037_X, kid: 'my-key' }],
    ['a private member', { kty: 'OKP', crv: 'Ed25519', x: RFC8037_X, d: 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A' }],
    ['X25519', { kty: 'OKP', crv: 'X25519', x: RFC8037_X }],
    ['RSA', { kty: 'RSA', n: 'AQAB', e: 'AQAB' }],
    ['a short x', { kty: 'OKP', crv: 'Ed25519', x: RFC8037_X.slice(0, 40) }],
    ['a small-order Ed25519 point', { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(ed25519.Point.ZERO.toBytes()).toString('base64url') }],
    ['an alg that does not fit', { kty: 'OKP', crv: 'Ed25519', x: RFC8037_X, alg: 'ES256' }],
    ['use enc', { kty: 'OKP', crv: 'Ed25519', x: RFC8037_X, use: 'enc' }],
  ])('refuses %s with INVALID_KEY', (_name, jwk) => {
    expect(validatePublicJwk(jwk)).toMatchObject({ ok: false, code: 'INVALID_KEY' });
  });

  it('accepts the registered X.509 members of RFC 7517 §4 and refuses them ill-typed, and any member of no registry', () => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: RFC8037_X };
    const x509 = { x5u: 'https://example.com/chain.pem', x5c: ['MIIBszCCAVmgAwIBAgIU'], x5t: 'A'.repeat(27), 'x5t#S256': 'B'.repeat(43) };
    expect(validatePublicJwk({ ...jwk, ...x509 })).toMatchObject({ ok: true });
    for (const [member, value] of Object.entries({ x5u: 'http://example.com/chain.pem', x5c: [], x5t: 'short', 'x5t#S256': 7, colour: 'red' })) {
      expect(validatePublicJwk({ ...jwk, [member]: value }), member).toMatchObject({ ok: false, code: 'INVALID_KEY' });
    }
  });

  it("takes a keyring's purpose and signs as they are published, and leaves them out of the node key", () => {
    const key = { ...ed25519Key().jwk, iat: JAN_2024 };
    expect(validateNodeKey({ ...key, purpose: 'event', signs: ['events', 'log heads'] })).toEqual({ ok: true, value: key });
    expect(validateNodeKey({ ...key, signs: 'events' })).toMatchObject({ ok: false, code: 'INVALID_KEY' });
    // A master-list witness key is a bare public JWK: no keyring members there.
    expect(validatePublicJwk({ ...ed25519Key().jwk, purpose: 'event' })).toMatchObject({ ok: false, message: 'unexpected JWK member "purpose"' });
  });

  it('refuses a P-256 point off the curve', () => {
    const { jwk } = p256Key();
    const y = Buffer.from(jwk.y as string, 'base64url');
    y[31]! ^= 1;
    const moved = { ...jwk, y: y.toString('base64url') };
    expect(validatePublicJwk({ ...moved, kid: jwkThumbprint(moved) })).toMatchObject({ ok: false, code: 'INVALID_KEY' });
  });

  it('needs iat and checks the lifetime members', () => {
    const { jwk } = ed25519Key();
    expect(validateNodeKey(jwk)).toMatchObject({ ok: false, code: 'INVALID_KEY' });
    expect(validateNodeKey({ ...jwk, iat: JAN_2024, exp: JAN_2024 - 1 })).toMatchObject({ ok: false, code: 'INVALID_KEY' });
    expect(validateNodeKey({ ...jwk, iat: JAN_2024, revoked: { revoked_at: 'soon', reason: 'x' } })).toMatchObject({ ok: false, code: 'INVALID_KEY' });
    expect(validateNodeKey({ ...jwk, iat: JAN_2024, exp: JAN_2025, revoked: { revoked_at: JUN_2024, reason: 'superseded' } })).toMatchObject({ ok: true });
  });

  it.each([
    ['an RFC 3339 string', '2024-01-01T00:00:00Z'],
    ['a fraction', JAN_2024 + 0.5],
    ['a negative number', -1],
    ['milliseconds', JAN_2024 * 1000],
    ['a numeric string', String(JAN_2024)],
  ])('refuses iat as %s: NumericDate is integer seconds', (_name, iat) => {
    expect(validateNodeKey({ ...ed25519Key().jwk, iat })).toMatchObject({ ok: false, code: 'INVALID_KEY' });
    expect(validateNodeKey({ ...ed25519Key().jwk, iat: JAN_2024, revoked: { revoked_at: iat, reason: 'x' } })).toMatchObject({ ok: false, code: 'INVALID_KEY' });
  });
});

describe('mergeNodeKeys', () => {
  it('adds new keys and never drops a stored one', () => {
    const stored = [nodeKey(), nodeKey()];
    const added = nodeKey();
    const merged = mergeNodeKeys(stored, [added]);
    expect(merged.ok && merged.value.map((key) => key.kid)).toEqual([stored[0]!.kid, stored[1]!.kid, added.kid]);
  });

  it('treats a restated key as the same key, its members in any order', () => {
    const stored = nodeKey();
    const reordered = Object.fromEntries(Object.entries(stored).reverse());
    expect(mergeNodeKeys([stored], [reordered])).toEqual({ ok: true, value: [stored] });
  });

  it('lets exp and revoked be added once', () => {
    const stored = nodeKey();
    const revoked = { revoked_at: JUN_2024, reason: 'superseded' };
    const merged = mergeNodeKeys(
      [stored],
      [
        { ...stored, exp: JAN_2025 },
        { ...stored, revoked },
      ],
    );
    expect(merged).toEqual({ ok: true, value: [{ ...stored, exp: JAN_2025, revoked }] });
    const again = mergeNodeKeys(merged.ok ? merged.value : [], [{ ...stored, iat: stored.iat }]);
    expect(again.ok && again.value[0]).toMatchObject({ exp: JAN_2025, revoked });
  });

  it.each([
    ['iat', { iat: JAN_2024 - 86_400 }],
    ['alg', { alg: 'EdDSA' }],
  ])('refuses a changed %s with KEY_CONFLICT', (_member, change) => {
    const stored = nodeKey();
    expect(mergeNodeKeys([stored], [{ ...stored, ...change }])).toMatchObject({ ok: false, code: 'KEY_CONFLICT' });
  });

  it('refuses to change exp or revoked once set', () => {
    const stored = nodeKey({ exp: JAN_2025, revoked: { revoked_at: JUN_2024, reason: 'superseded' } });
    expect(mergeNodeKeys([stored], [{ ...stored, exp: JAN_2025 + 1 }])).toMatchObject({ ok: false, code: 'KEY_CONFLICT' });
    expect(mergeNodeKeys([stored], [{ ...stored, revoked: { revoked_at: JUN_2024, reason: 'compromised' } }])).toMatchObject({
      ok: false,
      code: 'KEY_CONFLICT',
    });
  });

  it('refuses different key material under a stored kid with KEY_CONFLICT', () => {
    // Only a store written before kids were checked could hold this; the merge still refuses it.
    const stored = { ...nodeKey(), kid: RFC8037_THUMBPRINT };
    const incoming = { kty: 'OKP', crv: 'Ed25519', x: RFC8037_X, kid: RFC8037_THUMBPRINT, iat: stored.iat };
    expect(mergeNodeKeys([stored], [incoming])).toMatchObject({ ok: false, code: 'KEY_CONFLICT' });
  });

  it('refuses other key material under a stored kid with KEY_CONFLICT, Ed25519 or P-256, and merges nothing', () => {
    const stored = nodeKey();
    const { jwk } = ed25519Key();
    expect(mergeNodeKeys([stored], [{ ...jwk, kid: stored.kid, iat: stored.iat }])).toMatchObject({ ok: false, code: 'KEY_CONFLICT' });
    const p256 = validateNodeKey({ ...p256Key().jwk, iat: JAN_2024 });
    if (!p256.ok) throw new Error(p256.message);
    const moved = { ...p256.value, y: p256Key().jwk.y };
    expect(mergeNodeKeys([p256.value], [moved])).toMatchObject({ ok: false, code: 'KEY_CONFLICT' });
  });

  it('refuses a kid that is not the thumbprint of a new key with INVALID_KEY', () => {
    const { jwk } = ed25519Key();
    expect(mergeNodeKeys([nodeKey()], [{ ...jwk, kid: ed25519Key().jwk.kid, iat: JAN_2024 }])).toMatchObject({ ok: false, code: 'INVALID_KEY' });
  });
});

describe('upsertNode', () => {
  const iat = JAN_2024;

  it('creates a node, merges keys on upsert and keeps its kind', () => {
    const first = ed25519Key().jwk;
    const second = p256Key().jwk;
    const created = upsertNode(undefined, { id: 'acme', kind: 'issuer', jurisdiction: 'de', keys: [{ ...first, iat }] });
    expect(created).toMatchObject({ ok: true, value: { id: 'acme', kind: 'issuer', jurisdiction: 'DE' } });
    if (!created.ok) return;
    const updated = upsertNode(created.value, { id: 'acme', keys: [{ ...second, iat }] });
    expect(updated.ok && updated.value.keys.map((key) => key.kid)).toEqual([first.kid, second.kid]);
    expect(upsertNode(created.value, { id: 'acme', kind: 'root' })).toMatchObject({ ok: false, code: 'NODE_CONFLICT' });
  });

  it.each([
    ['a node id with #', { id: 'a#b', kind: 'root' }],
    ['an unknown kind', { id: 'a', kind: 'god' }],
    ['a threshold on a root', { id: 'a', kind: 'root', threshold: 1 }],
    ['a quorum without threshold', { id: 'q', kind: 'quorum' }],
    ['a quorum that can never reach its threshold', { id: 'q', kind: 'quorum', threshold: 2, keys: [] }],
    ['a bad jurisdiction', { id: 'a', kind: 'root', jurisdiction: 'Germany' }],
  ])('refuses %s with INVALID_NODE', (_name, input) => {
    expect(upsertNode(undefined, input)).toMatchObject({ ok: false, code: 'INVALID_NODE' });
  });

  it('pins a quorum group key for good', () => {
    const group = ed25519Key().jwk;
    const quorum = upsertNode(undefined, { id: 'q', kind: 'quorum', threshold: 3, group_key: group });
    expect(quorum).toMatchObject({ ok: true, value: { threshold: 3, group_key: { kid: group.kid } } });
    if (!quorum.ok) return;
    expect(upsertNode(quorum.value, { id: 'q', group_key: ed25519Key().jwk })).toMatchObject({ ok: false, code: 'NODE_CONFLICT' });
    expect(upsertNode(quorum.value, { id: 'q', group_key: p256Key().jwk })).toMatchObject({ ok: false, code: 'INVALID_NODE' });
    expect(upsertNode(quorum.value, { id: 'q', threshold: 2 })).toMatchObject({ ok: true, value: { threshold: 2, group_key: { kid: group.kid } } });
  });
});
