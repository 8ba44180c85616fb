import { describe, expect, it } from 'vitest';
import { platformRootNode, upsertNode } from '../../../subgraphs/trust/domain/index.js';
import { ed25519Key, p256Key } from './fixtures.js';

const entry = (key: ReturnType<typeof ed25519Key>, purpose: string, more: Record<string, unknown> = {}) => ({
  ...key.jwk,
  alg: key.jwk.kty === 'OKP' ? 'Ed25519' : 'ES256',
  use: 'sig',
  purpose,
  signs: ['what it signs'],
  iat: 1_767_225_600,
  ...more,
});

describe('platformRootNode', () => {
  const service = ed25519Key();
  const event = ed25519Key();
  const carrier = p256Key();

  it("holds every key of every keyring in one root node, without the keyring's purpose and signs", () => {
    const node = platformRootNode([{ keys: [entry(service, 'service')] }, { keys: [entry(event, 'event'), entry(carrier, 'carrier')] }]);
    expect(node).toMatchObject({ id: 'platform', kind: 'root' });
    expect(node.keys.map((key) => key.kid)).toEqual([service.jwk.kid, event.jwk.kid, carrier.jwk.kid]);
    expect(node.keys.every((key) => !('purpose' in key) && !('signs' in key))).toBe(true);
    const stored = upsertNode(undefined, node);
    expect(stored.ok).toBe(true);
  });

  it('placed again after a rotation keeps every key, adds the new one and the old one’s exp, and changes nothing else', () => {
    const first = upsertNode(undefined, platformRootNode([{ keys: [entry(event, 'event')] }]));
    if (!first.ok) throw new Error(first.message);
    expect(upsertNode(first.value, platformRootNode([{ keys: [entry(event, 'event')] }]))).toEqual(first);
    const next = ed25519Key();
    const rotated = upsertNode(first.value, platformRootNode([{ keys: [entry(event, 'event', { exp: 1_767_312_000 }), entry(next, 'event', { iat: 1_767_312_000 })] }]));
    if (!rotated.ok) throw new Error(rotated.message);
    expect(rotated.value.keys.map((key) => [key.kid, key.exp])).toEqual([
      [event.jwk.kid, 1_767_312_000],
      [next.jwk.kid, undefined],
    ]);
  });
});
