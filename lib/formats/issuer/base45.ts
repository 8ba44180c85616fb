/**
 * Base45 (RFC 9285): bytes in the 45 characters of the QR alphanumeric mode, so a QR code can
 * carry them at 5.5 bits per character instead of 8.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:';
const VALUES = new Map([...ALPHABET].map((character, value) => [character, value]));

export function encodeBase45(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i + 1 < bytes.length; i += 2) {
    // Each pair [a, b] is n = a*256 + b, written c + d*45 + e*45^2 as "c d e" (§4).
    let n = bytes[i]! * 256 + bytes[i + 1]!;
    for (let digit = 0; digit < 3; digit += 1) {
      text += ALPHABET[n % 45];
      n = Math.floor(n / 45);
    }
  }
  if (bytes.length % 2 === 1) {
    const n = bytes[bytes.length - 1]!;
    text += ALPHABET[n % 45]! + ALPHABET[Math.floor(n / 45)]!;
  }
  return text;
}

/** Strict decoder: rejects foreign characters, a length of 1 mod 3, and groups out of range (§4.2). */
export function decodeBase45(text: string): Uint8Array {
  if (text.length % 3 === 1) throw new RangeError('a Base45 text cannot have a length of 1 modulo 3');
  const digits = [...text].map((character) => {
    const value = VALUES.get(character);
    if (value === undefined) throw new RangeError(`"${character}" is not a Base45 character`);
    return value;
  });
  const bytes = new Uint8Array(Math.floor(digits.length / 3) * 2 + (digits.length % 3 === 2 ? 1 : 0));
  let out = 0;
  for (let i = 0; i < digits.length; i += 3) {
    if (i + 2 < digits.length) {
      const n = digits[i]! + digits[i + 1]! * 45 + digits[i + 2]! * 2025;
      if (n > 0xffff) throw new RangeError('a Base45 triple exceeds 65535');
      bytes[out++] = n >> 8;
      bytes[out++] = n & 0xff;
    } else {
      const n = digits[i]! + digits[i + 1]! * 45;
      if (n > 0xff) throw new RangeError('a final Base45 pair exceeds 255');
      bytes[out++] = n;
    }
  }
  return bytes;
}
