import { describe, expect, it } from 'vitest';
import { decodeBase45, encodeBase45 } from '../../../lib/formats/issuer/base45.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('Base45 (RFC 9285)', () => {
  it.each([
    ['AB', 'BB8'],
    ['Hello!!', '%69 VD92EX0'],
    ['base-45', 'UJCLQE7W581'],
    ['ietf!', 'QED8WEX0'],
  ])('encodes the RFC example %j as %j and back', (text, encoded) => {
    expect(encodeBase45(utf8(text))).toBe(encoded);
    expect(new TextDecoder().decode(decodeBase45(encoded))).toBe(text);
  });

  it('round-trips every length up to 64 and the extreme byte values', () => {
    for (let length = 0; length <= 64; length += 1) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 97 + length) % 256);
      expect(decodeBase45(encodeBase45(bytes))).toEqual(bytes);
    }
    expect(encodeBase45(new Uint8Array([0xff, 0xff]))).toBe('FGW');
    expect(encodeBase45(new Uint8Array([0xff]))).toBe('U5');
  });

  it('refuses what §4.2 says a decoder must refuse', () => {
    expect(() => decodeBase45('GGW')).toThrow(/65535/); // 65536
    expect(() => decodeBase45('V5')).toThrow(/255/); // 256
    expect(() => decodeBase45('BB8B')).toThrow(/length/);
    expect(() => decodeBase45('bb8')).toThrow(/not a Base45 character/);
  });
});
