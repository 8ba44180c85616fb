/**
 * The trust graph of the backup drills (docs/OPERATIONS.md, "Backup and restore"): a root delegating
 * to an authority, which delegates to three issuers; the first issuer's key revoked (a second document
 * of its node) and the second issuer revoked, from tomorrow.
 */
import { expect } from 'vitest';
import { compactCredential, DAY, fromNow, newKey } from '../trust/support.js';
import type { TestStack } from './stack.js';

export async function drillTrustGraph(stack: Pick<TestStack, 'rest'>): Promise<void> {
  const [rootKey, authorityKey, ...issuerKeys] = await Promise.all([newKey(), newKey('P-256'), newKey(), newKey(), newKey()]);
  const iat = Math.floor((Date.now() - 30 * DAY) / 1000);
  const node = (id: string, kind: string, key: typeof rootKey) => stack.rest('trust', '/nodes', { as: 'admin', body: { id, kind, keys: [{ ...key.jwk, iat }] } });
  expect((await node('drill-root', 'root', rootKey)).status).toBe(201);
  expect((await node('drill-authority', 'authority', authorityKey)).status).toBe(201);
  for (const [i, key] of issuerKeys.entries()) expect((await node(`drill-issuer-${i}`, 'issuer', key)).status).toBe(201);
  const edge = async (iss: string, sub: string, key: typeof rootKey) => {
    const credential = await compactCredential({ iss, sub, scope: {}, iat: fromNow(-3_600_000), exp: fromNow(365 * DAY) }, key);
    expect((await stack.rest('trust', '/edges', { as: 'admin', body: { credential } })).status).toBe(201);
  };
  await edge('drill-root', 'drill-authority', rootKey);
  for (let i = 0; i < issuerKeys.length; i += 1) await edge('drill-authority', `drill-issuer-${i}`, authorityKey);
  const revokedKey = { ...issuerKeys[0]!.jwk, iat, revoked: { revoked_at: Math.floor(Date.now() / 1000), reason: 'keyCompromise' } };
  expect((await stack.rest('trust', '/nodes', { as: 'admin', body: { id: 'drill-issuer-0', keys: [revokedKey] } })).status).toBe(200);
  expect((await stack.rest('trust', '/revocations', { as: 'admin', body: { subject: 'drill-issuer-1', reason: 'cessationOfOperation', effective_at: fromNow(DAY) } })).status).toBe(201);
}
