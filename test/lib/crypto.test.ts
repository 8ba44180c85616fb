import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import * as jose from 'jose';
import { describe, expect, it } from 'vitest';
import {
  canonicalize,
  decodeBase64Url,
  ed25519PublicJwk,
  generateSecretKey,
  jwkThumbprint,
  keySetResolver,
  p256PublicJwk,
  publicKeyOf,
  rawKeySigner,
  signDetached,
  signJson,
  verifyCompact,
  verifyJson,
  JwsError,
} from '../../lib/crypto/index.js';

describe('RFC 8785 canonical JSON', () => {
  it('canonicalizes the example of §3.2.2', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        '"literals": [null, true, false]}',
    );
    expect(canonicalize(input)).toBe('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it('sorts members by UTF-16 code units as in §3.2.3', () => {
    const input = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",' +
        '"\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    );
    // Compared as text: parsing the output back would reorder integer-like keys.
    const order = ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'];
    expect(canonicalize(input)).toBe(`{${order.map((key) => `${JSON.stringify(key)}:${JSON.stringify(input[key])}`).join(',')}}`);
  });

  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
  ])('serializes the IEEE 754 value %s as %s (appendix B)', (bits, expected) => {
    const number = Buffer.from(bits, 'hex').readDoubleBE(0);
    expect(canonicalize(number)).toBe(expected);
  });

  it('refuses values JSON cannot carry', () => {
    expect(() => canonicalize(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalize(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(() => canonicalize('\ud800')).toThrow(TypeError);
  });
});

describe('RFC 7638 thumbprints', () => {
  it('matches the RSA example of §3.1', () => {
    const n =
      '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw';
    expect(jwkThumbprint({ kty: 'RSA', n, e: 'AQAB', alg: 'RS256', kid: '2011-04-29' })).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });

  it('matches the Ed25519 example of RFC 8037 §A.3', () => {
    expect(jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' })).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
  });

  it('agrees with jose for P-256 keys', async () => {
    const jwk = p256PublicJwk(publicKeyOf('ES256', generateSecretKey('ES256')));
    expect(jwkThumbprint(jwk)).toBe(await jose.calculateJwkThumbprint(jwk as jose.JWK, 'sha256'));
  });
});

describe('JWS with Ed25519', () => {
  const secretKey = decodeBase64Url('nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A');
  const publicJwk = { ...ed25519PublicJwk(publicKeyOf('Ed25519', secretKey)), kid: 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k' };

  it('derives the public key of RFC 8037 §A.1', () => {
    expect(publicJwk.x).toBe('11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo');
  });

  it('verifies the signature of RFC 8037 §A.4', () => {
    const jws = 'eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg';
    const verified = verifyCompact(jws, () => publicJwk);
    expect(new TextDecoder().decode(verified.payload)).toBe('Example of Ed25519 signing');
    // Ed25519 is deterministic, so signing the same input again gives the RFC's bytes.
    const signature = rawKeySigner('Ed25519', 'x', secretKey).sign(new TextEncoder().encode(jws.split('.').slice(0, 2).join('.')));
    expect(Buffer.from(signature).toString('base64url')).toBe(jws.split('.')[2]);
  });

  it('signs JSON that jose and Node crypto verify as a detached JWS over the JCS form', async () => {
    const signer = rawKeySigner('Ed25519', publicJwk.kid, secretKey);
    const document = signJson({ status: 'ok', service: 'trust', at: '2026-11-23T00:00:00Z' }, signer);
    const [protectedHeader, empty, signature] = document.signature.split('.');
    expect(empty).toBe('');
    const { signature: _omit, ...plain } = document;
    const payload = new TextEncoder().encode(canonicalize(plain));

    const key = await jose.importJWK(publicJwk as jose.JWK, 'Ed25519');
    const result = await jose.flattenedVerify({ protected: protectedHeader!, payload: Buffer.from(payload).toString('base64url'), signature: signature! }, key);
    expect(result.protectedHeader).toMatchObject({ alg: 'Ed25519', kid: publicJwk.kid });

    const nodeKey = createPublicKey({ key: publicJwk as object as import('node:crypto').JsonWebKey, format: 'jwk' });
    const signingInput = Buffer.from(`${protectedHeader}.${Buffer.from(payload).toString('base64url')}`);
    expect(nodeVerify(null, signingInput, nodeKey, Buffer.from(signature!, 'base64url'))).toBe(true);

    expect(verifyJson(document, keySetResolver([publicJwk])).payload).toEqual(plain);
  });

  it('rejects a changed member, an unknown key and a signature of another key', () => {
    const signer = rawKeySigner('Ed25519', publicJwk.kid, secretKey);
    const document = signJson({ status: 'ok' }, signer);
    expect(() => verifyJson({ ...document, status: 'down' }, keySetResolver([publicJwk]))).toThrow(/does not verify/);
    expect(() => verifyJson(document, keySetResolver([]))).toThrowError(JwsError);
    const other = rawKeySigner('Ed25519', publicJwk.kid, generateSecretKey('Ed25519'));
    expect(() => verifyJson(signJson({ status: 'ok' }, other), keySetResolver([publicJwk]))).toThrow(/does not verify/);
  });
});

describe('Ed25519 verification', () => {
  it('accepts nothing @noble/curves strict RFC 8032 mode refuses, and refuses keys of small order', async () => {
    const { ed25519 } = await import('@noble/curves/ed25519.js');
    const { verifyBytes } = await import('../../lib/crypto/signature.js');
    const secretKey = generateSecretKey('Ed25519');
    const publicKey = publicKeyOf('Ed25519', secretKey);
    const message = new TextEncoder().encode('event 42');
    const signature = ed25519.sign(message, secretKey);
    // S + L: the same signature with a non-canonical scalar, which RFC 8032 requires verifiers to refuse.
    const L = 2n ** 252n + 27742317777372353535851937790883648493n;
    const s = signature.slice(32).reduceRight((acc, byte) => (acc << 8n) | BigInt(byte), 0n) + L;
    const nonCanonical = new Uint8Array(signature);
    for (let i = 0; i < 32; i++) nonCanonical[32 + i] = Number((s >> BigInt(8 * i)) & 0xffn);
    const flipped = new Uint8Array(signature);
    flipped[5]! ^= 1;
    const cases: [Uint8Array, Uint8Array, Uint8Array][] = [
      [publicKey, message, signature],
      [publicKey, new TextEncoder().encode('event 43'), signature],
      [publicKey, message, flipped],
      [publicKey, message, nonCanonical],
      [publicKey, message, signature.slice(0, 63)],
      [new Uint8Array(32).fill(0xff), message, signature],
      // The identity point as a key, with the trivial forgery R = identity, S = 0.
      [ed25519.Point.ZERO.toBytes(), message, new Uint8Array([...ed25519.Point.ZERO.toBytes(), ...new Uint8Array(32)])],
      [publicKeyOf('Ed25519', generateSecretKey('Ed25519')), message, signature],
    ];
    const noble = (key: Uint8Array, data: Uint8Array, sig: Uint8Array) => {
      try {
        return ed25519.verify(sig, data, key, { zip215: false });
      } catch {
        return false;
      }
    };
    const native = cases.map(([key, data, sig]) => verifyBytes('Ed25519', key, data, sig));
    // Never more permissive than the strict pure-JavaScript check; the forgery under a small-order key is refused.
    for (const [i, accepted] of native.entries()) expect(!accepted || noble(...cases[i]!), `case ${i}`).toBe(true);
    expect(native).toEqual([true, false, false, false, false, false, false, false]);
    // The thread-pool variant answers exactly as the synchronous one.
    const { verifyBytesAsync } = await import('../../lib/crypto/signature.js');
    expect(await Promise.all(cases.map(([key, data, sig]) => verifyBytesAsync('Ed25519', key, data, sig)))).toEqual(native);
  });

  it('signs through OpenSSL byte for byte as @noble/curves does (RFC 8032 is deterministic)', async () => {
    const { ed25519 } = await import('@noble/curves/ed25519.js');
    const { signBytes } = await import('../../lib/crypto/signature.js');
    for (let i = 0; i < 20; i += 1) {
      const secretKey = generateSecretKey('Ed25519');
      const message = new TextEncoder().encode(`message ${i} ${'x'.repeat(i * 37)}`);
      expect(Buffer.from(signBytes('Ed25519', secretKey, message)).toString('hex')).toBe(Buffer.from(ed25519.sign(message, secretKey)).toString('hex'));
    }
  });

  it('derives public keys through OpenSSL as @noble/curves does, Ed25519 and ES256, and refuses ES256 scalars outside 1..n-1', async () => {
    const { ed25519 } = await import('@noble/curves/ed25519.js');
    const { p256 } = await import('@noble/curves/nist.js');
    for (let i = 0; i < 20; i += 1) {
      const edwards = generateSecretKey('Ed25519');
      expect(Buffer.from(publicKeyOf('Ed25519', edwards)).toString('hex')).toBe(Buffer.from(ed25519.getPublicKey(edwards)).toString('hex'));
      const nist = generateSecretKey('ES256');
      expect(Buffer.from(publicKeyOf('ES256', nist)).toString('hex')).toBe(Buffer.from(p256.getPublicKey(nist, false)).toString('hex'));
    }
    const scalar = (value: bigint) => Uint8Array.from(Buffer.from(value.toString(16).padStart(64, '0'), 'hex'));
    const n = p256.Point.Fn.ORDER;
    for (const edge of [1n, n - 1n]) expect(Buffer.from(publicKeyOf('ES256', scalar(edge))).toString('hex')).toBe(Buffer.from(p256.getPublicKey(scalar(edge), false)).toString('hex'));
    for (const outside of [scalar(0n), scalar(n), new Uint8Array(32).fill(0xff), new Uint8Array(31).fill(1)]) expect(() => publicKeyOf('ES256', outside)).toThrow(RangeError);
    expect(() => publicKeyOf('Ed25519', new Uint8Array(31))).toThrow(RangeError);
  });

  it('verifies detached JWS on the thread pool with the same answers and errors', async () => {
    const { verifyDetachedAsync } = await import('../../lib/crypto/jws.js');
    const secretKey = generateSecretKey('Ed25519');
    const jwk = { ...ed25519PublicJwk(publicKeyOf('Ed25519', secretKey)) };
    const kid = jwkThumbprint(jwk);
    const resolve = keySetResolver([{ ...jwk, kid }]);
    const document = signJson({ seq: 1 }, rawKeySigner('Ed25519', kid, secretKey));
    const payload = new TextEncoder().encode(canonicalize({ seq: 1 }));
    expect((await verifyDetachedAsync(document.signature, payload, resolve)).header.kid).toBe(kid);
    await expect(verifyDetachedAsync(document.signature, new TextEncoder().encode(canonicalize({ seq: 2 })), resolve)).rejects.toMatchObject({ reason: 'BAD_SIGNATURE' });
    await expect(verifyDetachedAsync(document.signature, payload, keySetResolver([]))).rejects.toMatchObject({ reason: 'UNKNOWN_KEY' });
    await expect(verifyDetachedAsync(`${document.signature}x.y`, payload, resolve)).rejects.toMatchObject({ reason: 'MALFORMED' });
  });
});

describe('JWS with ES256', () => {
  it('produces detached signatures jose verifies', async () => {
    const secretKey = generateSecretKey('ES256');
    const jwk = p256PublicJwk(publicKeyOf('ES256', secretKey));
    const kid = jwkThumbprint(jwk);
    const payload = new TextEncoder().encode('{"a":1}');
    const jws = signDetached(payload, rawKeySigner('ES256', kid, secretKey));
    const [protectedHeader, , signature] = jws.split('.');
    const key = await jose.importJWK(jwk as jose.JWK, 'ES256');
    await expect(jose.flattenedVerify({ protected: protectedHeader!, payload: Buffer.from(payload).toString('base64url'), signature: signature! }, key)).resolves.toBeTruthy();
  });
});
