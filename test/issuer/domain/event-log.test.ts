import { createHash } from 'node:crypto';
import * as jose from 'jose';
import { describe, expect, it } from 'vitest';
import { ed25519 } from '@noble/curves/ed25519.js';
import { canonicalize, encodeBase64Url, signJson, type KeyResolver } from '../../../lib/crypto/index.js';
import { appendEvent, buildEvent, emptyLogState, eventDigest, GENESIS_PREV_HASH, signedFormFromUnsigned, verifyEvent, type EventRecord } from '../../../lib/formats/issuer/event-log.js';
import { frontierRoot, merkleRoot, leafHash } from '../../../lib/formats/issuer/merkle.js';
import { at, buildLog, ed25519Key, objectEvent, p256Key, resolverOf } from './fixtures.js';

const key = ed25519Key();
const resolve = resolverOf(key);

describe('signed event records', () => {
  const { events } = buildLog('passport-1', key, 2);

  it('chains each record to the SHA-256 of the previous canonical signed form', () => {
    expect(events[0]).toMatchObject({ seq: 0, prev_hash: GENESIS_PREV_HASH, trust: 'Attested', kid: key.signer.kid, passport_id: 'passport-1' });
    expect(GENESIS_PREV_HASH).toBe('0'.repeat(64));
    for (let i = 1; i < events.length; i += 1) {
      expect(events[i]!.seq).toBe(i);
      expect(events[i]!.prev_hash).toBe(
        createHash('sha256')
          .update(canonicalize(events[i - 1]))
          .digest('hex'),
      );
    }
  });

  it('signs the JCS form without `signature` with Ed25519, verifiable by jose', async () => {
    const jwk = await jose.importJWK(key.jwk as jose.JWK, 'Ed25519');
    for (const event of events) {
      const { signature, ...unsigned } = event;
      const [protectedHeader, , sig] = signature.split('.');
      const result = await jose.flattenedVerify({ protected: protectedHeader!, payload: encodeBase64Url(canonicalize(unsigned)), signature: sig! }, jwk);
      expect(result.protectedHeader).toMatchObject({ alg: 'Ed25519', kid: key.signer.kid });
      expect(verifyEvent(event, resolve)).toEqual({ ok: true });
    }
  });

  it('stores a JSON copy of the payload, out of the caller’s reach', () => {
    const input = objectEvent('inspecting', 0);
    const event = buildEvent(undefined, { passport_id: 'p', ...input }, key.signer, at(0));
    (input.payload as { bizStep: string }).bizStep = 'shipping';
    expect(event.payload.bizStep).toBe('inspecting');
    expect(verifyEvent(event, resolve).ok).toBe(true);
  });

  it('names what is wrong with a record', () => {
    const event = events[1]!;
    const other = ed25519Key();
    const resign = (unsigned: Omit<EventRecord, 'signature'>, signer = key.signer) => signJson(unsigned, signer) as EventRecord;
    const { signature: _s, ...unsigned } = event;
    expect(verifyEvent({ ...event, payload: { ...event.payload, note: 'x' } }, resolve)).toMatchObject({ ok: false, reason: 'BAD_SIGNATURE' });
    expect(verifyEvent(event, resolverOf(other))).toMatchObject({ ok: false, reason: 'UNKNOWN_KEY' });
    expect(verifyEvent(resign({ ...unsigned, trust: 'Self-asserted' as 'Attested' }), resolve)).toMatchObject({ ok: false, reason: 'NOT_ATTESTED' });
    expect(verifyEvent(resign({ ...unsigned, kid: other.signer.kid }), resolve)).toMatchObject({ ok: false, reason: 'KID_MISMATCH' });
    expect(verifyEvent({ ...event, extra: 1 }, resolve)).toMatchObject({ ok: false, reason: 'MALFORMED' });
    expect(verifyEvent({ ...event, seq: -1 }, resolve)).toMatchObject({ ok: false, reason: 'MALFORMED' });
    expect(verifyEvent('event', resolve)).toMatchObject({ ok: false, reason: 'MALFORMED' });
  });

  it('derives the canonical signed form from the unsigned one exactly as JCS does', () => {
    const tricky = buildEvent(undefined, { passport_id: 'p-\u00e9\u{1F600}', type: 'suspended', payload: { reason: '"trust":"x","type":"y"}', note: '\u20ac\n' } }, key.signer, at(5));
    for (const event of [...events, tricky]) {
      const { signature: _s, ...unsigned } = event;
      expect(signedFormFromUnsigned(canonicalize(unsigned), event)).toBe(canonicalize(event));
    }
  });
});

describe('appending', () => {
  it('keeps the frontier root equal to the root of all leaves', () => {
    const { events, state } = buildLog('p', key, 6);
    expect(state.frontier.size).toBe(events.length);
    expect(frontierRoot(state.frontier)).toEqual(merkleRoot(events.map((event) => leafHash(new TextEncoder().encode(canonicalize(event))))));
    expect(state.status).toBe('active');
    expect(state.last).toBe(events.at(-1));
    expect(eventDigest(state.last!)).toBe(createHash('sha256').update(canonicalize(state.last)).digest('hex'));
  });

  it('refuses an illegal transition with rule I6 and leaves the state as it was', () => {
    const state = emptyLogState('p');
    const before = structuredClone(state);
    expect(() => appendEvent(state, { type: 'suspended', payload: { reason: 'x' } }, key.signer, at(0))).toThrowError(
      expect.objectContaining({ code: 'ILLEGAL_TRANSITION', details: { rule: 'I6', from: 'draft', event: 'suspended' } }),
    );
    expect(state).toEqual(before);
  });

  it('refuses a clock that runs backwards, a wrong key type, and a frontier that does not match', () => {
    const { state } = buildLog('p', key, 0);
    expect(() => appendEvent(state, objectEvent('inspecting', 0), key.signer, at(-10))).toThrowError(expect.objectContaining({ code: 'CLOCK_REGRESSION' }));
    expect(() => appendEvent(state, objectEvent('inspecting', 0), p256Key().signer, at(10))).toThrowError(expect.objectContaining({ code: 'WRONG_SIGNING_ALGORITHM' }));
    expect(() => appendEvent({ ...state, frontier: emptyLogState('p').frontier }, objectEvent('inspecting', 0), key.signer, at(10))).toThrowError(expect.objectContaining({ code: 'LOG_MISMATCH' }));
  });

  it('checks the payload against the catalogue before signing', () => {
    expect(() => appendEvent(emptyLogState('p'), { type: 'ObjectEvent', payload: { action: 'ADD' } }, key.signer, at(0))).toThrowError(expect.objectContaining({ code: 'INVALID_EVENT_PAYLOAD' }));
  });
});

describe('event signature verification (lib/crypto, held against @noble/curves strict mode)', () => {
  const { events } = buildLog('passport-2', key, 0);
  const event = events[0]!;
  const { signature, ...unsigned } = event;
  const [header, , sig] = signature.split('.') as [string, string, string];
  const sigBytes = Buffer.from(sig, 'base64url');
  // S + L: the same signature with a non-canonical S, which RFC 8032 §5.1.7 requires to be rejected.
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  const s = BigInt(`0x${Buffer.from(sigBytes.subarray(32)).reverse().toString('hex')}`) + L;
  const malleated = Buffer.concat([sigBytes.subarray(0, 32), Buffer.from(s.toString(16).padStart(64, '0'), 'hex').reverse()]);
  const withHeader = (headerMembers: Record<string, unknown>, record: Omit<EventRecord, 'signature'> = unsigned) => {
    const encodedHeader = encodeBase64Url(JSON.stringify(headerMembers));
    const input = new TextEncoder().encode(`${encodedHeader}.${encodeBase64Url(canonicalize(record))}`);
    return `${encodedHeader}..${encodeBase64Url(ed25519.sign(input, key.secretKey))}`;
  };
  /** The independent judge: noble's RFC 8032 strict verification over the JWS signing input. */
  const nobleAccepts = (record: Omit<EventRecord, 'signature'>, jws: string) => {
    const [h, , sg] = jws.split('.') as [string, string, string];
    const input = new TextEncoder().encode(`${h}.${encodeBase64Url(canonicalize(record))}`);
    return ed25519.verify(Buffer.from(sg, 'base64url'), input, ed25519.getPublicKey(key.secretKey), { zip215: false });
  };

  // [case, record without signature, JWS, resolver, expected failure or undefined]
  const cases: [string, Omit<EventRecord, 'signature'>, string, KeyResolver, string | undefined][] = [
    ['valid', unsigned, signature, resolve, undefined],
    ['signed with alg EdDSA', unsigned, withHeader({ alg: 'EdDSA', kid: key.signer.kid }), resolve, undefined],
    ['tampered payload', { ...unsigned, payload: { ...unsigned.payload, bizStep: 'shipping' } }, signature, resolve, 'BAD_SIGNATURE'],
    ['non-canonical S', unsigned, `${header}..${encodeBase64Url(malleated)}`, resolve, 'BAD_SIGNATURE'],
    ['truncated signature', unsigned, `${header}..${encodeBase64Url(sigBytes.subarray(0, 63))}`, resolve, 'BAD_SIGNATURE'],
    ['unknown key', unsigned, signature, resolverOf(ed25519Key()), 'UNKNOWN_KEY'],
    ['critical header', unsigned, withHeader({ alg: 'Ed25519', kid: key.signer.kid, crit: ['exp'], exp: 1 }), resolve, 'MALFORMED'],
    ['attached payload', unsigned, `${header}.e30.${sig}`, resolve, 'MALFORMED'],
    ['garbage header', unsigned, `!!..${sig}`, resolve, 'MALFORMED'],
  ];

  it.each(cases)('%s', (_name, record, jws, resolver, expected) => {
    const check = verifyEvent({ ...record, signature: jws }, resolver);
    expect(check.ok ? undefined : check.reason).toBe(expected);
    if (expected === undefined || expected === 'BAD_SIGNATURE') {
      const parts = jws.split('.');
      const wellFormed = parts.length === 3 && parts[1] === '' && Buffer.from(parts[2]!, 'base64url').length === 64;
      expect(wellFormed && nobleAccepts(record, jws)).toBe(expected === undefined);
    }
  });

  it('accepts only Ed25519: an ES256 signature by a known key fails', () => {
    const p256 = p256Key();
    const es256 = signJson({ ...unsigned, kid: p256.signer.kid }, p256.signer) as EventRecord;
    expect(verifyEvent(es256, resolverOf(key, p256))).toMatchObject({ ok: false, reason: 'UNSUPPORTED_ALGORITHM' });
  });
});
