/**
 * A Tier-A pack read with tools other than the issuer's own: `qrcode` renders it and `jsQR` scans it
 * back; a Base45 decoder written here from RFC 9285, Node's zlib and cborg (called directly, not through the issuer's wrapper) undo the layers; WebCrypto
 * checks the ES256 COSE_Sign1 signature over the Sig_structure written out byte by byte.
 */
import { webcrypto } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import { decode } from 'cborg';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { expect } from 'vitest';

// jsqr is CommonJS with an `exports.default`: Node's ESM loader hands over module.exports.
const jsQR = jsQRModule.default;

/** Renders the text as a QR code (level M) and reads it back. */
export async function scanQr(text: string): Promise<string> {
  const png = PNG.sync.read(await QRCode.toBuffer(text, { errorCorrectionLevel: 'M', margin: 4, scale: 4 }));
  const read = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  if (!read) throw new Error('jsQR could not read the code');
  return read.data;
}

/** RFC 9285 Base45, decoded independently of the issuer's encoder. */
export function base45Decode(text: string): Buffer {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:';
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i += 3) {
    const [c, d, e] = [...text.slice(i, i + 3)].map((character) => alphabet.indexOf(character));
    const n = c! + d! * 45 + (e === undefined ? 0 : e * 45 * 45);
    if (e === undefined) bytes.push(n);
    else bytes.push(n >> 8, n & 0xff);
  }
  return Buffer.from(bytes);
}

/** Decodes tag 18 (COSE_Sign1) as {tag, value}; cborg refuses every tag it has no decoder for. */
const cborTag18: ((inner: unknown) => unknown)[] = [];
cborTag18[18] = (value) => ({ tag: 18, value });

/** Public keys as a keyring gives them. */
type Jwk = { kid: string; kty?: string; crv?: string; x?: string; y?: string };

/** Undoes the pack's layers and verifies its signature under the key of its kid among `keys`. */
export async function readPackIndependently(text: string, keys: readonly Jwk[]): Promise<{ valid: boolean; kid: string; claims: Map<number, unknown> }> {
  expect(text.startsWith('DPP1:')).toBe(true);
  const decoder = { decode: (bytes: Uint8Array) => decode(bytes, { useMaps: true, tags: cborTag18 }) };
  const cose = decoder.decode(inflateSync(base45Decode(text.slice(5)))) as { tag: number; value: unknown };
  expect(cose.tag).toBe(18);
  const [protectedHeader, unprotected, payload, signature] = cose.value as [Uint8Array, Map<number, unknown>, Uint8Array, Uint8Array];
  expect(unprotected.size).toBe(0);
  const header = decoder.decode(protectedHeader) as Map<number, unknown>;
  expect(header.get(1)).toBe(-7);
  const kid = new TextDecoder().decode(header.get(4) as Uint8Array);
  const jwk = keys.find((key) => key.kid === kid);
  expect(jwk, `carrier key ${kid} is among the keys given`).toMatchObject({ kty: 'EC', crv: 'P-256' });
  const bstr = (bytes: Uint8Array) => {
    const head = bytes.length < 24 ? [0x40 + bytes.length] : bytes.length < 256 ? [0x58, bytes.length] : [0x59, bytes.length >> 8, bytes.length & 0xff];
    return Buffer.concat([Buffer.from(head), bytes]);
  };
  // Sig_structure = ["Signature1", protected, h'', payload] (RFC 9052 §4.4), byte by byte.
  const sigStructure = Buffer.concat([Buffer.from([0x84, 0x6a]), Buffer.from('Signature1'), bstr(protectedHeader), Buffer.from([0x40]), bstr(payload)]);
  const key = await webcrypto.subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: jwk!.x, y: jwk!.y }, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
  const valid = await webcrypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, signature, sigStructure);
  return { valid, kid, claims: decoder.decode(payload) as Map<number, unknown> };
}
