/**
 * The platform's primitives as Node runs them (lib/platform/primitives.ts: OpenSSL, Buffer, zlib)
 * and as the verification page runs them (primitives.browser.ts: @noble/curves, @noble/hashes, pako),
 * held to each other on the inputs where implementations part ways: Ed25519 signatures with S >= L,
 * keys of small order, an R with a small-order part (which the cofactored equation admits and
 * OpenSSL's cofactorless one does not), and zlib streams that are damaged, truncated, followed by
 * other bytes or inflate past the bound.
 */
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { ED25519_TORSION_SUBGROUP, ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import * as browser from '../../lib/platform/primitives.browser.js';
import * as node from '../../lib/platform/primitives.js';

// The page's build swaps one module for the other: the browser's must offer every function Node's does, alike typed.
const swappable: typeof node = browser;

const bytes = (length: number, seed: number) => Uint8Array.from({ length }, (_, index) => (index * 131 + seed * 17) & 0xff);
const hex = (value: Uint8Array) => Buffer.from(value).toString('hex');
/** The outcome of a call, an error as the word "throws": the two sides may word their errors apart. */
const outcome = (call: () => Uint8Array) => {
  try {
    return hex(call());
  } catch {
    return 'throws';
  }
};

const L = ed25519.Point.Fn.ORDER;
const littleEndian = (value: bigint) => Uint8Array.from({ length: 32 }, (_, index) => Number((value >> BigInt(8 * index)) & 0xffn));
const scalarOf = (value: Uint8Array) => value.reduceRight((acc, byte) => (acc << 8n) | BigInt(byte), 0n);

/** A signature of `message` whose R has a small-order part: R' = rB + T, S = r + H(R' || A || M)·a. */
function mixedOrderSignature(secretKey: Uint8Array, message: Uint8Array): Uint8Array {
  const { scalar, pointBytes } = ed25519.utils.getExtendedPublicKey(secretKey);
  const r = 1234567890123456789n;
  const R = ed25519.Point.BASE.multiply(r).add(ed25519.Point.fromHex(ED25519_TORSION_SUBGROUP[1]!)).toBytes();
  const k = ed25519.Point.Fn.create(scalarOf(sha512(new Uint8Array([...R, ...pointBytes, ...message]))));
  return new Uint8Array([...R, ...littleEndian(ed25519.Point.Fn.create(r + k * scalar))]);
}

describe('the primitives in Node and in the browser', () => {
  it('are the same functions', () => {
    expect(Object.keys(swappable).sort()).toEqual(Object.keys(node).sort());
  });

  it('encode and decode base64url and hash with SHA-256 alike', () => {
    for (const length of [0, 1, 2, 3, 31, 32, 33, 1000]) {
      const data = bytes(length, length);
      expect(browser.encodeBase64Url(data)).toBe(node.encodeBase64Url(data));
      expect(hex(browser.decodeBase64UrlChecked(node.encodeBase64Url(data)))).toBe(hex(data));
      expect(hex(browser.sha256(data))).toBe(hex(node.sha256(data)));
      expect(hex(browser.sha256(data, data.subarray(1), new Uint8Array(0)))).toBe(hex(node.sha256(data, data.subarray(1), new Uint8Array(0))));
    }
    expect(browser.encodeBase64Url('Grüße, 世界 🌍')).toBe(node.encodeBase64Url('Grüße, 世界 🌍'));
  });

  it('inflate zlib alike: a stream, its damaged, truncated and gzip forms, other bytes after it, and output past the bound', () => {
    const text = new TextEncoder().encode('hello world, '.repeat(50));
    const stream = new Uint8Array(deflateSync(text));
    const damagedCheck = Uint8Array.from(stream, (byte, index) => (index === stream.length - 1 ? byte ^ 1 : byte));
    const damagedData = Uint8Array.from(stream, (byte, index) => (index === 6 ? byte ^ 0x40 : byte));
    const cases = {
      stream,
      damagedCheck,
      damagedData,
      truncated: stream.subarray(0, stream.length - 6),
      followed: new Uint8Array([...stream, 1, 2, 3]),
      gzip: new Uint8Array(gzipSync(text)),
      raw: new Uint8Array(deflateRawSync(text)),
      bomb: new Uint8Array(deflateSync(new Uint8Array(1_000_000))),
      empty: new Uint8Array(0),
    };
    const answers = Object.fromEntries(Object.entries(cases).map(([name, input]) => [name, [outcome(() => node.inflateZlib(input, 16_384)), outcome(() => browser.inflateZlib(input, 16_384))]]));
    for (const [name, [nodeAnswer, browserAnswer]] of Object.entries(answers)) expect(browserAnswer, name).toBe(nodeAnswer);
    expect(answers.stream![0]).toBe(hex(text));
    expect(answers.followed![0]).toBe(hex(text));
    for (const refused of ['damagedCheck', 'truncated', 'gzip', 'raw', 'bomb', 'empty']) expect(answers[refused]![0], refused).toBe('throws');
    // Either side's deflate is the other's inflate.
    expect(hex(node.inflateZlib(browser.deflateZlib(text), 16_384))).toBe(hex(text));
    expect(hex(browser.inflateZlib(node.deflateZlib(text), 16_384))).toBe(hex(text));
  });

  it('sign and derive keys alike', () => {
    for (let index = 0; index < 5; index += 1) {
      const secretKey = ed25519.utils.randomSecretKey();
      const message = bytes(index * 40, index);
      expect(hex(browser.signEd25519(secretKey, message))).toBe(hex(node.signEd25519(secretKey, message)));
      expect(hex(browser.ed25519PublicKey(secretKey))).toBe(hex(node.ed25519PublicKey(secretKey)));
      const scalar = bytes(32, index + 1);
      expect(hex(browser.p256PublicKey(scalar))).toBe(hex(node.p256PublicKey(scalar)));
    }
  });

  it('verify Ed25519 alike, as OpenSSL does: the cofactorless equation, S < L, no key of small order', async () => {
    const secretKey = ed25519.utils.randomSecretKey();
    const publicKey = ed25519.getPublicKey(secretKey);
    const message = new TextEncoder().encode('event 42');
    const signature = ed25519.sign(message, secretKey);
    const withS = (s: bigint) => new Uint8Array([...signature.subarray(0, 32), ...littleEndian(s)]);
    const flipped = Uint8Array.from(signature, (byte, index) => (index === 5 ? byte ^ 1 : byte));
    const identity = ed25519.Point.ZERO.toBytes();
    const mixed = mixedOrderSignature(secretKey, message);
    const cases: Record<string, [Uint8Array, Uint8Array, Uint8Array]> = {
      genuine: [publicKey, message, signature],
      otherMessage: [publicKey, new TextEncoder().encode('event 43'), signature],
      flipped: [publicKey, message, flipped],
      sPlusL: [publicKey, message, withS(scalarOf(signature.subarray(32)) + L)],
      notAPoint: [new Uint8Array(32).fill(0xff), message, signature],
      // The identity point as a key, with the trivial forgery R = identity, S = 0.
      smallOrderKey: [identity, message, new Uint8Array([...identity, ...new Uint8Array(32)])],
      mixedOrderR: [publicKey, message, mixed],
      otherKey: [ed25519.getPublicKey(ed25519.utils.randomSecretKey()), message, signature],
    };
    const nodeAnswers = Object.fromEntries(Object.entries(cases).map(([name, [key, data, sig]]) => [name, node.verifyEd25519(key, data, sig)]));
    const browserAnswers = Object.fromEntries(Object.entries(cases).map(([name, [key, data, sig]]) => [name, browser.verifyEd25519(key, data, sig)]));
    expect(browserAnswers).toEqual(nodeAnswers);
    expect(Object.entries(nodeAnswers).filter(([, verified]) => verified)).toEqual([['genuine', true]]);
    // The mixed-order R is a real case: the cofactored equation (@noble/curves' own verify) admits it.
    expect(ed25519.verify(mixed, message, publicKey, { zip215: false })).toBe(true);
    for (const [name, [key, data, sig]] of Object.entries(cases)) expect(await browser.verifyEd25519Async(key, data, sig), name).toBe(nodeAnswers[name]);
  });
});
