import { createHash, createPrivateKey, sign as nodeSign } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { canonicalize, decodeBase64Url, encodeBase64Url, jwkThumbprint, verifyBytes } from '../../../lib/crypto/index.js';
import {
  cosignatureMessage,
  cosignedBody,
  quorumVerdict,
  validateMasterListEntry,
  validateWitnessSet,
  type Cosignature,
  type MasterListEntry,
  type WitnessSet,
} from '../../../subgraphs/trust/domain/index.js';
import { ed25519Key, type TestKey } from './fixtures.js';

const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));

// RFC 8032 §7.1, TEST 1 and TEST 2.
const RFC8032 = [
  {
    secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    public: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    public: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature: '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
];

// Verdicts verify through lib/crypto's verifyBytes; these hold it to what the verdicts rely on.
const verifyEd25519 = (x: string, message: Uint8Array, signature: Uint8Array) => verifyBytes('Ed25519', decodeBase64Url(x), message, signature);

describe('Ed25519 verification for verdicts (lib/crypto verifyBytes)', () => {
  it.each(RFC8032)('accepts the RFC 8032 vector for key $public and refuses it altered', (vector) => {
    const x = encodeBase64Url(hex(vector.public));
    const signature = hex(vector.signature);
    expect(verifyEd25519(x, hex(vector.message), signature)).toBe(true);
    signature[5]! ^= 1;
    expect(verifyEd25519(x, hex(vector.message), signature)).toBe(false);
    expect(verifyEd25519(x, new TextEncoder().encode('other'), hex(vector.signature))).toBe(false);
  });

  const secret = hex(RFC8032[0]!.secret);
  const x = encodeBase64Url(hex(RFC8032[0]!.public));
  const message = new TextEncoder().encode('cosignature/v1\ntime 0\n');
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  const toLE = (value: bigint) => hex(value.toString(16).padStart(64, '0')).reverse();
  const fromLE = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).reverse().toString('hex') || '0'}`);

  it('refuses S + L, as the strict verifier does', () => {
    const signature = ed25519.sign(message, secret);
    const malleated = new Uint8Array(signature);
    malleated.set(toLE(fromLE(signature.subarray(32)) + L), 32);
    expect(verifyEd25519(x, message, signature)).toBe(true);
    expect(verifyEd25519(x, message, malleated)).toBe(false);
    expect(verifyBytes('Ed25519', hex(RFC8032[0]!.public), message, malleated)).toBe(false);
  });

  it('accepts no more than the strict @noble/curves check: an R with a small-order part passes only the cofactored equation', () => {
    // R = rB + T with T of order 2, S = r + k·a: [8]-multiplied both sides agree, [S]B = R + [k]A does not.
    const { scalar: a, pointBytes: A } = ed25519.utils.getExtendedPublicKey(secret);
    const T = ed25519.Point.fromBytes(hex('ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'));
    expect(T.isSmallOrder()).toBe(true);
    const r = 1234567890123456789n;
    const R = ed25519.Point.BASE.multiply(r).add(T).toBytes();
    const k = fromLE(sha512(new Uint8Array([...R, ...A, ...message]))) % L;
    const signature = new Uint8Array([...R, ...toLE((r + k * a) % L)]);
    expect(ed25519.verify(signature, message, A, { zip215: false })).toBe(true);
    expect(verifyEd25519(x, message, signature)).toBe(false);
  });

  it('refuses keys of small order', () => {
    const identity = encodeBase64Url(ed25519.Point.ZERO.toBytes());
    const signature = new Uint8Array([...ed25519.Point.ZERO.toBytes(), ...new Uint8Array(32)]);
    expect(verifyEd25519(identity, message, signature)).toBe(false);
  });
});

function witness(): TestKey {
  return ed25519Key();
}

function witnessSet(m: number, keys: readonly TestKey[]): WitnessSet {
  const result = validateWitnessSet({ m, keys: keys.map((key) => key.jwk) });
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

const ORIGIN = 'trust.example.org/master-list';

function cosign(key: TestKey, entry: Pick<MasterListEntry, 'id' | 'body'>, time = 1_740_000_000, origin = ORIGIN): Cosignature {
  // Composed here from the format in master-list.ts, not with the code under test.
  const digest = createHash('sha256').update(canonicalize(entry.body)).digest('base64');
  const text = `cosignature/v1\ntime ${time}\n${origin}\nentry ${entry.id}\nsha256 ${digest}\n`;
  return { kid: key.jwk.kid, time, signature: encodeBase64Url(key.sign(new TextEncoder().encode(text))) };
}

describe('the cosigned message', () => {
  it('is the cosignature/v1 header over a checkpoint-like body', () => {
    const body = { jurisdiction: 'DE', anchor: 'root-de' };
    const digest = createHash('sha256').update('{"anchor":"root-de","jurisdiction":"DE"}').digest('base64');
    const text = cosignedBody(ORIGIN, { id: 'de-1', body });
    expect(text).toBe(`trust.example.org/master-list\nentry de-1\nsha256 ${digest}\n`);
    expect(new TextDecoder().decode(cosignatureMessage(1700000000, text))).toBe(`cosignature/v1\ntime 1700000000\n${text}`);
  });

  it('refuses origins and ids that would break the note format', () => {
    expect(() => cosignedBody('two words', { id: 'x', body: {} })).toThrow(TypeError);
    expect(() => cosignedBody(ORIGIN, { id: 'x\nentry y', body: {} })).toThrow(TypeError);
  });
});

describe('validateWitnessSet', () => {
  const keys = [witness(), witness(), witness()];

  it('accepts 1 <= m <= K distinct Ed25519 keys, using the RFC 8032 test key too', () => {
    const rfcKey = { kty: 'OKP', crv: 'Ed25519', x: encodeBase64Url(hex(RFC8032[0]!.public)) };
    expect(validateWitnessSet({ m: 2, keys: [...keys.map((key) => key.jwk), rfcKey] })).toMatchObject({
      ok: true,
      value: { m: 2, keys: [...keys.map((key) => key.jwk), { ...rfcKey, kid: jwkThumbprint(rfcKey as never) }] },
    });
  });

  it.each([
    ['m = 0', { m: 0, keys: keys.map((key) => key.jwk) }],
    ['m > K', { m: 4, keys: keys.map((key) => key.jwk) }],
    ['m not an integer', { m: 1.5, keys: keys.map((key) => key.jwk) }],
    ['no keys', { m: 1, keys: [] }],
    ['a repeated key', { m: 1, keys: [keys[0]!.jwk, keys[0]!.jwk] }],
    ['a P-256 key', { m: 1, keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }] }],
    ['a wrong kid', { m: 1, keys: [{ ...keys[0]!.jwk, kid: keys[1]!.jwk.kid }] }],
    ['an extra member', { m: 1, keys: [keys[0]!.jwk], k: 3 }],
  ])('refuses %s with INVALID_WITNESS_SET', (_name, input) => {
    expect(validateWitnessSet(input)).toMatchObject({ ok: false, code: 'INVALID_WITNESS_SET' });
  });
});

describe('quorumVerdict', () => {
  const witnesses = [witness(), witness(), witness(), witness(), witness()];
  const set = witnessSet(3, witnesses);
  const subject = { id: 'de-root-2025', body: { jurisdiction: 'DE', node_id: 'root-de', keys: ['kid-1'] } };

  it('counts valid cosignatures of distinct witnesses and says why each other does not count', () => {
    const outsider = witness();
    const entry: MasterListEntry = {
      ...subject,
      cosignatures: [
        cosign(witnesses[0]!, subject),
        { ...cosign(witnesses[1]!, subject), time: 1_740_000_001 },
        cosign(witnesses[1]!, subject),
        cosign(witnesses[0]!, subject, 1_740_000_500),
        cosign(outsider, subject),
        cosign(witnesses[2]!, subject),
      ],
    };
    expect(quorumVerdict(entry, set, ORIGIN)).toEqual({
      valid: 3,
      required: 3,
      quorate: true,
      reasons: [
        { index: 0, kid: witnesses[0]!.jwk.kid, outcome: 'VALID' },
        { index: 1, kid: witnesses[1]!.jwk.kid, outcome: 'BAD_SIGNATURE' },
        { index: 2, kid: witnesses[1]!.jwk.kid, outcome: 'VALID' },
        { index: 3, kid: witnesses[0]!.jwk.kid, outcome: 'DUPLICATE' },
        { index: 4, kid: outsider.jwk.kid, outcome: 'UNKNOWN_WITNESS' },
        { index: 5, kid: witnesses[2]!.jwk.kid, outcome: 'VALID' },
      ],
    });
  });

  it('follows the current witness set: replacing it changes the verdict at once', () => {
    const entry: MasterListEntry = { ...subject, cosignatures: witnesses.slice(0, 3).map((key) => cosign(key, subject)) };
    expect(quorumVerdict(entry, set, ORIGIN).quorate).toBe(true);
    const replaced = witnessSet(3, witnesses.slice(1));
    expect(quorumVerdict(entry, replaced, ORIGIN)).toMatchObject({ valid: 2, required: 3, quorate: false, reasons: [{ outcome: 'UNKNOWN_WITNESS' }, {}, {}] });
    expect(quorumVerdict(entry, witnessSet(2, witnesses.slice(1)), ORIGIN)).toMatchObject({ valid: 2, quorate: true });
  });

  it('binds the entry body, the entry id and the origin', () => {
    const entry: MasterListEntry = { ...subject, cosignatures: witnesses.slice(0, 3).map((key) => cosign(key, subject)) };
    expect(quorumVerdict({ ...entry, body: { ...entry.body, keys: ['kid-2'] } }, set, ORIGIN).valid).toBe(0);
    expect(quorumVerdict({ ...entry, id: 'de-root-2026' }, set, ORIGIN).valid).toBe(0);
    expect(quorumVerdict(entry, set, 'staging.example.org/master-list').valid).toBe(0);
  });

  // The 1 s budget for this load is measured by bench/trust.ts, not by a timed test.
  it('verifies 1,000 entries with 5 cosignatures each, every one quorate', () => {
    const entries = Array.from({ length: 1000 }, (_, index): MasterListEntry => {
      const body = { index, jurisdiction: 'DE' };
      return { id: `entry-${index}`, body, cosignatures: witnesses.map((key) => cosign(key, { id: `entry-${index}`, body })) };
    });
    const verdicts = entries.map((entry) => quorumVerdict(entry, set, ORIGIN));
    expect(verdicts.every((verdict) => verdict.quorate && verdict.valid === 5)).toBe(true);
  });
});

describe('validateMasterListEntry', () => {
  it('accepts {id, body, cosignatures} and refuses other shapes', () => {
    const key = witness();
    const entry = { id: 'e1', body: { a: 1 }, cosignatures: [cosign(key, { id: 'e1', body: { a: 1 } })] };
    expect(validateMasterListEntry(entry)).toEqual({ ok: true, value: entry });
    expect(validateMasterListEntry({ id: 'e1', body: { a: 1 } })).toEqual({ ok: true, value: { id: 'e1', body: { a: 1 }, cosignatures: [] } });
    for (const bad of [
      { id: 'e 1', body: {} },
      { id: 'e1', body: [] },
      { id: 'e1', body: { a: '\ud800' } },
      { id: 'e1', body: {}, cosignatures: [{ kid: 'k', time: -1, signature: 's' }] },
      { id: 'e1', body: {}, cosignatures: [{ kid: 'k', time: 1, signature: 's', extra: true }] },
      { id: 'e1', body: {}, verdict: 'quorate' },
    ]) {
      expect(validateMasterListEntry(bad)).toMatchObject({ ok: false, code: 'INVALID_MASTER_LIST_ENTRY' });
    }
  });
});

describe('RFC 8032 keys as witnesses', () => {
  it('give deterministic cosignatures that both Node and @noble/curves produce', () => {
    const privateKey = createPrivateKey({
      format: 'jwk',
      key: { kty: 'OKP', crv: 'Ed25519', x: encodeBase64Url(hex(RFC8032[0]!.public)), d: encodeBase64Url(hex(RFC8032[0]!.secret)) },
    });
    const set = validateWitnessSet({ m: 1, keys: [{ kty: 'OKP', crv: 'Ed25519', x: encodeBase64Url(hex(RFC8032[0]!.public)) }] });
    if (!set.ok) throw new Error(set.message);
    const entry = { id: 'e1', body: {} };
    const bytes = cosignatureMessage(1, cosignedBody(ORIGIN, entry));
    const nodeSignature = nodeSign(null, bytes, privateKey);
    expect(Buffer.from(ed25519.sign(bytes, hex(RFC8032[0]!.secret)))).toEqual(nodeSignature);
    const verdict = quorumVerdict({ ...entry, cosignatures: [{ kid: set.value.keys[0]!.kid, time: 1, signature: encodeBase64Url(nodeSignature) }] }, set.value, ORIGIN);
    expect(verdict).toMatchObject({ valid: 1, quorate: true });
  });
});
