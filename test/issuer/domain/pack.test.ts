import { createHash, randomBytes } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import { decode, encode } from 'cborg';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../../lib/crypto/index.js';
import { decodeBase45, encodeBase45 } from '../../../lib/formats/issuer/base45.js';
import type { CapabilityClass } from '../../../lib/formats/issuer/capability.js';
import { signLogHead } from '../../../lib/formats/issuer/checkpoint.js';
import { IssuerError } from '../../../lib/formats/issuer/errors.js';
import { buildPackClaims, decodePack, DEFAULT_QR_BUDGET, mintPack, PACK_PREFIX, verifyPack, type PackClaims, type PackSource } from '../../../lib/formats/issuer/pack.js';
import { deflateSync } from 'node:zlib';
import { readPackIndependently, scanQr } from '../../support/pack-reader.js';
import { at, buildLog, ed25519Key, p256Key, resolverOf } from './fixtures.js';

const eventKey = ed25519Key();
const carrierKey = p256Key();
const keyring = resolverOf(eventKey, carrierKey);
const { events, state } = buildLog('3f1c8d2e-5b7a-4c19-9e0d-2a6b8f4c7e51', eventKey, 4);
const head = signLogHead(state.passport_id, state.frontier, eventKey.signer, at(60));
const configVector = { battery: { chemistry: 'LFP', capacity_kwh: 75 }, languages: ['de', 'en'] };

const source = (capability_class: CapabilityClass): PackSource => ({
  issuer: 'https://issuer.example',
  passport: {
    id: state.passport_id,
    identity: 'https://id.gs1.org/01/09520123456788/21/SN-42',
    type_ref: { id: 'battery-passport', version: 3 },
    config_vector: configVector,
    capability_class,
    status: state.status,
  },
  head,
  last_event: events.at(-1)!,
  now: at(70),
});

describe('QR budget', () => {
  it('defaults to the alphanumeric capacity of a version 22 QR code at level M', () => {
    expect(DEFAULT_QR_BUDGET).toBe(1134);
    expect(QRCode.create('A'.repeat(DEFAULT_QR_BUDGET), { errorCorrectionLevel: 'M' }).version).toBe(22);
    expect(QRCode.create('A'.repeat(DEFAULT_QR_BUDGET + 1), { errorCorrectionLevel: 'M' }).version).toBe(23);
  });
});

describe('Tier-A pack', () => {
  for (const capabilityClass of ['identify', 'trace', 'verify-offline'] as const) {
    it(`class ${capabilityClass}: scans, decodes and verifies with independent tools`, async () => {
      const claims = buildPackClaims(source(capabilityClass));
      const pack = mintPack(claims, carrierKey.signer);
      expect(pack.size).toBe(pack.text.length);
      expect(pack.size).toBeLessThanOrEqual(DEFAULT_QR_BUDGET);
      expect(QRCode.create(pack.text, { errorCorrectionLevel: 'M' }).version).toBeLessThanOrEqual(22);

      const scanned = await scanQr(pack.text);
      expect(scanned).toBe(pack.text);

      const independent = await readPackIndependently(scanned, [carrierKey.jwk]);
      expect(independent.valid).toBe(true);
      expect(independent.kid).toBe(carrierKey.signer.kid);
      expect(independent.claims.get(2)).toBe(state.passport_id);
      expect(independent.claims.get(-3)).toBe('active');
      const [size, root] = independent.claims.get(-4) as [number, Uint8Array];
      expect([size, Buffer.from(root).toString('hex')]).toEqual([6, head.root_hash]);
      const expectedKeys = { identify: [1, 2, 6, -1, -2, -3, -4, -5], trace: [1, 2, 6, -1, -2, -3, -4, -5, -6, -7], 'verify-offline': [1, 2, 6, -1, -2, -3, -4, -5, -6, -7, -8] };
      expect([...independent.claims.keys()]).toEqual(expectedKeys[capabilityClass]);

      expect(decodePack(scanned).claims).toEqual(claims);
      expect(verifyPack(scanned, keyring)).toEqual({
        ok: true,
        claims,
        kid: carrierKey.signer.kid,
        log_head_signature: capabilityClass === 'verify-offline' ? 'verified' : 'absent',
      });
    });
  }

  it('puts into each class exactly the documented claims', () => {
    const [a, b, c] = (['identify', 'trace', 'verify-offline'] as const).map((cls) => buildPackClaims(source(cls)));
    expect(a).toEqual({
      iss: 'https://issuer.example',
      sub: state.passport_id,
      iat: Math.floor(at(70).getTime() / 1000),
      capability_class: 'identify',
      type_ref: { id: 'battery-passport', version: 3 },
      status: 'active',
      log: { size: 6, root_hash: head.root_hash },
      identity: 'https://id.gs1.org/01/09520123456788/21/SN-42',
    });
    expect(b).toEqual({
      ...a,
      capability_class: 'trace',
      manifest_digest: createHash('sha256').update(canonicalize(configVector)).digest('hex'),
      last_event: { seq: 5, type: 'ObjectEvent', recorded_at: events.at(-1)!.recorded_at },
    });
    expect(c).toEqual({ ...b, capability_class: 'verify-offline', log_head: { timestamp: head.timestamp, signature: head.signature } });
  });

  it('refuses a pack over the budget, saying size and budget', () => {
    const claims = buildPackClaims(source('verify-offline'));
    let thrown: unknown;
    try {
      mintPack(claims, carrierKey.signer, 300);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(IssuerError);
    const error = thrown as IssuerError<'PACK_OVER_BUDGET'>;
    expect(error.code).toBe('PACK_OVER_BUDGET');
    expect(error.details.budget).toBe(300);
    expect(error.details.size).toBe(mintPack(claims, carrierKey.signer).size);
    expect(error.message).toContain(`${error.details.size} characters`);
    // A pack that would not fit one QR code of version 22 at level M is refused at the default budget.
    // Random text, so that compression cannot shrink it back under the budget.
    const bulky = { ...buildPackClaims(source('identify')), identity: randomBytes(600).toString('base64') };
    expect(() => mintPack(bulky, carrierKey.signer)).toThrowError(expect.objectContaining({ code: 'PACK_OVER_BUDGET', details: expect.objectContaining({ budget: 1134 }) }));
    expect(() => mintPack(claims, carrierKey.signer, 3)).toThrowError(expect.objectContaining({ code: 'INVALID_BUDGET' }));
  });

  it('refuses claims that do not match their capability class, and a non-P-256 signer', () => {
    const a = buildPackClaims(source('identify'));
    const b = buildPackClaims(source('trace'));
    const refuse = (claims: PackClaims) => expect(() => mintPack(claims, carrierKey.signer)).toThrowError(expect.objectContaining({ code: 'INVALID_PACK_CLAIMS' }));
    refuse({ ...a, manifest_digest: b.manifest_digest! });
    refuse({ ...b, last_event: undefined });
    refuse({ ...b, last_event: { ...b.last_event!, seq: 2 } });
    refuse({ ...a, status: 'paused' as 'active' });
    refuse({ ...a, log: { size: 6, root_hash: 'xyz' } });
    expect(() => mintPack(a, eventKey.signer)).toThrowError(expect.objectContaining({ code: 'WRONG_SIGNING_ALGORITHM' }));
    expect(() => buildPackClaims({ ...source('identify'), last_event: events[1] })).toThrowError(expect.objectContaining({ code: 'INVALID_PACK_CLAIMS' }));
  });

  it('lets trace and verify-offline packs of an empty log go without a last event', () => {
    const emptyHead = signLogHead('fresh', { size: 0, hashes: [] }, eventKey.signer, at(0));
    const fresh: PackSource = { ...source('verify-offline'), passport: { ...source('verify-offline').passport, id: 'fresh', status: 'draft' }, head: emptyHead, last_event: undefined };
    const pack = mintPack(buildPackClaims(fresh), carrierKey.signer);
    expect(verifyPack(pack.text, keyring)).toMatchObject({ ok: true, log_head_signature: 'verified', claims: { log: { size: 0 } } });
  });

  it('fails a pack whose claims were changed under the signature, or whose key is unknown', () => {
    const text = mintPack(buildPackClaims(source('identify')), carrierKey.signer).text;
    const tags: ((inner: unknown) => unknown)[] = [];
    tags[18] = (value) => value;
    const [protectedHeader, unprotected, payload, signature] = decode(inflateSync(decodeBase45(text.slice(5))), { useMaps: true, tags }) as [Uint8Array, Map<number, unknown>, Uint8Array, Uint8Array];
    const claims = decode(payload, { useMaps: true }) as Map<number, unknown>;
    claims.set(-3, 'revoked');
    // Tag 18 is the single byte 0xd2 (major type 6, value 18) before the array.
    const message = encode([protectedHeader, unprotected, encode(claims, { useMaps: true }), signature], { useMaps: true });
    const forged = PACK_PREFIX + encodeBase45(deflateSync(Buffer.concat([Buffer.from([0xd2]), message])));
    expect(verifyPack(forged, keyring)).toMatchObject({ ok: false, reason: 'BAD_SIGNATURE', claims: { status: 'revoked' } });
    expect(verifyPack(text, resolverOf(eventKey))).toMatchObject({ ok: false, reason: 'UNKNOWN_KEY' });
  });

  it('fails a verify-offline pack whose embedded log head does not verify', () => {
    const c = buildPackClaims(source('verify-offline'));
    const otherHead = signLogHead(state.passport_id, { size: 0, hashes: [] }, eventKey.signer, at(1));
    const text = mintPack({ ...c, log_head: { timestamp: c.log_head!.timestamp, signature: otherHead.signature } }, carrierKey.signer).text;
    expect(verifyPack(text, keyring)).toMatchObject({ ok: false, reason: 'BAD_LOG_HEAD_SIGNATURE' });
  });

  it.each([
    ['HC1:NCFOXN%TS3DH', /starts with DPP1:/],
    ['DPP1:bb8', /Base45/],
    ['DPP1:BB8', /zlib/],
    [PACK_PREFIX + encodeBase45(deflateSync(Buffer.from([0xa0]))), /COSE_Sign1/],
  ])('reports which layer of %j is malformed', (text, message) => {
    expect(() => decodePack(text)).toThrowError(expect.objectContaining({ code: 'MALFORMED_PACK', message: expect.stringMatching(message) }));
    expect(verifyPack(text, keyring)).toMatchObject({ ok: false, reason: 'MALFORMED' });
  });
});
