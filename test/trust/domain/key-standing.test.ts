import { describe, expect, it } from 'vitest';
import { signJson } from '../../../lib/crypto/index.js';
import { keyStandingAt, upsertNode, validateDelegation, type Revocation, type TrustGraph, type TrustNode } from '../../../subgraphs/trust/domain/index.js';
import { ed25519Key, t } from './fixtures.js';

const seconds = (text: string) => Date.parse(text) / 1000;
const rootKey = ed25519Key();
const issuerKey = ed25519Key();
const spareKey = ed25519Key();

function node(id: string, kind: TrustNode['kind'], keys: Record<string, unknown>[]): TrustNode {
  const result = upsertNode(undefined, { id, kind, keys });
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

const nodes = [
  node('root', 'root', [{ ...rootKey.jwk, iat: seconds('2024-01-01T00:00:00Z') }]),
  node('acme', 'issuer', [{ ...issuerKey.jwk, iat: seconds('2024-03-01T00:00:00Z'), exp: seconds('2026-01-01T00:00:00Z') }]),
  node('orphan', 'issuer', [{ ...spareKey.jwk, iat: seconds('2024-01-01T00:00:00Z') }]),
];
const delegation = validateDelegation(
  signJson({ iss: 'root', sub: 'acme', scope: {}, iat: '2024-02-01T00:00:00Z', exp: '2027-01-01T00:00:00Z' }, rootKey.signer),
  { nodes, edges: [] },
  t('2024-06-01T00:00:00Z'),
);
if (!delegation.ok) throw new Error(delegation.message);
const graph: TrustGraph = { nodes, edges: [delegation.value] };

describe('keyStandingAt', () => {
  it('is valid with the path from a root when the key is current and a delegation stands', () => {
    expect(keyStandingAt(graph, issuerKey.jwk.kid, t('2024-06-01T00:00:00Z'))).toEqual({
      kid: issuerKey.jwk.kid,
      at: '2024-06-01T00:00:00.000Z',
      standing: 'valid',
      node_id: 'acme',
      path: [delegation.value.id],
    });
    expect(keyStandingAt(graph, rootKey.jwk.kid, t('2024-06-01T00:00:00Z'))).toMatchObject({ standing: 'valid', node_id: 'root', path: [] });
  });

  it('follows the key lifetime: not yet valid before iat, expired from exp on (exclusive)', () => {
    expect(keyStandingAt(graph, issuerKey.jwk.kid, t('2024-02-29T23:59:59Z')).standing).toBe('not_yet_valid');
    expect(keyStandingAt(graph, issuerKey.jwk.kid, t('2025-12-31T23:59:59.999999Z')).standing).toBe('valid');
    expect(keyStandingAt(graph, issuerKey.jwk.kid, t('2026-01-01T00:00:00Z')).standing).toBe('expired');
  });

  it('is unknown for a key no node lists, and for a node no delegation reaches', () => {
    expect(keyStandingAt(graph, ed25519Key().jwk.kid, t('2024-06-01T00:00:00Z'))).toMatchObject({ standing: 'unknown' });
    const orphan = keyStandingAt(graph, spareKey.jwk.kid, t('2024-06-01T00:00:00Z'));
    expect(orphan).toMatchObject({ standing: 'unknown', node_id: 'orphan' });
    expect(orphan.reason).toContain('no delegation path');
  });

  it('is revoked from the effective time, bitemporally by known_by', () => {
    const revocation: Revocation = {
      subject: `acme#${issuerKey.jwk.kid}`,
      reason: 'keyCompromise',
      effective_at: '2024-05-01T00:00:00Z',
      recorded_at: '2024-07-01T00:00:00.000Z',
      retroactive: true,
    };
    const revoked = { ...graph, revocations: [revocation] };
    expect(keyStandingAt(revoked, issuerKey.jwk.kid, t('2024-04-30T23:59:59Z')).standing).toBe('valid');
    expect(keyStandingAt(revoked, issuerKey.jwk.kid, t('2024-05-01T00:00:00Z')).standing).toBe('revoked');
    expect(keyStandingAt(revoked, issuerKey.jwk.kid, t('2024-06-01T00:00:00Z'), t('2024-06-01T00:00:00Z')).standing).toBe('valid');
    expect(keyStandingAt(revoked, issuerKey.jwk.kid, t('2024-06-01T00:00:00Z'), t('2024-07-01T00:00:00Z')).standing).toBe('revoked');
    // Revoking the node revokes its keys.
    const nodeRevoked = { ...graph, revocations: [{ ...revocation, subject: 'acme' }] };
    expect(keyStandingAt(nodeRevoked, issuerKey.jwk.kid, t('2024-06-01T00:00:00Z')).standing).toBe('revoked');
  });
});
