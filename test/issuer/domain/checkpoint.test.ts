import { createHash, createPublicKey, verify as nodeVerify } from 'node:crypto';
import * as jose from 'jose';
import { describe, expect, it } from 'vitest';
import { canonicalize, encodeBase64Url } from '../../../lib/crypto/index.js';
import { checkpointBody, noteKeyId, signCheckpointNote, signLogHead, verifyLogHead } from '../../../lib/formats/issuer/checkpoint.js';
import { frontierRoot } from '../../../lib/formats/issuer/merkle.js';
import { at, buildLog, ed25519Key, p256Key, resolverOf } from './fixtures.js';

const key = ed25519Key();

describe('log head', () => {
  const { state } = buildLog('passport-7', key, 3);
  const head = signLogHead('passport-7', state.frontier, key.signer, at(100));

  it('is signed JSON over size and root, verifiable by jose', async () => {
    expect(head).toMatchObject({ passport_id: 'passport-7', size: 5, root_hash: Buffer.from(frontierRoot(state.frontier)).toString('hex'), timestamp: at(100).toISOString() });
    const { signature, ...plain } = head;
    const [protectedHeader, , sig] = signature.split('.');
    const result = await jose.flattenedVerify({ protected: protectedHeader!, payload: encodeBase64Url(canonicalize(plain)), signature: sig! }, await jose.importJWK(key.jwk as jose.JWK, 'Ed25519'));
    expect(result.protectedHeader?.kid).toBe(key.signer.kid);
    expect(verifyLogHead(head, resolverOf(key))).toEqual({ ok: true, kid: key.signer.kid });
  });

  it('fails on any change, an unknown key or a malformed head', () => {
    expect(verifyLogHead({ ...head, size: 4 }, resolverOf(key))).toMatchObject({ ok: false, reason: 'BAD_SIGNATURE' });
    expect(verifyLogHead(head, resolverOf(ed25519Key()))).toMatchObject({ ok: false, reason: 'UNKNOWN_KEY' });
    expect(verifyLogHead({ ...head, root_hash: 'ABC' }, resolverOf(key))).toMatchObject({ ok: false, reason: 'MALFORMED' });
    expect(() => signLogHead('p', state.frontier, p256Key().signer, at(0))).toThrowError(expect.objectContaining({ code: 'WRONG_SIGNING_ALGORITHM' }));
  });
});

describe('C2SP checkpoint', () => {
  const root = new Uint8Array(32).fill(7);

  it('writes origin, size and base64 root on three lines', () => {
    expect(checkpointBody('issuer.example/passports/p1', 5, root)).toBe(`issuer.example/passports/p1\n5\n${Buffer.from(root).toString('base64')}\n`);
    expect(() => checkpointBody('two\nlines', 1, root)).toThrow(RangeError);
  });

  it('signs it as a signed note that node:crypto verifies', () => {
    const body = checkpointBody('issuer.example/passports/p1', 5, root);
    const note = signCheckpointNote(body, 'issuer.example', key.publicKey, key.signer);
    const [text, signatureLine] = note.split('\n\n');
    expect(`${text}\n`).toBe(body);
    const match = /^\u2014 issuer\.example ([A-Za-z0-9+/=]+)\n$/.exec(signatureLine!);
    expect(match).not.toBeNull();
    const blob = Buffer.from(match![1]!, 'base64');
    const expectedId = createHash('sha256')
      .update(Buffer.concat([Buffer.from('issuer.example\n'), Buffer.from([1]), key.publicKey]))
      .digest()
      .subarray(0, 4);
    expect(blob.subarray(0, 4)).toEqual(expectedId);
    expect(Buffer.from(noteKeyId('issuer.example', key.publicKey))).toEqual(expectedId);
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: encodeBase64Url(key.publicKey) }, format: 'jwk' });
    expect(nodeVerify(null, Buffer.from(body), publicKey, blob.subarray(4))).toBe(true);
  });
});
