import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import * as jose from 'jose';
import { describe, expect, it } from 'vitest';
import { ed25519PublicJwk, generateSecretKey, jwkThumbprint, publicKeyOf, rawKeySigner, type PublicJwk } from '../../../lib/crypto/index.js';
import { buildBag, notarize, snapshotBag, verifyNotarization, type NotarizationClaims } from '../../../subgraphs/archive/domain/index.js';
import { syntheticPassport } from '../support/synthetic-passport.js';

function notaryKey(extra: Record<string, unknown> = {}) {
  const secret = generateSecretKey('Ed25519');
  const jwk = ed25519PublicJwk(publicKeyOf('Ed25519', secret));
  const kid = jwkThumbprint(jwk);
  return { signer: rawKeySigner('Ed25519', kid, secret), jwk: { ...jwk, kid, ...extra } as PublicJwk };
}

const NOTARIZED_AT = '2025-06-01T08:00:01Z';
const AT_SECONDS = Date.parse(NOTARIZED_AT) / 1000;

async function notarizedBag() {
  const { bytes, summary } = await buildBag(
    snapshotBag({ snapshotId: 'snap-1', baggedAt: '2025-06-01T08:00:00Z', content: syntheticPassport(20), sourceOrganization: 'Archive', softwareAgent: 'test' }),
  );
  const claims: NotarizationClaims = {
    snapshot_id: 'snap-1',
    passport_id: syntheticPassport(0).passportId,
    bag_sha512: summary.sha512,
    bag_size: summary.size,
    notarized_at: NOTARIZED_AT,
    tagmanifest_sha512: summary.tagmanifestSha512,
  };
  return { bytes, claims };
}

describe('notarization', () => {
  it('verifies against the digest of the bag bytes, computed independently', async () => {
    const { bytes, claims } = await notarizedBag();
    const { signer, jwk } = notaryKey();
    const document = notarize(claims, signer);
    const verified = verifyNotarization(JSON.parse(JSON.stringify(document)), bytesToHex(sha512(bytes)), [jwk]);
    expect(verified.claims).toEqual(claims);
    expect(verified.key.kid).toBe(jwk.kid);
    expect(document.bag_size).toBe(bytes.length);
  });

  it('is a detached JWS over the JCS form that jose and node:crypto both verify', async () => {
    const { claims } = await notarizedBag();
    const { signer, jwk } = notaryKey();
    const { signature, ...plain } = notarize(claims, signer);
    // A flat object of strings and integers: JCS is JSON.stringify over sorted members.
    const canonical = JSON.stringify(Object.fromEntries(Object.entries(plain).sort(([a], [b]) => (a < b ? -1 : 1))));
    const [header, empty, signatureB64] = signature.split('.');
    expect(empty).toBe('');
    const payload = Buffer.from(canonical).toString('base64url');
    const key = await jose.importJWK(jwk, 'Ed25519');
    const result = await jose.flattenedVerify({ protected: header!, payload, signature: signatureB64! }, key);
    expect(result.protectedHeader).toMatchObject({ alg: 'Ed25519', kid: jwk.kid });
    const nodeKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x! }, format: 'jwk' });
    expect(nodeVerify(null, Buffer.from(`${header}.${payload}`), nodeKey, Buffer.from(signatureB64!, 'base64url'))).toBe(true);
  });

  it('fails for other bytes: a flipped byte changes the digest', async () => {
    const { bytes, claims } = await notarizedBag();
    const { signer, jwk } = notaryKey();
    const document = notarize(claims, signer);
    const tampered = bytes.slice();
    tampered[tampered.length - 2048]! ^= 0x20;
    expect(() => verifyNotarization(document, bytesToHex(sha512(tampered)), [jwk])).toThrow(expect.objectContaining({ code: 'NOTARIZATION_DIGEST_MISMATCH' }));
  });

  it('fails when a claim was changed after signing', async () => {
    const { bytes, claims } = await notarizedBag();
    const { signer, jwk } = notaryKey();
    const document = { ...notarize(claims, signer), notarized_at: '2025-06-01T09:00:00Z' };
    expect(() => verifyNotarization(document, bytesToHex(sha512(bytes)), [jwk])).toThrow(expect.objectContaining({ code: 'NOTARIZATION_SIGNATURE_INVALID' }));
  });

  it('fails under a key the keyring does not hold', async () => {
    const { bytes, claims } = await notarizedBag();
    const document = notarize(claims, notaryKey().signer);
    expect(() => verifyNotarization(document, bytesToHex(sha512(bytes)), [notaryKey().jwk])).toThrow(expect.objectContaining({ code: 'NOTARY_KEY_UNKNOWN' }));
  });

  it('honours key history: revoked before fails, revoked after still verifies, not yet issued or expired fails', async () => {
    const { bytes, claims } = await notarizedBag();
    const digest = bytesToHex(sha512(bytes));
    const cases: [Record<string, unknown>, string | undefined][] = [
      [{ iat: AT_SECONDS - 10, revoked: { revoked_at: AT_SECONDS + 10, reason: 'superseded' } }, undefined],
      [{ iat: AT_SECONDS - 10, revoked: { revoked_at: AT_SECONDS - 1, reason: 'keyCompromise' } }, 'NOTARY_KEY_NOT_VALID'],
      [{ iat: AT_SECONDS + 1 }, 'NOTARY_KEY_NOT_VALID'],
      [{ iat: AT_SECONDS - 10, exp: AT_SECONDS }, 'NOTARY_KEY_NOT_VALID'],
      [{ iat: AT_SECONDS - 10, exp: AT_SECONDS + 1 }, undefined],
    ];
    for (const [history, code] of cases) {
      const { signer, jwk } = notaryKey(history);
      const document = notarize(claims, signer);
      if (code) expect(() => verifyNotarization(document, digest, [jwk])).toThrow(expect.objectContaining({ code }));
      else expect(verifyNotarization(document, digest, [jwk]).claims.snapshot_id).toBe('snap-1');
    }
  });

  it('refuses to sign or accept malformed claims', async () => {
    const { bytes, claims } = await notarizedBag();
    const { signer, jwk } = notaryKey();
    for (const bad of [
      { ...claims, bag_sha512: claims.bag_sha512.toUpperCase() },
      { ...claims, bag_size: 0 },
      { ...claims, notarized_at: '2025-06-01 08:00:01' },
      { ...claims, snapshot_id: '' },
      { ...claims, tagmanifest_sha512: 'abc' },
      { ...claims, extra: true },
    ]) {
      expect(() => notarize(bad as NotarizationClaims, signer)).toThrow(expect.objectContaining({ code: 'NOTARIZATION_MALFORMED' }));
    }
    const digest = bytesToHex(sha512(bytes));
    for (const document of [null, [], { ...claims }, { ...claims, signature: 'not-a-jws' }]) {
      expect(() => verifyNotarization(document, digest, [jwk])).toThrow(expect.objectContaining({ code: 'NOTARIZATION_MALFORMED' }));
    }
  });
});
